"""The CEL pieces kzgit's runtime lacks, run through kzgit.validate.celrewrite: upstream test
tables (cel-go's two-variable comprehensions and sortBy; Kubernetes' lists and format
libraries: tests/validate/data/cel_rewrite), the syntax layer's round trip, and real-shaped rules."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

if sys.version_info < (3, 11):
    pytest.skip("the CEL runtime (cel-expr-python) is not available on Python 3.10",
                allow_module_level=True)

from kzgit.validate import cel_k8s, celrewrite  # noqa: E402
from kzgit.validate.celsyntax import SyntaxFault, parse, unparse  # noqa: E402

CASES: List[Dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "cel_rewrite" / "cases.json").read_text(encoding="utf-8"))

#: cases kzgit does not run as upstream does, with the reason
UNSUPPORTED: Dict[str, str] = {
    "[1, 2].transformList(i, v, v % 2 == 0 ? [v] : v)":
        "cel-go refuses a conditional whose branches differ in type (list(int) and int); the "
        "runtime's checker joins them as dyn and runs the rule",
}
#: cases that use the strings extension's reverse (its version 3): Kubernetes declares version 2,
#: so the API server refuses them; kzgit's runtime types the keys as dyn and fails when it runs
UNSUPPORTED.update({c["expr"]: "string reverse is not in Kubernetes' environment (strings v2)"
                    for c in CASES if ".reverse()" in c["expr"] and "transformMapEntry" in c["expr"]})


def _eval(expr: str, value: Any = None) -> Tuple[Any, Any]:
    return cel_k8s.evaluate(cel_k8s.compile_expression(expr), value)


@pytest.mark.parametrize("case", CASES, ids=[f"{c['file'].split('/')[-1]}:{c['test']}:{i}"
                                            for i, c in enumerate(CASES)])
def test_upstream_case(case: Dict[str, Any]) -> None:
    expr, want = case["expr"], case["expect"]
    if expr in UNSUPPORTED:
        pytest.skip(UNSUPPORTED[expr])
    if "cel.bind(" in expr:
        # cel-go's test environment has ext.Bindings, Kubernetes' has not (k8s.io/apiserver
        # pkg/cel/environment/base.go): the API server refuses the rule, and so does kzgit
        with pytest.raises(cel_k8s.CompileError) as e:
            cel_k8s.compile_expression(expr)
        assert not e.value.unsupported
        return
    if "compile" in want:
        with pytest.raises(cel_k8s.CompileError) as e:
            cel_k8s.compile_expression(expr)
        assert want["compile"] in str(e.value) and not e.value.unsupported
        return
    if "runtime" in want:
        got, err = _eval(expr)
        assert got is None and err is not None and want["runtime"] in err
        return
    if "none" in want:   # an optional result: asked through hasValue()
        assert _eval(f"({expr}).hasValue()") == (False, None)
        return
    if "errors" in want:
        assert _eval(f"({expr}).value()") == (want["errors"], None)
        return
    kind, value = next(iter(want.items()))
    assert kind in ("bool", "int")
    assert _eval(expr) == (value, None)


def test_rewritten_expressions_keep_their_literals() -> None:
    # literals go back as written (raw, triple-quoted, bytes, unsigned, hex, exponents)
    src = r"""self.all(k, v, k != r'\d' && v != b'\xff' && v != '''a'b''' && 2u < 0x1Fu && 1e3 > 1.5 && 1 > -9223372036854775808)"""
    out = celrewrite.rewrite(src)
    assert out is not None
    for lit in (r"r'\d'", r"b'\xff'", "'''a'b'''", "0x1Fu", "2u", "1e3", "-9223372036854775808"):
        assert lit in out
    assert _eval(src, {"a": "x"}) == (True, None)


@pytest.mark.parametrize("src", [
    "a || b && c", "(a || b) && c", "a - (b - c)", "a - b - c", "-(a + b)", "!(a && b)", "--a", "!!a",
    "(a ? b : c) ? d : e", "a ? b : c ? d : e", "a + b * c", "(a + b) * c", "x in [1, 2] == true",
    "(-a).b", "a.?b.c[?0]", "{?'a': x, 'b': 1}", "[?x, y,]", "m[k].f(1, 2)", ".a.b", "pkg.Msg{f: 1, ?g: x}",
    "has(a.b)", "a.b(c).d[e]", "'a' + \"b\" + r'\\c' + '''d\ne'''",
])
def test_unparse_round_trip(src: str) -> None:
    # unparse(parse(x)) parses to the same tree, and is a fixed point
    once = unparse(parse(src))
    assert unparse(parse(once)) == once
    assert once.replace(" ", "") == _normalise(src) or _same_tree(src, once)


def _normalise(src: str) -> str:
    return src.replace(" ", "").replace(",]", "]")


def _same_tree(a: str, b: str) -> bool:
    return repr(_tree(parse(a))) == repr(_tree(parse(b)))


def _tree(node: Any) -> Any:
    if isinstance(node, list):
        return [_tree(x) for x in node]
    if isinstance(node, tuple):
        return tuple(_tree(x) for x in node)
    if hasattr(node, "__slots__"):
        return (type(node).__name__,) + tuple(_tree(getattr(node, s)) for s in node.__slots__)
    return node


@pytest.mark.parametrize("src", ["a +", "(a", "a.b(", "'unterminated", "a $ b", "if", "[1, 2"])
def test_syntax_faults(src: str) -> None:
    with pytest.raises(SyntaxFault):
        parse(src)


def test_no_rewrite_for_rules_that_run_as_written() -> None:
    # the pre-pass leaves alone what the runtime runs: the rule goes to it unchanged
    for src in ("self.all(x, x > 0)", "self.exists(x, x == 1)", "self.map(k, k).size() > 0",
                "self.x.validate == 1", "string(self.a) == 'x'"):
        assert not celrewrite.needs_rewrite(src) or celrewrite.rewrite(src) is None


def test_capture_safe_substitution() -> None:
    # the inner macro binds v again: its v is its own, not the pair's
    assert _eval("self.all(k, v, v.all(v, v > 0) && k != 'z')", {"a": [1, 2]}) == (True, None)
    assert _eval("self.all(k, v, v.exists(k, k == 2) && k == 'a')", {"a": [1, 2]}) == (True, None)
    assert _eval("self.a.map(v, v * 2).all(k, v, v > k)", {"a": [1, 2]}) == (True, None)


def test_helpers_are_reserved() -> None:
    # a rule may not reach kzgit's helpers (the API server knows no such name)
    for src in ("__kzgit_pairs(self).size() > 0", "self.all(k, __kzgit_v1, true)"):
        with pytest.raises(cel_k8s.CompileError) as e:
            cel_k8s.compile_expression(src)
        assert "undeclared reference to '__kzgit" in str(e.value) and not e.value.unsupported


def test_errors_name_the_rule_as_written() -> None:
    with pytest.raises(cel_k8s.CompileError) as e:
        cel_k8s.compile_expression("self.all(k, v, k + 1)")
    assert "__kzgit" not in str(e.value) and not e.value.unsupported
    got, err = _eval("self.x.all(k, v, true)", {"x": 1})
    assert got is None and err is not None and "__kzgit" not in err and "<iter_range>" in err


@pytest.mark.parametrize("src,value,want", [
    # lists library (k8s.io/apiserver pkg/cel/library/lists.go) beside the strings extension's
    ("self.a.indexOf('b')", {"a": ["a", "b", "b"]}, 1),
    ("self.a.lastIndexOf('b')", {"a": ["a", "b", "b"]}, 2),
    ("self.s.indexOf('b')", {"s": "abb"}, 1),
    ("self.s.lastIndexOf('b')", {"s": "abb"}, 2),
    ("self.s.indexOf('b', 2)", {"s": "abb"}, 2),
    ("self.a.indexOf(1.0)", {"a": [0, 1]}, 1),
    ("self.a.indexOf(true)", {"a": [1, True]}, 1),
    ("self.a.indexOf({'x': [1]})", {"a": [{"x": [2]}, {"x": [1]}]}, 1),
    ("'abc'.indexOf('c') + [1, 2].indexOf(2) + [1].reverse()[0]", None, 4),
    ("string(1) + string(b'x')", None, "1x"),
    # string() of an IP or CIDR (ip.go, cidr.go), and of anything else as before
    ("string(ip('2001:DB8::1'))", None, "2001:db8::1"),
    ("string(cidr('192.168.0.0/24').ip())", None, "192.168.0.0"),
    ("string(cidr('192.168.0.1/24').masked())", None, "192.168.0.0/24"),
    ("string(self.n) + string(ip('1.2.3.4'))", {"n": 1}, "11.2.3.4"),
    ("type(cidr('::1/128')) == net.CIDR && type(ip('::1')) != net.CIDR && type(1) != net.IP", None, True),
    # sortBy over objects, as Gateway API style rules use it
    ("self.l.sortBy(e, e.p).map(e, e.n)", {"l": [{"n": "a", "p": 3}, {"n": "b", "p": 1}]}, ["b", "a"]),
])
def test_real_shaped(src: str, value: Any, want: Any) -> None:
    assert _eval(src, value) == (want, None)


def test_format_library_on_values() -> None:
    rule = "!format.dns1123Label().validate(self.name).hasValue()"
    assert _eval(rule, {"name": "web-1"}) == (True, None)
    assert _eval(rule, {"name": "Web_1"}) == (False, None)
    msg = "format.named(self.f).orValue(format.labelValue()).validate(self.v).orValue([]).join('; ')"
    assert _eval(msg, {"f": "dns1035Label", "v": "1abc"})[0].startswith("a DNS-1035 label must consist")
    assert _eval(msg, {"f": "nosuch", "v": "ok"}) == ("", None)
    assert _eval("format.uri().validate('not a uri').value()") == (
        ['parse "not a uri": invalid URI for request'], None)
    assert _eval("format.dns1123Label().validate('a.b').value()") == (["must not contain dots"], None)


def test_unknown_format_is_an_error_on_the_crd() -> None:
    with pytest.raises(cel_k8s.CompileError) as e:
        cel_k8s.compile_expression("format.nosuch().validate(self) == optional.none()")
    assert not e.value.unsupported


def test_an_optional_result_is_no_crash() -> None:
    # a rule (or messageExpression) whose result is an optional: not a boolean, not a string
    got, err = _eval("format.dns1123Label().validate(self.n)", {"n": "a"})
    assert err is None and repr(got) == "a value of type optional"


def test_a_tree_too_deep_is_not_evaluated_never_a_crash() -> None:
    # 3,000 terms: deeper than Python's stack; a warning (kzgit's limit), never a RecursionError
    src = "self.all(k, v, " + " + ".join(["1"] * 3000) + " > 0)"
    with pytest.raises(cel_k8s.CompileError) as e:
        cel_k8s.compile_expression(src)
    assert e.value.unsupported and "nested too deeply" in str(e.value)


SPEC: List[Dict[str, str]] = json.loads(
    (Path(__file__).parent / "data" / "cel_rewrite" / "spec_expressions.json").read_text(encoding="utf-8"))


def _outcome(env: Any, src: str) -> Tuple[Any, ...]:
    try:
        program = env.compile(src)
    except RuntimeError:
        return ("does not compile",)
    try:
        value = program.eval(data={"self": None})
    except (RuntimeError, ValueError, TypeError):   # the runtime raises for some errors
        return ("raises",)
    if value.type() == cel_k8s.T.ERROR:
        try:
            value.value()
        except TypeError:
            return ("optional",)
        return ("error",)
    plain = value.plain_value()
    if isinstance(plain, float) and plain != plain:
        return ("nan",)
    return ("value", type(plain).__name__, repr(plain))


def test_spec_expressions_round_trip() -> None:
    # every conformance expression of the CEL spec, parsed and written back, evaluates as the
    # expression itself does: the rewrite never changes what an untouched part of a rule means
    env = cel_k8s.environment()
    assert len(SPEC) >= 900
    differ = [(c["name"], c["expr"]) for c in SPEC
              if _outcome(env, unparse(parse(c["expr"]))) != _outcome(env, c["expr"])]
    assert differ == []
