"""Extract the upstream test cases of the CEL pieces kzgit rewrites (kzgit/validate/celrewrite.py).

    python tests/validate/data/cel_rewrite/extract.py CEL_GO_CHECKOUT APISERVER_CHECKOUT > cases.json

CEL_GO_CHECKOUT is a checkout of github.com/google/cel-go; the files read are
``ext/comprehensions_test.go`` (TestTwoVarComprehensions: expressions that evaluate to true;
TestTwoVarComprehensionsStaticErrors and ...RuntimeErrors: an error containing a text),
``ext/lists_test.go`` (the ``sortBy`` cases of TestLists without a message type) and
``ext/bindings_test.go`` (the cases of TestBindings that need no variable).
APISERVER_CHECKOUT is a checkout of github.com/kubernetes/apiserver (k8s.io/apiserver); the
files read are ``pkg/cel/library/lists.go`` (the indexOf/lastIndexOf examples of its
documentation) and ``pkg/cel/library/format_test.go`` (TestFormat's table: an optional list
of errors, ``optional.none()``, or a boolean).  Each case keeps its file and test.
"""
from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, Dict, List

_STR = r'(`[^`]*`|"(?:[^"\\]|\\.)*")'


def _go_string(s: str) -> str:
    return s[1:-1] if s.startswith("`") else json.loads(s)


def _function(text: str, name: str) -> str:
    start = text.index(f"func {name}(")
    end = text.find("\nfunc ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def cel_go(root: str) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    compre = open(os.path.join(root, "ext/comprehensions_test.go"), encoding="utf-8").read()
    for m in re.finditer(r"\{expr:\s*" + _STR + r"\}", _function(compre, "TestTwoVarComprehensions")):
        expr = re.sub(r"//[^\n]*", "", _go_string(m.group(1))).strip()
        out.append({"file": "cel-go ext/comprehensions_test.go", "test": "TestTwoVarComprehensions",
                    "expr": expr, "expect": {"bool": True}})
    for test, kind in (("TestTwoVarComprehensionsStaticErrors", "compile"),
                       ("TestTwoVarComprehensionsRuntimeErrors", "runtime")):
        for m in re.finditer(r"expr:\s*" + _STR + r",\s*err:\s*" + _STR, _function(compre, test)):
            out.append({"file": "cel-go ext/comprehensions_test.go", "test": test,
                        "expr": _go_string(m.group(1)), "expect": {kind: _go_string(m.group(2))}})
    lists = open(os.path.join(root, "ext/lists_test.go"), encoding="utf-8").read()
    for m in re.finditer(r"\{expr:\s*" + _STR + r"(?:,\s*err:\s*" + _STR + r")?\}", _function(lists, "TestLists")):
        expr = _go_string(m.group(1))
        if "sortBy" not in expr or "ExampleType" in expr:
            continue
        want = {"runtime": _go_string(m.group(2))} if m.group(2) else {"bool": True}
        out.append({"file": "cel-go ext/lists_test.go", "test": "TestLists", "expr": expr, "expect": want})
    binds = open(os.path.join(root, "ext/bindings_test.go"), encoding="utf-8").read()
    for m in re.finditer(r"\{\s*name:\s*" + _STR + r",\s*expr:\s*" + _STR + r",(?P<rest>.*?)\n\t\},", binds, re.S):
        if re.search(r"\n\t\t(vars|in):", m.group("rest")):
            continue
        out.append({"file": "cel-go ext/bindings_test.go", "test": _go_string(m.group(1)),
                    "expr": _go_string(m.group(2)), "expect": {"bool": True}})
    return out


def k8s_lists(path: str) -> List[Dict[str, Any]]:
    """The indexOf/lastIndexOf examples of the library's documentation (``// returns N``)."""
    out: List[Dict[str, Any]] = []
    for m in re.finditer(r"//\t(.*\.(?:lastIndexOf|indexOf)\(.*\)) // returns (-?\d+)",
                         open(path, encoding="utf-8").read()):
        out.append({"file": "k8s.io/apiserver pkg/cel/library/lists.go", "test": "documentation",
                    "expr": m.group(1), "expect": {"int": int(m.group(2))}})
    return out


def k8s_format(path: str) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    text = open(path, encoding="utf-8").read()
    for m in re.finditer(r"\{\s*(?://[^\n]*\s*)?name:\s*" + _STR + r",\s*expr:\s*" + _STR
                         + r",\s*(?://[^\n]*\s*)?expectValue:\s*(.*?),\n\t\t\},", text, re.S):
        name, expr, value = _go_string(m.group(1)), _go_string(m.group(2)), m.group(3).strip()
        if value == "types.OptionalNone":
            want: Dict[str, Any] = {"none": True}
        elif value in ("types.True", "types.False"):
            want = {"bool": value == "types.True"}
        else:
            errors = [_go_string(s) for s in re.findall(_STR, value.partition("[]string{")[2])]
            want = {"errors": errors}
        out.append({"file": "k8s.io/apiserver pkg/cel/library/format_test.go", "test": name,
                    "expr": expr, "expect": want})
    return out


if __name__ == "__main__":
    json.dump(cel_go(sys.argv[1]) + k8s_lists(os.path.join(sys.argv[2], "pkg/cel/library/lists.go"))
              + k8s_format(os.path.join(sys.argv[2], "pkg/cel/library/format_test.go")),
              sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")
