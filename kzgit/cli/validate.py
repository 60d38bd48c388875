"""``kzgit validate [ROOT...] [--all] [--manifests FILE|-]...``: validate what roots render.

Roots are chosen as by ``kzgit hook render``: with no ROOT, the roots at or
under the current directory; ``--all`` every root of the repository.
``--manifests`` validates rendered YAML (a file, or ``-`` for stdin) without
building.  Every ``[validate]`` key of the configuration is also a flag here and
on ``kzgit hook validate``; a flag wins over the file.  Exit 0 valid (warnings
allowed), 1 findings or a root that does not render, 2 usage or configuration.
"""
from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Tuple

from kzgit.cli import add_render_flags
from kzgit.cli.roots import repository, select_roots
from kzgit.config import MISSING_SCHEMAS, Config, ValidatePolicy, load_config
from kzgit.errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from kzgit.engine import Engine
    from kzgit.hooks import Workspace
    from kzgit.hooks.validate import Report
    from kzgit.rendercache import Store

FORMATS = ("text", "json", "github", "junit", "sarif")


class _DefaultVersion:
    """The default ``--kubernetes-version`` as ``--help`` shows it, looked up only then: every
    ``kzgit hook`` run builds this parser, and listing the bundled schemas costs a scan."""

    def __str__(self) -> str:
        from kzgit.validate.kubernetes import newest, versions   # start-up
        vs = versions()
        if not vs:
            return "none: kzgit's schema data (kzgit/validate/k8s) is missing"
        return f"{newest()}; the bundled schemas cover {vs[0]} to {vs[-1]}"


def add_policy_flags(p: argparse.ArgumentParser) -> None:
    """The ``[validate]`` keys as flags (shared with ``kzgit hook validate``)."""
    g = p.add_argument_group("validation (each also a [validate] key of the configuration)")
    version = g.add_argument("--kubernetes-version", metavar="X.Y",
                             help="the Kubernetes release to validate against (default: "
                                  "%(default_version)s)")
    # argparse fills %(name)s from the action's attributes when it formats the help
    version.default_version = _DefaultVersion()  # type: ignore[attr-defined]
    g.add_argument("--strict", dest="strict", action="store_true", default=None,
                   help="a field the schema does not declare is an error (the default)")
    g.add_argument("--no-strict", dest="strict", action="store_false", help="accept undeclared fields")
    g.add_argument("--missing-schemas", choices=MISSING_SCHEMAS,
                   help="a kind no schema source knows: warn once per kind (default), error, or skip")
    g.add_argument("--schema-location", dest="schema_locations", action="append", metavar="TEMPLATE",
                   help="kubeconform-style local schema path template, e.g. "
                        "'schemas/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json' (repeatable)")
    g.add_argument("--crd", dest="crds", action="append", metavar="PATH",
                   help="a CustomResourceDefinition file or directory (repeatable)")
    g.add_argument("--skip-kinds", dest="skip_kinds", action="append", metavar="KIND[,KIND...]",
                   help="kinds (or apiVersion/kind) not to validate (repeatable, comma-separated)")
    g.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    g.add_argument("--output", metavar="FILE", help="write the report to FILE instead of stdout")


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "validate", help="validate rendered resources against Kubernetes and CRD schemas, offline",
        description="Render kustomization roots (as `kzgit hook render` selects them) and validate "
                    "every resource against the Kubernetes schemas of one release, the CRDs of the "
                    "repository and local schema files. Exit 0 valid, 1 findings, 2 usage.")
    p.add_argument("roots", nargs="*", metavar="ROOT", help="kustomization directories to validate")
    p.add_argument("--all", action="store_true", help="every root of the repository")
    p.add_argument("--manifests", action="append", metavar="FILE",
                   help="validate rendered YAML from FILE ('-' for stdin) without building (repeatable)")
    add_render_flags(p, "validate")
    add_policy_flags(p)
    p.set_defaults(func=run)


