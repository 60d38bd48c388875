"""Which roots a repository-wide command (``kzgit hook``, ``kzgit validate``, ``kzgit lint``)
runs over, and what it says on stderr when it checks none: one home for the three commands."""
from __future__ import annotations

import argparse
import os
import sys

from kzgit.errors import KzgitError, UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import List, Tuple
    from kzgit.hooks import Workspace


def repository() -> Tuple[str, bool]:
    """The repository's top and True, or the current directory and False outside a git work
    tree (``kzgit validate`` and ``kzgit lint`` choose roots the same way)."""
    from kzgit import gitio   # start-up
    try:
        return os.path.realpath(gitio.repo_root(".")), True
    except KzgitError:
        return os.path.realpath(os.getcwd()), False


def select_roots(args: argparse.Namespace, ws: "Workspace", repo: str) -> List[str]:
    """The roots ``--all``, the ROOT arguments or the change select (validate and lint)."""
    g = ws.graph
    if args.all:
        return list(g.roots)
    if args.roots:
        out = []
        for r in args.roots:
            rel = os.path.relpath(os.path.realpath(r), repo).replace(os.sep, "/")
            if rel == ".." or rel.startswith("../"):
                raise UsageError(f"{r}: outside the repository {repo}")
            if not any(os.path.isfile(os.path.join(repo, rel, n))
                       for n in ("kustomization.yaml", "kustomization.yml", "Kustomization")):
                raise UsageError(f"{r}: not a kustomization directory")
            out.append(rel)
        return out
    here = os.path.relpath(os.path.realpath(os.getcwd()), repo).replace(os.sep, "/")
    roots = [r for r in g.roots if here == "." or r == here or r.startswith(here + "/")]
    if not roots:
        raise UsageError(f"no kustomization root at or under {os.getcwd()}",
                         tip="name ROOTs, use --all, or --manifests FILE")
    return roots


def say_no_root(ws: "Workspace", roots: List[str], verbose: bool) -> None:
    """One line on stderr when the run selects no root: always when it was to check every
    root (``--all``: the repository has none, whatever ``roots``/``exclude`` say), with
    ``-v`` when no root reaches the changed files."""
    if roots:
        return
    if ws.changed is None:
        print("kzgit: no kustomization root in the repository: nothing checked", file=sys.stderr)
    elif verbose:
        print("no kustomization root reaches the changed files: nothing checked", file=sys.stderr)


def print_unchecked(ws: "Workspace") -> None:
    """``-v``: the components the run concerns (all with ``--all``, else those the change
    touches) that no root includes, so that nothing checked them, on stderr."""
    from kzgit.hooks.render import app_catalog, app_components   # start-up: -v only
    catalog = app_catalog(ws)
    by_apps = app_components(catalog) if catalog is not None else set()
    for c in ws.graph.unincluded_components(ws.changed):
        if c not in by_apps:   # an Argo CD or Flux application's own spec includes it
            print(f"{c}: not checked: included by no root", file=sys.stderr)
