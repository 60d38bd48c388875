"""The provenance lock file of a localized copy, and :func:`check_copy`.

One file at the top of NEWDIR (:data:`LOCK_FILE_NAME`), deterministic: JSON
with sorted keys, no timestamps, every path relative to NEWDIR (so a clone of
the repository holding both the original and the copy still matches).  It
records the target and scope, every remote root with its ref and the commit
the ref resolved to, every downloaded file's URL, and a sha256 of every file
in the copy and of the original it was copied from.
"""
from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Dict, List, Optional

from kzgit.localize.errors import LocalizeError

LOCK_FILE_NAME = ".kzgit-localize.lock"
LOCK_VERSION = 1


def dumps(lock: Dict[str, Any]) -> str:
    """Canonical text of a lock (stable across runs and machines)."""
    return json.dumps(lock, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def read_lock(copy_dir: str) -> Dict[str, Any]:
    """The lock of a localized copy; :class:`LocalizeError` when absent or unreadable."""
    path = os.path.join(copy_dir, LOCK_FILE_NAME)
    try:
        with open(path, encoding="utf-8") as f:
            lock = json.load(f)
    except FileNotFoundError:
        raise LocalizeError(f"'{copy_dir}' is not a localized copy: no {LOCK_FILE_NAME}",
                            tip="create it with `kzgit localize`") from None
    except (OSError, ValueError) as e:
        raise LocalizeError(f"unreadable lock file '{path}': {e}") from None
    if not isinstance(lock, dict) or lock.get("version") != LOCK_VERSION:
        raise LocalizeError(f"'{path}' is not a kzgit localize lock file (version {LOCK_VERSION})")
    return lock


def _sha(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def copy_files(copy_dir: str) -> List[str]:
    """Every regular file and symlink under ``copy_dir`` except the lock, '/'-separated."""
    out = []
    for d, dirs, files in os.walk(copy_dir):
        dirs.sort()
        for n in files + [x for x in dirs if os.path.islink(os.path.join(d, x))]:
            rel = os.path.relpath(os.path.join(d, n), copy_dir).replace(os.sep, "/")
            if rel != LOCK_FILE_NAME:
                out.append(rel)
    return sorted(out)


def check_copy(copy_dir: str) -> List[str]:
    """Problems that make a localized copy stale or tampered with; empty = in sync.

    Offline and fast (for the ``localized-sync`` pre-commit hook): checks that
    every file of the copy matches its recorded checksum, that no file was added
    or removed, and that every original the copy was made from still has the
    checksum it had (a changed kustomization or configuration file means the copy
    must be rebuilt with ``kzgit rebuild``).  Remote content is pinned by commit in
    the lock and is not fetched.
    """
    try:
        lock = read_lock(copy_dir)
    except LocalizeError as e:
        return [str(e).splitlines()[0]]
    problems: List[str] = []
    files: Dict[str, Any] = lock.get("files") or {}
    present = set(copy_files(copy_dir))
    for rel in sorted(set(files) - present):
        problems.append(f"{copy_dir}/{rel}: missing from the localized copy")
    for rel in sorted(present - set(files)):
        problems.append(f"{copy_dir}/{rel}: not part of the localization (added by hand?)")
    stale_sources = []
    for rel in sorted(set(files) & present):
        rec = files[rel]
        p = os.path.join(copy_dir, rel)
        if os.path.islink(p) or _sha(p) != rec.get("sha256"):
            problems.append(f"{copy_dir}/{rel}: modified in the copy (edit the original instead)")
        src = rec.get("source")
        if src and rec.get("source_sha256"):
            sp = os.path.normpath(os.path.join(copy_dir, src))
            h = _sha(sp)
            if h is None:
                stale_sources.append(f"{copy_dir}/{rel}: its original '{sp}' no longer exists")
            elif h != rec["source_sha256"]:
                stale_sources.append(f"{copy_dir}/{rel}: its original '{sp}' changed since localization")
    for home, src in sorted((lock.get("chart_homes") or {}).items()):
        sp = os.path.normpath(os.path.join(copy_dir, src))
        if not os.path.isdir(sp):
            stale_sources.append(f"{copy_dir}/{home}: chart home '{sp}' no longer exists")
            continue
        for d, dirs, fs in os.walk(sp):
            dirs[:] = [x for x in dirs if not os.path.islink(os.path.join(d, x))]
            for n in fs:
                if os.path.islink(os.path.join(d, n)):
                    continue
                rel = os.path.normpath(os.path.join(home, os.path.relpath(os.path.join(d, n), sp)))
                if rel.replace(os.sep, "/") not in files:
                    stale_sources.append(f"{copy_dir}/{home}: chart home '{sp}' has a new file "
                                         f"'{os.path.relpath(os.path.join(d, n), sp)}'")
    if stale_sources:
        problems.extend(stale_sources)
        problems.append(f"{copy_dir}: out of sync with its original")
    return problems
