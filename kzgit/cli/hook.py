"""``kzgit hook NAME [FILES...]``: the checks behind ``.pre-commit-hooks.yaml`` and ``hooks/``.

Under the pre-commit framework a hook gets the file names pre-commit passes
(the work tree then holds exactly the staged content); ``--all`` checks
everything.  The plain git hooks use ``--staged`` (the index, exported to a
temporary directory) and ``--rev REV [--from OLD]`` (a commit being pushed).
Silent on success; findings go to stdout and make the exit code 1: what failed, then
one line counting the rest.  With ``-v`` the render and validate hooks list on stderr
each root as it finishes (``built``, ``cached`` or ``failed``, and its time).
"""
from __future__ import annotations

import argparse
import os
import sys

from kzgit.cli import add_render_flags
from kzgit.cli.roots import print_unchecked, say_no_root
from kzgit.config import Config, load_config
from kzgit.errors import KzgitError, UsageError
from kzgit.hooks import HookFinding, Workspace

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, List, Optional, Tuple, Union
    from kzgit.rendercache import Store

HOOKS = {
    "render": "every kustomization root the change affects renders",
    "localized-sync": "localized copies are what `kzgit localize` makes now",
    "pinned-refs": "remote references in changed kustomizations carry a version",
    "exec-bits": "downloaded files of localized copies are not executable (fixer)",
    "validate": "what the affected roots render is valid against Kubernetes and CRD schemas",
    "lint": "the kustomizations the change reaches pass kzgit lint's rules (errors fail)",
    "all": "run every hook above on one workspace (validate only when the configuration has a "
           "[validate] table, and then in place of render; lint only with a [lint] table); "
           "what the plain git hooks run",
}
# The order "all" runs them in: the fixer first, the cheap checks before the builds.
# validate runs only when the repository has a [validate] table, and then instead of
# render: it renders the same roots and reports one that does not render.
# lint runs only when the repository has a [lint] table: its default rules would otherwise
# start failing commits of repositories that never asked for them.
ALL_ORDER = ("exec-bits", "pinned-refs", "render", "validate", "lint", "localized-sync")


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("hook", help="run one git hook check (pre-commit framework or plain git)",
                       description="Run one of kzgit's checks as a git hook: under the pre-commit "
                                   "framework (FILEs as pre-commit passes them, or --all) or as a "
                                   "plain git hook (--staged, --rev). Silent on success; findings "
                                   "make the exit code 1.")
    hooks = p.add_subparsers(dest="hook", metavar="HOOK", parser_class=_lazy_parser(type(p)))
    hooks.required = True
    for name, help_ in HOOKS.items():
        h = hooks.add_parser(name, help=help_, description=help_)
        h.populate = lambda parser, name=name: _hook_arguments(parser, name)  # type: ignore[attr-defined]
        h.set_defaults(func=run)


def _lazy_parser(base: "type[argparse.ArgumentParser]") -> "type[argparse.ArgumentParser]":
    """``base``, adding its arguments (``populate``) when it first parses: a run of one hook
    does not build the five other hooks' arguments (a warm hook spent about a tenth of its
    time in argparse building them).  ``kzgit hook HOOK --help`` parses, so it lists them."""

    class LazyParser(base):  # type: ignore[valid-type,misc]
        populate: "Optional[Callable[[argparse.ArgumentParser], None]]" = None

        def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
            if self.populate is not None:
                populate, self.populate = self.populate, None
                populate(self)
            return super().parse_known_args(args, namespace)
    return LazyParser


def _hook_arguments(h: argparse.ArgumentParser, name: str) -> None:
    """The arguments of the parser ``h`` of the hook ``name``."""
    h.add_argument("files", nargs="*", metavar="FILE",
                   help="changed files, as pre-commit passes them")
    h.add_argument("--all", action="store_true", help="check everything, not only what FILEs reach")
    src = h.add_mutually_exclusive_group()
    src.add_argument("--staged", action="store_true", help="check the git index (plain git hook)")
    src.add_argument("--rev", metavar="REV", help="check the tree of commit REV (pre-push)")
    h.add_argument("--from", dest="from_rev", metavar="OLD", help="with --rev: the changes since OLD")
    if name in ("render", "validate", "all"):
        add_render_flags(h, "validate" if name == "validate" else "render")
    elif name == "localized-sync":
        h.add_argument("--offline", action="store_true", help="use only cached remote references")
    elif name == "lint":
        from kzgit.cli.lint import add_lint_flags   # start-up
        add_lint_flags(h)
    if name in ("pinned-refs", "all"):
        h.add_argument("--require-sha", action="store_true", help="accept full commit SHAs only")
    if name in ("exec-bits", "all"):
        h.add_argument("--check", action="store_true", help="report only, change nothing")
    if name == "validate":
        from kzgit.cli.validate import add_policy_flags   # start-up
        add_policy_flags(h)
    if name == "all":
        # validate's settings come from [validate] alone here; its report is text on stdout
        h.set_defaults(kubernetes_version=None, strict=None, missing_schemas=None,
                       schema_locations=None, crds=None, skip_kinds=None, format="text",
                       output=None)


