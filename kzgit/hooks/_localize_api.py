"""The parts of :mod:`kzgit.localize` the hooks use.

Each function imports :mod:`kzgit.localize` when called: the package loads the whole
localizer, which a hook run on a repository without localized copies never needs.
"""
from __future__ import annotations

import posixpath
from typing import Any, List, Optional


def lock_file_name() -> str:
    """The lock file name at the top of a localized copy."""
    from kzgit.localize import LOCK_FILE_NAME   # start-up: see the module docstring
    return LOCK_FILE_NAME


def check_copy(copy_dir: str) -> List[str]:
    """What makes the localized copy at ``copy_dir`` stale (:func:`kzgit.localize.check_copy`)."""
    from kzgit.localize import check_copy as check   # start-up: see the module docstring
    return check(copy_dir)


def _lock(lock_path: str) -> Any:
    from kzgit.localize import LocalizeError, read_lock   # start-up: see the module docstring
    try:
        return read_lock(posixpath.dirname(lock_path) or ".")   # read_lock takes the copy dir
    except LocalizeError:
        return None   # a missing or broken lock is the sync hook's finding, not ours


def downloaded_files(lock_path: str) -> List[str]:
    """Files (relative to the copy) the lock records as downloaded (they have a URL)."""
    lock = _lock(lock_path)
    files = lock.get("files") if isinstance(lock, dict) else None
    if not isinstance(files, dict):
        return []
    return sorted(posixpath.normpath(rel) for rel, rec in files.items()
                  if isinstance(rec, dict) and rec.get("url"))


NO_LOCAL_ORIGINAL = ""


def original_of(lock_path: str) -> Optional[str]:
    """The original kustomization dir of a copy, relative to the copy.

    :data:`NO_LOCAL_ORIGINAL` when the original is remote (pinned by commit in
    the lock: only an edit of the copy can make it stale); None when the lock
    cannot be read (the caller then checks the copy, rather than skip it).
    """
    lock = _lock(lock_path)
    if not isinstance(lock, dict):
        return None
    target = lock.get("target")
    if not isinstance(target, str) or not target:
        return None
    if lock.get("target_commit") or "://" in target:
        return NO_LOCAL_ORIGINAL
    return target
