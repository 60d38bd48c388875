"""scripts/compare_tree.py: kzgit against kubectl over a tree of kustomizations.

Skipped, with the reason shown, when ``kubectl`` is not on PATH or ``KZGIT_SKIP_KUBECTL`` is set.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from helpers import PROJECT, write_tree

if os.environ.get("KZGIT_SKIP_KUBECTL"):
    pytestmark = pytest.mark.skip(reason="KZGIT_SKIP_KUBECTL is set")
elif shutil.which("kubectl") is None:
    pytestmark = pytest.mark.skip(reason="kubectl is not on PATH: the reference is needed")

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compare_tree", PROJECT / "scripts" / "compare_tree.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_counts_agreeing_roots_and_shared_failures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(tmp_path, {
        "app/base/kustomization.yaml": "resources: [cm.yaml]\n",
        "app/base/cm.yaml": CM,
        "app/prod/kustomization.yaml": "resources: [../base]\nnamePrefix: p-\n",
        "broken/kustomization.yaml": "resources: [missing.yaml]\n",
        ".git/kustomization.yaml": "resources: [nothing.yaml]\n",   # never a root
    })
    assert _script().main([str(tmp_path), "--reasons"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == ("3 roots: 2 same, 1 both fail, 0 differ, 0 only kzgit fails, "
                                    "0 only kubectl fails")
    assert "both fail broken:" in out


def test_a_divergence_fails_and_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a kzgit that prints nothing and succeeds stands in for a diverging engine
    fake = tmp_path / "fake-kzgit"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    write_tree(tmp_path / "tree", {"kustomization.yaml": "resources: [cm.yaml]\n", "cm.yaml": CM,
                                   "bad/kustomization.yaml": "resources: [gone.yaml]\n"})
    assert _script().main([str(tmp_path / "tree"), "--kzgit", str(fake)]) == 1
    out = capsys.readouterr().out
    assert "DIFFER ." in out and "ONLY KUBECTL FAILS bad" in out
