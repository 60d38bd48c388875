"""``kzgit install-hooks``: install the plain git ``pre-commit`` / ``pre-push`` hooks.

As ``pre-commit install`` does (pre_commit/commands/install_uninstall.py), an
existing hook that is not ours is kept as ``<hook>.legacy`` and run first by
ours; a hook is never overwritten silently.  An existing ``.legacy`` that is
not ours is never replaced either: that is an error, resolved by hand.
``core.hooksPath`` is honoured (the hooks go where git will run them).
"""
from __future__ import annotations

import argparse
import os
import sys

from typing import List

from kzgit.atomic import write_atomic
from kzgit.errors import UsageError
from kzgit.hooks.scripts import HOOK_TYPES, MARKER, script


# Every command module registers its parser the same way (a one-line help, a description
# paragraph, then its arguments): cli/build.py reads alike on purpose.
def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "install-hooks", help="install kzgit's plain git hooks (pre-commit, pre-push)",
        description="Install kzgit's hooks as plain git hooks (no pre-commit framework) where git "
                    "runs them (core.hooksPath honoured). The pre-commit hook checks the index, "
                    "the pre-push hook each pushed commit, with `kzgit hook all`. An existing hook "
                    "that is not kzgit's is kept as <hook>.legacy and run first.")
    p.add_argument("-t", "--hook-type", action="append", choices=HOOK_TYPES, dest="hook_types",
                   help="hook to install (repeatable; default: pre-commit)")
    p.add_argument("--uninstall", action="store_true",
                   help="remove kzgit's hooks and put back the .legacy ones")
    p.set_defaults(func=run)


def hooks_dir(cwd: str = ".") -> str:
    """Where git runs hooks for the repository at ``cwd`` (core.hooksPath honoured)."""
    from kzgit import gitio   # start-up
    root = gitio.repo_root(cwd)
    out = gitio.git(["rev-parse", "--git-path", "hooks"], root).decode().strip()
    return os.path.normpath(os.path.join(root, out))


def is_ours(path: str) -> bool:
    """Whether the file at ``path`` is a kzgit hook script."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return MARKER in f.read(4096)
    except OSError:
        return False


def install(hook_type: str, directory: str, python: str) -> List[str]:
    """Install one hook; return the lines to tell the user."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, hook_type)
    legacy = path + ".legacy"
    said: List[str] = []
    if os.path.lexists(path) and not is_ours(path):
        if os.path.lexists(legacy):
            raise UsageError(f"{path} exists and so does {legacy}; refusing to overwrite either",
                             tip=f"merge them by hand, or remove {legacy}")
        os.replace(path, legacy)
        said.append(f"kept the existing hook as {legacy} (it runs first)")
    write_atomic(path, script(hook_type, python), mode=0o755)
    said.append(f"kzgit {hook_type} hook installed at {path}")
    return said


def uninstall(hook_type: str, directory: str) -> List[str]:
    """Remove our hook and restore ``.legacy``; a hook that is not ours stays."""
    path = os.path.join(directory, hook_type)
    legacy = path + ".legacy"
    if not is_ours(path):
        return []
    os.remove(path)
    said = [f"kzgit {hook_type} hook removed"]
    if os.path.lexists(legacy):
        os.replace(legacy, path)
        said.append(f"restored the previous hook at {path}")
    return said


def run(args: argparse.Namespace) -> int:
    directory = hooks_dir()
    for hook_type in args.hook_types or ["pre-commit"]:
        lines = (uninstall(hook_type, directory) if args.uninstall
                 else install(hook_type, directory, sys.executable))
        for line in lines:
            print(line)
    return 0
