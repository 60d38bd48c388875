"""Reuse of base accumulations across builds (kzgit.builder.cache).

The cache must never change a byte of output: every kubectl-recorded golden case is built
twice through one cache shared by all cases and must print exactly what kubectl printed
(or fail where kubectl failed), and focused cases check the reuse, its isolation and the
situations where reuse is refused.
"""
from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from kzgit import BuildOptions, build
from kzgit.builder.cache import BuildCache
from kzgit.errors import KzgitError
from kzgit.versions import parse

from helpers import deployment, write_tree
from test_golden import CASES, FIXTURES, recorder


def _yaml(path: Path, cache: BuildCache = None, release: str = "5.8.1") -> str:  # type: ignore[assignment]
    return build(str(path), BuildOptions(cache=cache, kustomize_version=parse(release))).to_yaml()


def test_golden_cases_unchanged_through_one_shared_cache(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    env = recorder.isolated_env(tmp_path)
    monkeypatch.setattr(os, "environ", env)
    cache = BuildCache()
    work = tmp_path / "cases"
    copies = []
    for case_dir in CASES:
        case = recorder.load_case(case_dir)
        if case["args"]:
            continue  # flags are not part of this check
        dest = work / recorder.case_id(case_dir, FIXTURES)
        recorder.copy_inputs(case_dir, dest)
        copies.append((case_dir, dest / str(case["target"]), recorder.case_release(case)))
    mismatches = []
    for round_ in (1, 2):
        for case_dir, target, release in copies:
            expected = case_dir / "expected.yaml"
            try:
                got = _yaml(target, cache, release)
            except KzgitError:
                if expected.exists():
                    mismatches.append(f"round {round_}: {case_dir.name} failed")
                continue
            if not expected.exists():
                mismatches.append(f"round {round_}: {case_dir.name} built, kubectl failed")
            elif got != expected.read_text(encoding="utf-8"):
                mismatches.append(f"round {round_}: {case_dir.name} output differs")
    assert not mismatches, "\n".join(mismatches)
    assert cache.hits > 0 and len(cache) > 0


BASE = {
    "base/kustomization.yaml": """\
        resources:
        - deploy.yaml
        configMapGenerator:
        - name: conf
          literals: [a=1]
        commonLabels:
          app: web
        """,
    "base/deploy.yaml": deployment("web", """\
        - name: web
          image: nginx
          envFrom:
          - configMapRef:
              name: conf
        """),
    "a/kustomization.yaml": """\
        resources: [../base]
        namePrefix: a-
        images:
        - name: nginx
          newTag: "1.25"
        """,
    "b/kustomization.yaml": """\
        resources: [../base]
        namespace: b
        """,
}


def test_second_root_reuses_the_base_and_overlays_do_not_leak(tmp_path: Path) -> None:
    write_tree(tmp_path, BASE, dedent=True)
    plain_a, plain_b = _yaml(tmp_path / "a"), _yaml(tmp_path / "b")
    cache = BuildCache()
    assert _yaml(tmp_path / "a", cache) == plain_a
    assert (cache.hits, len(cache)) == (0, 1)
    # b gets the base as it was before a's prefix and image edits
    assert _yaml(tmp_path / "b", cache) == plain_b
    assert _yaml(tmp_path / "a", cache) == plain_a
    assert cache.hits == 2
    assert "a-web" not in plain_b and "nginx:1.25" not in plain_b


def test_base_with_vars_is_not_cached(tmp_path: Path) -> None:
    files = {k: textwrap.dedent(v) for k, v in BASE.items()}
    files["base/kustomization.yaml"] += textwrap.dedent("""\
        vars:
        - name: CONF
          objref: {kind: ConfigMap, name: conf, apiVersion: v1}
        """)
    write_tree(tmp_path, files, dedent=True)
    cache = BuildCache()
    _yaml(tmp_path / "a", cache)
    _yaml(tmp_path / "b", cache)
    assert len(cache) == 0 and cache.hits == 0


def test_nested_bases_record_every_directory(tmp_path: Path) -> None:
    write_tree(tmp_path, dict(BASE, **{
        "mid/kustomization.yaml": "resources: [../base]\nnameSuffix: -m\n",
        "c/kustomization.yaml": "resources: [../mid]\n",
        "d/kustomization.yaml": "resources: [../mid, ../base]\nnamePrefix: d-\n",
    }), dedent=True)
    plain_c = _yaml(tmp_path / "c")
    cache = BuildCache()
    assert _yaml(tmp_path / "c", cache) == plain_c
    assert len(cache) == 2  # mid, and base inside it
    # d reaches base twice: directly and through mid, both from the cache now
    assert _yaml(tmp_path / "d", cache) == _yaml(tmp_path / "d")
    assert cache.hits == 2


def test_cycle_is_still_detected_when_the_base_is_cached(tmp_path: Path) -> None:
    # base b reaches c; a root *inside* c that uses b makes kustomize find a cycle when b
    # enters c (c contains a visited root).  From a sibling root the same b is fine and
    # gets cached: reusing it for the root inside c must still fail as kustomize does.
    write_tree(tmp_path, {
        "b/kustomization.yaml": "resources: [../c]\nnamePrefix: b-\n",
        "c/kustomization.yaml": "resources: [cm.yaml]\n",
        "c/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
        "c/overlay/kustomization.yaml": "resources: [../../b]\n",
        "sibling/kustomization.yaml": "resources: [../b]\n",
    }, dedent=True)
    with pytest.raises(KzgitError, match="cycle detected") as plain_err:
        _yaml(tmp_path / "c" / "overlay")
    cache = BuildCache()
    assert "name: b-x" in _yaml(tmp_path / "sibling", cache)
    with pytest.raises(KzgitError, match="cycle detected") as cached_err:
        _yaml(tmp_path / "c" / "overlay", cache)
    assert str(cached_err.value) == str(plain_err.value)
    assert cache.hits == 0
