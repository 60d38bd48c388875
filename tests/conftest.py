"""Fixtures shared by the test modules: an autouse guard for the real home, and opt-in isolation."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest


@pytest.fixture(scope="session")
def _session_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("session-home")


@pytest.fixture(autouse=True)
def dont_write_to_home_directory(_session_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the real home, config or cache (as pre-commit's conftest guards
    its store): HOME and the XDG directories point into one temporary home for the session,
    so kzgit's remote and render caches never touch the user's, and a plugin home set in the
    environment of whoever runs the suite is not seen.  Git commits made by tests get a fixed
    identity, since the real ``~/.gitconfig`` is out of reach."""
    monkeypatch.setenv("HOME", str(_session_home))
    for var, sub in (("XDG_CONFIG_HOME", ".config"), ("XDG_CACHE_HOME", ".cache"),
                     ("XDG_DATA_HOME", ".local/share")):
        monkeypatch.setenv(var, str(_session_home / sub))
    monkeypatch.delenv("KUSTOMIZE_PLUGIN_HOME", raising=False)
    for var, value in (("GIT_AUTHOR_NAME", "kzgit test"), ("GIT_AUTHOR_EMAIL", "test@kzgit.invalid"),
                       ("GIT_COMMITTER_NAME", "kzgit test"), ("GIT_COMMITTER_EMAIL", "test@kzgit.invalid")):
        monkeypatch.setenv(var, value)


@pytest.fixture
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never read or write the real home or plugin home: HOME and XDG_CONFIG_HOME point to a
    fresh directory and KUSTOMIZE_PLUGIN_HOME is unset.  Use it module-wide with
    ``pytestmark = pytest.mark.usefixtures("isolated_home")``."""
    h = tmp_path_factory.mktemp("isolated-home")
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(h / ".config"))
    monkeypatch.delenv("KUSTOMIZE_PLUGIN_HOME", raising=False)


@pytest.fixture(scope="session")
def session(tmp_path_factory: pytest.TempPathFactory) -> "Iterator[Any]":
    """The session's pre-commit hook environment (tests/precommit_session.py): built once, for
    the tests that drive the real pre-commit tool (tests/hooks, tests/fix)."""
    from precommit_session import make_session
    yield from make_session(tmp_path_factory)
