"""The writes of ``kzgit fix``: one change's files renamed into place together, Ctrl-C held
back until the last rename (a ``--vars`` conversion is whole or not begun)."""
from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from kzgit.config import load_config
from kzgit.fix import _write_all
from kzgit.hooks import Workspace


def _ws(top: Path) -> Workspace:
    return Workspace(str(top), [], None, load_config(str(top)), repo=str(top))


def test_ctrl_c_during_the_renames_waits_for_the_last(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("kustomization.yaml", "deploy.yaml"):
        (tmp_path / name).write_text("old\n")
    os.chmod(tmp_path / "deploy.yaml", 0o600)
    real = os.replace
    calls = []

    def replace(src: str, dst: str) -> None:
        if not calls:
            os.kill(os.getpid(), signal.SIGINT)   # Ctrl-C between the two renames
        calls.append(dst)
        real(src, dst)
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        _write_all(_ws(tmp_path), {"kustomization.yaml": "new k\n", "deploy.yaml": "new d\n"})
    assert len(calls) == 2
    assert (tmp_path / "kustomization.yaml").read_text() == "new k\n"
    assert (tmp_path / "deploy.yaml").read_text() == "new d\n"
    assert (os.stat(tmp_path / "deploy.yaml").st_mode & 0o777) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deploy.yaml", "kustomization.yaml"]


def test_a_failed_write_leaves_every_file_old_and_no_temporary_file(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import errno
    from kzgit import atomic
    from kzgit.atomic import OutputError
    for name in ("deploy.yaml", "kustomization.yaml"):
        (tmp_path / name).write_text("old\n")
    real = atomic.new_temp_file
    made = []

    def new_temp_file(directory: str, prefix: str) -> "tuple[int, str]":
        if made:   # the second file: the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        made.append(directory)
        return real(directory, prefix)
    monkeypatch.setattr(atomic, "new_temp_file", new_temp_file)
    with pytest.raises(OutputError, match="No space left on device"):
        _write_all(_ws(tmp_path), {"kustomization.yaml": "new\n", "deploy.yaml": "new\n"})
    assert made
    assert (tmp_path / "kustomization.yaml").read_text() == "old\n"
    assert (tmp_path / "deploy.yaml").read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deploy.yaml", "kustomization.yaml"]


def test_a_run_is_one_transaction_a_rename_failing_midway_puts_every_file_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32: the files of a run were renamed one change at a time, and a rename that failed
    midway (here the third of four, across two kustomizations) left some files new and some
    old.  Now every file is put back and the error says so."""
    from kzgit.atomic import OutputError
    names = ["a/kustomization.yaml", "a/deploy.yaml", "b/kustomization.yaml", "b/svc.yaml"]
    for name in names:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(f"old {name}\n")
    real = os.replace
    calls = []

    def replace(src: str, dst: str) -> None:
        calls.append(dst)
        if len(calls) == 3:
            raise PermissionError(13, "Permission denied")
        real(src, dst)
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OutputError, match=r"\(Permission denied\); no file was changed"):
        _write_all(_ws(tmp_path), {n: f"new {n}\n" for n in names})
    monkeypatch.setattr(os, "replace", real)
    for name in names:
        assert (tmp_path / name).read_text() == f"old {name}\n"
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == sorted(names)
