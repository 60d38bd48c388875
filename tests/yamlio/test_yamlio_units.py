"""Unit tables for kzgit.yamlio: typing, bounds, errors, key order, numbers, Go JSON.

Every expectation here was observed with ``kubectl kustomize`` (v1.32.4,
Kustomize v5.5.0) or follows go-yaml v2/v3's documented resolution rules.
"""
from __future__ import annotations

import math
from typing import Any

import pytest

from kzgit.errors import YamlError
from kzgit.yamlio import dump, dump_documents, go_json_dumps, key_less, load_documents, load_yaml11, sorted_keys
from kzgit.yamlio.gonum import format_float_g, format_float_json, yaml_number_text


def one(text: str) -> Any:
    docs = load_documents("apiVersion: v1\nkind: T\nmetadata:\n  name: x\nv: " + text + "\n", "r.yaml")
    assert len(docs) == 1
    return docs[0]["v"]


# go-yaml v3 typing of plain scalars (go-yaml's resolve table, kubectl error dumps).
V3_TYPING = [
    ("yes", "yes"), ("no", "no"), ("on", "on"), ("off", "off"), ("y", "y"), ("n", "n"), ("Y", "Y"),
    ("True", True), ("TRUE", True), ("false", False), ("FALSE", False),
    ("~", None), ("null", None), ("Null", None), ("NULL", None), ("", None),
    ("0123", 83), ("0o17", 15), ("0O17", 15), ("0x1F", 31), ("0X1f", 31), ("1_000", 1000), ("1__", 1),
    ("+12", 12), ("-0", 0), ("0b101", 5), ("-0b101", -5), ("08", 8.0), ("09", 9.0),
    ("1.0", 1.0), ("1e3", 1000.0), (".5", 0.5), ("-.5", -0.5), ("+.5", 0.5), ("1.", 1.0),
    ("9223372036854775807", 9223372036854775807), ("18446744073709551615", 18446744073709551615),
    ("99999999999999999999", 1e20), ("-9223372036854775809", -9.223372036854776e18),
    ("1e400", "1e400"), ("0b", "0b"), ("0x", "0x"), ("_1", "_1"), ("1:20", "1:20"), ("<<", "<<"),
    ("=", "="), (".", "."), ("v1.2", "v1.2"), ("12abc", "12abc"), ("1e", "1e"),
    ("2001-12-14", "2001-12-14T00:00:00Z"),
    ("2001-12-14t21:59:43.10-05:00", "2001-12-14T21:59:43.1-05:00"),
    ("2001-12-14 21:59:43.10", "2001-12-14T21:59:43.1Z"),
    ("2001-12-14T21:59:43+00:00", "2001-12-14T21:59:43Z"),
    ("2001-1-2", "2001-01-02T00:00:00Z"), ("2000-02-29", "2000-02-29T00:00:00Z"),
    ("2001-13-14", "2001-13-14"), ("2001-02-30", "2001-02-30"), ("1900-02-29", "1900-02-29"),
    ("20011214", 20011214), ("2001-12-14T25:00:00Z", "2001-12-14T25:00:00Z"),
    ("!!binary aGVsbG8=", "hello"), ("!!str 123", "123"), ("!!int \"12\"", 12), ("!!float 1", 1.0),
    ("! 12", 12), ("!foo bar", "bar"), ("!!timestamp 2001-12-14", "2001-12-14T00:00:00Z"),
    ("'yes'", "yes"), ('"0123"', "0123"),
]


@pytest.mark.parametrize("text,want", V3_TYPING)
def test_v3_typing(text: str, want: Any) -> None:
    got = one(text)
    assert got == want and type(got) is type(want), (text, got)


V2_TYPING = [
    ("yes", True), ("Yes", True), ("on", True), ("ON", True), ("y", True), ("Y", True),
    ("no", False), ("off", False), ("n", False), ("N", False), ("true", True),
    ("0123", 83), ("1_000", 1000), ("2001-12-14", "2001-12-14"), ("~", None), ("'yes'", "yes"),
]


@pytest.mark.parametrize("text,want", V2_TYPING)
def test_v2_typing(text: str, want: Any) -> None:
    got = load_yaml11("v: " + text + "\n", "kustomization.yaml")["v"]
    assert got == want and type(got) is type(want), (text, got)


