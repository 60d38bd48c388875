"""A chain of bases deeper than Python's recursion limit builds, and a cycle is still a cycle.

kustomize recurses in Go (its stack grows); kzgit walks the levels with an explicit stack, so
the depth of a chain of bases is bounded by memory, not by ``sys.getrecursionlimit()``.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import PROJECT

DEPTH = 300
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n"
WANT = "apiVersion: v1\ndata:\n  a: b\nkind: ConfigMap\nmetadata:\n  name: x-cm\n"


def _chain(root: Path, depth: int, cycle: bool) -> Path:
    """l0 -> l1 -> ... -> l<depth-1>; the last level holds the ConfigMap, or points back at l0."""
    for i in range(depth):
        d = root / f"l{i}"
        d.mkdir()
        if i == depth - 1:
            if cycle:
                (d / "kustomization.yaml").write_text("resources:\n- ../l0\n")
            else:
                (d / "cm.yaml").write_text(CM)
                (d / "kustomization.yaml").write_text("namePrefix: x-\nresources:\n- cm.yaml\n")
        else:
            (d / "kustomization.yaml").write_text(f"resources:\n- ../l{i + 1}\n")
    return root / "l0"


def _kzgit(target: Path) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-m", "kzgit", "build", str(target)], cwd=PROJECT,
                          capture_output=True, text=True, timeout=300)


def test_a_chain_deeper_than_the_recursion_limit_builds(tmp_path: Path) -> None:
    assert DEPTH * 4 > sys.getrecursionlimit()   # the walk recursed ~8 frames a level
    top = _chain(tmp_path, DEPTH, cycle=False)
    out = _kzgit(top)
    assert out.returncode == 0, out.stderr
    assert out.stdout == WANT
    kubectl = shutil.which("kubectl")
    if kubectl and not os.environ.get("KZGIT_SKIP_KUBECTL"):
        ref = subprocess.run([kubectl, "kustomize", str(top)], capture_output=True, text=True,
                             timeout=300)
        assert ref.returncode == 0 and ref.stdout == out.stdout


@pytest.mark.parametrize("depth", [2, DEPTH])
def test_a_cycle_of_any_length_is_a_cycle_error(tmp_path: Path, depth: int) -> None:
    out = _kzgit(_chain(tmp_path, depth, cycle=True))
    assert out.returncode == 1, out.stderr
    assert "cycle detected: candidate root" in out.stderr
    assert "Traceback" not in out.stderr and "RecursionError" not in out.stderr
