"""``kzgit-exec-bits``: no downloaded file of a localized copy is executable.

Downloaded files are everything under a ``localized-files/`` directory and
every file a localize lock records as downloaded.  The hook is a fixer, as
pre-commit's fixers are: it clears the executable bits in the work tree and
sets mode 100644 in the git index (the blob stays the same: content is never
touched), and fails, listing each path, so the user re-runs the commit.

A file the repository lists in ``reviewed-executables`` (``.kzgit.toml``) keeps its bit while
its content is the one reviewed (its sha256 is the one pinned): a vendored KRM exec function
the team read.  Once the file changes, the grant is gone: the bit is cleared as for any other
downloaded file, and the finding says both digests.
"""
from __future__ import annotations

import os
import posixpath
import stat
from typing import Dict, List, Set

from kzgit.gitio import MODE_EXECUTABLE, clear_exec_bits_in_index, index_modes
from kzgit.hooks import LOCALIZED_FILES_DIR, HookFinding, Workspace
from kzgit.hooks import _localize_api
from kzgit.sha import sha256


def downloaded(ws: Workspace) -> Set[str]:
    """Repo-relative downloaded files among the workspace's files."""
    out = {f for f in ws.own_files if LOCALIZED_FILES_DIR in f.split("/")[:-1] and ws.in_localized_area(f)}
    lock_name = _localize_api.lock_file_name()
    files = set(ws.files)
    for f in ws.own_files:
        if posixpath.basename(f) == lock_name and ws.in_localized_area(f):
            copy = posixpath.dirname(f)
            for rel in _localize_api.downloaded_files(ws.path(f)):
                p = posixpath.normpath(posixpath.join(copy, rel))
                if p in files:
                    out.add(p)
    return out


def run(ws: Workspace, fix: bool = True) -> List[HookFinding]:
    """Findings (fixed ones included) for executable downloaded files that changed."""
    targets = sorted(p for p in downloaded(ws) if ws.is_changed(p))
    if not targets:
        return []
    bad_tree: List[str] = []
    for p in targets:
        full = ws.path(p)
        try:
            st = os.lstat(full)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_mode & 0o111:
            bad_tree.append(p)
    try:
        modes = index_modes(ws.repo, targets)
    except Exception:  # noqa: BLE001 - not a git repo (e.g. a plain directory): tree only
        modes = {}
    bad_index = sorted(p for p, m in modes.items() if m == MODE_EXECUTABLE)
    pinned = ws.config.reviewed_executables
    why: Dict[str, str] = {}
    for p in sorted(set(bad_tree) | set(bad_index)):
        if p not in pinned:
            continue
        actual = _digest(ws.path(p))
        if actual == pinned[p]:
            bad_tree = [b for b in bad_tree if b != p]   # reviewed, unchanged: it stays
            bad_index = [b for b in bad_index if b != p]
        else:
            src = os.path.basename(ws.config.source or ".kzgit.toml")
            why[p] = (f"; reviewed-executables in {src} pins {pinned[p]}, the file is now "
                      f"{actual or 'unreadable'}: review it and pin the new digest to keep it "
                      "executable")
    findings: List[HookFinding] = []
    where: Dict[str, List[str]] = {p: [] for p in sorted(set(bad_tree) | set(bad_index))}
    for p in bad_tree:
        where[p].append("work tree")
    for p in bad_index:
        where[p].append("index")
    if fix:
        for p in bad_tree:
            full = ws.path(p)
            mode = stat.S_IMODE(os.lstat(full).st_mode)
            os.chmod(full, mode & ~0o111)
            if ws.root != ws.repo:  # staged export: fix the real work tree too
                real = os.path.join(ws.repo, *p.split("/"))
                if os.path.isfile(real) and not os.path.islink(real):
                    os.chmod(real, stat.S_IMODE(os.lstat(real).st_mode) & ~0o111)
        if bad_index:
            clear_exec_bits_in_index(ws.repo, bad_index)
    verb = "removed executable bit" if fix else "downloaded file is executable"
    for p, places in where.items():
        findings.append(HookFinding(p, f"{verb} ({', '.join(places)}){why.get(p, '')}"))
    return findings


def _digest(path: str) -> str:
    """``sha256:<hex>`` of the file's bytes ("" when it cannot be read)."""
    h = sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return ""
    return "sha256:" + h.hexdigest()