def test_yaml11_duplicate_keys_last_wins() -> None:
    assert load_yaml11("resources:\n- a\nresources:\n- b\n", "kustomization.yaml") == {"resources": ["b"]}


def test_yaml11_empty_is_none() -> None:
    assert load_yaml11("", "k.yaml") is None
    assert load_yaml11("# only a comment\n", "k.yaml") is None


FOLDED = [  # kubectl kustomize results for ">" block scalars (the go-yaml v3 emitter quirk)
    (">\n  a\n    b\n  c\n", "a\n\n  b\nc\n"),
    (">\n  a\n\n    b\n  c\n", "a\n\n\n  b\nc\n"),
    (">-\n  a\n   b\n", "a\n\n b"),
    (">\n  a\n  \tb\n  c\n", "a\n\n\tb\nc\n"),
    (">4\n   a\n  b\n    c\n", " a\nb\n  c\n"),
    (">\n  x y\n  z\n\n\n    w\n  q\n    r\n", "x y z\n\n\n\n  w\nq\n\n  r\n"),
    (">\n  a \n    b\n", "a \n  b\n"),
    (">\n  plain\n  folded\n", "plain folded\n"),
]


@pytest.mark.parametrize("block,want", FOLDED)
def test_folded_block_scalars(block: str, want: str) -> None:
    doc = load_documents("k: " + block.replace("\n", "\n  ").rstrip(" ") , "r.yaml")[0]
    assert doc["k"] == want


# ------------------------------------------------------------------ errors

def _err(text: str) -> str:
    with pytest.raises(YamlError) as ei:
        load_documents(text, "res.yaml")
    assert "res.yaml" in str(ei.value)
    return str(ei.value)


def test_duplicate_key_message_matches_kustomize() -> None:
    # Conformance case yaml-io/duplicatekeys: "line 19: mapping key "env" already defined at line 16".
    text = "a: 1\nb:\n  c: 1\n  d: 2\n  c: 3\n"
    assert 'line 5: mapping key "c" already defined at line 3' in _err(text)


def test_duplicate_key_lines_are_per_document() -> None:
    text = "a: 1\n---\nx: 1\ny: 2\nx: 3\n"
    assert 'line 3: mapping key "x" already defined at line 1' in _err(text)


def test_duplicate_key_quoted_and_plain_text_collide() -> None:
    assert "already defined" in _err('data:\n  "1": a\n  1: b\n')


@pytest.mark.parametrize("text,why", [
    (".inf", "unsupported value"), ("-.inf", "unsupported value"), ("+.Inf", "unsupported value"),
    (".nan", "unsupported value"), (".NaN", "unsupported value"),
    ("!!int f", "cannot decode !!str `f` as a !!int"), ("!!bool x", "cannot decode !!str `x` as a !!bool"),
])
def test_undecodable_scalars_fail_when_decoded(text: str, why: str) -> None:
    # kyaml keeps the node: the value reads as its text until kustomize decodes the resource
    from kzgit.yamlio.tree import LazyError, undecodable
    doc = load_documents("a: " + text + "\nb: c\n", "res.yaml")[0]
    assert isinstance(doc["a"], LazyError) and doc["a"] == text.split()[-1]
    err = undecodable(doc)
    assert err is not None and why in err and "res.yaml" in err and "line 1" in err
    with pytest.raises(YamlError, match="unsupported value|cannot decode"):
        dump(doc)


@pytest.mark.parametrize("text", [".inf", ".nan", "!!int f"])
def test_undecodable_scalars_fail_at_once_in_yaml11(text: str) -> None:
    # go-yaml v2 (a kustomization file) converts to JSON at once
    with pytest.raises(YamlError):
        load_yaml11("a: " + text + "\n", "kustomization.yaml")


@pytest.mark.parametrize("key", ["1", "true", "~", "1.5", "2001-12-14"])
def test_non_string_keys_are_errors(key: str) -> None:
    assert "unsupported type" in _err("data:\n  " + key + ": a\n")


def test_bad_separator() -> None:
    assert "invalid document separator: --- a: 1" in _err("a: 1\n--- a: 1\nb: 2\n")


def test_malformed_yaml_names_file() -> None:
    assert "res.yaml" in _err("a: [1, 2\n")


