"""The dependency graph reaches every file a build reads, over every golden case.

The hooks build only the roots the graph says a change reaches, so a file the build reads and
the graph does not know is a change that passes a commit while ``--all`` fails (issue 23, item
7).  Each golden case (``tests/fixtures``) is scanned as the hooks scan a repository, and built
with a file system that logs every file it reads and every directory it lists: each must be one
the graph says the case's target reaches (:meth:`kzgit.graph.Reach.touches`).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import List, Set

import pytest

from kzgit.builder import BuildOptions, build
from kzgit.errors import KzgitError
from kzgit.graph import disk_reader, disk_resolver, scan
from kzgit.loader import NO_RESTRICTIONS, ROOT_ONLY, DiskFS
from helpers import FIXTURES, table_cases

CASE_FILES = ("case.json", "expected.yaml", "expected.err")


class ReadLog(DiskFS):
    """The disk, noting the real path of every file read and every directory listed."""

    def __init__(self) -> None:
        self.read: Set[str] = set()
        self.listed: Set[str] = set()

    def read_bytes(self, path: str) -> bytes:
        self.read.add(os.path.realpath(path))
        return super().read_bytes(path)

    def listdir(self, path: str) -> List[str]:
        self.listed.add(os.path.realpath(path))
        return super().listdir(path)


def _tree(case: Path) -> List[str]:
    """The case's files as git would list them (a symbolic link is one entry, not followed)."""
    out = []
    for top, dirs, files in os.walk(case):
        rel = os.path.relpath(top, case)
        for name in files + [d for d in dirs if os.path.islink(os.path.join(top, d))]:
            path = name if rel == "." else f"{rel}/{name}".replace(os.sep, "/")
            if path not in CASE_FILES:
                out.append(path)
    return sorted(out)


@pytest.mark.parametrize("case", table_cases(FIXTURES))
def test_the_graph_reaches_every_file_the_build_reads(case: Path) -> None:
    spec = json.loads((case / "case.json").read_text(encoding="utf-8"))
    target = os.path.normpath(spec.get("target", "."))
    args = spec.get("args", [])
    log = ReadLog()
    options = BuildOptions(fs=log, load_restrictor=NO_RESTRICTIONS if "LoadRestrictionsNone" in args else ROOT_ONLY)
    try:
        build(str(case / target), options)
    except KzgitError:
        pass   # an error case: what it read before failing counts as well
    top = os.path.realpath(case)
    graph = scan(_tree(case), disk_reader(str(case)), resolve=disk_resolver(str(case)))
    target = target.replace(os.sep, "/")
    if target not in graph.nodes:   # no kustomization there: the build fails having read nothing
        assert spec["expected"] == "error" and not log.read, (spec, log.read)
        return
    reach = graph.reach(target)
    missed = []
    for path in sorted(log.read | log.listed):
        rel = os.path.relpath(path, top).replace(os.sep, "/")
        if rel.startswith("../") or rel == "..":
            continue   # outside the case (an error case's escape): no change in the repository
        # a kustomization directory is listed to find its kustomization file
        if not (reach.touches(rel) or (path in log.listed and rel in reach.kustomization_dirs)):
            missed.append(rel)
    assert not missed, f"the build of {target} read what the graph does not reach: {missed}"
