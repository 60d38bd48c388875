"""Parses kept by their text (kzgit.yamlio.parsed): a text parsed again gives what a fresh
parse gives, as a copy of its own, and what is not a plain tree is parsed again each time."""
from __future__ import annotations

from typing import Iterator

import pytest

from kzgit.errors import YamlError
from kzgit.yamlio import load_documents, load_yaml11, parsed
from kzgit.yamlio.tree import DupKeys, LazyError


@pytest.fixture(autouse=True)
def empty_tables() -> Iterator[None]:
    parsed.forget()
    yield
    parsed.forget()


def test_a_text_parsed_again_is_a_copy_of_its_own() -> None:
    text = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n"
    first = load_documents(text, "a.yaml", keep=True)
    first[0]["data"]["k"] = "changed by a build"
    again = load_documents(text, "b.yaml")
    assert again == [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"},
                      "data": {"k": "v"}}]
    assert parsed.recall(parsed.DOCUMENTS, text.decode()) is not parsed.recall(
        parsed.DOCUMENTS, text.decode())


def test_kustomization_parses_are_kept_and_strict_ones_are_not() -> None:
    text = "resources: [a.yaml]\nnamePrefix: on\n"
    assert load_yaml11(text, "kustomization.yaml", keep=True) == {"resources": ["a.yaml"],
                                                                 "namePrefix": True}
    assert parsed.recall(parsed.YAML11, text) == {"resources": ["a.yaml"], "namePrefix": True}
    dup = "a: 1\na: 2\n"
    with pytest.raises(YamlError, match="k.yaml"):
        load_yaml11(dup, "k.yaml", strict=True, keep=True)
    assert load_yaml11(dup, "k.yaml", keep=True) == {"a": 2}
    # a strict read of a text kept from a lenient one still fails as strict
    with pytest.raises(YamlError, match="again.yaml"):
        load_yaml11(dup, "again.yaml", strict=True)


def test_a_parse_not_asked_to_be_kept_is_not() -> None:
    text = "kind: A\nmetadata: {name: a}\n"
    load_documents(text, "a.yaml")
    load_yaml11(text, "k.yaml")
    assert not parsed._TABLES[parsed.DOCUMENTS] and not parsed._TABLES[parsed.YAML11]


def test_what_is_not_a_plain_tree_is_parsed_again() -> None:
    alias = "a: &x {k: v}\nb: *x\n"
    got = load_documents(alias, "alias.yaml", keep=True)
    with pytest.raises(KeyError):
        parsed.recall(parsed.DOCUMENTS, alias)   # an alias shares a node: never kept
    assert got == [{"a": {"k": "v"}, "b": {"k": "v"}}]
    dup = "kind: A\nkind: B\n"
    assert isinstance(load_documents(dup, "p.yaml", first_wins=True, keep=True)[0], DupKeys)
    # the patch reader's DupKeys is not the resource reader's answer: that one fails
    with pytest.raises(YamlError, match="r.yaml"):
        load_documents(dup, "r.yaml")
    lazy = "kind: A\nv: !!binary '%%%'\n"
    first = load_documents(lazy, "one.yaml", keep=True)[0]["v"]
    second = load_documents(lazy, "two.yaml")[0]["v"]
    assert isinstance(first, LazyError) and isinstance(second, LazyError)
    assert "one.yaml" in first.error and "two.yaml" in second.error   # each names its file


def test_an_error_is_never_kept() -> None:
    bad = "a: [1,\n"
    for name in ("x.yaml", "y.yaml"):
        with pytest.raises(YamlError, match=name):
            load_documents(bad, name, keep=True)


def test_a_full_table_starts_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parsed, "MAX_CHARS", 40)
    texts = [f"k: v{i}\nother: {'x' * 10}\n" for i in range(3)]
    for t in texts:
        load_yaml11(t, keep=True)
    kept = [t for t in texts if t in parsed._TABLES[parsed.YAML11]]
    assert kept == texts[2:]   # the third did not fit beside the first two
    assert parsed._CHARS[parsed.YAML11] == len(texts[2])


def _ordered(value: object) -> object:
    # a tree as pairs, so that == compares the mappings' key order too
    if isinstance(value, dict):
        return [(k, _ordered(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


def test_what_dump_read_back_keeps_is_what_the_reader_reads() -> None:
    # the promise parsed.reads_back makes, checked against the reader over strings built
    # to trouble a writer and a reader: YAML 1.1 words, numbers, dates, indicators, spaces at the ends
    import itertools
    import random

    from kzgit.yamlio import dump_read_back
    rng = random.Random(7)
    words = ["on", "Off", "y", "NO", "null", "~", "1", "0x1F", "0o17", "017", "1_000", "1e3",
             ".5", "-.inf", ".NaN", "2001-12-14", "12:30:45", "true", "", " ", "a b", " a",
             "a ", "#x", "a #b", "a: b", "- a", "? a", "[a]", "{a}", "*a", "&a", "!a", "|",
             ">", "'a'", '"a"', "a,b", "@a", "`a", "%a", "=", "<<", "-", "---", "..."]
    alphabet = "ab:#-?[]{},&*!|>'\"%@` =.~0123456789_+/\\"
    words += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(400)]
    checked = 0
    for i, (key, value) in enumerate(itertools.product(words, words)):
        if i % 29:
            continue
        tree = {"resources": [value, "x.yaml"], key or "k": {"z": value, "a": [True, None, 3]},
                "namespace": value, "n": [-12, (1 << 63) - 1, -(1 << 63), {}, []]}
        parsed.forget()
        text = dump_read_back(tree)
        kept = parsed._TABLES[parsed.YAML11].get(text)
        if key == "<<":
            assert kept is None   # the reader merges: nothing kept, the build reads it
            continue
        assert kept is not None, tree
        parsed.forget()
        assert _ordered(kept) == _ordered(tree)
        assert _ordered(load_yaml11(text)) == _ordered(kept), (tree, text)
        checked += 1
    assert checked > 2000


def test_dump_read_back_keeps_nothing_the_reader_could_read_otherwise() -> None:
    from kzgit.yamlio import dump_read_back
    for tree in ({"replicas": [{"name": "a", "count": 1.0}]}, {"n": 1 << 64},
                 {"patch": "a: 1\nb: 2\n"}, {"k": "caf\u00e9"}, {"k": "tab\there"},
                 {"<<": {"a": "b"}}):
        text = dump_read_back(tree)
        assert text not in parsed._TABLES[parsed.YAML11], tree
