"""``kzgit build -o``: I/O errors on the user's path are exit 1 with the path named (never a
crash log), and written files get the modes a plain write gives (umask applied; an existing
file keeps its mode), as ``kubectl kustomize -o`` leaves them."""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Iterator

import pytest

from kzgit.cli.main import main

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"


@pytest.fixture
def app(tmp_path: Path) -> Path:
    d = tmp_path / "app"
    d.mkdir()
    (d / "kustomization.yaml").write_text("resources:\n- cm.yaml\n")
    (d / "cm.yaml").write_text(CM)
    return d


@pytest.fixture
def umask_027() -> Iterator[None]:
    old = os.umask(0o027)
    try:
        yield
    finally:
        os.umask(old)


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_missing_output_directory_is_a_user_error(app: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "nonexistent" / "dir" / "out.yaml"
    assert main(["build", str(app), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "unexpected" not in err and "crash" not in err
    assert f"cannot write '{out}': directory '{out.parent}' does not exist" in err


def test_output_under_a_file_is_a_user_error(app: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "plain").write_text("x")
    out = tmp_path / "plain" / "out.yaml"
    assert main(["build", str(app), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"cannot write '{out}'" in err and "not a directory" in err


def test_output_dir_that_does_not_exist(app: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "nodir") + "/"
    assert main(["build", str(app), "-o", out]) == 1
    assert f"cannot write '{out}': no such directory" in capsys.readouterr().err
    assert not (tmp_path / "nodir").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_read_only_directory(app: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        assert main(["build", str(app), "-o", str(ro / "out.yaml")]) == 1
    finally:
        ro.chmod(0o755)
    assert "permission denied" in capsys.readouterr().err


def test_new_file_gets_umask_mode(app: Path, tmp_path: Path, umask_027: None) -> None:
    out = tmp_path / "out.yaml"
    assert main(["build", str(app), "-o", str(out)]) == 0
    assert out.read_text() == CM
    assert _mode(out) == 0o640


def test_existing_file_keeps_its_mode(app: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.yaml"
    out.write_text("old\n")
    out.chmod(0o604)
    assert main(["build", str(app), "-o", str(out)]) == 0
    assert out.read_text() == CM
    assert _mode(out) == 0o604


def test_output_dir_files_get_umask_mode(app: Path, tmp_path: Path, umask_027: None) -> None:
    out = tmp_path / "out"
    out.mkdir()
    assert main(["build", str(app), "-o", str(out)]) == 0
    written = out / "v1_configmap_a.yaml"
    assert written.read_text() == CM
    assert _mode(written) == 0o640
    assert [p.name for p in out.iterdir()] == ["v1_configmap_a.yaml"]  # no temp file left


def test_transform_output_gets_umask_modes(tmp_path: Path, umask_027: None) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "cm.yaml").write_text(CM)
    (tmp_path / "plugins").mkdir()
    out = tmp_path / "new" / "out"
    assert main(["transform", str(src), "-p", str(tmp_path / "plugins"), "-o", str(out), "-q"]) == 0
    assert _mode(out) == 0o750 and _mode(out.parent) == 0o750
    assert _mode(out / "kustomization.yaml") == 0o640


def test_transform_output_under_a_file_is_a_user_error(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "cm.yaml").write_text(CM)
    (tmp_path / "plugins").mkdir()
    (tmp_path / "file").write_text("x")
    out = tmp_path / "file" / "out"
    assert main(["transform", str(src), "-p", str(tmp_path / "plugins"), "-o", str(out), "-q"]) == 1
    err = capsys.readouterr().err
    assert f"cannot create '{out}'" in err and "unexpected" not in err


def test_other_io_errors_on_user_paths_are_user_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """An OSError naming a path is exit 1 with the path and the reason, not a crash log: here
    install-hooks with core.hooksPath naming a file."""
    import subprocess
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "hooks-file").write_text("not a directory\n")
    subprocess.run(["git", "-C", str(repo), "config", "core.hooksPath", "hooks-file"], check=True)
    monkeypatch.chdir(repo)
    assert main(["install-hooks"]) == 1
    err = capsys.readouterr().err
    assert f"Error: cannot access '{repo / 'hooks-file'}'" in err and "unexpected" not in err
