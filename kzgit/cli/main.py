"""``kzgit`` command line: owns argv, dispatches to ``kzgit.cli.<command>`` modules.

Each command module defines ``register(subparsers)`` (adds its parser and sets
``func``) and a ``run(args) -> int``.  Exit codes follow pre-commit:
0 ok, 1 finding / build error, 2 usage, 3 unexpected (crash log), 130 interrupted.
"""
from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import tempfile
import traceback
from typing import List, Optional

from kzgit.errors import KzgitError, UsageError

# Command modules under kzgit/cli/, in the order ``kzgit --help`` lists them.
COMMANDS = ["build", "transform", "localize", "rebuild", "diff", "hook", "install_hooks"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors exit 2, as argparse does
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def make_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="kzgit", description="Keep kustomizations honest inside git.")
    parser.add_argument("--version", action="version", version=_version())
    parser.add_argument("--traceback", action="store_true", help="show Python tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"kzgit.cli.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"kzgit.cli.{name}":
                continue
            raise
        mod.register(sub)
    return parser


def _version() -> str:
    from kzgit import __version__
    return f"kzgit {__version__}"


def _crash_log(exc: BaseException) -> str:
    fd, path = tempfile.mkstemp(prefix="kzgit-crash-", suffix=".log")
    with os.fdopen(fd, "w") as f:
        f.write(f"{_version()}\nargv: {sys.argv!r}\n\n")
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=f)
    return path


def main(argv: Optional[List[str]] = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    # SIGTERM behaves like Ctrl-C so cleanup code (temp dirs, child processes) runs.
    try:
        signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    except ValueError:  # not in the main thread (tests)
        pass
    try:
        return int(args.func(args) or 0)
    except UsageError as e:
        if args.traceback:
            raise
        print(f"Error: {e}", file=sys.stderr)
        return 2
    except KzgitError as e:
        if args.traceback:
            raise
        print(f"Error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("Interrupted (^C)", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except Exception as e:  # noqa: BLE001 - the last line of defence
        if args.traceback:
            raise
        path = _crash_log(e)
        print(f"An unexpected error has occurred: {type(e).__name__}: {e}\n"
              f"Check the log at {path}", file=sys.stderr)
        return 3
