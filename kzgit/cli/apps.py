"""``kzgit apps [--format text|json] [DIR]``: the Argo CD Applications and Flux Kustomizations
of the repository, as the cluster receives them (:mod:`kzgit.gitops`).

Each line: the id ``kzgit build --app`` takes, the kind, the path it renders, what renders it
(the Kustomize release; ``directory``; why not), and where it is defined.  Exit 0 listed
(applications that do not resolve are listed with their error), 2 usage or configuration.
"""
from __future__ import annotations

import argparse
import sys

from kzgit.cli import add_version_flag

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import List, Optional
    from kzgit.gitops.catalog import Catalog

FORMATS = ("text", "json")


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "apps", help="list the Argo CD Applications and Flux Kustomizations of the repository",
        description="List the applications the repository deploys: Flux Kustomizations and Argo "
                    "CD Applications whose source is this repository (ApplicationSets with the "
                    "list and git-directories generators expanded), found as the cluster receives "
                    "them: the repository's entry points rendered and the applications in their "
                    "output read, recursively. Each has an id for `kzgit build --app ID`.",
        epilog="Exit status: 0 listed; 2 usage or configuration error.")
    p.add_argument("dir", nargs="?", default=".", metavar="DIR",
                   help="a directory inside the repository (default: .)")
    p.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    add_version_flag(p, "the repository's")
    p.set_defaults(func=run)


def open_catalog(where: str, flag: Optional[str] = None) -> Catalog:
    """The applications of the repository holding ``where`` (its configuration, ``flag`` the
    ``--kustomize-version`` given)."""
    from kzgit import gitio   # start-up
    from kzgit.config import load_config   # start-up
    from kzgit.gitops.discover import discover, open_worktree   # start-up
    from kzgit.versions import with_flag   # start-up
    top = gitio.repo_root(where)
    config = with_flag(load_config(top), flag)
    return discover(open_worktree(top, config))


def run(args: argparse.Namespace) -> int:
    catalog = open_catalog(args.dir, getattr(args, "kustomize_version", None))
    if args.format == "json":
        import json   # start-up
        sys.stdout.write(json.dumps({"apps": [a.as_json() for a in catalog.apps]}, indent=2) + "\n")
        return 0
    rows: List[List[str]] = [["ID", "KIND", "PATH", "RENDERER", "DEFINED"]]
    notes: List[str] = []
    for a in catalog.apps:
        path = "-" if a.path is None else (a.path or ".")
        rows.append([a.id, a.kind, path, "error" if a.error else a.renderer,
                     f"{a.file}:{a.line}"])
        if a.error:
            notes.append(f"{a.id}: {a.error}")
        elif a.reason:
            notes.append(f"{a.id}: {a.reason}")
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        sys.stdout.write("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() + "\n")
    if len(rows) == 1:
        sys.stdout.write("(no application whose source is this repository)\n")
    for n in notes:
        sys.stdout.write(f"\n{n}" if n is notes[0] else f"{n}")
        sys.stdout.write("\n")
    return 0