def _rel(repo: str, path: str) -> Optional[str]:
    rel = os.path.relpath(os.path.realpath(os.path.abspath(path)), repo)
    if rel == ".." or rel.startswith(".." + os.sep):
        return None
    return rel.replace(os.sep, "/")


class _Source:
    """The workspace a hook checks; removes a temporary export on exit."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.tmp: Optional[str] = None

    def __enter__(self) -> Workspace:
        from kzgit.hooks.listing import index_files, top_and_index   # start-up
        a = self.args
        index: Optional[str] = None
        if a.staged or a.rev or not a.all:
            # the git runner: a warm `--all` run under the pre-commit framework starts no program
            from kzgit import gitio   # start-up
        if a.staged or a.rev:
            repo = gitio.repo_root(".")
        else:
            try:
                repo, index = top_and_index(".")
            except UsageError:
                os.getcwd()   # a deleted working directory is its own error (cli.main says so)
                return self._plain_directory()
        repo = os.path.realpath(repo)
        config: Config = load_config(repo)
        if getattr(a, "kustomize_version", None):   # --kustomize-version of the rendering hooks
            from kzgit.versions import with_flag   # start-up
            config = with_flag(config, a.kustomize_version)
        changed: Optional[List[str]]
        if a.staged or a.rev:
            import tempfile   # start-up: only the plain git hooks export the content they check
            self.tmp = tempfile.mkdtemp(prefix="kzgit-hook-")
            if a.staged:
                gitio.export_index(repo, self.tmp)
                exported = gitio.index_files(repo)
                changed = None if a.all else gitio.staged_changes(repo)
            else:
                gitio.export_rev(repo, a.rev, self.tmp)
                exported = gitio.rev_files(repo, a.rev)
                try:
                    changed = None if a.all else gitio.changed_between(repo, a.from_rev, a.rev)
                except KzgitError:  # the remote's commit is not here: check everything
                    changed = None
            return Workspace(self.tmp, exported, changed, config, repo=repo, staged=bool(a.staged),
                             mounted=_builds_read_through_kzgit(a, config))
        # Tracked files only: pre-commit leaves untracked files on disk, and an untracked
        # overlay is not part of the commit (pre-commit itself never passes it).
        files: Union[List[str], Callable[[Optional[Store]], List[str]]]
        top = repo
        # listed when first needed: by then the render cache is open (kzgit.hooks.listing)
        files = lambda store: index_files(top, index, store)   # noqa: E731
        if a.all:
            changed = None
        else:
            changed = [r for r in (_rel(repo, f) for f in a.files) if r is not None]
            # pre-commit never passes deleted files, yet deleting a base's resource
            # breaks every root that reached it: add the deletions.
            changed += deletions(repo)
        return Workspace(repo, files, changed, config, repo=repo)

    def _plain_directory(self) -> Workspace:
        """Outside a git work tree (an exported tarball, a CI artefact), the current directory
        is the repository: its files as :func:`kzgit.walk.tree_files` finds them (hidden
        directories and what ``.gitignore`` files exclude left out); nothing was deleted."""
        from kzgit import walk   # start-up: only outside a work tree
        a = self.args
        repo = os.path.realpath(".")
        config: Config = load_config(repo)
        if getattr(a, "kustomize_version", None):
            from kzgit.versions import with_flag   # start-up
            config = with_flag(config, a.kustomize_version)
        changed = None if a.all else [r for r in (_rel(repo, f) for f in a.files) if r is not None]
        return Workspace(repo, walk.tree_files(repo), changed, config, repo=repo)

    def __exit__(self, *exc: object) -> None:
        if self.tmp:
            import shutil   # start-up: only the plain git hooks made a directory to remove
            shutil.rmtree(self.tmp, ignore_errors=True)


def _builds_read_through_kzgit(args: argparse.Namespace, config: Config) -> bool:
    """Whether every file the hook's builds read goes through kzgit's file system (the
    builtin engine, no external plugins, no helm): then an export is built at the repository's
    path (kzgit.hooks._mount) and through the render cache."""
    engine = getattr(args, "engine", None) or config.engine
    return engine == "builtin" and not (config.enable_alpha_plugins or config.enable_exec
                                        or config.enable_helm)


def deletions(repo: str) -> List[str]:
    """The paths the change being checked deletes, a rename's old path included, which
    pre-commit never passes (it drops names that no longer exist): the index's against
    HEAD, or under ``pre-commit run --from-ref OLD --to-ref NEW`` (CI, pre-push) the range's."""
    from kzgit import gitio   # start-up
    old, new = os.environ.get("PRE_COMMIT_FROM_REF"), os.environ.get("PRE_COMMIT_TO_REF")
    if os.environ.get("PRE_COMMIT") == "1" and old and new:
        return gitio.deleted_between(repo, old, new)
    return gitio.staged_deletions(repo)


