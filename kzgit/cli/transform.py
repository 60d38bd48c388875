"""``kzgit transform SOURCE --plugin-dir DIR [--plugin-priorities a,b] [--skip-plugins c] -o OUT``.

Runs crane's builtin ``KubernetesPlugin`` and the crane-compatible transform plugins of DIR
over SOURCE (a kustomization root, rendered with ``kzgit build``, or a directory of exported
YAML) and writes a kustomization overlay to OUT.
``kzgit transform --list-plugins --plugin-dir DIR`` prints each plugin's metadata.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, List, Optional, TextIO

from kzgit.cli import add_timeout_flag
from kzgit.errors import UsageError

if TYPE_CHECKING:
    from kzgit.crane import CranePlugin


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "transform", help="run crane transform plugins with priorities; write an overlay",
        usage="kzgit transform SOURCE -p DIR -o OUT [options]\n"
              "       kzgit transform --list-plugins -p DIR [-s A,B,...]",
        description="Run crane's builtin KubernetesPlugin (strips status, uid and other "
                    "cluster-set fields; skip it with -s KubernetesPlugin) and the "
                    "crane-compatible transform plugins of DIR over SOURCE, and write a "
                    "kustomization overlay (one JSON6902 patch per patched resource) to OUT.")
    p.add_argument("source", nargs="?", metavar="SOURCE",
                   help="required (except with --list-plugins): a kustomization root or a "
                        "directory of resource YAML files")
    p.add_argument("-p", "--plugin-dir", required=True, metavar="DIR",
                   help="required: directory whose executable files are crane binary plugins")
    p.add_argument("--plugin-priorities", default="", metavar="A,B,...",
                   help="comma-separated plugin names; earlier names win conflicts over later "
                        "and unnamed plugins")
    p.add_argument("-s", "--skip-plugins", default="", metavar="A,B,...",
                   help="comma-separated plugin names not to run, KubernetesPlugin included "
                        "(as crane; an unknown name is an error)")
    p.add_argument("--optional-flags", default="", metavar="JSON",
                   help="JSON object of flag values passed to every plugin, as crane: "
                        "'{\"foo-flag\": \"value\"}'")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="required (except with --list-plugins): new directory for the overlay "
                        "(its parents are created)")
    p.add_argument("--list-plugins", action="store_true",
                   help="print each plugin's metadata and optional flags, then exit")
    add_timeout_flag(p, "plugin")
    p.add_argument("--enable-alpha-plugins", action="store_true",
                   help="when SOURCE is a kustomization: allow its exec plugins")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress or summary")
    p.set_defaults(func=run)


def _names(text: str) -> List[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def _shadowed(dropped: "List[CranePlugin]", err: TextIO) -> None:
    for pl in dropped:
        err.write(f"kzgit transform: warning: {pl.path} is not run: crane keeps the first "
                  f"plugin named '{pl.name}', the builtin one\n")


def list_plugins(plugin_dir: str, timeout: float, out: TextIO, skip: str = "",
                 err: Optional[TextIO] = None) -> int:
    from kzgit.crane import plugin_list, skip_plugins   # start-up
    found, dropped = plugin_list(plugin_dir, timeout)
    _shadowed(dropped, err or sys.stderr)
    plugins = skip_plugins(found, _names(skip))
    if not plugins:
        out.write(f"no plugins (builtin or executable files in {plugin_dir})\n")
    for pl in plugins:
        # crane cmd/transform/listplugins: "Plugin: <name> (version <version>)"
        out.write(f"Plugin: {pl.name} (version {pl.version or 'unknown'})\n")
        out.write(f"    path: {pl.path}\n")
        out.write(f"    requestVersion: {', '.join(pl.request_versions)}; "
                  f"responseVersion: {', '.join(pl.response_versions)}\n")
        if pl.optional_fields:
            out.write("    optional flags:\n")
            for f in pl.optional_fields:
                line = f"      {f.flag_name}"
                if f.help:
                    line += f": {f.help}"
                if f.example:
                    line += f" (example: {f.example})"
                out.write(line + "\n")
    return 0


class _Progress:
    """A one-line progress bar on a terminal; nothing otherwise."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.active = stream.isatty()
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.active:
            return
        width = 30
        filled = width * done // total if total else width
        self.stream.write(f"\rtransform [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()


def _check_plugin_dir(plugin_dir: str) -> None:
    """``-p DIR`` names a directory: anything else is a usage error (exit 2)."""
    if not os.path.exists(plugin_dir):
        raise UsageError(f"-p/--plugin-dir '{plugin_dir}': no such directory")
    if not os.path.isdir(plugin_dir):
        raise UsageError(f"-p/--plugin-dir '{plugin_dir}': not a directory")


def run(args: argparse.Namespace, stdout: Optional[TextIO] = None,
        stderr: Optional[TextIO] = None) -> int:
    from kzgit.options import BuildOptions   # start-up
    from kzgit.crane import (KubernetesPlugin, parse_optional_flags, plugin_list,   # start-up
                                 run_transform, skip_plugins)
    from kzgit.crane.kubernetes import flag_warnings   # start-up
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    timeout = args.plugin_timeout if args.plugin_timeout > 0 else None
    _check_plugin_dir(args.plugin_dir)
    if args.list_plugins:
        return list_plugins(args.plugin_dir, timeout or 0, stdout, args.skip_plugins, stderr)
    if not args.source:
        raise UsageError("kzgit transform needs SOURCE (or --list-plugins)")
    if not args.output:
        raise UsageError("kzgit transform needs -o OUT (a directory that does not exist yet)")
    extras = parse_optional_flags(args.optional_flags)
    found, dropped = plugin_list(args.plugin_dir, timeout)
    _shadowed(dropped, stderr)
    plugins = skip_plugins(found, _names(args.skip_plugins))
    if any(isinstance(p, KubernetesPlugin) for p in plugins):
        for w in flag_warnings(extras):
            stderr.write(f"kzgit transform: warning: {w}\n")
    progress = _Progress(stderr) if not args.quiet else None
    try:
        result = run_transform(
            args.source, plugins, args.output, priorities=_names(args.plugin_priorities),
            extras=extras, timeout=timeout, progress=progress,
            build_options=BuildOptions(enable_alpha_plugins=args.enable_alpha_plugins,
                                       plugin_timeout=args.plugin_timeout))
    finally:
        if progress is not None:
            progress.close()
    if not args.quiet:
        stderr.write(f"kzgit transform: {len(result.outcomes)} resources, {len(plugins)} plugins: "
                     f"{result.patched} patched, {result.whiteouts} whited out, "
                     f"{result.ignored} operations ignored (see "
                     f"{args.output.rstrip('/')}/ignored-patches.yaml)\n")
    return 0