def test_control_characters_in_input() -> None:
    _err("a: b\x01c\n")


# ------------------------------------------------------------------ bounds (alias expansion, depth)

def test_alias_bomb_fails_fast() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ",".join(["*" + prev] * 9) + "]")
    # the expansion budget stops it (how fast is benchmarks' business, not a unit test's)
    msg = _err("\n".join(lines) + "\n")
    assert "aliases expand the document by more than 1000000 nodes" in msg


def test_alias_expansion_makes_independent_copies() -> None:
    doc = load_documents("a: &x {k: [1]}\nb: *x\nc: *x\n", "r.yaml")[0]
    assert doc["a"] == doc["b"] == doc["c"] == {"k": [1]}
    doc["b"]["k"].append(2)
    assert doc["a"] == {"k": [1]} and doc["c"] == {"k": [1]}


def test_honest_anchor_reuse_loads() -> None:
    text = "base: &b {" + ", ".join(f"k{i}: v{i}" for i in range(200)) + "}\n" + "".join(
        f"u{i}: *b\n" for i in range(2000))
    doc = load_documents(text, "r.yaml")[0]
    assert len(doc) == 2001 and doc["u1999"]["k199"] == "v199"


def test_recursive_alias_is_an_error() -> None:
    assert "contains itself" in _err("a: &a [*a]\n")


def test_merge_keys() -> None:
    doc = load_documents("b: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\nn:\n  <<: [{p: 1, q: 1}, {p: 2, r: 2}]\n"
                         "q: {\"<<\": {a: 1}, b: 2}\n", "r.yaml")[0]
    assert doc["m"] == {"x": 1, "y": 3}
    assert doc["n"] == {"p": 1, "q": 1, "r": 2}
    assert doc["q"] == {"b": 2}  # a quoted "<<" key is dropped (kyaml Clear("<<"))


def test_deep_block_nesting_loads_and_dumps() -> None:
    n = 3000
    text = "a:\n" + "".join(" " * i + f"k{i}:\n" for i in range(1, n)) + " " * n + "v: 1\n"
    doc = load_documents(text, "deep.yaml")[0]
    assert dump(doc).count("\n") == n + 1


@pytest.mark.parametrize("n", [10_001, 100_000])
def test_deep_flow_nesting_is_refused_without_crashing(n: int) -> None:
    # libyaml's composer recurses in C and would crash near 100 000 levels.
    assert "exceeded max depth of 10000" in _err("a: " + "[" * n + "]" * n + "\n")


def test_many_documents() -> None:
    text = "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\n" for i in range(5000))
    docs = load_documents(text, "many.yaml")
    assert len(docs) == 5000 and docs[-1]["metadata"]["name"] == "c4999"


def test_large_file_loads() -> None:
    big = "x" * 1000
    body = "".join(f"  k{i}: {big}\n" for i in range(50_000))  # ~50 MB
    docs = load_documents("data:\n" + body, "big.yaml")
    assert len(docs[0]["data"]) == 50_000


def test_empty_and_null_documents_dropped() -> None:
    assert load_documents("", "e.yaml") == []
    assert load_documents("---\n# c\n---\nnull\n---\n~\n---\na: 1\n", "e.yaml") == [{"a": 1}]


def test_crlf() -> None:
    assert load_documents(b"a: |\r\n  x\r\n  y\r\nb: 1\r\n", "w.yaml") == [{"a": "x\ny\n", "b": 1}]


def test_separator_comment_and_unterminated() -> None:
    assert load_documents("a: 1\n--- # next\nb: 2\n---", "s.yaml") == [{"a": 1}, {"b": 2}]


def test_only_first_document_of_a_part() -> None:
    # kio decodes each "---"-separated part once: a "..." end marker hides the rest.
    assert load_documents("a: 1\n...\nb: 2\n", "s.yaml") == [{"a": 1}]


# ------------------------------------------------------------------ output

def test_dump_documents_joins() -> None:
    assert dump_documents([]) == ""
    assert dump_documents([{"a": 1}, {"b": [1, {"c": None}]}]) == "a: 1\n---\nb:\n- 1\n- c: null\n"


