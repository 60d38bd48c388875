"""Fixtures shared by several test modules (each module opts in)."""
from __future__ import annotations

import pytest


@pytest.fixture
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never read or write the real home or plugin home: HOME and XDG_CONFIG_HOME point to a
    fresh directory and KUSTOMIZE_PLUGIN_HOME is unset.  Use it module-wide with
    ``pytestmark = pytest.mark.usefixtures("isolated_home")``."""
    h = tmp_path_factory.mktemp("isolated-home")
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(h / ".config"))
    monkeypatch.delenv("KUSTOMIZE_PLUGIN_HOME", raising=False)
