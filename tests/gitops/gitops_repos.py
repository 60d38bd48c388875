"""Small real-shaped GitOps repositories for the gitops tests: real git repositories in temporary
directories, with a remote URL (never fetched) that makes their manifests "this repository"."""
from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Callable, Dict, Mapping, Optional

import yaml

from kzgit.config import load_config
from kzgit.gitops.discover import Catalog, discover, open_worktree
from kzgit.gitops.render import render_app

REMOTE = "ssh://git@github.com/acme/fleet.git"
REPO_URL = "https://github.com/acme/fleet"   # another spelling of REMOTE


def make_repo(root: Path, files: Mapping[str, str], remote: Optional[str] = REMOTE) -> Path:
    """A git repository at ``root`` holding ``files`` (dedented), committed."""
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True, timeout=60)
    if remote:
        subprocess.run(["git", "-C", str(root), "remote", "add", "origin", remote], check=True,
                       timeout=60)
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip("\n"))
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, timeout=60)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "init"], check=True, timeout=60)
    return Path(os.path.realpath(root))


def catalog_of(top: Path) -> Catalog:
    return discover(open_worktree(str(top), load_config(str(top))))


def render_yaml(top: Path, app_id: str) -> str:
    catalog = catalog_of(top)
    return render_app(catalog, catalog.find(app_id)).to_yaml()


def kubectl(version: str = "1_36") -> str:
    from helpers import oracle
    return oracle(f"KZGIT_ORACLE_KUBECTL_{version}")


def kubectl_build(binary: str, tree: Path, path: str, files: Dict[str, bytes],
                  hidden: tuple = (), restrictor: str = "LoadRestrictionsNone") -> str:
    """``kubectl kustomize`` of ``path`` in a copy of ``tree`` where ``files`` (repo-relative ->
    bytes) replace or add files and ``hidden`` ones are removed: the tree the controller builds."""
    copy = tree.parent / (tree.name + "-oracle")
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(tree, copy, ignore=shutil.ignore_patterns(".git"))
    for rel in hidden:
        target = copy / rel
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    for rel, data in files.items():
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        (copy / rel).write_bytes(data)
    res = subprocess.run([binary, "kustomize", f"--load-restrictor={restrictor}",
                          str(copy / path)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout


def as_flux_builds(text: bytes) -> bytes:
    """A kustomization Flux builds, for ``kubectl kustomize``: fluxcd/pkg kustomize Build runs
    krusty with a zero Reorder, which sorts nothing the kustomization does not ask to sort
    (api/krusty/kustomizer.go applySortOrder); kubectl's default sorts, so the oracle's copy
    asks for the input order (``sortOptions: {order: fifo}``) where the file asks nothing."""
    k = yaml.safe_load(text) or {}
    k.setdefault("sortOptions", {"order": "fifo"})
    return yaml.safe_dump(k).encode("utf-8")


def repo_fixture(tmp_path: Path) -> Callable[..., Path]:
    def make(files: Mapping[str, str], remote: Optional[str] = REMOTE) -> Path:
        return make_repo(tmp_path / "repo", files, remote)
    return make
