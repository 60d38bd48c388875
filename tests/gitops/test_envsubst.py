"""fluxcd/pkg envsubst, case by case: the expectations of its own ``eval_test.go``
(TestExpand, TestExpandStrict; tag ``envsubst/v1.7.0``) and of its parser (``parse/parse.go``)."""
from __future__ import annotations

from typing import Dict, Tuple

import pytest

from kzgit.gitops.envsubst import SubstitutionError, evaluate, references


def _lenient(params: Dict[str, str]):  # the controller's mapping without strict mode
    return lambda name: (params.get(name, ""), True)


def _strict(params: Dict[str, str]):
    return lambda name: (params.get(name, ""), name in params)


# eval_test.go TestExpand: (params, input, output)
EXPAND = [
    ({}, "abcdEFGH28ij", "abcdEFGH28ij"),
    ({"var01": "abcdEFGH28ij"}, "${#var01}", "12"),
    ({"var01": "abcdEFGH28ij"}, "${var01^}", "AbcdEFGH28ij"),
    ({"var01": "abcdEFGH28ij"}, "${var01^^}", "ABCDEFGH28IJ"),
    ({"var01": "ABCDEFGH28IJ"}, "${var01,}", "aBCDEFGH28IJ"),
    ({"var01": "ABCDEFGH28IJ"}, "${var01,,}", "abcdefgh28ij"),
    ({"path_name": "/home/bozo/ideas/thoughts.for.today"}, "${path_name:11}",
     "ideas/thoughts.for.today"),
    ({"path_name": "/home/bozo/ideas/thoughts.for.today"}, "${path_name:11:5}", "ideas"),
    ({"var": "abc"}, "${var=xyz}", "abc"),
    ({}, "${var=xyz}", "xyz"),
    ({"default_var": "foo"}, "something ${var=${default_var}}", "something foo"),
    ({"default_var": "foo1"}, "foo: ${var=${default_var}-suffix}", "foo: foo1-suffix"),
    ({"default_var": "foo1"}, "foo: ${var=prefix${default_var}-suffix}", "foo: prefixfoo1-suffix"),
    ({}, "${var:=xyz}", "xyz"),
    ({"stringZ": "abcABC123ABCabc"}, "${stringZ/%abc/XYZ}", "abcABC123ABCXYZ"),
    ({"stringZ": "abcABC123ABCabc"}, "${stringZ/#abc/XYZ}", "XYZABC123ABCabc"),
    ({"stringZ": "abcABC123ABCabc"}, "${stringZ//abc/xyz}", "xyzABC123ABCxyz"),
    ({"stringZ": "abcABC123ABCabc"}, "${stringZ/abc/xyz}", "xyzABC123ABCabc"),
    ({"filename": "bash.string.txt"}, "${filename#*.}", "string.txt"),
    ({"filename": "path/to/file"}, "${filename#*/}", "to/file"),
    ({"filename": "/path/to/file"}, "${filename#*/}", "path/to/file"),
    ({"filename": "bash.string.txt"}, "${filename##*.}", "txt"),
    ({"filename": "path/to/file"}, "${filename##*/}", "file"),
    ({"filename": "/path/to/file"}, "${filename##*/}", "file"),
    ({"filename": "bash.string.txt"}, "${filename%.*}", "bash.string"),
    ({"filename": "bash.string.txt"}, "${filename%%.*}", "bash"),
    ({"var01": "abcdEFGH28ij"}, "${var=${var01^^}}", "ABCDEFGH28IJ"),
    ({"var01": "abcdEFGH28ij"}, "$${var01}", "${var01}"),
    ({"var01": "abcdEFGH28ij"}, "some text ${var01}$${var$${var01}$var01${var01}",
     "some text abcdEFGH28ij${var${var01}$var01abcdEFGH28ij"),
    ({"default_var": "foo"}, "something $${var=${default_var}}", "something ${var=foo}"),
    ({"stringZ": "foo/bar"}, r"${stringZ/\//-}", "foo-bar"),
    ({"stringZ": "foo/bar/baz"}, r"${stringZ//\//-}", "foo-bar-baz"),
    ({"default_var": "foo"}, "\\\\something ${var=${default_var}}", "\\\\something foo"),
    ({"stringZ": "foo.bar"}, "${stringZ/./}", "foobar"),
]


@pytest.mark.parametrize("params,text,want", EXPAND, ids=[c[1] for c in EXPAND])
def test_expand(params: Dict[str, str], text: str, want: str) -> None:
    assert evaluate(text, _lenient(params)) == want


# eval_test.go TestExpandStrict: a bare or transformed reference to an unset variable fails,
# a default operator supplies its value
@pytest.mark.parametrize("text", ["${missing}", "${#missing}", "${missing^}", "${missing^^}",
                                  "${missing,}", "${missing,,}", "${missing:0}",
                                  "${missing:0:10}", "${missing/pattern/replacement}",
                                  "${missing//pattern/replacement}"])
def test_strict_refuses_unset(text: str) -> None:
    with pytest.raises(SubstitutionError, match='variable not set \\(strict mode\\): "missing"'):
        evaluate(text, _strict({}))


@pytest.mark.parametrize("params,text,want", [
    ({"foo": "bar"}, "${foo}", "bar"),
    ({"foo": ""}, "${foo}", ""),
    ({"foo": "bar"}, "${missing:=default}", "default"),
    ({}, "${missing=default}", "default"),
    ({}, "${missing:-default}", "default"),
])
def test_strict_accepts(params: Dict[str, str], text: str, want: str) -> None:
    assert evaluate(text, _strict(params)) == want


def test_lenient_unset_is_empty() -> None:
    assert evaluate("replicas: ${REPLICAS}", _lenient({})) == "replicas: "


@pytest.mark.parametrize("text,error", [
    # parse.go parseFunc has no case for '-': the closing brace is missing
    ("${var-default}", "missing closing brace"),
    ("${}", "unable to parse variable name"),
    ("${var", "missing closing brace"),
    ("${var:=x", "unable to parse substitution within function"),
    ("${var:5:}", "unable to parse substitution within function"),
])
def test_what_it_refuses(text: str, error: str) -> None:
    with pytest.raises(SubstitutionError, match=error):
        evaluate(text, _lenient({}))


def test_plain_dollar_is_text() -> None:
    assert evaluate("cost: $5 and $HOME", _lenient({"HOME": "x"})) == "cost: $5 and $HOME"


def test_every_default_operator_yields_the_default_when_empty() -> None:
    # funcs.go lookupFunc: ':?' and ':+' fall back to toDefault, unlike a shell
    got: Tuple[str, ...] = tuple(evaluate(f"${{v{op}d}}", _lenient({})) for op in
                                 (":=", "=", ":-", ":?", ":+"))
    assert got == ("d",) * 5


def test_references() -> None:
    assert references("a ${X} b ${Y:=${Z}} $${W}") == ["X", "Y", "Z"]
