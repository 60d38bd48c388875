"""Drift of localized copies: an original changed without its copy, or the reverse.

A localized copy (``kzgit localize``) is found by its lock file
(:data:`kzgit.localize.LOCK_FILE_NAME`), which names the original and the
source of every copied file.  A copy is looked at when the change touches it
or its original; then :func:`kzgit.localize.check_copy` decides, on the head's
content, whether it still matches: a copy rebuilt together with its original
passes, as does a copy re-made for a newer remote pin.  The change only
words the finding (which side moved).
"""
from __future__ import annotations

import json
import os
import posixpath
from typing import Any, Callable, Dict, List, Optional, Set

from kzgit.config import Config, glob_match
from kzgit.diff.report import Drift
from kzgit.diff.revision import Revision
from kzgit.errors import KzgitError
from kzgit.graph import Graph

#: kzgit.localize.lock.LOCK_FILE_NAME, written again here (a test keeps the two equal) so that
#: a diff touching no localized copy never imports the localizer (ruamel.yaml, the remote cache)
LOCK_FILE_NAME = ".kzgit-localize.lock"


def _lock(head: Revision, lock_path: str) -> Dict[str, Any]:
    data = head.read(lock_path)
    try:
        lock = json.loads(data) if data is not None else None
    except ValueError:
        lock = None
    return lock if isinstance(lock, dict) else {}


def _under(path: str, d: str) -> bool:
    return d == "." or path == d or path.startswith(d + "/")


def _original(copy: str, lock: Dict[str, Any]) -> Optional[str]:
    """The original's repo-relative dir, when it is local and inside the repository."""
    target = lock.get("target")
    if not isinstance(target, str) or not target or lock.get("target_commit") or "://" in target:
        return None
    p = posixpath.normpath(posixpath.join("" if copy == "." else copy, target))
    return None if p == ".." or p.startswith("../") or p.startswith("/") else p


def _sources(copy: str, lock: Dict[str, Any]) -> Set[str]:
    """Repo-relative originals of the copied files (and chart homes) the lock records."""
    out: Set[str] = set()
    base = "" if copy == "." else copy
    files = lock.get("files")
    recs = list(files.values()) if isinstance(files, dict) else []
    homes = lock.get("chart_homes")
    srcs = [r.get("source") for r in recs if isinstance(r, dict)]
    srcs += list(homes.values()) if isinstance(homes, dict) else []
    for src in srcs:
        if isinstance(src, str) and src:
            out.add(posixpath.normpath(posixpath.join(base, src)))
    return out


def find(head: Revision, head_graph: Graph, config: Config, changed: List[str],
         check: Optional[Callable[[str], List[str]]] = None) -> List[Drift]:
    """Copies at the head that the change touches and that no longer match their original
    (``check``: :func:`kzgit.localize.check_copy` unless given)."""
    copies = sorted(posixpath.dirname(f) or "." for f in head.files
                    if posixpath.basename(f) == LOCK_FILE_NAME)
    copies = [c for c in copies if not config.localized or glob_match(c, config.localized)]
    out: List[Drift] = []
    for copy in copies:
        lock = _lock(head, posixpath.join("" if copy == "." else copy, LOCK_FILE_NAME))
        original = _original(copy, lock)
        sources = _sources(copy, lock)
        copy_touched = any(_under(c, copy) for c in changed)
        orig_touched = any(c in sources or any(_under(c, s) for s in sources) for c in changed)
        if original and original in head_graph.nodes:
            reach = head_graph.reach(original)
            orig_touched = orig_touched or any(reach.touches(c) and not _under(c, copy) for c in changed)
        if not (copy_touched or orig_touched):
            continue
        if check is None:
            from kzgit.localize import check_copy   # start-up: only where a copy is checked
            check = check_copy
        disk = head.on_disk()
        path = os.path.join(disk, *[p for p in copy.split("/") if p != "."])
        try:
            problems = check(path)
        except KzgitError as e:
            problems = [str(e)]
        if not problems:
            continue
        prefix = disk.rstrip(os.sep) + os.sep
        problems = [head.scrub(p.replace(prefix, "")) for p in problems]
        status = ("original-changed" if orig_touched and not copy_touched
                  else "copy-changed" if copy_touched and not orig_touched else "stale")
        out.append(Drift(copy, original, status, problems))
    return out
