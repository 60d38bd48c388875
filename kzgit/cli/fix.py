"""``kzgit fix [PATH...] [--all] [--check] [--diff]``: migrate deprecated kustomization fields.

The migrations of ``kustomize edit fix`` (:mod:`kzgit.fix.migrate`) on every kustomization
below each PATH (default: the current directory; ``--all``: the whole repository), made
in place so comments and formatting stay, and written only where every root reaching the
file renders the same bytes before and after (:mod:`kzgit.fix.proof`).  As pre-commit's
fixers: exit 1 when a file changed (or, with ``--check``/``--diff``, would change) or when
a migration is left undone; 0 when there is nothing to migrate.
"""
from __future__ import annotations

import argparse
import os
import sys

from kzgit.cli import add_version_flag, jobs_arg
from kzgit.errors import UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import List, Optional
    from kzgit.fix import FixReport


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("fix", help="migrate deprecated kustomization fields (kustomize edit fix), "
                                   "proven to change no rendering",
                       description="Make the migrations of `kustomize edit fix` (bases, commonLabels, "
                                   "patchesStrategicMerge, patchesJson6902, imageTags, missing "
                                   "apiVersion/kind) on every kustomization below each PATH, keeping "
                                   "comments and formatting. A file is written only when every root "
                                   "that reaches it renders the same bytes before and after; otherwise "
                                   "it is left untouched and reported with the first differing line. "
                                   "Exit 1 when something changed or is left to migrate.")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="kustomization directories or files (default: the current directory)")
    p.add_argument("--all", action="store_true", help="every kustomization of the repository")
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 when something would change")
    p.add_argument("--diff", action="store_true", help="print unified diffs of the changes, write nothing")
    p.add_argument("--vars", action="store_true",
                   help="also convert vars to replacements (kustomize edit fix --vars): $(NAME) in "
                        "the resources becomes NAME_PLACEHOLDER, each reference a replacement target")
    p.add_argument("-j", "--jobs", type=jobs_arg, default=0, metavar="N",
                   help="parallel renders of the proof (default: the `jobs` setting, else one per CPU)")
    p.add_argument("--no-cache", action="store_true", help="do not use or fill the render cache")
    add_version_flag(p, "the repository's")
    p.set_defaults(func=run)


def _top(anchor: str) -> str:
    from kzgit.paths import repository_top   # start-up: only the command that runs
    top = repository_top(anchor)
    if top is None:
        # outside a repository: the current directory, unless the path lies elsewhere
        here = os.path.realpath(os.getcwd())
        top = os.path.realpath(anchor if os.path.isdir(anchor) else os.path.dirname(os.path.abspath(anchor)))
        if top == here or top.startswith(here.rstrip(os.sep) + os.sep):
            top = here
    return os.path.realpath(top)


def _targets(top: str, paths: List[str]) -> List[str]:
    out = []
    for p in paths:
        if not os.path.exists(p):
            raise UsageError(f"{p}: no such file or directory")
        rel = os.path.relpath(os.path.realpath(p), top)
        if rel == ".." or rel.startswith(".." + os.sep):
            raise UsageError(f"{p}: not inside the repository at {top}",
                             tip="run kzgit fix from inside the repository that holds the paths")
        out.append(rel.replace(os.sep, "/"))
    return out


def run(args: argparse.Namespace) -> int:
    from kzgit import fix, versions   # start-up: only the command that runs
    from kzgit.options import BuildOptions
    from kzgit.cli.cache import open_for_workspace
    from kzgit.config import load_config
    from kzgit.hooks import Workspace
    from kzgit.walk import tree_files
    if args.all and args.paths:
        raise UsageError("give PATHs or --all, not both")
    anchor = args.paths[0] if args.paths else "."
    top = _top(anchor)
    targets: Optional[List[str]] = None if args.all else _targets(top, args.paths or ["."])
    config = versions.with_flag(load_config(top), args.kustomize_version)
    ws = Workspace(top, tree_files(top), None, config, repo=top)
    store = open_for_workspace(ws, args.no_cache)
    c = config
    options = BuildOptions(load_restrictor=c.load_restrictor, enable_alpha_plugins=c.enable_alpha_plugins,
                           enable_exec=c.enable_exec, enable_helm=c.enable_helm,
                           helm_command=c.helm_command, sandbox=c.sandbox, **versions.options(c))
    report = fix.plan(ws, targets, options, args.jobs, store, vars_mode=args.vars)
    dry = args.check or args.diff
    if not dry:
        fix.write(ws, report)
    if store is not None:
        store.trim()
    _print(ws.root, report, dry, args.diff)
    return 1 if report.proven or report.left else 0


def _print(top: str, report: FixReport, dry: bool, diff: bool) -> None:
    by_path = {f.path: f for f in report.fixes}
    for rel in report.proven:
        f = by_path[rel]
        print(f"{'would fix' if dry else 'fixed'} {rel}: {', '.join(f.done)}")
        if diff:
            import difflib   # start-up: only --diff
            for path, (old, new) in sorted({**f.others, rel: (f.old, f.new)}.items()):
                sys.stdout.writelines(difflib.unified_diff(
                    old.splitlines(keepends=True), new.splitlines(keepends=True),
                    fromfile=f"a/{path}", tofile=f"b/{path}"))
    for rel, why in sorted(report.held.items()):
        print(f"{rel}: left untouched: {why}")
    for rel, why in sorted(report.broken.items()):
        print(f"{rel}: left as it is (not counted as left to migrate): {why}")
    for f in report.fixes:
        for why in f.refused:
            print(f"{f.path}: {why}")
        for note in f.notes:
            print(f"{f.path}: {note}")
    n = len(report.proven)
    if n or report.left:
        refused = sum(1 for f in report.fixes if f.refused)
        print(f"{n} file{'s' if n != 1 else ''} {'would be ' if dry else ''}fixed, "
              f"{len(report.held)} left untouched by the proof, {refused} with migrations "
              f"refused; {len(report.checked)} kustomizations rendered before and after",
              file=sys.stderr)
