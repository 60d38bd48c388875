"""``kzgit localize TARGET [NEWDIR] [--scope DIR] [--no-verify]``.

The proposal's synopsis (``proposals/22-04-localize-command.md``): copy TARGET
and everything it references into NEWDIR, downloading remote references.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from kzgit.cli import add_version_flag


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("localize", help="make a self-contained copy of a kustomization (kustomize localize)",
                       description="Copy TARGET and every file it references into NEWDIR, download "
                                   "remote references into localized-files/, and verify that both "
                                   "build the same.")
    p.add_argument("target", metavar="TARGET", help="kustomization root, or remote directory URL with ?ref=")
    p.add_argument("new_dir", nargs="?", metavar="NEWDIR",
                   help="destination, which must not exist (default: localized-<dir> for a "
                        "local TARGET; localized-<dir>-<ref> for a remote one, <dir> being the "
                        "last directory of its path, or the repository's name at its top)")
    p.add_argument("--scope", metavar="DIR", help="local directory that bounds what may be copied "
                   "(default: TARGET)")
    p.add_argument("--no-verify", action="store_true",
                   help="do not build TARGET and NEWDIR to compare their output")
    p.add_argument("--parents", action="store_true",
                   help="create NEWDIR's missing parent directories, as mkdir -p does (removed "
                        "again if localize fails); without it they must exist, as in kustomize")
    add_version_flag(p, "the repository's")
    p.set_defaults(func=run)


def _engine() -> Any:
    """The engine the repository's configuration asks for (builtin when none)."""
    from kzgit.config import load_config   # only the command that runs imports its modules
    from kzgit.engine import engine_from_config
    return engine_from_config(load_config(os.getcwd()))


def verify_options(args: argparse.Namespace) -> Any:
    """The verification's build options: the Kustomize release ``--kustomize-version``, the
    environment or the configuration selects (localize enables no plugin)."""
    from kzgit.options import BuildOptions   # only the command that runs imports its modules
    from kzgit.config import load_config
    from kzgit import versions
    config = versions.with_flag(load_config(os.getcwd()), args.kustomize_version)
    return BuildOptions(**versions.options(config))


def run(args: argparse.Namespace) -> int:
    from kzgit.localize import localize   # start-up
    engine = None if args.no_verify else _engine()
    result = localize(args.target, args.new_dir, scope=args.scope, verify=not args.no_verify,
                      engine=engine, parents=args.parents,
                      build_options=None if args.no_verify else verify_options(args))
    for w in result.warnings:
        print(w, file=sys.stderr)
    for m in result.messages:
        print(m)
    if not result.messages:
        print(f"localized {args.target} to {args.new_dir or os.path.relpath(result.new_dir)}")
    return 0
