"""The ``repo`` fixture: a real git repository holding the files a test gives (gitops_repos)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from gitops_repos import repo_fixture


@pytest.fixture
def repo(tmp_path: Path) -> Callable[..., Path]:
    return repo_fixture(tmp_path)
