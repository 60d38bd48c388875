"""``kzgit build [DIR]``: same flags and stdout as ``kubectl kustomize`` of the selected
Kustomize release (``--kustomize-version``, :mod:`kzgit.versions`)."""
from __future__ import annotations

import argparse
import os
import sys

from kzgit.builder import BuildOptions, build
from kzgit.cli import add_plugin_flags, add_timeout_flag, add_version_flag
from kzgit.errors import BuildError
from kzgit.loader import RESTRICTORS, ROOT_ONLY
from kzgit.versions import ENV_VAR, from_config, select

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Optional, Tuple
    from kzgit.config import Config, SandboxSettings
    from kzgit.versions import Selection


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "build", help="render a kustomization (like kubectl kustomize)",
        description="Build a set of KRM resources using a 'kustomization.yaml' file, as "
                    "`kubectl kustomize DIR` of the selected Kustomize release does, with the same flags and "
                    "output. DIR is a directory holding a kustomization file, or a git "
                    "repository URL with a path and ?ref=; default '.'.",
        epilog="Exit status: 0 built; 1 the kustomization does not build (the error names the "
               "file); 2 usage or configuration error; 3 unexpected error (a crash report is "
               "written and named); 130 interrupted.")
    p.add_argument("dir", nargs="?", default=".", metavar="DIR",
                   help="kustomization directory or remote URL (default: .)")
    p.add_argument("-o", "--output", metavar="FILE|DIR",
                   help="write to FILE, or one file per resource into an existing DIR "
                        "(default: stdout)")
    p.add_argument("--load-restrictor", "--load_restrictor", default=ROOT_ONLY, choices=RESTRICTORS,
                   help="LoadRestrictionsNone lets local kustomizations load files from outside "
                        "their root (default: %(default)s)")
    p.add_argument("--reorder", choices=["legacy", "none"], default=None,
                   help="legacy: sort resources by kind as kustomize's legacy order; none: keep "
                        "input order (default: the kustomization's sortOptions, else legacy)")
    add_plugin_flags(p)
    p.add_argument("--helm-command", default="helm", metavar="PATH",
                   help="helm command (path to executable; default: %(default)s)")
    p.add_argument("--helm-api-versions", action="append", default=[], metavar="VERSION",
                   help="Kubernetes api versions used by Helm for Capabilities.APIVersions")
    p.add_argument("--helm-kube-version", default="", metavar="VERSION",
                   help="Kubernetes version used by Helm for Capabilities.KubeVersion")
    p.add_argument("--helm-debug", action="store_true",
                   help="enable debug output from the Helm chart inflator generator")
    p.add_argument("--as-current-user", action="store_true",
                   help="run container functions with the uid and gid of this process")
    # kustomize (5.5 to 5.8) accepts --network-name but its function runner never reads it
    # (api/types/pluginrestrictions.go NetworkName; kyaml container.go picks none/host):
    # accepted so command lines written for kubectl keep working, with no effect there either.
    p.add_argument("--network-name", default="bridge", metavar="NAME",
                   help="accepted for compatibility; kustomize does not use it")
    p.add_argument("--enable-managedby-label", action="store_true",
                   help="add the app.kubernetes.io/managed-by label to every resource")
    add_timeout_flag(p, "plugin or function")
    p.add_argument("--network", action="store_true",
                   help="enable network access for functions that declare it")
    p.add_argument("--offline", action="store_true", help="use only cached remote references")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="say on stderr which Kustomize version renders and which protocol ran "
                        "each external plugin (builds without the render cache)")
    p.add_argument("-e", "--env", action="append", default=[], metavar="KEY[=VALUE]",
                   help="environment variable for functions (repeatable)")
    p.add_argument("--mount", action="append", default=[], metavar="type=T,src=S,dst=D",
                   help="storage mount for container functions (repeatable)")
    p.add_argument("--no-cache", action="store_true",
                   help="build even if the render cache holds this root's output for its inputs")
    p.add_argument("--sandbox", choices=["auto", "require", "off"], default=None,
                   help="confine exec plugins, KRM exec functions and helm (Landlock): where the "
                        "kernel can (auto), or fail where it cannot (require), or never (off); "
                        "wins over [sandbox] mode of the repository's .kzgit.toml")
    p.add_argument("--app", metavar="ID",
                   help="render an Argo CD Application or Flux Kustomization of the repository "
                        "holding DIR as its controller deploys it (ids: kzgit apps)")
    add_version_flag(p, "the repository's")
    p.set_defaults(func=run)


