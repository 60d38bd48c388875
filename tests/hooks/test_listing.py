"""The index's files, kept in the render cache under the index file's own checksum."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import List, Tuple

import pytest
from test_hooks import git, make_repo, write

from kzgit import gitio
from kzgit.errors import UsageError
from kzgit.hooks.listing import index_files, top_and_index
from kzgit.rendercache import Store, open_store

FILES = {"base/kustomization.yaml": "resources: []\n", "a/kustomization.yaml": "resources: [../base]\n"}


@pytest.fixture()
def store(tmp_path: Path) -> Store:
    s, _ = open_store(str(tmp_path / "cache" / "renders"))
    assert s is not None
    return s


def listed(repo: Path, store: Store, monkeypatch: pytest.MonkeyPatch) -> List[str]:
    monkeypatch.chdir(repo)
    top, index = top_and_index(".")
    assert top == str(repo) and index is not None
    return sorted(index_files(top, index, store))


def test_the_list_follows_the_index_not_the_work_tree(tmp_path: Path, store: Store,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(Path(os.path.realpath(tmp_path)) / "r", FILES)
    git_runs: List[List[str]] = []
    real_git = gitio.git
    monkeypatch.setattr(gitio, "git", lambda args, cwd, **kw: git_runs.append(args) or real_git(args, cwd, **kw))
    first = listed(repo, store, monkeypatch)
    assert first == sorted(FILES)
    # unchanged index: git does not run at all
    git_runs.clear()
    assert listed(repo, store, monkeypatch) == first
    assert git_runs == []
    # untracked and unstaged changes are not the index's
    write(repo, {"b/kustomization.yaml": "resources: [../base]\n", "a/kustomization.yaml": "resources: []\n"})
    assert listed(repo, store, monkeypatch) == first
    # staged: listed again
    git(repo, "add", "b")
    assert listed(repo, store, monkeypatch) == sorted([*FILES, "b/kustomization.yaml"])
    git(repo, "rm", "-q", "--cached", "a/kustomization.yaml")
    assert listed(repo, store, monkeypatch) == sorted(["base/kustomization.yaml", "b/kustomization.yaml"])
    # and back: the first list again, from the cache
    git_runs.clear()
    git(repo, "add", "a")
    git(repo, "rm", "-q", "--cached", "b/kustomization.yaml")
    git(repo, "checkout", "-q", "--", "a")   # the work tree's a/ as committed
    assert listed(repo, store, monkeypatch) == first


def test_a_temporary_index_is_the_one_listed(tmp_path: Path, store: Store,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """``git commit -a`` and ``git commit FILE`` run hooks with GIT_INDEX_FILE set."""
    repo = make_repo(Path(os.path.realpath(tmp_path)) / "r", FILES)
    assert listed(repo, store, monkeypatch) == sorted(FILES)
    other = tmp_path / "other-index"
    monkeypatch.setenv("GIT_INDEX_FILE", str(other))
    git(repo, "read-tree", "--empty")
    write(repo, {"c/kustomization.yaml": "resources: []\n"})
    git(repo, "add", "c")
    assert listed(repo, store, monkeypatch) == ["c/kustomization.yaml"]
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert listed(repo, store, monkeypatch) == sorted(FILES)


def test_an_index_without_a_checksum_is_listed_by_git(tmp_path: Path, store: Store,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``index.skipHash`` (git 2.40) writes zeros where the checksum was; anything that is not
    an index file has no checksum either: git lists those every time, and nothing is kept."""
    repo = make_repo(Path(os.path.realpath(tmp_path)) / "r", FILES)
    real = (repo / ".git" / "index").read_bytes()
    calls: List[str] = []
    monkeypatch.setattr(gitio, "index_files", lambda top: calls.append(top) or sorted(FILES))
    for name, data in [("zeros", real[:-20] + bytes(20)), ("not-an-index", b"x" * 64),
                       ("short", b"DIRC" + bytes(8))]:
        fake = tmp_path / name
        fake.write_bytes(data)
        calls.clear()
        for _ in range(2):
            assert index_files(str(repo), str(fake), store) == sorted(FILES)
        assert len(calls) == 2, name
    assert index_files(str(repo), str(tmp_path / "missing"), store) == sorted(FILES)
    assert not list(Path(store.path).rglob("*.kzr"))


