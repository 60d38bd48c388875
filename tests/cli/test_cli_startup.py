"""The command line imports only what the command it runs needs.

Hooks, scripts and CI loops run ``kzgit build`` once per root, so the import cost is paid on
every call: a small build must not import other commands, the remote cache or the git runner,
nor standard modules it only needs on rarer paths (a crash log, ``-o`` output files, floats,
URLs with a query).  The probe lists only modules kzgit itself brought in (the interpreter's
start-up, e.g. an editable install's finder, may import some of them first).  It builds with
``--no-cache``: the persistent render cache, on by default, stores each cold build's output
(temporary files, its directory under the cache root) and is measured on its own.
"""
from __future__ import annotations

import argparse
import subprocess
import sys

import pytest
from helpers import FIXTURES, PROJECT

PROBE = """
import contextlib, io, sys
before = set(sys.modules)
from kzgit.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    rc = main(["build", "--no-cache", sys.argv[1]])
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
    # argparse sizes its help with shutil.get_terminal_size (and shutil imports bz2, lzma)
    "shutil",
    # floats (yamlio/_gonum.py) and integers beyond 2**53 in a JSON 6902 patch
    "decimal",
    # a random token is os.urandom (yamlio/emit.py), not secrets (hmac, random)
    "secrets", "random",
]


def _imported_by_build(target: str, modules: list) -> str:
    out = subprocess.run([sys.executable, "-c", PROBE, target, ",".join(modules)],
                         capture_output=True, text=True, timeout=60, cwd=PROJECT)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


# an overlay with generators, images and a strategic-merge patch; a JSON 6902 patch (whose
# numbers pass through float64 as in kustomize)
SMALL_ROOTS = [PROJECT / "examples" / "overlays" / "production", FIXTURES / "patches" / "json6902-inline"]


@pytest.mark.parametrize("target", SMALL_ROOTS, ids=lambda p: p.name)
def test_build_does_not_import_what_it_does_not_need(target: object) -> None:
    assert _imported_by_build(str(target), NOT_FOR_A_SMALL_BUILD) == "0 []"


def test_probe_sees_modules_a_build_imports() -> None:
    # the probe itself works: modules every build needs are reported
    target = str(PROJECT / "examples" / "overlays" / "production")
    assert _imported_by_build(target, ["kzgit.build.pipeline", "yaml"]) == \
        "0 ['kzgit.build.pipeline', 'yaml']"


@pytest.mark.parametrize("columns", ["40", "100", "junk"])
def test_help_is_formatted_as_argparse_formats_it(columns: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # kzgit's formatter skips shutil but keeps argparse's width: $COLUMNS, else the terminal, else 80
    from kzgit.cli.main import make_parser
    monkeypatch.setenv("COLUMNS", columns)
    parser = make_parser("build")
    build = parser._subparsers._group_actions[0].choices["build"]  # type: ignore[union-attr]
    ours = [parser.format_help(), build.format_help()]
    parser.formatter_class = build.formatter_class = argparse.HelpFormatter
    assert ours == [parser.format_help(), build.format_help()]


def test_help_still_lists_every_command() -> None:
    out = subprocess.run([sys.executable, "-m", "kzgit", "--help"], capture_output=True, text=True,
                         timeout=60, cwd=PROJECT)
    for name in ("build", "transform", "localize", "rebuild", "diff", "hook", "install-hooks"):
        assert f"    {name}" in out.stdout
