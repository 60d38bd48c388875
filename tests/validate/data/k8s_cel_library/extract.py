"""Extract the table cases of Kubernetes' CEL library tests into cases.json.

    python tests/validate/data/k8s_cel_library/extract.py APISERVER_CHECKOUT > cases.json

APISERVER_CHECKOUT is a checkout of github.com/kubernetes/apiserver (the staging copy of
k8s.io/apiserver); the files read are pkg/cel/library/{quantity,ip,cidr,semver}_test.go.
A case is kept when its expectation is a boolean, integer, double or string value, a runtime
error or a compile error; cases expecting an object (an IP, a Quantity...) are left out, as
they compare Go values kzgit does not have.
"""
from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, Dict, List

FILES = ("quantity_test.go", "ip_test.go", "cidr_test.go", "semver_test.go")
_CASE = re.compile(r"\{\s*\n(\s*name:.*?)\n\s*\},", re.S)
_STR = r'(`[^`]*`|"(?:[^"\\]|\\.)*")'


def _go_string(s: str) -> str:
    return s[1:-1] if s.startswith("`") else json.loads(s)


def _value(raw: str, aliases: Dict[str, Any]) -> Any:
    raw = raw.strip().rstrip(",")
    if raw in aliases:
        return aliases[raw]
    m = re.fullmatch(r"types\.(Int|Double|String|Bool)\((.*)\)", raw)
    if not m:
        return None
    kind, arg = m.groups()
    if kind == "Int":
        return {"int": int(arg)}
    if kind == "Double":
        return {"double": float(arg)}
    if kind == "Bool":
        return {"bool": arg == "true"}
    return {"string": _go_string(arg)}


def cases(root: str) -> List[Dict[str, Any]]:
    out = []
    for name in FILES:
        text = open(os.path.join(root, "pkg/cel/library", name), encoding="utf-8").read()
        aliases: Dict[str, Any] = {"trueVal": {"bool": True}, "falseVal": {"bool": False}}
        for m in re.finditer(r"(\w+)\s*:?=\s*types\.(Int|Bool)\(([-\w]+)\)", text):
            v = m.group(3)
            aliases[m.group(1)] = {"int": int(v)} if m.group(2) == "Int" else {"bool": v == "true"}
        for c in _CASE.finditer(text):
            body = c.group(1)
            expr = re.search(r"\bexpr:\s*" + _STR, body)
            title = re.search(r"\bname:\s*" + _STR, body)
            if not expr:
                continue
            want: Any = None
            if re.search(r"expect(ed)?RuntimeErr:\s*\S", body):
                want = {"error": "runtime"}
            elif re.search(r"expect(ed)?CompileErrs?:\s*\S", body):
                want = {"error": "compile"}
            else:
                v = re.search(r"expect(Value|Result):\s*(.*)", body)
                want = _value(v.group(2), aliases) if v else None
            if want is None:
                continue
            out.append({"file": name, "name": _go_string(title.group(1)) if title else "",
                        "expr": _go_string(expr.group(1)), "expect": want})
    return out


if __name__ == "__main__":
    json.dump(cases(sys.argv[1]), sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")
