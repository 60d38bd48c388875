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


def downloaded_files(lock_path: str) -> List[str]:
    """Files (relative to the copy) a lock records as downloaded; [] if it cannot tell."""
    read_lock = _attr("read_lock")
    if not callable(read_lock):
        return []
    try:
        lock = read_lock(lock_path)
    except Exception:  # noqa: BLE001 - a broken lock is the sync hook's finding, not ours
        return []
    files = getattr(lock, "downloaded", None)
    if files is None and isinstance(lock, dict):
        files = lock.get("downloaded")
    return [posixpath.normpath(f) for f in files or [] if isinstance(f, str)]


def original_of(lock_path: str) -> Optional[str]:
    """The original kustomization dir a lock names (relative to the copy), if it says."""
    read_lock = _attr("read_lock")
    if not callable(read_lock):
        return None
    try:
        lock = read_lock(lock_path)
    except Exception:  # noqa: BLE001
        return None
    src = getattr(lock, "original", None) or getattr(lock, "source", None)
    if src is None and isinstance(lock, dict):
        src = lock.get("original") or lock.get("source")
    return src if isinstance(src, str) else None
