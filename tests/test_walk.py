"""What "the repository" is when a command scans it (``kzgit.walk``): inside git the files git
tracks or would add; outside git no hidden directory and nothing a .gitignore excludes."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kzgit.cli.main import main
from kzgit.walk import tree_files
from helpers import write_tree

BROKEN = "resources:\n- missing.yaml\n"
GOOD_K = "resources:\n- cm.yaml\n"
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    write_tree(root, {
        "app/kustomization.yaml": GOOD_K, "app/cm.yaml": CM,
        ".cache/pre-commit/repo1/tests/kustomization.yaml": BROKEN,
        "build/out/kustomization.yaml": BROKEN,
        ".gitignore": "build/\n*.tmp\n",
        "notes.tmp": "x",
        ".hidden-file.yaml": "x",
        "sibling/kustomization.yaml": BROKEN,
    })
    subprocess.run(["git", "init", "-q", str(root / "sibling")], check=True)
    return root


def test_outside_git_hidden_ignored_and_nested_repositories_are_skipped(tree: Path) -> None:
    assert tree_files(str(tree)) == [".gitignore", ".hidden-file.yaml", "app/cm.yaml",
                                     "app/kustomization.yaml"]
    assert not (tree / ".git").exists()


def test_inside_git_tracked_and_addable_files(tree: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    subprocess.run(["git", "add", "app/cm.yaml"], cwd=tree, check=True)
    files = tree_files(str(tree))
    assert "app/cm.yaml" in files and "app/kustomization.yaml" in files   # tracked, addable
    assert not [f for f in files if f.startswith(("build/", "sibling/")) or f.endswith(".tmp")]


def test_outside_git_the_current_directory_is_the_repository(
        tree: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Outside a repository (an exported tarball, a CI artefact) `--all` and the hooks check
    the current directory as walked (issue 33 item 4): the broken kustomizations under a hidden
    directory, an ignored one and a nested repository are not part of it."""
    monkeypatch.chdir(tree)
    for argv in (["hook", "render", "--all"], ["hook", "validate", "--all"], ["validate", "--all"],
                 ["validate"], ["lint", "--all"], ["hook", "render", "app/cm.yaml"]):
        assert main(argv) == 0, (argv, capsys.readouterr())
        captured = capsys.readouterr()
        assert "missing.yaml" not in captured.out + captured.err, argv
    write_tree(tree, {"app/kustomization.yaml": BROKEN})
    for argv in (["hook", "render", "--all"], ["validate", "--all"], ["lint", "--all"],
                 ["hook", "render", "app/kustomization.yaml"], ["validate", "app"]):
        assert main(argv) == 1, argv
        captured = capsys.readouterr()
        assert "app" in captured.out and "missing.yaml" in captured.out + captured.err, argv
        assert "Traceback" not in captured.err and ".cache" not in captured.out, argv


def test_rebuild_outside_git_skips_copies_in_hidden_and_ignored_directories(
        tree: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(tree, {".cache/x/copy/.kzgit-localize.lock": "not json",
                 "build/copy/.kzgit-localize.lock": "not json"})
    monkeypatch.chdir(tree)
    assert main(["rebuild", "--no-verify"]) == 0
    assert "no localized copies found" in capsys.readouterr().err
    write_tree(tree, {"copy/.kzgit-localize.lock": "not json"})
    assert main(["rebuild", "--no-verify"]) == 1   # a copy of the project is still found
