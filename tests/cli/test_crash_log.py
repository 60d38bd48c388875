"""The crash log (exit 3) is attached to bug reports: no credential of the command line or of
the error reaches it (issue 32: it wrote argv as given)."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from kzgit.cli import main as cli_main

TOKEN = "ghp_0123456789abcdefSECRET"


def test_crash_log_redacts_credentials(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                       tmp_path: Path) -> None:
    url = f"https://user:{TOKEN}@github.com/org/repo//base?ref=v1"

    def crash(args: object) -> int:
        raise RuntimeError(f"boom while fetching {url}")

    from kzgit.cli import build as build_cli
    monkeypatch.setattr(build_cli, "run", crash)
    argv = ["build", url, "-e", f"AWS_SECRET_ACCESS_KEY={TOKEN}", f"--env=API_TOKEN={TOKEN}",
            "--env", "PLAIN_NAME"]
    monkeypatch.setattr(sys, "argv", ["kzgit", *argv])
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    rc = cli_main.main(argv)
    err = capsys.readouterr().err
    assert rc == 3, err
    log = Path(re.search(r"Check the log at (\S+)", err).group(1))  # type: ignore[union-attr]
    text = log.read_text()
    assert "RuntimeError" in text and "github.com/org/repo" in text
    assert TOKEN not in text and TOKEN not in err
    assert "AWS_SECRET_ACCESS_KEY=***" in text and "API_TOKEN=***" in text and "PLAIN_NAME" in text
