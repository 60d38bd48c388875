"""The command line imports only what the command it runs needs.

Hooks, scripts and CI loops run ``kzgit build`` once per root, so the import cost is paid on
every call: a small build must not import other commands, the remote cache or the git runner,
nor standard modules it only needs on rarer paths (a crash log, ``-o`` output files, floats,
URLs with a query, the introspection ``dataclasses`` brings).  The probe lists only modules
kzgit itself brought in (the interpreter's start-up, e.g. an editable install's finder, may
import some of them first).

Two paths are guarded: a cold build (``--no-cache``, and a first build that fills the render
cache), and a build answered from the render cache, which checks the recorded inputs and
prints the stored output: it must import neither PyYAML nor the build engine.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
from helpers import FIXTURES, PROJECT

PROBE = """
import contextlib, io, sys
before = set(sys.modules)
from kzgit.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    rc = main(["build"] + sys.argv[3:] + [sys.argv[1]])
print(rc, sorted(m for m in sys.argv[2].split(",") if m in sys.modules and m not in before))
print(out.getvalue(), end="")
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
    # floats (yamlio/gonum.py) and integers beyond 2**53 in a JSON 6902 patch
    "decimal",
    # a random token is os.urandom (yamlio/emit.py), not secrets (hmac, random)
    "secrets", "random",
    # records are kzgit.record's plain classes: dataclasses imports inspect (ast, dis, tokenize);
    # the base cache's lock is _thread's
    "dataclasses", "inspect", "ast", "threading",
    # the CLI's signal handlers use _signal: signal builds enums of every signal at import
    "signal",
    # hashlib loads OpenSSL: name hashes and the render cache use kzgit.sha (CPython's own)
    "hashlib",
    # the builtins a kustomization does not use: each step's module is loaded by its field
    # (vars, replacements and their field paths, replicas, plugin entries and their registry),
    # the bases shared by a run of many builds, and what only a failed build reports with
    "kzgit.builtins.vars", "kzgit.builtins.replacements", "kzgit.builtins.fieldpath",
    "kzgit.builtins.replicas", "kzgit.builtins.valueadd", "kzgit.plugins.builtin",
    "kzgit.plugins.common", "kzgit.builder.cache", "kzgit.builder.leads",
    # annotations only: the engine's modules import typing for type checkers alone
    "typing",
]

# A kustomization with resources and labels only: no patch engine, generator or image step,
# no OpenAPI schema, no label selector to parse, no generated name to hash.
NOT_FOR_A_PLAIN_BUILD = NOT_FOR_A_SMALL_BUILD + [
    "kzgit.builtins.patches", "kzgit.patch.smp", "kzgit.patch.json6902", "kzgit.generators",
    "kzgit.builtins.images", "kzgit.builtins.namespace", "kzgit.builtins.prefix_suffix",
    "kzgit.openapi._index", "kzgit.resource.labels", "kzgit.sha",
    # atomic writes: -o FILE, and entries of the render cache (--no-cache writes none)
    "kzgit.atomic",
]

# A build answered from the render cache checks what the cached build read and prints its output.
NOT_FOR_A_CACHE_HIT = NOT_FOR_A_SMALL_BUILD + [
    # parsing and emitting YAML, and the engine
    "yaml", "kzgit.yamlio", "kzgit.resource", "kzgit.builder.pipeline", "kzgit.builtins",
    "kzgit.openapi", "kzgit.konfig",
    # remote references (the cache root is kzgit.cachedir's)
    "kzgit.remote",
]


def _imported_by_build(target: str, modules: list, *flags: str, env: Optional[Dict[str, str]] = None
                       ) -> Tuple[str, str]:
    """The exit status and the listed modules the build imported; and what it printed."""
    out = subprocess.run([sys.executable, "-c", PROBE, target, ",".join(modules), *flags],
                         capture_output=True, text=True, timeout=60, cwd=PROJECT, env=env)
    assert out.returncode == 0, out.stderr
    first, _, printed = out.stdout.partition("\n")
    return first, printed


# an overlay with generators, images and a strategic-merge patch; a JSON 6902 patch (whose
# numbers pass through float64 as in kustomize)
SMALL_ROOTS = [PROJECT / "examples" / "overlays" / "production", FIXTURES / "patches" / "json6902-inline"]


@pytest.mark.parametrize("target", SMALL_ROOTS, ids=lambda p: p.name)
def test_build_does_not_import_what_it_does_not_need(target: object) -> None:
    assert _imported_by_build(str(target), NOT_FOR_A_SMALL_BUILD, "--no-cache")[0] == "0 []"


def test_a_base_directory_costs_no_copy_of_an_error() -> None:
    # a resource path is tried as a file first: for a base directory that error is shown only
    # if the directory fails too, so it is not copied (KzgitError.reworded imports copy)
    target = PROJECT / "examples" / "overlays" / "production"
    assert _imported_by_build(str(target), ["copy"], "--no-cache")[0] == "0 []"


def test_plain_build_loads_no_step_it_does_not_run() -> None:
    target = FIXTURES / "labels" / "common-labels"
    assert _imported_by_build(str(target), NOT_FOR_A_PLAIN_BUILD, "--no-cache")[0] == "0 []"


@pytest.mark.parametrize("target", SMALL_ROOTS, ids=lambda p: p.name)
def test_cache_hit_imports_neither_yaml_nor_the_engine(target: object, tmp_path: Path) -> None:
    env = dict(os.environ, KZGIT_CACHE_DIR=str(tmp_path / "cache"))
    # the first build fills the cache: it builds, as cheaply as a --no-cache build does
    first, built = _imported_by_build(str(target), NOT_FOR_A_SMALL_BUILD + ["kzgit.builder.pipeline"],
                                      env=env)
    assert first == "0 ['kzgit.builder.pipeline']"
    again, cached = _imported_by_build(str(target), NOT_FOR_A_CACHE_HIT, env=env)
    assert (again, cached) == ("0 []", built)


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


FREEZE_PROBE = """
import contextlib, gc, io, sys
from kzgit.cli.main import main
how, flags = sys.argv[1], sys.argv[3:]
with contextlib.redirect_stdout(io.StringIO()):
    if how == "own":
        sys.argv = ["kzgit", "build", *flags, sys.argv[2]]
        main()
    else:
        main(["build", *flags, sys.argv[2]])
print(gc.get_freeze_count() > 0, gc.isenabled(), "kzgit.builder.pipeline" in sys.modules)
"""


@pytest.mark.parametrize("how, frozen", [("own", "True"), ("hosted", "False")])
def test_only_the_process_s_own_build_freezes_its_imports(how: str, frozen: str, tmp_path: Path) -> None:
    # kzgit build's process hides the engine's modules from the garbage collector; a program
    # calling main(argv) (tests, an embedding tool) keeps its objects collectable.  Through the
    # render cache the engine is loaded (and frozen) on a miss only.
    target = str(PROJECT / "examples" / "overlays" / "production")
    env = dict(os.environ, KZGIT_CACHE_DIR=str(tmp_path / "cache"))

    def probe(*flags: str) -> List[str]:
        out = subprocess.run([sys.executable, "-c", FREEZE_PROBE, how, target, *flags],
                             capture_output=True, text=True, timeout=60, cwd=PROJECT, env=env)
        assert out.returncode == 0, out.stderr
        return out.stdout.split()

    assert probe("--no-cache") == [frozen, "True", "True"]
    assert probe() == [frozen, "True", "True"]          # a miss: built
    assert probe() == ["False", "True", "False"]        # a hit: nothing loaded, nothing frozen
