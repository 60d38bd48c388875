"""``kzgit diff [--base REV] [--head REV] [--format text|json|github] [--exit-code]``.

Renders every kustomization root the change affects at both revisions and
prints the per-resource difference (:mod:`kzgit.diff`).  Exit codes, as
``git diff --exit-code`` plus kzgit's: 0 nothing changed (or no
``--exit-code``), 1 something changed with ``--exit-code``, 2 usage or
configuration error, 3 unexpected, 4 a root (or a revision) does not render.

``--shard I/N`` renders one of N disjoint parts of the roots (a CI matrix job
each); ``--merge A.json B.json ...`` prints the shards' JSON reports as one
report, in any format, with the exit status one unsharded run would have.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Optional

from kzgit.cli import add_plugin_flags, add_render_flags
from kzgit.errors import KzgitError, UsageError

if TYPE_CHECKING:  # pragma: no cover
    from kzgit.diff import DiffReport
    from kzgit.diff.report import RenderStat

EXIT_CHANGED = 1
EXIT_RENDER_FAILED = 4
FORMATS = ("text", "json", "github")


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "diff", help="show how a change alters the rendered kustomizations",
        description="Render every kustomization root affected by the change between two revisions "
                    "(default: HEAD and the working tree) and show the difference per resource.",
        epilog="Exit status: 0 no rendering changed (or no --exit-code); 1 a rendering changed, "
               "with --exit-code (a root the change fixes counts as a change); 2 usage or "
               "configuration error; 3 unexpected error (a crash report is written); 4 a root "
               "does not render at the head, or a revision cannot be read; 130 interrupted.")
    p.add_argument("--base", default="HEAD", metavar="REV", help="the revision compared against (default: HEAD)")
    p.add_argument("--head", metavar="REV",
                   help="the revision under review (default: the working tree, staged and unstaged)")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text (default), json (the documented report) or github (workflow commands "
                        "and a Markdown summary)")
    p.add_argument("--exit-code", action="store_true", help="exit 1 when a rendering changed")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the report to FILE (atomically) instead of stdout, as lint and validate do")
    p.add_argument("--summary", metavar="FILE",
                   help="write the Markdown summary to FILE (with --format github and no --summary, "
                        "it is appended to $GITHUB_STEP_SUMMARY when that is set)")
    add_render_flags(p, "compare", "the base revision's")
    add_plugin_flags(p, " (else the base revision's setting)")
    p.add_argument("--show-secrets", action="store_true",
                   help="print the values of Secrets' data and stringData (default: redacted to "
                        "which keys changed and a short digest of each value)")
    p.add_argument("--explain", action="store_true",
                   help="end each added line of a changed resource with the file:line of the head "
                        "that set its value, a file the change touched first (kzgit explain)")
    p.add_argument("--merge", nargs="+", metavar="REPORT",
                   help="render nothing: combine JSON reports of the shards of one diff and print "
                        "them as one report")
    p.set_defaults(func=run)


def _merged(paths: "list[str]") -> "DiffReport":
    from kzgit.diff.report import ReportFormatError, from_dict, merge   # start-up
    reports = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                reports.append(from_dict(json.load(f)))
        except OSError as e:
            raise UsageError(f"--merge {path}: cannot read: {e.strerror or e}") from None
        except (ValueError, ReportFormatError) as e:
            raise UsageError(f"--merge {path}: not a kzgit diff JSON report: {e}") from None
    try:
        return merge(reports, list(paths))
    except ReportFormatError as e:
        raise UsageError(f"--merge: {e}") from None


def _repo_top() -> Optional[str]:
    """The top of the repository holding the current directory; None outside one (the diff
    then says so)."""
    # start-up: found as git would, without running it where the repository is laid out plainly
    from kzgit.hooks.listing import top_and_index
    try:
        return top_and_index(os.getcwd())[0]
    except KzgitError:
        return None


def _cache_enabled(repo: Optional[str]) -> "tuple[bool, int]":
    """The render cache settings of the repository's configuration (on, when it cannot be read)."""
    from kzgit.config import load_config   # start-up
    try:
        c = load_config(repo) if repo is not None else None
    except KzgitError:
        c = None
    return (c.cache, c.cache_size_mb) if c is not None else (True, 512)


