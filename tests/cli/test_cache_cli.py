"""``kzgit cache info|clear`` and ``kzgit build`` through the render cache."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Tuple

import pytest
from helpers import PROJECT

pytestmark = pytest.mark.usefixtures("isolated_home")


def kzgit(env_cache: Path, *argv: str) -> Tuple[int, str, str]:
    env = dict(os.environ, KZGIT_CACHE_DIR=str(env_cache))
    p = subprocess.run([sys.executable, "-m", "kzgit", *argv], env=env, capture_output=True, text=True,
                       timeout=120, cwd=PROJECT)
    return p.returncode, p.stdout, p.stderr


def test_build_info_clear(tmp_path: Path) -> None:
    root = tmp_path / "k"
    root.mkdir()
    (root / "kustomization.yaml").write_text("resources: [cm.yaml]\n")
    (root / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
    cache = tmp_path / "cache"
    rc, first, _ = kzgit(cache, "build", str(root))
    assert rc == 0 and "name: a" in first
    assert len(list(cache.rglob("*.kzr"))) == 1
    rc, out, _ = kzgit(cache, "cache", "info")
    assert rc == 0 and f"render cache: {cache / 'renders'}" in out and "entries: 1" in out
    assert kzgit(cache, "build", str(root))[1] == first
    # --no-cache neither reads nor writes it
    (cache / "renders").rename(tmp_path / "moved")
    assert kzgit(cache, "build", str(root), "--no-cache")[1] == first
    assert not list(cache.rglob("*.kzr"))
    (tmp_path / "moved").rename(cache / "renders")
    rc, out, _ = kzgit(cache, "cache", "clear")
    assert rc == 0 and "removed 1 cached render from" in out
    assert "entries: 0" in kzgit(cache, "cache", "info")[1]
    # a failed build exits as before, from the cache too
    (root / "cm.yaml").unlink()
    for _ in range(2):
        rc, out, err = kzgit(cache, "build", str(root))
        assert rc == 1 and out == "" and "cm.yaml" in err and err.startswith("Error: ")
