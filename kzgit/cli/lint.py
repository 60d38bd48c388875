"""``kzgit lint [ROOT...] [--all] [--format text|json|github|sarif]``: what kustomize lets pass.

Roots are chosen as by ``kzgit validate``: with no ROOT, the roots at or under the current
directory; ``--all`` every root of the repository, and every kustomization (components no root
includes too).  The rules and their configuration: :mod:`kzgit.lint`, docs/commands/lint.md and docs/reference/lint-rules.md.
``kzgit hook lint`` (the ``kzgit-lint`` pre-commit hook) lints the roots a commit's files reach.
Exit 0 no error-severity finding (warnings allowed), 1 errors, 2 usage or configuration.
"""
from __future__ import annotations

import argparse
import sys

from kzgit.cli import add_version_flag, jobs_arg
from kzgit.errors import UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import List, Optional
    from kzgit.hooks import Workspace
    from kzgit.lint.run import LintReport
    from kzgit.rendercache import Store

FORMATS = ("text", "json", "github", "sarif")


def add_lint_flags(p: argparse.ArgumentParser) -> None:
    """The flags of ``kzgit lint`` and ``kzgit hook lint``."""
    p.add_argument("--offline", action="store_true", help="use only cached remote references")
    p.add_argument("-j", "--jobs", type=jobs_arg, default=0, metavar="N",
                   help="parallel builds (default: the `jobs` setting, else one per CPU)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="list each root on stderr as it is done: built, cached or failed, and its time")
    p.add_argument("--no-cache", action="store_true",
                   help="build every root; do not use or fill the render cache")
    add_version_flag(p)


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "lint", help="find what kustomize lets pass: deprecated fields, patches matching nothing, ...",
        description="Check kustomizations for what kustomize lets pass (rules with stable ids, "
                    "docs/reference/lint-rules.md): deprecated fields, warnings, patch and replacement targets "
                    "that select nothing, unpinned charts, duplicate entries, fields the pinned "
                    "Kustomize does not support, unreferenced files. Exit 0 no error, 1 errors, "
                    "2 usage.")
    p.add_argument("roots", nargs="*", metavar="ROOT", help="kustomization directories to lint")
    p.add_argument("--all", action="store_true",
                   help="every root and every kustomization of the repository")
    p.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    p.add_argument("--output", metavar="FILE", help="write the report to FILE instead of stdout")
    add_lint_flags(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kzgit import gitio, walk   # start-up
    from kzgit.cli.cache import open_for_workspace   # start-up
    from kzgit.cli.roots import repository, select_roots   # start-up
    from kzgit.config import load_config   # start-up
    from kzgit.hooks import Workspace   # start-up
    from kzgit.versions import with_flag   # start-up
    repo, in_git = repository()
    if args.all and args.roots:
        raise UsageError(f"--all and ROOT ({args.roots[0]}) exclude each other: --all is every root "
                         "of the repository", tip="name ROOTs, or use --all alone")
    config = with_flag(load_config(repo), args.kustomize_version)
    # the work tree as it is, untracked files included (ignored ones not): what a user edits
    files = gitio.worktree_files(repo) if in_git else walk.tree_files(repo)
    ws = Workspace(repo, files, None, config, repo=repo)
    store = open_for_workspace(ws, args.no_cache)   # before the graph: it is kept there too
    roots = select_roots(args, ws, repo)
    return emit(args, lint(args, ws, roots, args.all or False, store))


def lint(args: argparse.Namespace, ws: "Workspace", roots: "List[str]", every: bool,
         store: "Optional[Store]") -> "LintReport":
    from kzgit.cli.cache import print_renders   # start-up
    from kzgit.cli.progress import for_terminal   # start-up
    from kzgit.lint.run import run as lint_run   # start-up
    # -v lists each root as it is built, on stderr; on a terminal, without -v, one progress line
    progress = None if args.verbose else for_terminal("kzgit lint", len(roots))
    on_render = (lambda r: print_renders([r])) if args.verbose else \
        (lambda r: progress.step(r.root)) if progress is not None else None
    try:
        report = lint_run(ws, roots, every, store=store, jobs=args.jobs, offline=args.offline,
                          on_render=on_render)
    finally:
        if progress is not None:
            progress.close()
    if store is not None and any(r.status != "cached" for r in report.renders):
        store.trim()   # workers may have written: keep the cache within its bound
    return report


def emit(args: argparse.Namespace, report: "LintReport", hook: "Optional[Workspace]" = None) -> int:
    """Print (or write) the report; 1 when it holds an error-severity finding.  A hook's
    (``hook``: its workspace), as text without ``-v``: a break kzgit-render reported earlier in
    the same pre-commit run is one line pointing there (issue 33 item 6)."""
    from kzgit.lint.report import render, summary   # start-up
    fmt = getattr(args, "format", "text")
    shown = report
    if hook is not None and fmt == "text" and not getattr(args, "verbose", False):
        shown = _pointing_to_render(report, hook)
    text = render(shown, fmt)
    if fmt == "text" and (report.findings or report.silenced):
        text += summary(report)
    if getattr(args, "output", None):
        from kzgit.atomic import write_atomic   # start-up
        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    return 1 if report.errors else 0


def _pointing_to_render(report: "LintReport", ws: "Workspace") -> "LintReport":
    """``report`` with each ``render-error`` that kzgit-render reported in this run cut to the
    roots it names and a pointer (its place, file and line, stays)."""
    from kzgit.cli.validate import render_said   # start-up
    from kzgit.lint.rules import render_error   # start-up
    said = render_said(ws)
    findings = []
    for f in report.findings:
        if f.rule == render_error.ID and said(f.root, f.message):
            who = f.message.split(" render: ", 1)[0]
            f = f.replace(message=f"{who} render (kzgit-render said why, above)")
        findings.append(f)
    return report.replace(findings=findings)


def run_hook(args: argparse.Namespace, ws: "Workspace") -> int:
    """``kzgit hook lint``: the roots the change reaches and the kustomizations they reach."""
    from kzgit.cli.cache import open_for_workspace   # start-up
    from kzgit.cli.roots import say_no_root   # start-up
    from kzgit.hooks.render import roots_to_build   # start-up
    store = open_for_workspace(ws, args.no_cache)
    roots = roots_to_build(ws)
    say_no_root(ws, roots, args.verbose)
    return emit(args, lint(args, ws, roots, ws.changed is None, store), hook=ws)