def policy_from(args: argparse.Namespace, config: Config) -> Tuple[ValidatePolicy, Dict[str, str]]:
    """The configuration's ``[validate]`` table with the flags given laid over it, and for
    each key the name messages should use (the flag, or the file and key)."""
    policy = config.validate.replace()
    src = config.source or "configuration"
    prefix = "tool.kzgit.validate." if src.endswith("pyproject.toml") else "validate."
    names = {k: f"{src}: {prefix}{k}" for k in ("kubernetes-version", "schema-locations", "crds")}
    if args.kubernetes_version is not None:
        if not args.kubernetes_version.strip():
            raise UsageError("--kubernetes-version: empty")
        policy.kubernetes_version = args.kubernetes_version
        names["kubernetes-version"] = "--kubernetes-version"
    if args.strict is not None:
        policy.strict = args.strict
    if args.missing_schemas is not None:
        policy.missing_schemas = args.missing_schemas
    if args.schema_locations:
        policy.schema_locations = tuple(args.schema_locations)
        names["schema-locations"] = "--schema-location"
    if args.crds:
        policy.crds = tuple(args.crds)
    if args.skip_kinds:
        policy.skip_kinds = tuple(k.strip() for v in args.skip_kinds for k in v.split(",") if k.strip())
    return policy, names


def emit(args: argparse.Namespace, report: "Report", hook: "Optional[Workspace]" = None) -> int:
    """Print (or write) the report; 1 when it holds errors.  A hook's (``hook``: its
    workspace), as text and on failure, without ``-v``: the errors (a root that does not render
    by its first line, the one naming file and field: the render hook prints the rest) and one
    line counting the rest."""
    from kzgit.validate.report import render   # start-up
    concise = hook is not None and args.format == "text" and not args.verbose
    text = render(_concise(report, render_said(hook)) if hook is not None and concise else report,
                  args.format)
    if concise:
        text += _count_line(report)
    if args.output:
        from kzgit.atomic import write_atomic   # start-up
        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    return 1 if report.errors else 0


def _concise(report: "Report", said: "Callable[[str, str], bool]") -> "Report":
    """``report`` with only its errors, each render failure cut to its lead line, when it
    holds errors; else ``report`` itself (warnings alone are the whole story).  The roots
    whose break kzgit-render reported earlier in the same pre-commit run (``said``) share one
    line pointing there (issue 33 item 6: a break is reported once per commit)."""
    if not report.errors:
        return report
    from kzgit.hooks.validate import Report   # start-up
    from kzgit.validate import Finding   # start-up
    findings: List[Finding] = []
    pointed: List[str] = []
    for f in report.errors:
        if f.code != "build":
            findings.append(f)
            continue
        lead = f.message.split("\n", 1)[0]
        if said(f.root, lead):
            if not pointed:
                findings.append(f)   # the place of the line that names them all
            pointed.append(f.root)
            continue
        findings.append(f.replace(message=lead))
    if pointed:
        verb = "does" if len(pointed) == 1 else "do"
        at = next(i for i, f in enumerate(findings) if f.code == "build" and f.root == pointed[0])
        findings[at] = Finding(", ".join(pointed), "", "", "", "", "build", "",
                               f"{verb} not render (kzgit-render said why, above)")
    return Report(findings, report.roots, report.resources, report.kubernetes_version,
                  report.strict, report.renders, report.silenced)


def render_said(ws: "Workspace") -> "Callable[[str, str], bool]":
    """Whether kzgit-render already reported a root's break (its name, a line holding its lead)
    in this pre-commit run (:mod:`kzgit.hooks.ledger`)."""
    from kzgit.hooks.ledger import Ledger   # start-up
    ledger = Ledger.of_this_run(ws.repo)
    return (lambda root, line: False) if ledger is None else ledger.said


def _count_line(report: "Report") -> str:
    """On failure, one line counting the roots that failed and what is not shown."""
    errors = report.errors
    if not errors:
        return ""
    failed = {f.root for f in errors}
    broken = {f.root for f in errors if f.code == "build"}
    warnings = len(report.findings) - len(errors)
    from kzgit.hooks.render import checked_noun   # start-up
    line = (f"{len(failed)} of {len(report.roots)} {checked_noun(report.roots)} "
            f"{'fails' if len(failed) == 1 else 'fail'}"
            f" ({len(broken)} not rendering); {len(report.roots) - len(failed)} valid")
    if warnings:
        line += f"; {warnings} warning{'s' if warnings != 1 else ''} not shown (-v)"
    return line + "\n"


def check_arguments(args: argparse.Namespace, in_git: bool) -> None:
    """Arguments that would be ignored, or that contradict each other, are usage errors.
    Outside a git work tree the current directory is the repository (``--all`` finds its roots
    with :func:`kzgit.walk.tree_files`: hidden directories and ignored files left out)."""
    if args.all and args.roots:
        raise UsageError(f"--all and ROOT ({args.roots[0]}) exclude each other: --all is every root "
                         "of the repository", tip="name ROOTs, or use --all alone")


