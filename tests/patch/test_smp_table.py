"""Strategic merge table tests, expectations recorded with kubectl kustomize.

One case a directory ``tests/data/patch/smp/<case>/``: ``target.yaml``, ``patch.yaml`` and a
kustomization applying it (``target`` selects when the case selects), in the fixture format, with
kubectl's ``expected.yaml`` or ``expected.err`` recorded by ``scripts/record_fixture.py --tables``.
Comparison is semantic (parsed YAML, list order significant).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest
import yaml

from kzgit.errors import BuildError
from kzgit.openapi import schema_for
from kzgit.patch.smp import merge
from helpers import DATA, expected_documents, expects_error, kubectl_stderr, table_cases

TABLE = DATA / "patch" / "smp"
CASES = table_cases(TABLE)


def _case(case_dir: Path) -> Dict[str, Any]:
    """The target and patch texts of a case, and its patch's target selector."""
    kust = yaml.safe_load((case_dir / "kustomization.yaml").read_text())
    return {"target": (case_dir / "target.yaml").read_text(), "patch": (case_dir / "patch.yaml").read_text(),
            "select": kust["patches"][0].get("target")}


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


@pytest.mark.parametrize("case_dir", CASES)
def test_smp_matches_kubectl(case_dir: Path) -> None:
    case = _case(case_dir)
    if expects_error(case_dir):
        with pytest.raises(BuildError) as exc:
            _apply(case)
        assert str(exc.value).split(":")[0] in kubectl_stderr(case_dir)
        return
    docs = expected_documents(case_dir)
    got = _apply(case)
    assert ([got] if got is not None else []) == docs


def test_inputs_not_mutated() -> None:
    case = _case(TABLE / "containers_merge_order")
    target = yaml.safe_load(case["target"])
    patch = yaml.safe_load(case["patch"])
    t0, p0 = json.dumps(target), json.dumps(patch)
    merge(target, patch, None)
    assert (json.dumps(target), json.dumps(patch)) == (t0, p0)