def _deletes_something() -> bool:
    """Whether the change being checked deletes or renames a file (False outside git)."""
    try:
        return bool(deletions("."))
    except KzgitError:
        return False


def check_arguments(args: argparse.Namespace) -> None:
    """Arguments that would be ignored, or that contradict each other, are usage errors."""
    if args.from_rev and not args.rev:
        raise UsageError("--from OLD is used only with --rev REV (the changes from OLD to REV)",
                         tip="kzgit hook HOOK --rev REV --from OLD")
    if args.files and (args.staged or args.rev):
        raise UsageError(f"FILE arguments ({args.files[0]}, ...) are not used with "
                         f"{'--staged' if args.staged else '--rev'}: it checks what git says changed",
                         tip="pass FILEs alone (as pre-commit does), or --staged / --rev REV alone")


def run(args: argparse.Namespace) -> int:
    """Run the hook named by ``args.hook``; 1 when it has findings."""
    check_arguments(args)
    if not (args.files or args.all or args.staged or args.rev) and not _deletes_something():
        # Nothing passed (pre-commit's ``always_run`` starts the hook for a commit whose
        # files it matches none of) and nothing deleted: one git run, nothing to check.
        return 0
    # the hooks of one commit (each a process) resolve a tag-pinned remote base once: a
    # resolution younger than a minute is reused (kzgit.remote._cache.REUSE_ENV; the render
    # workers inherit it), for this run only
    before = os.environ.get(_REUSE_ENV)
    os.environ[_REUSE_ENV] = before or "60"
    try:
        return _run_hook(args)
    finally:
        if before is None:
            os.environ.pop(_REUSE_ENV, None)


_REUSE_ENV = "KZGIT_REUSE_RESOLVED_REFS"


def _run_hook(args: argparse.Namespace) -> int:
    with _Source(args) as ws:
        if args.hook == "validate":
            from kzgit.cli.validate import run_hook   # start-up
            return run_hook(args, ws)
        if args.hook == "lint":
            from kzgit.cli.lint import run_hook as run_lint   # start-up
            return run_lint(args, ws)
        if args.hook != "all":
            return report(_dispatch(args.hook, args, ws))
        status = 0
        validating = bool(ws.config.validate.source)
        for name in ALL_ORDER:
            if name == "render" and validating and ws.config.warnings_as_errors:
                # validate renders the same roots (and reports those that do not render) but
                # not their warnings: render's verdict on warnings alone (cached renders)
                findings = _dispatch(name, args, ws, warnings_only=True)
                if findings:
                    print("kzgit-render:")
                    status = report(findings)
                continue
            if name == ("render" if validating else "validate"):
                continue
            if name == "validate":
                status = max(status, _validate_in_all(args, ws))
                continue
            if name == "lint":
                if ws.config.lint.source:
                    status = max(status, _lint_in_all(args, ws))
                continue
            findings = _dispatch(name, args, ws)
            if findings:
                print(f"kzgit-{name}:")
                status = report(findings)
        return status


def _validate_in_all(args: argparse.Namespace, ws: Workspace) -> int:
    """``kzgit hook validate`` as a step of ``all``: its findings (warnings too) under a header."""
    from kzgit.cli.cache import open_for_workspace   # start-up
    from kzgit.cli.validate import emit, policy_from, validate_report   # start-up
    policy, names = policy_from(args, ws.config)
    got = validate_report(args, ws, policy, names, None, open_for_workspace(ws, args.no_cache))
    if not got.findings:
        return 0
    print("kzgit-validate:")
    sys.stdout.flush()
    return emit(args, got, hook=ws)


def _lint_in_all(args: argparse.Namespace, ws: Workspace) -> int:
    """``kzgit hook lint`` as a step of ``all``: its findings (warnings too) under a header."""
    from kzgit.cli.cache import open_for_workspace   # start-up
    from kzgit.cli.lint import emit, lint   # start-up
    from kzgit.hooks.render import roots_to_build   # start-up
    got = lint(args, ws, roots_to_build(ws), ws.changed is None,
               open_for_workspace(ws, getattr(args, "no_cache", False)))
    if not got.findings:
        return 0
    print("kzgit-lint:")
    sys.stdout.flush()
    return emit(args, got, hook=ws)


