"""The command line imports only what the command it runs needs.

Hooks, scripts and CI loops run ``kzgit build`` once per root, so the import cost is paid on
every call: a small build must not import other commands, the remote cache or the git runner,
nor standard modules it only needs on rarer paths (a crash log, ``-o`` output files, floats,
URLs with a query).  The probe lists only modules kzgit itself brought in (the interpreter's
start-up, e.g. an editable install's finder, may import some of them first).
"""
from __future__ import annotations

import subprocess
import sys

from helpers import PROJECT

PROBE = """
import contextlib, io, sys
before = set(sys.modules)
from kzgit.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    rc = main(["build", sys.argv[1]])
print(rc, sorted(m for m in sys.argv[2].split(",") if m in sys.modules and m not in before))
"""

# Imported only when a command or an input needs them; each line says which.
NOT_FOR_A_SMALL_BUILD = [
    # other commands
    "kzgit.hooks", "kzgit.diff", "kzgit.localize", "kzgit.crane",
    # remote references: the repository cache and git (subprocess, shutil, hashlib, json),
    # HTTP files, and URL query parsing (urllib.parse imports ipaddress)
    "kzgit.remote._cache", "kzgit.remote._gitcli", "kzgit.remote._http", "urllib.request",
    "subprocess", "urllib.parse",
    # a crash log (cli/main.py) and -o output files (atomic.py)
    "tempfile", "traceback",
    # floats (yamlio/_gonum.py, patch/json6902.py)
    "decimal",
    # a random token is os.urandom (yamlio/emit.py), not secrets (hmac, random)
    "secrets", "random",
]


def _imported_by_build(target: str, modules: list) -> str:
    out = subprocess.run([sys.executable, "-c", PROBE, target, ",".join(modules)],
                         capture_output=True, text=True, timeout=60, cwd=PROJECT)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_build_does_not_import_what_it_does_not_need() -> None:
    target = str(PROJECT / "examples" / "overlays" / "production")
    assert _imported_by_build(target, NOT_FOR_A_SMALL_BUILD) == "0 []"


def test_probe_sees_modules_a_build_imports() -> None:
    # the probe itself works: modules every build needs are reported
    target = str(PROJECT / "examples" / "overlays" / "production")
    assert _imported_by_build(target, ["kzgit.build.pipeline", "yaml"]) == \
        "0 ['kzgit.build.pipeline', 'yaml']"


def test_help_still_lists_every_command() -> None:
    out = subprocess.run([sys.executable, "-m", "kzgit", "--help"], capture_output=True, text=True,
                         timeout=60, cwd=PROJECT)
    for name in ("build", "transform", "localize", "rebuild", "diff", "hook", "install-hooks"):
        assert f"    {name}" in out.stdout
