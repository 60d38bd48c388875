"""Strategic merge table tests, expectations recorded with kubectl kustomize.

Inputs: ``tests/data/patch/smp_cases.yaml``; outputs recorded by
``tests/data/patch/record.py`` into ``smp_expected.json``.  Comparison is
semantic (parsed YAML, list order significant).
"""
from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest
import yaml

from kzgit.errors import BuildError
from kzgit.openapi import schema_for
from kzgit.patch.smp import merge
from helpers import TESTS

DATA = TESTS / "data" / "patch"
CASES: List[Dict[str, Any]] = yaml.safe_load((DATA / "smp_cases.yaml").read_text())
EXPECTED: Dict[str, Dict[str, str]] = json.loads((DATA / "smp_expected.json").read_text())


def _apply(case: Dict[str, Any]) -> Any:
    target = yaml.safe_load(case["target"])
    patch = yaml.safe_load(case["patch"])
    if case.get("select"):
        # kustomize copies a targeted patch and gives it the target's GVK
        patch = dict(patch, apiVersion=target["apiVersion"], kind=target["kind"])
    out = merge(target, patch, schema_for(target["apiVersion"], target["kind"]))
    if out is not None:
        # Resource.ApplySmPatch restores kind, name and namespace
        out["kind"] = target["kind"]
        out.setdefault("metadata", {})["name"] = target["metadata"]["name"]
        # The build pipeline (not merge) rewrites the annotations when it
        # strips its internal ones; an empty map is then removed.
        if out["metadata"].get("annotations") == {}:
            del out["metadata"]["annotations"]
    return out


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_smp_matches_kubectl(case: Dict[str, Any]) -> None:
    expected = EXPECTED[case["name"]]
    if "error" in expected:
        with pytest.raises(BuildError) as exc:
            _apply(case)
        assert str(exc.value).split(":")[0] in expected["error"]
        return
    docs = [d for d in yaml.safe_load_all(expected["output"]) if d is not None]
    got = _apply(case)
    assert ([got] if got is not None else []) == docs


def test_inputs_not_mutated() -> None:
    case = CASES[0]
    target = yaml.safe_load(case["target"])
    patch = yaml.safe_load(case["patch"])
    t0, p0 = json.dumps(target), json.dumps(patch)
    merge(target, patch, None)
    assert (json.dumps(target), json.dumps(patch)) == (t0, p0)
