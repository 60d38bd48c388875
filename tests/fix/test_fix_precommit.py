"""The ``kzgit-fix`` hook end to end with the real ``pre-commit`` tool, as a fixer: a commit
with a deprecated field is stopped with the file rewritten (exit 1, "files were modified by
this hook"); the commit of the rewritten file passes."""
from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from pre_commit.clientlib import load_manifest

from helpers import PROJECT
from kzgit.cli.main import make_parser


FILES = {
    "base/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                               "resources:\n- cm.yaml\n",
    "base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n",
    "overlay/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                                  "# the base\nbases:\n- ../base\ncommonLabels:\n  app: demo  # everywhere\n",
}
FIXED = ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
         "# the base\nresources:\n- ../base\nlabels:\n- pairs:\n    app: demo  # everywhere\n"
         "  includeSelectors: true\n")


def test_manifest_entry() -> None:
    hooks = {h["id"]: h for h in load_manifest(str(PROJECT / ".pre-commit-hooks.yaml"))}
    h = hooks["kzgit-fix"]
    args = make_parser().parse_args(shlex.split(h["entry"])[1:] + ["a/kustomization.yaml"])
    assert args.command == "fix" and args.paths == ["a/kustomization.yaml"]
    assert h["pass_filenames"] is True and h["language"] == "python"
    for path, matches in (("a/kustomization.yaml", True), ("kustomization.yml", True),
                          ("a/Kustomization", True), ("a/patch.yaml", False)):
        assert bool(re.search(h["files"], path)) is matches


def test_hook_rewrites_and_fails_then_passes(session: Any, tmp_path: Path) -> None:
    repo = session.repo(tmp_path / "r", FILES, ["kzgit-fix"])
    rc, out = session.commit(repo)
    assert rc == 1, out
    assert "migrate deprecated kustomization fields (kzgit)" in out and "Failed" in out
    assert "files were modified by this hook" in out
    assert "fixed overlay/kustomization.yaml: bases -> resources, commonLabels -> labels" in out
    assert (repo / "overlay/kustomization.yaml").read_text() == FIXED
    rc, out = session.commit(repo)
    assert rc == 0, out
    assert "Passed" in out
