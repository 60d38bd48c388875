"""kzgit.gitio.objects: a commit's tree from one git ls-tree, blobs through one git cat-file."""
from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path
from typing import Iterator

import pytest
from gitserver import GitRepo, git, isolate
from helpers import wait_gone

from kzgit import proc
from kzgit.builder import BuildOptions, build
from kzgit.cli.main import main
from kzgit.diff import gittree
from kzgit.diff.gittree import GitTreeFS
from kzgit.errors import BuildError
from kzgit.gitio import objects

CM = "apiVersion: v1\ndata:\n  k: {}\nkind: ConfigMap\nmetadata:\n  name: cm\n"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    isolate(monkeypatch, tmp_path)
    yield
    objects.close_readers()


def _repo(path: Path, object_format: str = "sha1") -> GitRepo:
    path.mkdir()
    git("init", "--quiet", f"--object-format={object_format}", cwd=str(path))
    repo = GitRepo(str(path))
    repo.commit({"app/kustomization.yaml": "resources:\n- cm.yaml\n", "app/cm.yaml": CM.format(1)})
    return repo


def test_sha256_repository(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "r", "sha256")
    first = repo.head()
    assert len(first) == 64
    fs = GitTreeFS(repo.path, first)
    assert fs.blob_id(f"{repo.path}/app/cm.yaml") == git("rev-parse", f"{first}:app/cm.yaml",
                                                         cwd=repo.path).strip()
    assert build(f"{repo.path}/app", BuildOptions(fs=fs)).to_yaml() == CM.format(1)
    repo.commit({"app/cm.yaml": CM.format(2)})
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.chdir(repo.path):
        rc = main(["diff", "--no-cache", "--base", first, "--head", "HEAD"])
    assert rc == 0, out.getvalue()
    assert "-  k: 1\n+  k: 2\n" in out.getvalue()


def test_missing_and_oversized_objects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path / "r")
    fs = GitTreeFS(repo.path, repo.head())
    oid = fs.blob_id(f"{repo.path}/app/cm.yaml")
    monkeypatch.setattr(gittree, "MAX_FILE_BYTES", 10)
    with pytest.raises(BuildError, match=r"'.*/app/cm.yaml' is larger than 10 bytes"):
        fs.read_bytes(f"{repo.path}/app/cm.yaml")
    # the reader stopped without reading the content; the next read starts a new one
    monkeypatch.setattr(gittree, "MAX_FILE_BYTES", 1 << 20)
    assert fs.read_bytes(f"{repo.path}/app/kustomization.yaml") == b"resources:\n- cm.yaml\n"
    os.remove(os.path.join(repo.path, ".git", "objects", oid[:2], oid[2:]))
    with pytest.raises(BuildError, match=f"git object {oid} is not in the repository"):
        fs.read_bytes(f"{repo.path}/app/cm.yaml")


def test_one_reader_per_process_started_at_the_first_read(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "r")
    fs = GitTreeFS(repo.path, repo.head())
    r = objects.reader(repo.path)
    assert r.batch is None and fs.files() == ["app/cm.yaml", "app/kustomization.yaml"]
    assert fs.is_file(f"{repo.path}/app/cm.yaml") and r.batch is None   # the listing answers
    fs.read_bytes(f"{repo.path}/app/cm.yaml")
    fs.read_bytes(f"{repo.path}/app/kustomization.yaml")
    assert r.batch is not None and objects.reader(repo.path) is r
    first = r.batch.pid
    # a reader whose git ended (killed with the thread that started it) starts once more
    proc.kill_all()
    assert fs.read_bytes(f"{repo.path}/app/cm.yaml") == CM.format(1).encode()
    assert r.batch.pid != first and wait_gone(first)
    objects.close_readers()
    assert r.batch.closed and wait_gone(r.batch.pid) and r.batch.pid not in proc.live_groups()


def test_a_forked_worker_reads_through_its_own_git(tmp_path: Path) -> None:
    """A render worker forked after the parent read a blob must not share the parent's pipes."""
    repo = _repo(tmp_path / "r")
    fs = GitTreeFS(repo.path, repo.head())
    path = f"{repo.path}/app/cm.yaml"
    assert fs.read_bytes(path) == CM.format(1).encode()
    parent = objects.reader(repo.path).batch
    assert parent is not None
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:   # pragma: no cover - the child reports through the pipe
        code = 1
        try:
            ok = fs.read_bytes(path) == CM.format(1).encode()
            child = objects.reader(repo.path).batch
            if ok and child is not None and child.pid != parent.pid:
                code = 0
            objects.close_readers()   # its own, not the parent's
        finally:
            os.write(wfd, bytes([code]))
            os._exit(code)
    os.close(wfd)
    status = os.read(rfd, 1)
    os.close(rfd)
    os.waitpid(pid, 0)
    assert status == b"\0", "the child read through its parent's git cat-file"
    assert not parent.closed and fs.read_bytes(path) == CM.format(1).encode()


def test_resolve_commits_at_once(tmp_path: Path) -> None:
    from kzgit.errors import UsageError
    from kzgit.gitio import resolve_commits
    repo = _repo(tmp_path / "r")
    first = repo.head()
    repo.tag("v1", annotated=True)
    second = repo.commit({"app/cm.yaml": CM.format(2)}, "second change")
    assert resolve_commits(repo.path, ["v1", first[:10], "HEAD~1", "HEAD"]) == [
        first, first, first, second]   # an annotated tag peeled; a short id
    for bad in ("HEAD:app", "nope", "HEAD~5"):
        with pytest.raises(UsageError, match=f"unknown revision '{bad}'"):
            resolve_commits(repo.path, ["HEAD", bad])
    with pytest.raises(UsageError, match="is not a revision"):
        resolve_commits(repo.path, ["HEAD", "a\nb"])


def test_an_interrupted_diff_leaves_no_git_cat_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C in the middle of a render: the diff's cleanup stops the batch git it started."""
    from kzgit.diff import compare
    repo = _repo(tmp_path / "r")
    first = repo.head()
    repo.commit({"app/cm.yaml": CM.format(2)})
    started = []
    real = compare._render

    def render(*args: object, **kwargs: object) -> object:
        real(*args, **kwargs)   # reads the commit's blobs: git cat-file runs
        batch = objects.reader(repo.path).batch
        assert batch is not None and not batch.closed
        started.append(batch.pid)
        raise KeyboardInterrupt
    monkeypatch.setattr(compare, "_render", render)
    with pytest.raises(KeyboardInterrupt):
        compare.diff(repo.path, compare.DiffOptions(base=first, head="HEAD"))
    assert started and wait_gone(started[0]) and started[0] not in proc.live_groups()
