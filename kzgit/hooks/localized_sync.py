"""``kzgit-localized-sync``: localized copies are exactly what ``kzgit localize`` makes now.

A localized copy is found by its lock file.  For every copy whose files, or
whose original's reach, the change touches, :func:`kzgit.localize.check_copy`
compares the copy (files and lock) with a fresh localization made offline from
the cache and the lock, and the copy's rendering with its original's.  A
finding gives the exact ``kzgit rebuild`` command to run.  When a copy cannot be
checked (its lock unreadable, nothing cached), the hook says so and fails: it
never passes silently.
"""
from __future__ import annotations

import os
import posixpath
import shlex
from typing import List

from kzgit.errors import KzgitError
from kzgit.hooks import HookFinding, Workspace
from kzgit.hooks import _localize_api


def copies(ws: Workspace) -> List[str]:
    """Repo-relative dirs of the localized copies in the workspace."""
    name = _localize_api.lock_file_name()
    found = sorted(posixpath.dirname(f) or "." for f in ws.own_files if posixpath.basename(f) == name)
    return [c for c in found if ws.in_localized_area(c)]


def _touched(ws: Workspace, copy: str) -> bool:
    if ws.changed is None:
        return True
    prefix = "" if copy == "." else copy + "/"
    if any(c.startswith(prefix) for c in ws.changed):
        return True
    name = _localize_api.lock_file_name()
    original = _localize_api.original_of(ws.path(posixpath.join(copy, name)))
    if original is None:
        return True  # cannot tell what the original is: check, rather than skip
    if original == _localize_api.NO_LOCAL_ORIGINAL:
        return False
    orig = posixpath.normpath(posixpath.join(copy, original))
    if orig in ws.graph.nodes:
        return any(ws.graph.reach(orig).touches(c) for c in ws.changed)
    return True


def _rebuild_cmd(copy: str) -> str:
    return f"kzgit rebuild {shlex.quote(copy)}"


def _relative(ws: Workspace, problem: str) -> str:
    """A problem as the user reads it: paths relative to the repository's top (where
    pre-commit runs hooks)."""
    for top in sorted({ws.root, os.path.realpath(ws.root)}, key=len, reverse=True):
        problem = problem.replace(top.rstrip(os.sep) + os.sep, "")
    return ws.scrub(problem)


def run(ws: Workspace) -> List[HookFinding]:
    """Findings for stale localized copies, or for copies that cannot be checked."""
    out: List[HookFinding] = []
    for copy in copies(ws):
        if not _touched(ws, copy):
            continue
        try:
            problems = _localize_api.check_copy(ws.path(copy))
        except KzgitError as e:
            out.append(HookFinding(copy, f"cannot check this localized copy: {ws.scrub(str(e))}"))
            continue
        if problems:
            detail = "\n".join(_relative(ws, p) for p in problems)
            out.append(HookFinding(copy, f"localized copy is stale:\n{detail}\n"
                                     f"run: {_rebuild_cmd(copy)}"))
    return out