def _repository_config(args: argparse.Namespace) -> "Optional[Tuple[str, Config]]":
    """The top and the configuration of the repository holding DIR, read once, before any
    grant is checked (None: a remote DIR, no repository, or no kzgit configuration)."""
    if not os.path.isdir(args.dir):
        return None
    from kzgit.paths import repository_top   # start-up: as below
    top = repository_top(args.dir)
    if top is None or not _has_config(top):
        return None
    from kzgit.config import load_config   # start-up: only a repository with a configuration
    return top, load_config(top, grants=False)


def _version(args: argparse.Namespace, repo: "Optional[Tuple[str, Config]]") -> Selection:
    """``--kustomize-version``, ``$KZGIT_KUSTOMIZE_VERSION``, the repository's setting, the default.

    The repository's setting counts only when neither the flag nor the environment decides (a
    build outside a repository, or remote, has none)."""
    flag = getattr(args, "kustomize_version", None)
    if flag or os.environ.get(ENV_VAR) or repo is None:
        return select(flag)
    return from_config(repo[1])


def _has_config(top: str) -> bool:
    """Whether the repository at ``top`` may configure kzgit: a ``.kzgit.toml``, or a
    ``pyproject.toml`` that may hold a ``[tool.kzgit]`` table (another Python project's file is
    not parsed, and TOML's parser and the typing it imports are not loaded, for nothing)."""
    if os.path.isfile(os.path.join(top, ".kzgit.toml")):
        return True
    try:
        with open(os.path.join(top, "pyproject.toml"), "rb") as f:
            data = f.read()
    except OSError:
        return False
    import re   # start-up: only a repository with a pyproject.toml
    # `[tool.kzgit]`, `tool.kzgit.key = ...`, or a `[tool]` table with a kzgit key
    return re.search(rb'tool\s*\.\s*"?kzgit|\[\s*tool\s*\]', data) is not None


def _repository_switches(args: argparse.Namespace, repo: "Optional[Tuple[str, Config]]") -> None:
    """The repository's ``enable-*`` and ``load-restrictor`` apply to ``kzgit build`` as to every
    other command (a repository that builds with helm in the hooks builds with it here): where
    the user granted them (their own file, ``kzgit trust``), else refused as the hooks refuse
    them; a flag given on the command line is the user's own grant. ``args`` is updated."""
    if repo is None:
        return
    from kzgit.config import load_config   # start-up: only a repository with a configuration
    from kzgit.loader import NO_RESTRICTIONS   # start-up: as above
    top, asked = repo
    more = [k for k, on, flag in (
        ("enable-alpha-plugins", asked.enable_alpha_plugins, args.enable_alpha_plugins),
        ("enable-exec", asked.enable_exec, args.enable_exec),
        ("enable-helm", asked.enable_helm, args.enable_helm),
        ("load-restrictor", asked.load_restrictor == NO_RESTRICTIONS,
         args.load_restrictor == NO_RESTRICTIONS)) if on and not flag]
    if more:
        load_config(top)   # refuses what the user has not granted, naming the key and the grant
    args.enable_alpha_plugins = args.enable_alpha_plugins or asked.enable_alpha_plugins
    args.enable_exec = args.enable_exec or asked.enable_exec
    args.enable_helm = args.enable_helm or asked.enable_helm
    if asked.load_restrictor == NO_RESTRICTIONS:
        args.load_restrictor = NO_RESTRICTIONS


def options_from_args(args: argparse.Namespace) -> BuildOptions:
    repo = _repository_config(args)
    chosen = _version(args, repo)
    _repository_switches(args, repo)
    return BuildOptions(
        load_restrictor=args.load_restrictor, reorder=args.reorder,
        enable_alpha_plugins=args.enable_alpha_plugins, enable_exec=args.enable_exec,
        enable_helm=args.enable_helm, helm_command=args.helm_command,
        helm_api_versions=[v for a in args.helm_api_versions for v in a.split(",") if v],
        helm_kube_version=args.helm_kube_version, helm_debug=args.helm_debug,
        as_current_user=args.as_current_user,
        enable_managedby_label=args.enable_managedby_label, plugin_timeout=args.plugin_timeout,
        network=args.network, env=args.env, mounts=args.mount, offline=args.offline,
        sandbox=_sandbox_settings(args), kustomize_version=chosen.version,
        kustomize_version_origin=chosen.origin)


