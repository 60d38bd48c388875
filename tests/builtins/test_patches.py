"""Patches where kustomize crashes, so kzgit's failure is worded its own way; the golden
fixtures cover the rest, since there kubectl is the reference."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kzgit import BuildOptions, build
from kzgit.errors import BuildError
from kzgit.versions import parse

DELETE_THEN_PATCH = {
    "kustomization.yaml": "resources:\n- r.yaml\npatches:\n- path: p.yaml\n",
    "r.yaml": ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n"
               "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"),
    "p.yaml": ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n$patch: delete\n---\n"
               "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  x: \"1\"\n"),
}


def _tree(root: Path, files: dict) -> Path:
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize("release", ["5.5.0", "5.6.0"])
def test_delete_document_followed_by_another_fails_before_5_7(tmp_path: Path, release: str) -> None:
    """kustomize before 5.7 dereferences the deleted resource's nil node (kyaml rnode.go): a Go
    panic, exit 2 (tests/fixtures/patches/delete-then-patch-v5.6.0 records it); kzgit fails
    saying so."""
    with pytest.raises(BuildError, match="Kustomize before 5.7 fails here"):
        build(str(_tree(tmp_path, DELETE_THEN_PATCH)), BuildOptions(kustomize_version=parse(release)))


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kustomize_5_5_panics_on_it(tmp_path: Path) -> None:
    """What kubectl 1.32 (Kustomize 5.5.0) does with it."""
    p = subprocess.run(["kubectl", "kustomize", str(_tree(tmp_path, DELETE_THEN_PATCH))],
                       capture_output=True, text=True, timeout=120, check=False)
    if "Kustomize Version: v5.5.0" not in subprocess.run(["kubectl", "version", "--client"],
                                                         capture_output=True, text=True).stdout:
        pytest.skip("kubectl on PATH does not embed Kustomize 5.5.0")
    assert p.returncode != 0 and "nil pointer dereference" in p.stderr, p.stderr[-2000:]
