"""``kzgit cache info|clear`` and ``kzgit build`` through the render cache."""
from __future__ import annotations

import importlib
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


@pytest.mark.parametrize("name, text", [(".kzgit.toml", "cache = false\n"),
                                        ("pyproject.toml", "[tool.kzgit]\ncache = false\n")])
def test_build_honours_cache_false_of_the_repository(tmp_path: Path, name: str, text: str) -> None:
    """``cache = false`` in the configuration of the repository holding the kustomization."""
    repo = tmp_path / "repo"
    root = repo / "apps" / "k"
    root.mkdir(parents=True)
    (repo / ".git").mkdir()
    (root / "kustomization.yaml").write_text("resources: [cm.yaml]\n")
    (root / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
    cache = tmp_path / "cache"
    (repo / name).write_text(text)
    for _ in range(2):
        rc, out, err = kzgit(cache, "build", str(root))
        assert rc == 0 and "name: a" in out and err == ""
    assert not list(cache.rglob("*.kzr"))
    # the same repository with the cache on stores the render
    (repo / name).write_text(text.replace("false", "true"))
    assert kzgit(cache, "build", str(root))[0] == 0
    assert len(list(cache.rglob("*.kzr"))) == 1
    # a pyproject.toml without a kzgit table is not kzgit's configuration
    if name == "pyproject.toml":
        (repo / name).write_text('[project]\nname = "x"\n')
        assert kzgit(cache, "build", str(root))[0] == 0
        assert len(list(cache.rglob("*.kzr"))) == 1
    # a bad value is a configuration error naming the file and key, not a silent default
    (repo / name).write_text(text.replace("false", '"no"'))
    rc, out, err = kzgit(cache, "build", str(root))
    assert rc == 2 and out == "" and name in err and "cache" in err


@pytest.mark.parametrize("text, may", [
    ("[tool.kzgit]\ncache = false\n", True),
    ("[ tool . 'kzgit' . validate ]\n", True),
    ("tool.kzgit.cache = false\n", True),
    ("[tool]\nkzgit = {cache = false}\n", True),
    ("tool = {kzgit = {cache = false}}\n", True),
    # kzgit's own pyproject.toml: the name everywhere, no table
    ('[project]\nname = "kzgit"\n[project.scripts]\nkzgit = "kzgit.cli.main:main"\n[tool.ruff]\n', False),
    ('[project]\nname = "x"\n', False),
])
def test_a_pyproject_without_a_kzgit_table_is_not_parsed(text: str, may: bool) -> None:
    from kzgit.cli.cache import may_configure_kzgit
    assert may_configure_kzgit(text.encode()) is may
    if may:   # and each of those spellings is a kzgit table indeed
        toml = importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "tomli")
        doc = toml.loads(text)
        assert "kzgit" in doc["tool"]


def test_info_and_clear_cover_the_remote_cache_and_a_moved_tag_is_rendered(tmp_path: Path) -> None:
    from gitserver import GitRepo, configmap, git, kustomization
    remote = GitRepo.create(str(tmp_path / "srv" / "app"), {
        "base/kustomization.yaml": kustomization(("cm.yaml",)), "base/cm.yaml": configmap("cm", v="1")})
    remote.tag("v1")
    remote.commit({"base/cm.yaml": configmap("cm", v="2")}, "v2")
    root = tmp_path / "k"
    root.mkdir()
    (root / "kustomization.yaml").write_text(f"resources:\n- {remote.file_url('base', 'v1')}\n")
    cache = tmp_path / "cache"
    rc, out, err = kzgit(cache, "build", str(root))
    assert rc == 0 and "v: 1\n" in out, err
    rc, out, _ = kzgit(cache, "cache", "info")
    assert rc == 0 and f"remote cache: {cache / 'git'}" in out and "repositories: 1, checkouts: 1" in out
    # the tag is moved (git tag -f): the next online build renders the new commit, as kustomize
    git("tag", "-f", "v1", cwd=remote.path)
    assert "v: 2\n" in kzgit(cache, "build", str(root))[1]
    assert "v: 2\n" in kzgit(cache, "build", str(root), "--offline")[1]   # the last resolution
    rc, out, _ = kzgit(cache, "cache", "clear")
    assert rc == 0 and "removed 2 remote checkouts from" in out
    assert not (cache / "git").exists()
    rc, out, err = kzgit(cache, "build", str(root), "--offline")
    assert rc == 1 and "not in the kzgit cache" in err
