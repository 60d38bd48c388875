"""``kzgit fix`` stays inside what it may touch (issue 32): it writes only tracked files of the
repository, reads YAML through the budgeted loader every other command uses, and a run is one
transaction (tests/fix/test_write.py).  Real repositories, the real CLI in its own process."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers import git_tree

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx:1.25
        args:
        - --backend=$(BACKEND)
"""
SVC = "apiVersion: v1\nkind: Service\nmetadata:\n  name: backend\nspec:\n  ports:\n  - port: 80\n"
VARS = """\
vars:
- name: BACKEND
  objref:
    apiVersion: v1
    kind: Service
    name: backend
  fieldref:
    fieldPath: metadata.name
"""
BOMB = "".join(
    f"  {c}: &{c} [{','.join(['*' + p] * 9) if p else ','.join(['x'] * 9)}]\n"
    for p, c in zip(["", "a", "b", "c", "d", "e", "f", "g", "h"], "abcdefghi"))


def kzgit(cwd: Path, *argv: str) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-m", "kzgit", *argv], cwd=cwd, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)


def commit(top: Path) -> None:
    subprocess.run(["git", "add", "-A"], cwd=top, check=True, timeout=60)
    subprocess.run(["git", "commit", "-qm", "x"], cwd=top, check=True, timeout=60)


def test_fix_vars_never_writes_outside_the_repository(tmp_path: Path) -> None:
    """The attack: ``resources: [../../shared]`` reaches a kustomization outside the
    repository; ``fix --vars`` rewrote its files ($(BACKEND) -> BACKEND_PLACEHOLDER)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "kustomization.yaml").write_text("resources:\n- deploy.yaml\n")
    (shared / "deploy.yaml").write_text(DEPLOY)
    top = tmp_path / "repo"
    git_tree(top, {"app/kustomization.yaml": "resources:\n- ../../shared\n- svc.yaml\n" + VARS,
                   "app/svc.yaml": SVC})
    commit(top)
    r = kzgit(top, "fix", "--vars", "--all")
    assert (shared / "deploy.yaml").read_text() == DEPLOY, "fix wrote outside the repository"
    assert r.returncode == 1, r.stdout + r.stderr
    assert "vars -> replacements: not migrated: ../shared/deploy.yaml is outside the repository" \
        in r.stdout, r.stdout
    assert "vars:" in (top / "app" / "kustomization.yaml").read_text()


def test_fix_vars_never_writes_an_untracked_file(tmp_path: Path) -> None:
    top = tmp_path / "repo"
    git_tree(top, {"kustomization.yaml": "resources:\n- deploy.yaml\n- svc.yaml\n" + VARS,
                   "svc.yaml": SVC})
    commit(top)
    (top / "deploy.yaml").write_text(DEPLOY)   # not added: not the repository's
    r = kzgit(top, "fix", "--vars", "--all")
    assert (top / "deploy.yaml").read_text() == DEPLOY
    assert "deploy.yaml is outside the repository" in r.stdout and "or not tracked by git" in r.stdout
    subprocess.run(["git", "add", "deploy.yaml"], cwd=top, check=True, timeout=60)
    r = kzgit(top, "fix", "--vars", "--all")   # tracked: converted
    assert r.returncode == 1 and "fixed kustomization.yaml" in r.stdout, r.stdout + r.stderr
    assert "BACKEND_PLACEHOLDER" in (top / "deploy.yaml").read_text()


def test_an_alias_bomb_does_not_hang_fix(tmp_path: Path) -> None:
    """A 12-line billion-laughs kustomization hung ``kzgit fix --check`` (killed at 120 s) while
    ``kzgit build`` refused it in 0.4 s; now fix refuses it as build does."""
    top = tmp_path / "repo"
    git_tree(top, {"kustomization.yaml": "bases: [base]\ncommonLabels:\n" + BOMB,
                   "base/kustomization.yaml": "resources: [cm.yaml]\n",
                   "base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"})
    commit(top)
    before = (top / "kustomization.yaml").read_text()
    for argv in (["fix", "--check", "--all"], ["fix", "--all"]):
        r = kzgit(top, *argv)
        assert r.returncode == 1, r.stderr
        assert "kustomization.yaml: not migrated:" in r.stdout
        assert "aliases expand the document by more than" in r.stdout
    assert (top / "kustomization.yaml").read_text() == before