@pytest.mark.parametrize("value,text", [
    ({}, "{}"), ([], "[]"), (None, "null"), (True, "true"), (False, "false"), ("", '""'),
    (1.0, "1"), (1e3, "1000"), (1e20, "1e+20"), (12345678.9, "1.23456789e+07"), (1e-6, "1e-06"),
    (1.5, "1.5"), (6.02e23, "6.02e+23"), (0.1, "0.1"), (-0.0, "0"), (2.0 ** 63, "9223372036854776000"),
    (18446744073709551615, "18446744073709551615"), (1.2345678901234567e18, "1234567890123456800"),
    ("yes", '"yes"'), ("0123", '"0123"'), ("1:20", '"1:20"'), ("<<", "<<"), ("a: b", "'a: b'"),
    ("a #b", "'a #b'"), (" a", "' a'"), ("it's: x", "'it''s: x'"), ("-", "'-'"), ("a:b", "a:b"),
    ("\U0001F600", '"\\U0001F600"'), ("\ufeffa", '"\\uFEFF\\x61"'), ("a\x85b", "a b"),
    ("x\ny", "|-\n  x\n  y"), ("x\n", "|\n  x"), ("x\n\n", "|+\n  x\n"), (" x\ny", "|2-\n   x\n  y"),
    ("line1 \nline2", '"line1 \\nline2"'),
])
def test_scalar_output(value: Any, text: str) -> None:
    assert dump({"k": value}) == "k: " + text + "\n"


@pytest.mark.parametrize("bad", ["a\x7fb", "\ufffe", "a\x90"])
def test_unprintable_after_json_is_an_error(bad: str) -> None:
    with pytest.raises(YamlError):
        dump({"k": bad})


def test_inf_cannot_be_dumped() -> None:
    with pytest.raises(YamlError):
        dump({"k": math.inf})


def test_long_keys_use_explicit_form() -> None:
    assert dump({"k" * 129: 1}) == "? " + "k" * 129 + "\n: 1\n"
    assert dump({"k" * 128: 1}) == "k" * 128 + ": 1\n"


def test_natural_key_order() -> None:
    keys = ["*.x", "-", "_x", "1", "2", "10", "A", "Zeta", "a-b", "a.b", "a/b", "a_b", "a~", "a1", "a2",
            "a10", "aB", "x0", "x00", "x1", "x01", "x001", "x9", "x09", "x10", "yes", "zeta", "ä", "é1"]
    shuffled = list(reversed(keys))
    assert sorted_keys(dict.fromkeys(shuffled)) == keys
    assert key_less("a2", "a10") and not key_less("a10", "a2")


@pytest.mark.parametrize("f,g,j", [
    (1e20, "1e+20", "100000000000000000000"), (12345678.9, "1.23456789e+07", "12345678.9"),
    (1e-7, "1e-07", "1e-7"), (1e21, "1e+21", "1e+21"), (0.000001, "1e-06", "0.000001"),
    (123456.5, "123456.5", "123456.5"), (5e-324, "5e-324", "5e-324"), (-1.5, "-1.5", "-1.5"),
])
def test_float_text(f: float, g: str, j: str) -> None:
    assert format_float_g(f) == g
    assert format_float_json(f) == j


def test_yaml_number_text() -> None:
    assert yaml_number_text(1e3) == "1000"
    assert yaml_number_text(2.0 ** 64) == "1.8446744073709552e+19"


def test_go_json() -> None:
    obj = {"kind": "ConfigMap", "name": "", "data": {"b": "<a&b>", "a": "é\u2028\n\x01\x08"}}
    assert go_json_dumps(obj) == ('{"data":{"a":"é\\u2028\\n\\u0001\\b","b":"\\u003ca\\u0026b\\u003e"},'
                                  '"kind":"ConfigMap","name":""}')
    assert go_json_dumps({"f": 1.0, "g": 1e21, "h": 1e-7, "l": [True, None, 3]}) == \
        '{"f":1,"g":1e+21,"h":1e-7,"l":[true,null,3]}'


def test_go_json_empty_configmap_hash() -> None:
    # kubectl: an empty ConfigMap hashes to 6ct58987ht.
    import hashlib
    h = hashlib.sha256(go_json_dumps({"kind": "ConfigMap", "name": "", "data": ""}).encode()).hexdigest()[:10]
    enc = h.translate(str.maketrans({"0": "g", "1": "h", "3": "k", "a": "m", "e": "t"}))
    assert enc == "6ct58987ht"
