"""The ``kzgit`` command line: ``main`` owns argv, one module per command.

``main`` imports every command module on each run to register its arguments, so a command module
imports what only its own command needs inside the functions that run it, each such import marked
``# start-up`` (``tests/cli/test_cli_startup.py`` checks what a build imports)."""
from __future__ import annotations

import argparse


def jobs_arg(text: str) -> int:
    """``-j N``: an integer >= 0 (0 = one per CPU), as the ``jobs`` setting; else a usage error."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: expected an integer >= 0") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: expected an integer >= 0 "
                                         "(0 = one per CPU)")
    return n


def shard_arg(text: str) -> "tuple[int, int]":
    """``--shard I/N`` (1-based), as :func:`kzgit.graph.parse_shard` reads it; else a usage error."""
    from kzgit.graph import parse_shard   # only commands given --shard pay for the graph
    try:
        return parse_shard(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


ENGINES = ("builtin", "kustomize", "kubectl")


def add_render_flags(p: argparse.ArgumentParser, verb: str = "render", setting: str = "the") -> None:
    """The flags of the commands that render many roots (``hook render|validate|all``,
    ``validate``, ``diff``), declared once so they mean and say the same everywhere.

    ``verb`` says what a shard does with its roots ("render", "validate"); ``setting`` whose
    settings the defaults come from ("the", "the base revision's")."""
    p.add_argument("--engine", choices=ENGINES, help=f"override {setting} configured engine")
    p.add_argument("--offline", action="store_true", help="use only cached remote references")
    p.add_argument("-j", "--jobs", type=jobs_arg, default=0, metavar="N",
                   help=f"parallel renders (default: {setting} `jobs` setting, else one per CPU)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="list each root on stderr as it is done: built, cached or failed, and its time")
    p.add_argument("--no-cache", action="store_true",
                   help="render every root; do not use or fill the render cache")
    p.add_argument("--shard", metavar="I/N", type=shard_arg,
                   help=f"{verb} only part I of N (1-based) of the roots, for a CI matrix")
    add_version_flag(p, setting)


def add_version_flag(p: argparse.ArgumentParser, setting: str = "the") -> None:
    """``--kustomize-version``: the Kustomize release every render of the command renders as."""
    from kzgit.versions import DEFAULT, DEPLOYERS, ENV_VAR, SUPPORTED   # start-up: only the commands that render
    p.add_argument("--kustomize-version", metavar="VERSION",
                   help=f"render as this Kustomize release: {', '.join(SUPPORTED)}, a minor (5.7 "
                        f"is its newest patch) or a deployer ({', '.join(DEPLOYERS)}); default: "
                        f"${ENV_VAR}, else {setting} kustomize-version setting, else {DEFAULT}")


def add_timeout_flag(p: argparse.ArgumentParser, runs: str) -> None:
    """``--plugin-timeout``: every program kzgit runs has a time limit (build, transform)."""
    p.add_argument("--plugin-timeout", type=float, default=60.0, metavar="SECONDS",
                   help=f"time limit of each {runs} run (default: %(default)s)")


def add_plugin_flags(p: argparse.ArgumentParser, default: str = "") -> None:
    """kustomize's plugin switches, as ``kubectl kustomize`` spells them (build and diff)."""
    p.add_argument("--enable-alpha-plugins", action="store_true",
                   help="enable kustomize plugins (exec plugins and KRM functions)" + default)
    p.add_argument("--enable-exec", action="store_true",
                   help="with --enable-alpha-plugins: allow exec KRM functions" + default)
    p.add_argument("--enable-helm", action="store_true",
                   help="enable the Helm chart inflator generator (helmCharts)" + default)