def _sandbox_settings(args: argparse.Namespace) -> "Optional[SandboxSettings]":
    """``[sandbox]`` of the repository holding the kustomization, the flags winning."""
    if not (args.enable_alpha_plugins or args.enable_exec or args.enable_helm):
        return None   # no plugin runs: the configuration is not read
    # here, not at the top: a build without plugins does not pay for TOML and the sandbox
    from kzgit.sandbox import settings_for
    return settings_for(args.dir).with_flags(args.sandbox, args.network)


def _load_engine() -> None:
    """Import the build engine with the cyclic garbage collector paused, then freeze it.

    Importing the engine makes only objects that live until the process exits: a
    collection while its modules load finds nothing to free, and every later one (the
    build's, the last one at exit) would scan them all again.  ``gc.freeze()`` moves
    them out of the collector's sight: 4-7% of the CPU time of a small build.  Only in
    the command line's own process (see kzgit.cli.main): a host program's objects stay
    collectable.
    """
    import gc   # start-up
    was = gc.isenabled()
    gc.disable()
    try:
        import kzgit.builder.pipeline  # noqa: F401 - imported for the build below
    finally:
        gc.freeze()
        if was:
            gc.enable()


def _check_working_directory(target: str) -> None:
    """A relative DIR needs the current directory, which may have been deleted under us."""
    try:
        os.getcwd()
    except FileNotFoundError:
        from kzgit.remote import looks_remote   # start-up: only when the directory is gone
        if not looks_remote(target):
            # kustomize's words (api/internal/loader/fileloader.go via filesys.ConfirmDir)
            raise BuildError(f"must build at directory: not a valid directory: abs path error on "
                             f"'{target}' : getwd: no such file or directory") from None


def _run_app(args: argparse.Namespace) -> int:
    """``kzgit build --app ID``: the application rendered as its controller deploys it."""
    from kzgit.cli.apps import open_catalog   # start-up: --app only
    from kzgit.gitops.render import render_app   # start-up: --app only
    catalog = open_catalog(args.dir, getattr(args, "kustomize_version", None))
    app = catalog.find(args.app)
    rendered = render_app(catalog, app)
    for w in rendered.warnings:
        print(w, file=sys.stderr)
    for note in rendered.notes:
        print(f"kzgit: {app.id}: {note}", file=sys.stderr)
    if args.verbose:
        from kzgit.versions import name   # start-up: -v only
        print(f"kzgit: {app.id}: {app.renderer}"
              + (f" (Kustomize {name(app.version)}, {app.version_origin})" if app.version else ""),
              file=sys.stderr)
    text = rendered.to_yaml()
    if args.output:
        from kzgit.atomic import write_atomic   # start-up: only -o FILE writes a file
        write_atomic(args.output, text)
        return 0
    sys.stdout.write(text)
    sys.stdout.flush()
    return 0


def run(args: argparse.Namespace) -> int:
    if getattr(args, "app", None):
        return _run_app(args)
    if not os.path.isabs(args.dir):
        _check_working_directory(args.dir)
    options = options_from_args(args)
    to_dir = bool(args.output) and os.path.isdir(args.output)
    result = None
    load = _load_engine if getattr(args, "own_process", False) else None
    if args.no_cache or to_dir or args.verbose:   # -o DIR needs the resources themselves
        if load is not None:
            load()
        result = build(args.dir, options)
        warnings = result.warnings
        if args.verbose:
            from kzgit.versions import name   # start-up: -v only
            print(f"kzgit: Kustomize {name(options.kustomize_version)} "
                  f"({options.kustomize_version_origin})", file=sys.stderr)
            for note in result.notes:
                print(f"kzgit: {note}", file=sys.stderr)
    else:
        # through the render cache (kzgit.rendercache); the engine is loaded on a miss only
        from kzgit.cli.cache import cached_yaml
        text, warnings = cached_yaml(args.dir, options, before_build=load)
    for w in warnings:
        print(w, file=sys.stderr)
    if result is not None:
        text = "" if to_dir else result.to_yaml()
    if args.output:
        if to_dir:
            from kzgit.builder.output import write_dir   # start-up
            assert result is not None
            write_dir(result.resources, args.output)
        elif args.output.endswith(("/", os.sep)):
            from kzgit.atomic import OutputError   # start-up: as write_atomic below
            raise OutputError(args.output, "no such directory (-o DIR must name an existing "
                                           "directory)")
        else:
            from kzgit.atomic import write_atomic   # start-up: only -o FILE writes a file
            write_atomic(args.output, text)
        return 0
    sys.stdout.write(text)
    sys.stdout.flush()
    return 0
