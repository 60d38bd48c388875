"""``kzgit build`` reads the repository's enable-* and load-restrictor as every command does
(issue 33 item 6: the hooks rendered with settings that build ignored): applied where the user
granted them, refused naming the grant where not, a command-line flag being the user's own."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import git_tree, grant_user
from kzgit.cli.main import main

pytestmark = pytest.mark.usefixtures("isolated_home")

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_tree(tmp_path / "r", {
        ".kzgit.toml": 'load-restrictor = "LoadRestrictionsNone"\n',
        "shared/cm.yaml": CM,
        "app/kustomization.yaml": "resources:\n- ../shared/cm.yaml\n"})


def test_ungranted_repository_setting_is_refused_naming_the_grant(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", str(repo / "app")]) == 2
    err = capsys.readouterr().err
    assert "'load-restrictor' = \"LoadRestrictionsNone\"" in err and "config.toml" in err


def test_granted_repository_setting_applies_to_build(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    grant_user(os.environ["XDG_CONFIG_HOME"], load_restrictor="LoadRestrictionsNone")
    assert main(["build", str(repo / "app")]) == 0
    assert capsys.readouterr().out == "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n"


def test_the_flag_is_the_users_own_grant(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "--load-restrictor", "LoadRestrictionsNone", str(repo / "app")]) == 0
    assert "name: shared" in capsys.readouterr().out
