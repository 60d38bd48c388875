"""kzgit.gitio's index edits, made by git itself: modes change, staged content never does."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from gitserver import GitRepo, git, isolate

from kzgit import gitio


def _staged(repo: str, path: str) -> "tuple[str, str]":
    mode, oid, _ = git("ls-files", "--stage", "--", path, cwd=repo).split("\t")[0].split()
    return mode, oid


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate(monkeypatch, tmp_path)
    r = GitRepo.create(str(tmp_path / "r"), {"tool": "#!/bin/sh\necho staged\n", "plain": "x\n",
                                              "run.sh": "#!/bin/sh\n"})
    for name in ("tool", "run.sh"):
        os.chmod(os.path.join(r.path, name), 0o755)
    git("add", "-A", cwd=r.path)
    return r


def test_modes_and_a_partially_staged_file(repo: GitRepo) -> None:
    assert gitio.index_modes(repo.path) == {"tool": 0o100755, "plain": 0o100644, "run.sh": 0o100755}
    assert gitio.index_modes(repo.path, ["tool", "nope"]) == {"tool": 0o100755}
    _, staged = _staged(repo.path, "tool")
    with open(os.path.join(repo.path, "tool"), "w") as f:
        f.write("#!/bin/sh\necho not staged\n")   # the work tree differs from the index
    assert gitio.clear_exec_bits_in_index(repo.path, ["tool", "plain", "gone"]) == ["tool"]
    assert _staged(repo.path, "tool") == ("100644", staged), "the staged content changed"
    assert _staged(repo.path, "run.sh")[0] == "100755"
    with open(os.path.join(repo.path, "tool")) as f:
        assert f.read() == "#!/bin/sh\necho not staged\n"
    assert gitio.clear_exec_bits_in_index(repo.path, ["tool"]) == []


def test_a_temporary_index_is_the_one_edited(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """``git commit -a`` runs hooks with GIT_INDEX_FILE naming git's temporary index."""
    git("commit", "-qm", "modes", cwd=repo.path)
    git("read-tree", "--index-output=.git/other-index", "HEAD", cwd=repo.path)
    monkeypatch.chdir(repo.path)
    monkeypatch.setenv("GIT_INDEX_FILE", ".git/other-index")   # relative, as git sets it
    assert gitio.clear_exec_bits_in_index(repo.path, ["tool"]) == ["tool"]
    assert gitio.index_modes(repo.path, ["tool"]) == {"tool": 0o100644}
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert gitio.index_modes(repo.path, ["tool"]) == {"tool": 0o100755}, "the real index was edited"
