"""Imports flow one way (docs/layout.md): the import-linter contracts of pyproject.toml hold, so a
module placed in no layer, an import up a layer, a cycle or another package's private module
fails the suite as well as .ci/run's ``lint-imports``."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from helpers import PROJECT


def test_import_contracts_hold() -> None:
    pytest.importorskip("importlinter", reason="import-linter needs Python 3.11 (the test extra)")
    exe = os.path.join(os.path.dirname(sys.executable), "lint-imports")
    res = subprocess.run([exe, "--no-cache"], cwd=PROJECT, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "0 broken" in res.stdout
