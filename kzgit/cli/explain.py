"""``kzgit explain TARGET [RESOURCE] [FIELD]``: where every rendered value came from
(:mod:`kzgit.explain`)."""
from __future__ import annotations

import argparse
import sys

from kzgit.cli import add_plugin_flags, add_version_flag
from kzgit.loader import RESTRICTORS, ROOT_ONLY


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "explain", help="which file and line set each rendered value",
        description="Build TARGET as `kzgit build` does and print, for each field of each "
                    "rendered resource, its final value and the chain of steps that produced "
                    "it, oldest first: the resource file and line, then every patch, "
                    "generator, transformer field, name reference or hash suffix that changed "
                    "it, each with the kustomization entry that brought it in.",
        epilog="RESOURCE names a resource as rendered: Kind/name or Kind/namespace/name (the "
               "kind group-qualified where ambiguous: Deployment.apps/web). FIELD is a path as "
               "kustomize writes field paths (spec.replicas, "
               "spec.template.spec.containers.[name=web].image), or a field above several "
               "(spec.template). Exit status: 0 explained; 1 TARGET does not build; 2 usage "
               "error (an unknown resource or field names what exists).")
    p.add_argument("target", metavar="TARGET",
                   help="kustomization directory (with --app: a directory of the repository)")
    p.add_argument("resource", nargs="?", metavar="RESOURCE", help="Kind/name or Kind/namespace/name")
    p.add_argument("field", nargs="?", metavar="FIELD", help="spec.replicas, metadata.labels...")
    p.add_argument("--annotate", action="store_true",
                   help="print the rendered YAML (byte for byte `kzgit build`'s) with a trailing "
                        "comment on each value's line naming the file:line that last set it")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="json: {\"records\": [{resource, path, value, steps: [{kind, file, line, "
                        "kustomization}]}]}")
    p.add_argument("--load-restrictor", "--load_restrictor", default=ROOT_ONLY, choices=RESTRICTORS,
                   help="as kzgit build (default: %(default)s)")
    add_plugin_flags(p)
    p.add_argument("--helm-command", default="helm", metavar="PATH", help="as kzgit build")
    p.add_argument("--enable-managedby-label", action="store_true", help="as kzgit build")
    p.add_argument("--offline", action="store_true", help="use only cached remote references")
    p.add_argument("--app", metavar="ID",
                   help="explain an Argo CD Application or Flux Kustomization rendered as its "
                        "controller deploys it (ids: kzgit apps)")
    add_version_flag(p, "the repository's")
    # what `kzgit build`'s options_from_args reads and explain does not offer
    p.set_defaults(func=run, reorder=None, helm_api_versions=[], helm_kube_version="",
                   helm_debug=False, as_current_user=False, plugin_timeout=60.0, network=False,
                   env=[], mount=[], sandbox=None)


def run(args: argparse.Namespace) -> int:
    from kzgit.cli.build import options_from_args   # start-up: explain only
    from kzgit.explain import explain   # start-up: explain only
    args.dir = args.target
    if args.annotate and (args.resource or args.field or args.format != "text"):
        from kzgit.errors import UsageError   # start-up: errors only
        raise UsageError("--annotate prints the whole rendering: no RESOURCE, FIELD or --format")
    if args.app:
        from kzgit.cli.apps import open_catalog   # start-up: --app only
        from kzgit.explain import explain_app   # start-up: --app only
        catalog = open_catalog(args.target, getattr(args, "kustomize_version", None))
        got = explain_app(catalog, catalog.find(args.app), args.resource, args.field)
    else:
        got = explain(args.target, options_from_args(args), args.resource, args.field)
    for w in got.warnings:
        print(w, file=sys.stderr)
    if args.annotate:
        sys.stdout.write(got.annotated())
    elif args.format == "json":
        sys.stdout.write(got.to_json())
    else:
        sys.stdout.write(got.text())
    sys.stdout.flush()
    return 0
