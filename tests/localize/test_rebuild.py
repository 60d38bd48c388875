"""``kzgit rebuild``: refresh localized copies from the originals their lock files record."""
from __future__ import annotations

import os

import pytest

from gitserver import GitRepo, configmap, git, offline_home
from helpers import work_dir
from helpers import write_tree as write
from kzgit.cli.main import main
from kzgit.localize import PinMovedError, check_copy, find_copies, localize, read_lock, rebuild


@pytest.fixture
def tmp(tmp_path: "os.PathLike[str]", monkeypatch: pytest.MonkeyPatch) -> str:
    """Offline, in a temporary home, in a fresh work directory (every test here uses it)."""
    offline_home(monkeypatch, tmp_path)
    return work_dir(tmp_path, monkeypatch)


def test_rebuild_picks_up_changes_and_reports_them(tmp: str, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp, {"t/kustomization.yaml": "resources:\n- cm.yaml\n", "t/cm.yaml": configmap("a", k="1")})
    localize("t", "copy", verify=False)
    assert rebuild("copy", verify=False).unchanged
    write(tmp, {"t/kustomization.yaml": "resources:\n- cm.yaml\n- cm2.yaml\n",
                "t/cm.yaml": configmap("a", k="2"), "t/cm2.yaml": configmap("b")})
    assert check_copy("copy")
    r = rebuild("copy", verify=False)
    assert r.added == ["cm2.yaml"] and r.changed == ["cm.yaml", "kustomization.yaml"] and not r.removed
    assert check_copy("copy") == []
    with open("copy/cm.yaml") as f:
        assert "k: 2" in f.read()
    # the CLI: default = every copy in the repository, and a summary of what changed
    git("init", "-q", ".", cwd=tmp)
    write(tmp, {"t/cm2.yaml": configmap("b", x="y")})
    assert find_copies(tmp) == ["copy"]
    assert main(["rebuild", "--no-verify"]) == 0
    out = capsys.readouterr().out
    assert "copy: rebuilt (0 added, 0 removed, 1 changed)" in out and "changed: cm2.yaml" in out
    assert not [n for n in os.listdir(tmp) if "kzgit" in n], "temporary directories left behind"


def test_moved_tag_needs_update_pins(tmp: str, capsys: pytest.CaptureFixture[str]) -> None:
    repo = GitRepo.create(os.path.join(os.path.dirname(tmp), "lib"), {
        "k/kustomization.yaml": "resources:\n- cm.yaml\n", "k/cm.yaml": configmap("lib", v="1")})
    repo.tag("v1")
    first = repo.head()
    write(tmp, {"t/kustomization.yaml": f"resources:\n- {repo.file_url('k', 'v1')}\n"})
    localize("t", "copy")
    assert read_lock("copy")["remotes"][0]["commit"] == first
    second = repo.commit({"k/cm.yaml": configmap("lib", v="2")}, "moved")
    git("tag", "-f", "v1", cwd=repo.path)
    with pytest.raises(PinMovedError, match="MOVED REF"):
        rebuild("copy")
    assert read_lock("copy")["remotes"][0]["commit"] == first, "a refused rebuild changed the copy"
    assert main(["rebuild", "copy"]) == 1
    assert "--update-pins" in capsys.readouterr().err
    r = rebuild("copy", update_pins=True)
    assert r.moved_pins and first in r.moved_pins[0] and second in r.moved_pins[0]
    assert read_lock("copy")["remotes"][0]["commit"] == second
    assert not [n for n in os.listdir(tmp) if "kzgit" in n]


def test_rebuild_of_a_non_copy_is_an_error(tmp: str) -> None:
    os.makedirs("plain")
    with pytest.raises(Exception, match="not a localized copy"):
        rebuild("plain")
