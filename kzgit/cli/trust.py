"""``kzgit trust [DIR] [--revoke]``: approve one repository's widening settings as they are.

A repository's ``[sandbox]``, ``engine-path``, ``helm-command``, ``enable-*`` and
``load-restrictor`` may only narrow what the user grants
(:meth:`kzgit.config.SandboxSettings.granted`, :func:`kzgit.config.parse_config`).
``kzgit trust`` records the SHA-256 of those settings (:func:`kzgit.config.trust_digest`) for
the repository's top in ``$XDG_DATA_HOME/kzgit/trusted.json``; from then on they apply there
as written, on top of the user's own settings, until one of them changes, as ``direnv allow``
approves one ``.envrc``.
"""
from __future__ import annotations

import argparse
import os


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "trust", help="approve a repository's sandbox, plugin and program settings",
        description="Approve the settings of the repository at DIR (default: .) that widen the "
                    "plugin sandbox, turn plugins on, lift the load restrictor or name a "
                    "program to run ([sandbox], enable-alpha-plugins, enable-exec, enable-helm, "
                    "load-restrictor, engine-path, helm-command, engine), as they are now; "
                    "your own settings keep applying. A change to any of them revokes the "
                    "approval.")
    p.add_argument("dir", nargs="?", default=".", metavar="DIR", help="in the repository (default: .)")
    p.add_argument("--revoke", action="store_true", help="forget the approval")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kzgit.config import approvals_path, approve   # start-up
    from kzgit.errors import UsageError
    from kzgit.paths import repository_top
    top = repository_top(args.dir)
    if top is None:
        raise UsageError(f"{os.path.abspath(args.dir)} is not inside a git work tree")
    source, covered = approve(top, revoke=args.revoke)
    if args.revoke:
        print(f"kzgit trust: forgot the approval of {top} ({approvals_path()})")
        return 0
    if not covered:
        print(f"kzgit trust: {top} has no settings to approve ({source or 'no configuration file'}); "
              "recorded anyway")
        return 0
    print(f"kzgit trust: approved the settings of {source} as they are now:")
    for key, value in covered.items():
        print(f"  {key} = {value!r}")
    print(f"(recorded in {approvals_path()}; a change to any of them revokes it)")
    return 0
