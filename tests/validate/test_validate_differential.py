"""kzgit's verdict per resource equals ``kubernetes-validate``'s, same release and strictness.

The corpus is every resource of the kubectl-recorded fixtures' outputs plus mutations
of them (an unknown field, wrong types, a missing required field, a removed API
version).  Verdicts: valid, invalid, or no schema (kubernetes-validate's
SchemaNotFoundError; kzgit's missing-schema and not-served, which kzgit reports as an
error of its own).  Skipped when kubernetes-validate is not installed.
"""
from __future__ import annotations

import copy
import functools
import json
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from helpers import FIXTURES
from kzgit.config import ValidatePolicy
from kzgit.validate import Validator
from kzgit.yamlio import load_documents

# a runtime dependency (its schemas are the ones kzgit validates with): missing is a failure
import kubernetes_validate.utils as kv  # noqa: E402


def corpus() -> List[Dict[str, Any]]:
    seen, out = set(), []
    for f in sorted(FIXTURES.glob("*/*/expected.yaml")):
        for d in load_documents(f.read_bytes(), str(f)):
            if isinstance(d, dict) and isinstance(d.get("kind"), str) and isinstance(d.get("apiVersion"), str):
                key = json.dumps(d, sort_keys=True, default=str)
                if key not in seen:
                    seen.add(key)
                    out.append(d)
    return out


def mutations(d: Dict[str, Any]) -> Iterator[Tuple[str, Dict[str, Any]]]:
    m = copy.deepcopy(d)
    m["bogusField"] = 1
    yield "unknown top-level field", m
    m = copy.deepcopy(d)
    m.setdefault("metadata", {})["labels"] = "not-a-map"
    yield "labels not a map", m
    m = copy.deepcopy(d)
    m.setdefault("metadata", {})["name"] = 5
    yield "name not a string", m
    spec = d.get("spec")
    if isinstance(spec, dict) and spec:
        m = copy.deepcopy(d)
        m["spec"]["replica" if "replicas" in spec else "bogus"] = 3
        yield "unknown spec field", m
        if d["kind"] == "Deployment":
            m = copy.deepcopy(d)
            m["spec"]["template"]["spec"].pop("containers", None)
            yield "containers missing", m
            m = copy.deepcopy(d)
            m["spec"]["replicas"] = "3"
            yield "replicas a string", m
            m = copy.deepcopy(d)
            m["apiVersion"] = "extensions/v1beta1"
            yield "removed API version", m


def sample() -> List[Tuple[str, Dict[str, Any]]]:
    out: List[Tuple[str, Dict[str, Any]]] = []
    per_kind: Dict[str, int] = {}
    for d in corpus():
        label = f"{d['kind']}/{(d.get('metadata') or {}).get('name')}"
        out.append((label, d))
        per_kind[d["kind"]] = per_kind.get(d["kind"], 0) + 1
        if per_kind[d["kind"]] <= 3:  # mutations of a few of each kind keep the run short
            out += [(f"{label} ({what})", m) for what, m in mutations(d)]
    return out


def kv_verdict(d: Dict[str, Any], version: str, strict: bool) -> str:
    try:
        kv.validate(d, version, strict)
    except kv.ValidationError:
        return "invalid"
    except kv.SchemaNotFoundError:
        return "no schema"
    return "valid"


def kzgit_verdict(v: Validator, d: Dict[str, Any]) -> str:
    issues = v.check(d)
    assert issues is not None
    # kubernetes-validate has no schema for these; kzgit refuses what no schema knows in a
    # Kubernetes group (unknown-kind) or what a release removed (not-served)
    if any(i.code in ("missing-schema", "not-served", "unknown-kind") for i in issues):
        return "no schema"
    return "invalid" if issues else "valid"


@pytest.mark.parametrize("version,strict", [("1.29", True), ("1.33", False)])
def test_verdicts_agree(version: str, strict: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # kubernetes-validate re-reads its schema files for every resource; cache them for speed
    monkeypatch.setattr(kv, "schema_contents", functools.lru_cache(maxsize=None)(kv.schema_contents))
    v = Validator(ValidatePolicy(kubernetes_version=version, strict=strict))
    cases = sample()
    assert len(cases) > 300
    verdicts = {"valid": 0, "invalid": 0, "no schema": 0}
    disagree = []
    for label, d in cases:
        ours, theirs = kzgit_verdict(v, d), kv_verdict(d, version, strict)
        verdicts[ours] += 1
        if ours != theirs:
            disagree.append(f"{label}: kzgit {ours}, kubernetes-validate {theirs}: {v.check(d)}")
    assert not disagree, "\n".join(disagree)
    assert all(verdicts.values()), verdicts  # the corpus exercises every verdict