def _gits_answer(cwd: Path) -> Tuple[str, str]:
    out = subprocess.run(["git", "rev-parse", "--show-toplevel", "--git-path", "index"], cwd=cwd,
                         check=True, capture_output=True, text=True, timeout=60).stdout.split("\n")
    return out[0], os.path.normpath(os.path.join(cwd, out[1]))


@pytest.mark.parametrize("layout", ["plain", "subdirectory", "index-file-variable",
                                    "relative-index-file-variable", "git-dir-variable",
                                    "core-worktree", "include", "gitfile", "linked-worktree",
                                    "inside-dot-git"])
def test_the_top_and_the_index_are_git_s(layout: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found without git where the layout is plain; anything else is asked of git."""
    top = make_repo(Path(os.path.realpath(tmp_path)) / "r", FILES)
    cwd, by_kzgit = top, True
    if layout == "subdirectory":
        cwd = top / "a"
    elif layout == "index-file-variable":
        git(top, "read-tree", "--index-output", str(tmp_path / "other"), "HEAD")
        monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "other"))
    elif layout == "relative-index-file-variable":   # as git sets it for a hook at the top
        monkeypatch.setenv("GIT_INDEX_FILE", ".git/index")
    elif layout == "git-dir-variable":
        monkeypatch.setenv("GIT_DIR", str(top / ".git"))
        by_kzgit = False
    elif layout == "core-worktree":
        git(top, "config", "core.worktree", str(top))
        by_kzgit = False
    elif layout == "include":
        git(top, "config", "include.path", str(tmp_path / "more.gitconfig"))
        by_kzgit = False
    elif layout == "gitfile":   # a separate git dir (git init --separate-git-dir)
        shutil.move(str(top / ".git"), str(tmp_path / "elsewhere.git"))
        (top / ".git").write_text(f"gitdir: {tmp_path / 'elsewhere.git'}\n")
    elif layout == "linked-worktree":
        git(top, "worktree", "add", "-q", str(tmp_path / "wt"))
        cwd, by_kzgit = tmp_path / "wt", False
    elif layout == "inside-dot-git":
        cwd, by_kzgit = top / ".git", False
    runs: List[List[str]] = []
    real = gitio.git
    monkeypatch.setattr(gitio, "git", lambda args, c, **kw: runs.append(args) or real(args, c, **kw))
    if layout == "inside-dot-git":
        with pytest.raises(UsageError):
            top_and_index(str(cwd))
        return
    assert top_and_index(str(cwd)) == _gits_answer(cwd)
    assert (runs == []) is by_kzgit


def test_outside_a_repository_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(UsageError, match="not inside a git work tree"):
        top_and_index(str(tmp_path / "d"))


@pytest.mark.parametrize("config,steers", [
    (b"[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tlogallrefupdates = true\n", False),
    (b"[core]\n\tbare = true\n", True),
    (b"[core]\n\tbare\n", True),                 # a key without a value is true
    (b"[core]\n\tBare = Yes ; said so\n", True),
    (b"[core]\n\tbare = false # not bare\n", False),
    (b"[core]\n\tworktree = /elsewhere\n", True),
    (b"[extensions]\n\tworktreeConfig = true\n", True),
    (b'[includeIf "gitdir:~/work/"]\n\tpath = work.gitconfig\n', True),
])
def test_configuration_that_may_steer_git_is_left_to_git(config: bytes, steers: bool) -> None:
    from kzgit.paths import _steering_config
    assert _steering_config(config) is steers
