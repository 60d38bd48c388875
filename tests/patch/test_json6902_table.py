"""JSON 6902 table tests, expectations recorded with kubectl kustomize.

One case a directory ``tests/data/patch/json6902/<case>/``: ``target.yaml``, ``patch.yaml`` (ops
as YAML or JSON) and a kustomization applying it, in the fixture format, with kubectl's
``expected.yaml`` or ``expected.err`` recorded by ``scripts/record_fixture.py --tables``.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Dict

import pytest
import yaml

from kzgit.errors import BuildError
from kzgit.builtins.patches import _json_ops
from kzgit.patch.json6902 import apply
from helpers import DATA, expected_documents, expects_error, kubectl_stderr, table_cases



class _Loader(yaml.SafeLoader):
    """SafeLoader that also reads ``1e3`` / ``1e-06`` as floats, as yaml.v3 does."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


def _load(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)


CASES = table_cases(DATA / "patch" / "json6902")

# kustomize calls StorePreviousId() before a JSON patch, so these internal
# annotations are part of the document the ops see (visible when an op moves
# or copies metadata/annotations); the pipeline strips them on output.
INTERNAL = {
    "internal.config.kubernetes.io/previousKinds": "Deployment",
    "internal.config.kubernetes.io/previousNames": "web",
    "internal.config.kubernetes.io/previousNamespaces": "default",
}


def _strip(obj: Dict[str, Any]) -> Dict[str, Any]:
    ann = obj.get("metadata", {}).get("annotations")
    if isinstance(ann, dict):
        for k in list(ann):
            if k.startswith("internal.config.kubernetes.io/"):
                del ann[k]
        if not ann:
            del obj["metadata"]["annotations"]
    return obj


@pytest.mark.parametrize("case_dir", CASES)
def test_json6902_matches_kubectl(case_dir: Path) -> None:
    target = _load((case_dir / "target.yaml").read_text())
    if target["kind"] == "Deployment":
        target["metadata"].setdefault("annotations", {}).update(INTERNAL)
    text = (case_dir / "patch.yaml").read_text()
    parsed, ops = _json_ops(text.encode("utf-8"), "patch.yaml")   # the parser the build runs
    assert parsed, "not a JSON 6902 patch"
    if expects_error(case_dir):
        with pytest.raises(BuildError) as exc:
            apply(target, ops, "patch.yaml")
        msg = str(exc.value).splitlines()[0]
        assert msg in kubectl_stderr(case_dir).replace('\\"', '"')
        return
    docs = expected_documents(case_dir, lambda text: yaml.load_all(text, Loader=_Loader))
    got = _strip(apply(target, ops, "patch.yaml"))
    assert [got] == docs


@pytest.mark.parametrize(
    "value, expected",
    [
        (9223372036854775807, 9223372036854776000),
        (9007199254740993, 9007199254740992),
        (2.0, 2),
        (1.5, 1.5),
        (1e21, 1e21),
        (1e20, 1e20),  # does not fit uint64: YAML reads a float
        (-9223372036854775808, -9.223372036854776e18),  # below int64 after rounding
        (18446744073709549568, 18446744073709550000),  # fits uint64
        (True, True),
        ("9223372036854775807", "9223372036854775807"),
    ],
)
def test_numbers_pass_through_float64(value: Any, expected: Any) -> None:
    out = apply({"a": value}, [], "p")
    assert out["a"] == expected and type(out["a"]) is type(expected)


def test_error_names_source_and_op() -> None:
    with pytest.raises(BuildError) as exc:
        apply({"a": 1}, [{"op": "remove", "path": "/b"}], "ops.yaml")
    text = str(exc.value)
    assert "Unable to remove nonexistent key: b" in text
    assert "ops.yaml" in text and '"op": "remove"' in text


def test_input_not_mutated() -> None:
    obj = {"a": {"b": [1, 2]}}
    apply(obj, [{"op": "add", "path": "/a/b/-", "value": 3}], "p")
    assert obj == {"a": {"b": [1, 2]}}


def test_a_mapping_is_not_a_list_of_operations() -> None:
    assert _json_ops(b"op: add\n", "p") == (False, [])


def test_negative_index_and_no_leading_slash() -> None:
    out = apply({"l": [1, 2, 3], "k": 1},
                [{"op": "remove", "path": "/l/-1"}, {"op": "add", "path": "ignored/x", "value": 5}], "p")
    assert out == {"l": [1, 2], "k": 1, "x": 5}
