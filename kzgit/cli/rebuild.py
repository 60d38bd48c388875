"""``kzgit rebuild [NEWDIR...] [--update-pins] [--no-verify]``.

Re-localizes each copy from the original its lock file records and replaces it
atomically; a moved tag fails loudly unless ``--update-pins``.
"""
from __future__ import annotations

import argparse
import os
import sys

from kzgit.cli import add_version_flag
from kzgit.paths import repository_top
from kzgit.errors import KzgitError


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("rebuild", help="refresh localized copies from their originals",
                       description="Re-localize each NEWDIR (default: every localized copy found "
                                   "in the repository) from the original recorded in its lock file.")
    p.add_argument("copies", nargs="*", metavar="NEWDIR",
                   help="localized copy to refresh (default: every copy, found by its lock file)")
    p.add_argument("--update-pins", action="store_true",
                   help="accept refs that now resolve to another commit than the lock records")
    p.add_argument("--no-verify", action="store_true", help="do not compare builds")
    add_version_flag(p, "the repository's")
    p.set_defaults(func=run)


def _repo_root() -> str:
    """The repository around the current directory, else the current directory."""
    return repository_top(os.getcwd()) or os.getcwd()


def run(args: argparse.Namespace) -> int:
    from kzgit.localize import find_copies, rebuild   # start-up
    copies = args.copies
    if not copies:
        root = _repo_root()
        copies = [os.path.relpath(os.path.join(root, c)) for c in find_copies(root)]
        if not copies:
            print("no localized copies found (no .kzgit-localize.lock)", file=sys.stderr)
            return 0
    from kzgit.cli.localize import verify_options   # start-up
    options = None if args.no_verify else verify_options(args)
    failed = 0
    for c in copies:
        try:
            r = rebuild(c, update_pins=args.update_pins, verify=not args.no_verify,
                        build_options=options)
        except KzgitError as e:
            print(f"Error: {e}", file=sys.stderr)
            failed += 1
            continue
        for w in r.warnings:
            print(w, file=sys.stderr)
        for m in r.messages:
            print(m)
        for p in r.moved_pins:
            print(f"WARNING: {c}: pin updated: {p}", file=sys.stderr)
        if r.unchanged:
            print(f"{c}: up to date")
        else:
            print(f"{c}: rebuilt ({len(r.added)} added, {len(r.removed)} removed, {len(r.changed)} changed)")
            for label, items in (("added", r.added), ("removed", r.removed), ("changed", r.changed)):
                for item in items:
                    print(f"  {label}: {item}")
    return 1 if failed else 0