def run(args: argparse.Namespace) -> int:
    from kzgit.diff import DiffOptions, diff   # start-up
    if args.merge:
        return _finish(_merged(args.merge), args)
    from kzgit.cli.progress import for_terminal   # start-up: diff runs only
    # -v lists each rendering as it finishes, on stderr (as `kzgit hook render -v`); on a
    # terminal, without -v, one progress line
    progress = None if args.verbose else for_terminal("kzgit diff")

    def tell(r: "RenderStat") -> None:
        print(f"{r.status:<7} {r.root} at {r.label} ({r.seconds:.2f}s)", file=sys.stderr, flush=True)

    store = None
    repo = _repo_top()
    if not args.no_cache:
        from kzgit.cli.cache import open_for_cli   # start-up
        store = open_for_cli(*_cache_enabled(repo))
    options = DiffOptions(base=args.base, head=args.head, engine=args.engine,
                          enable_alpha_plugins=args.enable_alpha_plugins,
                          enable_exec=args.enable_exec, enable_helm=args.enable_helm,
                          offline=args.offline, jobs=max(0, args.jobs), progress=progress,
                          store=store, shard=args.shard, repo=repo,
                          kustomize_version=args.kustomize_version,
                          show_secrets=args.show_secrets, on_render=tell if args.verbose else None,
                          explain=args.explain)
    report: "Optional[DiffReport]" = None
    try:
        report = diff(os.getcwd(), options)
    except UsageError:
        raise
    except KzgitError as e:
        # a revision that cannot be read or exported: "does not render", not "changed" (1)
        if getattr(args, "traceback", False):
            raise
        print(f"Error: {e}", file=sys.stderr)
        return EXIT_RENDER_FAILED
    finally:
        if progress:
            progress(1, 1, "")
        if store is not None and _may_have_written(report):
            store.trim()   # workers may have written: keep the cache within its bound
    return _finish(report, args)


def _may_have_written(report: "Optional[DiffReport]") -> bool:
    """Whether a run may have written to the render cache (anything not answered from it)."""
    return report is None or any(r.status != "cached" for r in report.renders)


def _finish(report: "DiffReport", args: argparse.Namespace) -> int:
    """Print the report and its render errors; the exit status."""
    _print(report, args)
    for r in report.roots:
        if r.status == "fixed":   # broken at the base only: the report shows it, not an error
            continue
        for err in r.errors:
            # one line each: the report (stdout) holds the whole message, lead and chain
            first = err.message.split("\n", 1)[0]
            print(f"Error: {r.root} does not render at {err.revision}: {first}", file=sys.stderr)
    return _status(report, args)


def _status(report: "DiffReport", args: argparse.Namespace) -> int:
    if report.failed:
        return EXIT_RENDER_FAILED
    return EXIT_CHANGED if args.exit_code and report.changed else 0


def _print(report: "DiffReport", args: argparse.Namespace) -> None:
    summary = args.summary or args.format == "github"
    if summary:
        from kzgit.diff import github   # start-up: the GitHub formats only where asked for
    from kzgit.diff import output   # start-up
    if args.format == "json":
        text = output.to_json(report)
    elif args.format == "github":
        text = github.workflow_commands(report)
    else:
        text = output.text(report)
    if getattr(args, "output", None):
        from kzgit.atomic import OutputError, write_atomic   # start-up
        try:
            write_atomic(args.output, text)
        except OutputError as e:
            raise UsageError(f"--output {args.output}: cannot write: {e.reason}") from None
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    if summary:
        _write_summary(github.markdown(report), args.summary)


def _write_summary(text: str, path: Optional[str]) -> None:
    if path:
        from kzgit.atomic import OutputError, write_atomic   # start-up
        try:
            write_atomic(path, text)
        except OutputError as e:
            raise UsageError(f"--summary {path}: cannot write: {e.reason}") from None
        return
    step = os.environ.get("GITHUB_STEP_SUMMARY")
    if step:
        try:
            with open(step, "a", encoding="utf-8") as f:   # GitHub collects what each step appends
                f.write(text)
        except OSError as e:
            raise UsageError(f"$GITHUB_STEP_SUMMARY ({step}): cannot write: {e.strerror or e}") from None
