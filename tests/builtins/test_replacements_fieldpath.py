"""Unit tables for kzgit.builtins.fieldpath (cases from kyaml/utils/pathsplitter_test.go
and kyaml/yaml/match_test.go at api/v0.18.0, plus kzgit's own)."""
from __future__ import annotations

from typing import Any, List

import pytest

from kzgit.yamlio.tree import MAPPING, SCALAR
from kzgit.builtins.fieldpath import (
    CREATED, MISSING, FieldPathError, convert_slice_index, lookup, path_match, path_splitter,
    smarter_path_splitter, walk_fieldspec,
)


@pytest.mark.parametrize("path,want", [
    ("", [""]),
    ("s", ["s"]),
    ("a/b/c", ["a", "b", "c"]),
    ("/a/b/c", ["a", "b", "c"]),
    ("a/b[]/c", ["a", "b[]", "c"]),
    (r"a/b\/c/d\/e/f", ["a", "b/c", "d/e", "f"]),
    (r"metadata/annotations/nginx.ingress.kubernetes.io\/auth-secret",
     ["metadata", "annotations", "nginx.ingress.kubernetes.io/auth-secret"]),
])
def test_path_splitter(path: str, want: List[str]) -> None:
    assert path_splitter(path, "/") == want


@pytest.mark.parametrize("path,want", [
    ("spec.replicas", ["spec", "replicas"]),
    ("spec.data.[name=first].key", ["spec", "data", "[name=first]", "key"]),
    ("spec.data.[.name=.first].key", ["spec", "data", "[.name=.first]", "key"]),
    ("spec.data.[name.=first.].key", ["spec", "data", "[name.=first.]", "key"]),
    ("spec.data.[name=f.i.r.s.t.].key", ["spec", "data", "[name=f.i.r.s.t.]", "key"]),
    (r"spec\.replicas", ["spec.replicas"]),
    ("spec.data.[name=f.i.[r.s.t..key", ["spec", "data", "[name=f.i.[r.s.t..key"]),
    ("metadata.annotations.[a.b.c/d.e.f-g.]", ["metadata", "annotations", "a.b.c/d.e.f-g."]),
])
def test_smarter_path_splitter(path: str, want: List[str]) -> None:
    assert smarter_path_splitter(path, ".") == want


def test_convert_slice_index() -> None:
    assert convert_slice_index(["spec", "ports[0]", "port"]) == ["spec", "ports", "0", "port"]
    assert convert_slice_index(["[name=x]", "a[b]"]) == ["[name=x]", "a[b]"]


DOC = {"spec": {"containers": [{"name": "app", "image": "a", "args": ["x", "-jar"]},
                               {"name": "myapp", "image": "b"}, "scalar"]}}


def _values(slots: Any) -> List[Any]:
    return [c[k] for c, k in slots]


def test_lookup_forms() -> None:
    assert lookup(DOC, ["spec", "containers", "0", "image"]) == "a"
    assert lookup(DOC, ["spec", "containers", "-"]) == "scalar"
    assert lookup(DOC, ["spec", "containers", "[name=app]", "image"]) == "a"   # exact, not regex
    assert lookup(DOC, ["spec", "containers", "[name=ap]"]) is MISSING
    assert lookup(DOC, ["spec", "containers", "0", "args", "[=-jar]"]) == "-jar"
    assert lookup(DOC, ["spec", "nope", "x"]) is MISSING
    assert lookup(DOC, [" spec ", "", "containers", "9"]) is MISSING
    with pytest.raises(FieldPathError, match="wildcard is not supported in PathGetter"):
        lookup(DOC, ["spec", "*"])
    with pytest.raises(FieldPathError, match="expected SequenceNode but got MappingNode"):
        lookup(DOC, ["spec", "0"])


def test_path_match_regex_wildcard_index() -> None:
    # [k=v] in a PathMatcher is an unanchored regex (match.go visitElem)
    assert _values(path_match(DOC, ["spec", "containers", "[name=app]", "image"])) == ["a", "b"]
    assert _values(path_match(DOC, ["spec", "containers", "[name=^app$]", "image"])) == ["a"]
    two = {"l": [{"name": "a"}, {"name": "b"}]}
    assert _values(path_match(two, ["l", "*", "name"])) == ["a", "b"]
    with pytest.raises(FieldPathError, match="expected MappingNode but got ScalarNode"):
        path_match(DOC, ["spec", "containers", "*", "name"])   # the "scalar" element
    assert _values(path_match(DOC, ["spec", "containers", "0", "args", "[=jar]"])) == ["-jar"]
    with pytest.raises(FieldPathError, match="index 5 specified but only 3 elements found"):
        path_match(DOC, ["spec", "containers", "5"])


def test_path_match_create() -> None:
    doc: dict = {"spec": {}}
    slots = path_match(doc, ["spec", "list", "0", "[name=n]", "value"], SCALAR)
    assert doc == {"spec": {"list": [[{"name": "n", "value": CREATED}]]}}
    assert len(slots) == 1
    doc2: dict = {"a": {"xs": [{"k": 1}]}}
    path_match(doc2, ["a", "xs", "1", "k"], SCALAR)        # index == len appends
    assert doc2 == {"a": {"xs": [{"k": 1}, {"k": CREATED}]}}
    doc3: dict = {}
    path_match(doc3, ["m"], MAPPING)
    assert doc3 == {"m": {}}


def test_walk_fieldspec_sequences_and_escapes() -> None:
    doc = {"spec": {"containers": [{"args": ["a"]}, {"args": ["b"]}, {"image": "x"}]},
           "metadata": {"annotations": {"a/b": "v"}}}
    seen: List[Any] = []
    walk_fieldspec(doc, "spec/containers/args", lambda s: seen.append(s[0][s[1]]))
    assert seen == [["a"], ["b"]]
    seen.clear()
    walk_fieldspec(doc, r"metadata/annotations/a\/b", lambda s: seen.append(s[0][s[1]]))
    assert seen == ["v"]
    seen.clear()
    walk_fieldspec(doc, "spec/containers[]/image", lambda s: seen.append(s[0][s[1]]))
    assert seen == ["x"]
