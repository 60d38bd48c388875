"""``KZGIT_REQUIRE_ORACLES=1`` turns a skip for want of an oracle into a failure (tests/conftest.py),
so CI cannot pass while the kubectl and helm differentials are silently skipped."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from helpers import TESTS

CASES = '''\
import pytest
def test_path(): pytest.skip("kubectl not on PATH")
def test_other(): pytest.skip("no Landlock here")
@pytest.mark.skipif(True, reason="KZGIT_ORACLE_HELM_4 is not set")
def test_mark(): pass
'''


def run(tmp_path: Path, require: str) -> str:
    shutil.copy(TESTS / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_cases.py").write_text(CASES)
    env = {k: v for k, v in os.environ.items() if k != "KZGIT_REQUIRE_ORACLES"}
    env["KZGIT_REQUIRE_ORACLES"] = require
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA",
                          "-c", os.devnull, "--rootdir", str(tmp_path), str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=120)
    return res.stdout


def test_oracle_skips_fail_when_required(tmp_path: Path) -> None:
    out = run(tmp_path, "1")
    assert "FAILED" in out and "test_path" in out and "KZGIT_REQUIRE_ORACLES is set" in out
    assert "ERROR" in out and "test_mark" in out       # a skipif mark is reported at setup
    assert "SKIPPED" in out and "no Landlock here" in out  # other skips stay skips
    assert "1 failed, 1 skipped, 1 error" in out


def test_oracle_skips_stay_skips_by_default(tmp_path: Path) -> None:
    assert "3 skipped" in run(tmp_path, "")
