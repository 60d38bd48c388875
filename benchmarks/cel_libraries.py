"""Measure Python CEL libraries for kzgit's CEL rules (docs/cel.md records the figures).

Run it with a Python where one candidate is installed (each in its own venv):

    python benchmarks/cel_libraries.py cel-expr-python  CEL_SPEC_TESTDATA_DIR
    python benchmarks/cel_libraries.py common-expression-language  DIR
    python benchmarks/cel_libraries.py cel-python  DIR

DIR is ``tests/simple/testdata`` of github.com/google/cel-spec.  Conformance: the spec's
simple tests whose expected outcome is a scalar value (bool, int, uint, double, string, null)
or an evaluation error, without bindings, type environments or protobuf messages (the
subset a rule over JSON-like Kubernetes objects exercises); a test passes when the library
gives that value, or an error when an error is expected.  Speed: one rule typical of CRDs
evaluated over a custom resource, after compiling once.
"""
from __future__ import annotations

import ast
import os
import re
import sys
import time
from typing import Any, Callable, Dict, List, Tuple

FILES = ("basic", "comparisons", "conversions", "fp_math", "integer_math", "lists", "logic",
         "macros", "macros2", "string", "string_ext", "optionals", "parse", "plumbing", "timestamps",
         "dynamic", "fields", "namespace", "type_deduction")
_ERROR = object()
_TEST = re.compile(r"\n  test \{\n(.*?)\n  \}", re.S)
_VALUE = re.compile(r'^\s*value: \{ (bool|int64|uint64|double|string|null)_value: (.*) \}\s*$', re.M)


def _unquote(s: str) -> str:
    # textproto strings are C-escaped, like Python bytes literals
    raw = s.encode("utf-8").decode("ascii", "backslashreplace") if not s.isascii() else s
    return ast.literal_eval("b" + raw).decode("utf-8")


def cases(testdata: str) -> List[Tuple[str, str, Any]]:
    out = []
    for name in FILES:
        path = os.path.join(testdata, name + ".textproto")
        if not os.path.exists(path):
            continue
        text = open(path, encoding="utf-8").read()
        for m in _TEST.finditer(text):
            body = m.group(1)
            if any(w in body for w in ("bindings", "type_env", "container:", "object_value",
                                       "list_value", "map_value", "unknown", "check_only", "typed_result")):
                continue
            expr = re.search(r'^\s*expr: ("(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')', body, re.M)
            if not expr:
                continue
            tname = re.search(r'name: "([^"]*)"', body)
            if "eval_error" in body:
                want: Any = _ERROR
            else:
                v = _VALUE.search(body)
                if not v:
                    continue
                kind, raw = v.groups()
                want = {"bool": lambda r: r == "true", "int64": int, "uint64": int,
                        "double": lambda r: float(r.replace("inf", "Infinity")) if "nan" not in r else float("nan"),
                        "string": _unquote, "null": lambda r: None}[kind](raw)
            label = f"{name}/{tname.group(1) if tname else '?'}"
            out.append((label + ("!" if "disable_check: true" in body else ""), _unquote(expr.group(1)), want))
    return out


def _same(got: Any, want: Any) -> bool:
    if want is _ERROR:
        return got is _ERROR
    if got is _ERROR:
        return False
    if isinstance(want, float) and want != want:
        return isinstance(got, float) and got != got
    if isinstance(want, bool) or isinstance(got, bool):
        return type(got) is type(want) and got == want
    return bool(got == want) and (isinstance(want, str) == isinstance(got, str))


Compile = Callable[..., Callable[[Dict[str, Any]], Any]]


def runner(lib: str) -> Tuple[Compile, str]:
    if lib == "cel-expr-python":
        from cel_expr_python import cel  # type: ignore
        from cel_expr_python.ext import ext_optional, ext_strings  # type: ignore
        env = cel.NewEnv(variables={"self": cel.Type.DYN},
                         extensions=[ext_optional.ExtOptional(), ext_strings.ExtStrings()])

        def compile_cexp(src: str, unchecked: bool = False) -> Callable[[Dict[str, Any]], Any]:
            e = env.compile(src, disable_check=unchecked)

            def run(data: Dict[str, Any]) -> Any:
                v = e.eval(data=data)
                return _ERROR if v.type() == cel.Type.ERROR else v.plain_value()
            return run
        return compile_cexp, "cel_expr_python"
    if lib == "common-expression-language":
        import cel  # type: ignore

        def compile_rust(src: str, unchecked: bool = False) -> Callable[[Dict[str, Any]], Any]:
            p = cel.compile(src)

            def run(data: Dict[str, Any]) -> Any:
                ctx = cel.Context()
                for k, v in data.items():
                    ctx.add_variable(k, v)
                return p.execute(ctx)
            return run
        return compile_rust, "cel"
    if lib == "cel-python":
        import celpy  # type: ignore
        env = celpy.Environment()

        def compile_py(src: str, unchecked: bool = False) -> Callable[[Dict[str, Any]], Any]:
            prog = env.program(env.compile(src))

            def run(data: Dict[str, Any]) -> Any:
                v = prog.evaluate({k: celpy.json_to_cel(x) for k, x in data.items()})
                if isinstance(v, Exception):
                    return _ERROR
                # celpy's own value classes, as plain Python values for the comparison
                for cls, py in ((celpy.celtypes.BoolType, bool), (celpy.celtypes.StringType, str),
                                (celpy.celtypes.DoubleType, float), (celpy.celtypes.IntType, int),
                                (celpy.celtypes.UintType, int)):
                    if isinstance(v, cls):
                        return py(v)
                return v
            return run
        return compile_py, "celpy"
    raise SystemExit(f"unknown library {lib}")


RULE = ("self.spec.rules.all(r, r.matches.size() <= 8 && (!has(r.timeout) || r.timeout.matches('^[0-9]+s$')))"
        " && self.spec.parentRefs.exists_one(p, p.name == 'gw')")
OBJ = {"spec": {"parentRefs": [{"name": "gw"}, {"name": "other"}],
                "rules": [{"matches": [{"path": "/a"}] * 3, "timeout": "10s"} for _ in range(4)]}}


def main() -> int:
    lib, testdata = sys.argv[1], sys.argv[2]
    compile_, module = runner(lib)
    t0 = time.perf_counter()
    __import__(module)
    ok = fail = 0
    failures: List[str] = []
    for name, expr, want in cases(testdata):
        try:
            got = compile_(expr, name.endswith("!"))({})
        except Exception:   # noqa: BLE001 - a compile error counts as an error outcome
            got = _ERROR
        if _same(got, want):
            ok += 1
        else:
            fail += 1
            failures.append(name)
    prog = compile_(RULE)
    assert prog({"self": OBJ}) == True  # noqa: E712 - celpy's BoolType equals True
    n = 2000
    t = time.perf_counter()
    for _ in range(n):
        prog({"self": OBJ})
    per_eval = (time.perf_counter() - t) / n * 1e6
    t = time.perf_counter()
    for _ in range(50):
        compile_(RULE)
    per_compile = (time.perf_counter() - t) / 50 * 1e6
    print(f"{lib}: conformance {ok}/{ok + fail} ({100 * ok / (ok + fail):.1f}%), "
          f"eval {per_eval:.1f} us, compile {per_compile:.0f} us")
    by_file: Dict[str, int] = {}
    for f in failures:
        by_file[f.split("/")[0]] = by_file.get(f.split("/")[0], 0) + 1
    print("  failures by file:", dict(sorted(by_file.items())))
    del t0
    return 0


if __name__ == "__main__":
    sys.exit(main())
