"""What ``kzgit diff`` between two commits imports and runs: its cost is guarded by structure.

A pull-request check re-runs ``kzgit diff`` after every push; most of its renders come from
the render cache, so start-up and git access weigh as much as the one root it builds.  It reads
both commits with git itself (one ``git ls-tree`` per commit, one ``git cat-file --batch``):
never pygit2, whose import alone costs half a small build.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest
from gitserver import GitRepo, isolate
from helpers import PROJECT

PROBE = """
import contextlib, io, os, sys
before = set(sys.modules)
from kzgit.cli.main import main
from kzgit import proc
spawned = []
real = proc.subprocess.Popen
class Counting(real):
    def __init__(self, argv, *a, **k):
        spawned.append(" ".join(argv[:3]))
        super().__init__(argv, *a, **k)
proc.subprocess.Popen = Counting
out = io.StringIO()
with contextlib.redirect_stdout(out):
    rc = main(["diff", "--base", sys.argv[2], "--head", sys.argv[3]])
print(rc, sorted(m for m in sys.argv[1].split(",") if m in sys.modules and m not in before))
print(spawned)
print(out.getvalue(), end="")
"""

# Never on this path.
NOT_FOR_A_DIFF = [
    # libgit2's bindings: git itself reads the commits (kzgit.gitio.objects)
    "pygit2",
    # the localizer (ruamel.yaml, the remote cache): only where a localized copy is checked
    "kzgit.localize", "ruamel.yaml",
    # a process pool's modules (logging, traceback...): a few roots render in process
    "concurrent.futures",
    # the GitHub formats, with --format github or --summary only
    "kzgit.diff.github",
    # a revision exported to the disk (plugins, helm, a partial clone) only
    "shutil",
    # the report's model is kzgit.record's plain classes: dataclasses imports inspect (ast, dis...)
    "dataclasses", "inspect",
    # the base-sharing cache, where more than one root is built
    "kzgit.builder.cache",
]


def _diff(repo: str, base: str, head: str, env: Dict[str, str]) -> "tuple[str, List[str], str]":
    out = subprocess.run([sys.executable, "-c", PROBE, ",".join(NOT_FOR_A_DIFF), base, head],
                         capture_output=True, text=True, timeout=120, cwd=repo, env=env)
    assert out.returncode == 0, out.stderr
    status, spawned, printed = out.stdout.split("\n", 2)
    return status, eval(spawned), printed   # noqa: S307 - the probe's own repr of a list


def test_diff_between_commits_imports_and_runs_only_what_it_needs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(monkeypatch, tmp_path)
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: '{}'\n"
    repo = GitRepo.create(str(tmp_path / "r"), {"app/kustomization.yaml": "resources:\n- cm.yaml\n",
                                                "app/cm.yaml": cm.format(1), "README": "r\n"})
    repo.tag("base")
    repo.commit({"app/cm.yaml": cm.format(2)})
    env = dict(os.environ, PYTHONPATH=str(PROJECT))
    status, spawned, printed = _diff(repo.path, "base", "HEAD", env)
    assert status == "0 []", f"imported what a diff never needs: {status}"
    assert '-  k: "1"\n+  k: "2"\n' in printed
    # the repository found without git (a plain layout), both revisions resolved at once, each
    # commit listed once, blobs through one git cat-file for both; the changed files come from
    # the two listings
    listing = ["git cat-file --batch-check", "git config --get-regexp", "git ls-tree -r",
               "git ls-tree -r"]
    assert spawned == listing + ["git cat-file --batch"]
    # run again, everything in the render cache: the graphs and the renders are checked
    # against the listings' blob ids, and no blob is read
    status, spawned, again = _diff(repo.path, "base", "HEAD", env)
    assert (status, again) == ("0 []", printed) and spawned == listing


def test_the_lock_file_name_is_the_localizers() -> None:
    from kzgit.diff import drift
    from kzgit.localize import LOCK_FILE_NAME
    assert drift.LOCK_FILE_NAME == LOCK_FILE_NAME