def _dispatch(hook: str, args: argparse.Namespace, ws: Workspace,
              warnings_only: bool = False) -> List[HookFinding]:
    """Run ``hook``; ``warnings_only`` (render): only the roots that render with warnings."""
    if hook == "render":
        from kzgit.engine import engine_from_config, get_engine   # start-up
        from kzgit.hooks import render   # start-up
        c = ws.config
        if args.engine and args.engine != c.engine:
            engine = get_engine(args.engine, None, c.timeout, source="--engine")
        else:
            engine = engine_from_config(c)
        from kzgit.cli.cache import open_for_workspace, print_renders   # start-up
        store = open_for_workspace(ws, getattr(args, "no_cache", False))
        roots = render.roots_to_build(ws)
        # Argo CD Applications and Flux Kustomizations the change reaches: each renders as its
        # controller renders it, in place of the plain root at its path (kzgit.gitops)
        catalog = render.app_catalog(ws)
        apps = render.affected_apps(ws, catalog) if catalog is not None else []
        if apps and catalog is not None:
            replaced = set(render.replaced_roots(ws, catalog, apps))
            roots = [r for r in roots if r not in replaced]
            roots += [r for r in render.plain_roots(ws, catalog, apps) if r not in roots]
        if not apps:
            say_no_root(ws, roots, getattr(args, "verbose", False))
        if getattr(args, "shard", None):
            roots = render.shard_of(ws, roots, *args.shard)
            if args.shard[0] != 1:
                apps = []   # the applications are the first shard's
        verbose = getattr(args, "verbose", False)
        # -v lists each root as it finishes, on stderr: stdout holds the findings; on a
        # terminal, without -v, one progress line
        from kzgit.cli.progress import for_terminal   # start-up
        progress = None if verbose else for_terminal("kzgit hook render", len(roots))
        on_done = (lambda r: print_renders([r])) if verbose else \
            (lambda r: progress.step(r.root)) if progress is not None else None
        try:
            results = render.render_roots(ws, engine, roots, jobs=args.jobs, offline=args.offline,
                                          store=store, on_done=on_done)
            app_found, app_results = (render.app_findings(ws, engine, catalog, apps, args.jobs,
                                                          on_done, store)
                                      if apps and catalog is not None else ([], []))
        finally:
            if progress is not None:
                progress.close()
        if store is not None and any(r.status != "cached" for r in results + app_results):
            store.trim()   # workers may have written: keep the cache within its bound
        if verbose:
            print_unchecked(ws)
        # (app_results holds the malformed applications too)
        _record_breaks(ws, [(r.root, r.error) for r in results + app_results])
        if warnings_only:
            return render.warning_findings(results + app_results)
        found = render.findings(results, c.warnings_as_errors) + app_found + \
            (render.warning_findings(app_results) if c.warnings_as_errors else [])
        line = render.summary(results + app_results, c.warnings_as_errors)
        # what failed, then one line counting the rest (quiet on success)
        return found + ([HookFinding("", line)] if line else [])
    if hook == "localized-sync":
        from kzgit.hooks import localized_sync   # start-up
        return localized_sync.run(ws)
    if hook == "pinned-refs":
        from kzgit.hooks import pinned_refs   # start-up
        return pinned_refs.run(ws, require_sha=args.require_sha)
    from kzgit.hooks import exec_bits   # start-up
    # A pushed commit cannot be fixed in place: report only.
    return exec_bits.run(ws, fix=not (args.check or args.rev))


def _record_breaks(ws: Workspace, broken: List[Tuple[str, Optional[str]]]) -> None:
    """Within a pre-commit run, write down what does not render (a root or an application, and
    its error; a malformed application's too): the validate and lint hooks after this one point
    here instead of saying it again (:mod:`kzgit.hooks.ledger`)."""
    if all(error is None for _, error in broken):
        return
    from kzgit.hooks.ledger import Ledger, lead_of   # start-up: only a failing run
    ledger = Ledger.of_this_run(ws.repo)
    if ledger is None:
        return
    for name, error in broken:
        if error is not None:
            ledger.record(name, lead_of(ws.relative_message(error)))


def report(findings: List[HookFinding]) -> int:
    """Print the findings, one per line (continuations indented), a finding without a path as
    its message alone (a count of the rest); 1 if there are any."""
    for f in findings:
        print(f if f.path else f.message)
    sys.stdout.flush()
    return 1 if findings else 0
