"""Replacement targets inside a scalar holding JSON or YAML (Kustomize 5.8; kzgit.builtins.structured).

What kzgit reproduces is checked byte for byte by recorded cases (tests/fixtures/replacements/
*-in-scalar-v5.8.1, tests/data/replacements/structured_yaml_styles-v5.8.1); this module checks
what it refuses, and says so, instead of writing other bytes, and the JSON indenter.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest

from kzgit.builder import BuildOptions, build
from kzgit.errors import BuildError
from kzgit.versions import parse
from kzgit.yamlio.gojson import go_json_indent


def _tree(root: Path, text: str, path: str, value: str = "new") -> Path:
    root.mkdir()
    docs = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "src"}, "data": {"v": value}},
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t"}, "data": {"conf": text}}]
    (root / "r.yaml").write_text("\n---\n".join(json.dumps(d) for d in docs))
    (root / "kustomization.yaml").write_text(
        "resources: [r.yaml]\nreplacements:\n- source: {kind: ConfigMap, name: src, fieldPath: data.v}\n"
        f"  targets:\n  - select: {{name: t}}\n    fieldPaths: ['data.conf.{path}']\n")
    return root


def _conf(root: Path, release: str = "5.8.1") -> Any:
    res = build(str(root), BuildOptions(kustomize_version=parse(release))).resources
    return {r.obj["metadata"]["name"]: r.obj for r in res}["t"]["data"]["conf"]


@pytest.mark.parametrize("text, why", [
    ("server:\n  host: old  # the host\n", "it holds comments"),
    ("# settings\nserver:\n  host: old\n", "it holds comments"),
    ("base: &b\n  host: old\nserver: *b\n", "a tag, an anchor or an alias"),
    ("---\nserver:\n  host: old\n", "a document marker"),
    ("server:\n  host: !!str old\n", "a tag, an anchor or an alias"),
])
def test_yaml_kzgit_cannot_write_back_is_refused_naming_why(tmp_path: Path, text: str, why: str) -> None:
    root = _tree(tmp_path / "k", text, "server.host")
    with pytest.raises(BuildError) as e:
        _conf(root)
    assert "replacement target 'data.conf.server.host': kzgit cannot write back the YAML text " \
           "of 'conf' as Kustomize 5.8 does" in str(e.value)
    assert why in str(e.value)


def test_a_typed_yaml_node_that_would_need_an_explicit_tag_is_refused(tmp_path: Path) -> None:
    root = _tree(tmp_path / "k", "server:\n  port: 8080\n", "server.port", value="db")
    with pytest.raises(BuildError, match="the !!int node 'port' would be written with an explicit tag"):
        _conf(root)


def test_yaml_text_written_back_keeping_styles(tmp_path: Path) -> None:
    root = _tree(tmp_path / "k", "server:\n    host: 'old'\n    port: 8080\nlist:\n    - a\n", "server.host",
                 value="8080")
    assert _conf(root) == "server:\n  host: '8080'\n  port: 8080\nlist:\n- a"


def test_json_text_indented_or_compact_as_the_original(tmp_path: Path) -> None:
    root = _tree(tmp_path / "k", '{\n  "server": {"host": "old", "b": [1.0, 1e21]}\n}', "server.host", "a&b")
    assert _conf(root) == ('{\n  "server": {\n    "b": [\n      1,\n      1e+21\n    ],\n'
                           '    "host": "a\\u0026b"\n  }\n}')
    root = _tree(tmp_path / "c", '{"server": {"host": "old"}}', "server.host", "a&b")
    assert _conf(root) == '{"server":{"host":"a\\u0026b"}}'


def test_before_5_8_the_path_does_not_enter_the_scalar(tmp_path: Path) -> None:
    root = _tree(tmp_path / "k", '{"server": {"host": "old"}}', "server.host")
    with pytest.raises(BuildError, match="wrong node kind: expected MappingNode but got ScalarNode"):
        _conf(root, "5.7.1")


def test_a_text_that_does_not_take_the_value_is_left_alone(tmp_path: Path) -> None:
    # kustomize: the JSON cannot be written back (an int node refuses "db"), the ordinary path
    # then sets a parsed copy: no change and no error
    root = _tree(tmp_path / "k", '{"port": 1}', "port", "db")
    assert _conf(root) == '{"port": 1}'


@pytest.mark.parametrize("value, want", [
    ({}, "{}"),
    ([], "[]"),
    ({"a": [], "b": {}}, '{\n  "a": [],\n  "b": {}\n}'),
    ([1, "x\\\"y", None], '[\n  1,\n  "x\\\\\\"y",\n  null\n]'),
    ({"k": {"n": [True]}}, '{\n  "k": {\n    "n": [\n      true\n    ]\n  }\n}'),
])
def test_go_json_indent(value: Dict[str, Any], want: str) -> None:
    assert go_json_indent(value) == want
    assert json.loads(go_json_indent(value)) == value
