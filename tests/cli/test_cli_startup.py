"""The command line imports only the command it runs (hooks run ``kzgit`` on every commit)."""
from __future__ import annotations

import subprocess
import sys

from helpers import PROJECT

PROBE = """
import contextlib, io, sys
from kzgit.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    rc = main(["build", sys.argv[1]])
print(rc, sorted(m for m in ("kzgit.hooks", "kzgit.diff", "kzgit.localize", "kzgit.crane",
                             "kzgit.remote._http", "urllib.request") if m in sys.modules))
"""


def test_build_does_not_import_other_commands() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE, str(PROJECT / "examples" / "overlays" / "production")],
                         capture_output=True, text=True, timeout=60, cwd=PROJECT)
    assert out.stdout.strip() == "0 []", out.stderr


def test_help_still_lists_every_command() -> None:
    out = subprocess.run([sys.executable, "-m", "kzgit", "--help"], capture_output=True, text=True,
                         timeout=60, cwd=PROJECT)
    for name in ("build", "transform", "localize", "rebuild", "diff", "hook", "install-hooks"):
        assert f"    {name}" in out.stdout
