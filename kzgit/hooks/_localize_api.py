"""The parts of :mod:`kzgit.localize` the hooks use, looked up lazily.

``kzgit localize`` is developed alongside the hooks; until it exposes
``LOCK_FILE_NAME``, ``read_lock`` and ``check_copy`` the hooks say plainly
that they cannot check, instead of passing silently.
"""
from __future__ import annotations

import posixpath
from typing import Any, Callable, List, Optional


def _attr(name: str) -> Any:
    try:
        import kzgit.localize as loc
    except ImportError:  # pragma: no cover
        return None
    return getattr(loc, name, None)


def lock_file_name() -> Optional[str]:
    """The lock file name at the top of a localized copy, if kzgit.localize defines it."""
    name = _attr("LOCK_FILE_NAME")
    return name if isinstance(name, str) and name else None


def check_copy() -> Optional[Callable[[str], List[str]]]:
    """``kzgit.localize.check_copy(copy_dir) -> list[str]`` (problems), if present."""
    fn = _attr("check_copy")
    return fn if callable(fn) else None


def _lock(lock_path: str) -> Any:
    read_lock = _attr("read_lock")
    if not callable(read_lock):
        return None
    try:
        return read_lock(posixpath.dirname(lock_path) or ".")   # read_lock takes the copy dir
    except Exception:  # noqa: BLE001 - a broken lock is the sync hook's finding, not ours
        return None


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
