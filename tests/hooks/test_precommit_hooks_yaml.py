"""``.pre-commit-hooks.yaml`` is valid for pre-commit and says what the README promises.

pre-commit's own manifest schema checks it (as check-jsonschema's
tests/acceptance/test_hook_file_matches.py checks theirs), then the
conventions: entries are ``kzgit`` subcommands that exist, file names are
passed, render and sync run serially, and ``files`` patterns see the files a
kustomization names (a patch, an env file, a resource anywhere).
"""
from __future__ import annotations

import re
import shlex
from typing import Any, Dict

import pytest
from pre_commit.clientlib import load_manifest

from kzgit.cli.main import make_parser
from helpers import PROJECT

MANIFEST = PROJECT / ".pre-commit-hooks.yaml"
IDS = ["kzgit-render", "kzgit-localized-sync", "kzgit-pinned-refs", "kzgit-exec-bits", "kzgit-validate",
       "kzgit-lint"]


def _hooks() -> Dict[str, Dict[str, Any]]:
    return {h["id"]: h for h in load_manifest(str(MANIFEST))}


def test_manifest_is_valid_and_complete() -> None:
    assert list(_hooks()) == IDS + ["kzgit-fix", "kzgit-rebuild"]   # kzgit-fix: tests/fix


def test_rebuild_is_a_manual_stage_hook_running_kzgit_rebuild() -> None:
    h = _hooks()["kzgit-rebuild"]
    assert h["stages"] == ["manual"] and h["pass_filenames"] is False and h["always_run"] is True
    args = make_parser().parse_args(shlex.split(h["entry"])[1:])
    assert args.command == "rebuild" and args.copies == []


@pytest.mark.parametrize("hook_id", IDS)
def test_entry_is_a_kzgit_subcommand(hook_id: str) -> None:
    h = _hooks()[hook_id]
    argv = shlex.split(h["entry"])
    assert argv[:2] == ["kzgit", "hook"] and argv[2] == hook_id[len("kzgit-"):]
    args = make_parser().parse_args(argv[1:] + ["some/file.yaml"])
    assert args.files == ["some/file.yaml"]
    assert h["language"] == "python" and h["pass_filenames"] is True
    building = ("kzgit-render", "kzgit-localized-sync", "kzgit-validate", "kzgit-lint")
    assert h["require_serial"] is (hook_id in building)
    # a commit that only deletes passes no file: the hooks that build must start anyway
    assert h.get("always_run", False) is (hook_id in building)


@pytest.mark.parametrize("hook_id,path,matches", [
    ("kzgit-render", "overlays/prod/kustomization.yaml", True),
    ("kzgit-render", "overlays/prod/patch-replicas.json", True),
    ("kzgit-render", "base/app.env", True),
    ("kzgit-render", "base/files/nginx.conf", True),
    ("kzgit-localized-sync", "vendor/copy/localized-files/x/y.yaml", True),
    ("kzgit-pinned-refs", "overlays/prod/kustomization.yaml", True),
    ("kzgit-pinned-refs", "overlays/prod/kustomization.yml", True),
    ("kzgit-pinned-refs", "overlays/prod/Kustomization", True),
    ("kzgit-pinned-refs", "overlays/prod/fn-config.yaml", True),
    ("kzgit-pinned-refs", "README.md", False),
    ("kzgit-exec-bits", "copy/localized-files/github.com/o/r/v1/bin/tool", True),
])
def test_files_patterns(hook_id: str, path: str, matches: bool) -> None:
    h = _hooks()[hook_id]
    files_ok = bool(re.search(h["files"], path))
    excluded = bool(re.search(h["exclude"], path))
    assert (files_ok and not excluded) is matches