def run(args: argparse.Namespace) -> int:
    from kzgit.hooks import Workspace   # start-up
    from kzgit.hooks import validate as hook   # start-up
    repo, in_git = repository()
    check_arguments(args, in_git)
    from kzgit.versions import with_flag   # start-up
    config = with_flag(load_config(repo), args.kustomize_version)
    policy, names = policy_from(args, config)
    if args.manifests and not (args.roots or args.all):
        report = hook.run_manifests(_read_manifests(args.manifests), policy, repo, names)
        return emit(args, report)
    from kzgit import gitio   # start-up
    from kzgit import walk   # start-up
    # the work tree as it is, untracked files included (ignored ones not): what a user edits
    files = gitio.worktree_files(repo) if in_git else walk.tree_files(repo)
    ws = Workspace(repo, files, None, config, repo=repo)
    from kzgit.cli.cache import open_for_workspace   # start-up
    store = open_for_workspace(ws, args.no_cache)   # before the graph: it is kept there too
    roots = select_roots(args, ws, repo)
    report = validate_report(args, ws, policy, names, roots, store)
    if args.manifests:
        more = hook.run_manifests(_read_manifests(args.manifests), policy, repo, names)
        report.findings += more.findings
        report.roots += more.roots
        report.resources.update(more.resources)
    return emit(args, report)


def _engine(args: argparse.Namespace, config: Config) -> "Engine":
    from kzgit.engine import engine_from_config, get_engine   # start-up
    if getattr(args, "engine", None) and args.engine != config.engine:
        return get_engine(args.engine, None, config.timeout, source="--engine")
    return engine_from_config(config)


def _read_manifests(paths: List[str]) -> List[Tuple[str, bytes]]:
    out = []
    for p in paths:
        if p == "-":
            out.append(("-", sys.stdin.buffer.read()))
            continue
        try:
            with open(p, "rb") as f:
                out.append((p, f.read()))
        except OSError as e:
            raise UsageError(f"--manifests {p}: cannot read: {e.strerror or e}") from None
    return out


def run_hook(args: argparse.Namespace, ws: "Workspace") -> int:
    """``kzgit hook validate``: the affected roots of the workspace."""
    config = ws.config
    policy, names = policy_from(args, config)
    from kzgit.cli.cache import open_for_workspace   # start-up
    return emit(args, validate_report(args, ws, policy, names, None,
                                      open_for_workspace(ws, args.no_cache)), hook=ws)


def validate_report(args: argparse.Namespace, ws: "Workspace", policy: ValidatePolicy,
              names: Dict[str, str], roots: Optional[List[str]], store: "Optional[Store]") -> "Report":
    """Render and validate ``roots`` (None: the affected ones) through the render cache
    ``store``; with ``-v`` list each root on stderr as it finishes, where it stays out
    of the report."""
    from kzgit.cli.cache import print_renders   # start-up
    from kzgit.cli.roots import say_no_root   # start-up
    from kzgit.hooks import validate as hook   # start-up
    from kzgit.hooks.render import roots_to_build   # start-up
    say_no_root(ws, roots_to_build(ws) if roots is None else roots, args.verbose)
    engine = _engine(args, ws.config)
    # -v lists each root as it finishes, on stderr, where it stays out of the report
    from kzgit.cli.progress import for_terminal   # start-up
    progress = None if args.verbose else for_terminal(
        "kzgit validate", len(roots_to_build(ws) if roots is None else roots))
    on_render = (lambda r: print_renders([r])) if args.verbose else \
        (lambda r: progress.step(r.root)) if progress is not None else None
    try:
        report = hook.run(ws, engine, policy, roots=roots, jobs=args.jobs, offline=args.offline,
                          names=names, store=store, shard=args.shard, on_render=on_render)
    finally:
        if progress is not None:
            progress.close()
    if store is not None and any(r.status != "cached" for r in report.renders):
        store.trim()   # workers may have written: keep the cache within its bound
    if args.verbose:
        if not getattr(args, "roots", None):   # not when the user named the roots
            from kzgit.cli.roots import print_unchecked   # start-up
            print_unchecked(ws)
    return report

