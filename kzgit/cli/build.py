"""``kzgit build [DIR]``: same flags and stdout as ``kubectl kustomize`` (Kustomize v5.5.0)."""
from __future__ import annotations

import argparse
import os
import sys

from kzgit.build import BuildOptions, build
from kzgit.atomic import write_atomic
from kzgit.loader import RESTRICTORS, ROOT_ONLY


def register(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser("build", help="render a kustomization (like kustomize build)")
    p.add_argument("dir", nargs="?", default=".", metavar="DIR")
    p.add_argument("-o", "--output", help="write to FILE, or one file per resource into an existing DIR")
    p.add_argument("--load-restrictor", "--load_restrictor", default=ROOT_ONLY, choices=RESTRICTORS)
    p.add_argument("--reorder", choices=["legacy", "none"], default=None)
    p.add_argument("--enable-alpha-plugins", action="store_true")
    p.add_argument("--enable-exec", action="store_true")
    p.add_argument("--enable-helm", action="store_true")
    p.add_argument("--helm-command", default="helm")
    p.add_argument("--helm-api-versions", action="append", default=[], metavar="VERSION",
                   help="Kubernetes api versions used by Helm for Capabilities.APIVersions")
    p.add_argument("--helm-kube-version", default="", metavar="VERSION",
                   help="Kubernetes version used by Helm for Capabilities.KubeVersion")
    p.add_argument("--helm-debug", action="store_true",
                   help="enable debug output from the Helm chart inflator generator")
    p.add_argument("--as-current-user", action="store_true",
                   help="run container functions with the uid and gid of this process")
    # kustomize v5.5.0 accepts --network-name but its function runner never reads it
    # (api/types/pluginrestrictions.go NetworkName; kyaml container.go picks none/host):
    # accepted so command lines written for kubectl keep working, with no effect there either.
    p.add_argument("--network-name", default="bridge",
                   help="accepted for compatibility; kustomize v5.5.0 does not use it")
    p.add_argument("--enable-managedby-label", action="store_true")
    p.add_argument("--plugin-timeout", type=float, default=60.0, metavar="SECONDS")
    p.add_argument("--network", action="store_true")
    p.add_argument("--offline", action="store_true", help="use only cached remote references")
    p.add_argument("-e", "--env", action="append", default=[])
    p.add_argument("--mount", action="append", default=[])
    p.set_defaults(func=run)


def options_from_args(args: argparse.Namespace) -> BuildOptions:
    return BuildOptions(
        load_restrictor=args.load_restrictor, reorder=args.reorder,
        enable_alpha_plugins=args.enable_alpha_plugins, enable_exec=args.enable_exec,
        enable_helm=args.enable_helm, helm_command=args.helm_command,
        helm_api_versions=[v for a in args.helm_api_versions for v in a.split(",") if v],
        helm_kube_version=args.helm_kube_version, helm_debug=args.helm_debug,
        as_current_user=args.as_current_user,
        enable_managedby_label=args.enable_managedby_label, plugin_timeout=args.plugin_timeout,
        network=args.network, env=args.env, mounts=args.mount, offline=args.offline)


def run(args: argparse.Namespace) -> int:
    result = build(args.dir, options_from_args(args))
    for w in result.warnings:
        print(w, file=sys.stderr)
    if args.output:
        if os.path.isdir(args.output):
            from kzgit.build.output import write_dir
            write_dir(result.resources, args.output)
        else:
            write_atomic(args.output, result.to_yaml())
        return 0
    text = result.to_yaml()
    sys.stdout.write(text)
    sys.stdout.flush()
    return 0
