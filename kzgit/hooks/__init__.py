"""The git hooks, one module per hook: ``render``, ``localized_sync``, ``pinned_refs``, ``exec_bits``.

Each hook is a function ``run(workspace, ...) -> list[Finding]``: it never
prints; :mod:`kzgit.cli.hook` prints the findings and turns them into exit
code 1, as pre-commit expects.  A :class:`Workspace` is the content being
checked: the work tree (under the pre-commit framework, which has already
stashed unstaged changes), or a temporary export of the index or of a commit
(plain git hooks), with the changed files (``None`` = everything).
"""
from __future__ import annotations

import dataclasses
import functools
import os
from typing import Any, List, Optional

from kzgit.config import Config, glob_match
from kzgit.graph import Graph, ReadFn, disk_reader, scan, scan_cached

LOCALIZED_FILES_DIR = "localized-files"


@dataclasses.dataclass
class Finding:
    """One problem a hook found; ``path`` is repo-relative."""

    path: str
    message: str
    line: Optional[int] = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        msg = self.message.replace("\n", "\n    ")
        return f"{where}: {msg}"


@dataclasses.dataclass
class Workspace:
    """What a hook checks: files under ``root``, the changed ones, the repo's config."""

    root: str                       # directory holding the content checked
    files: List[str]                # repo-relative files of that content
    changed: Optional[List[str]]    # repo-relative changed files; None = all
    config: Config
    repo: str = ""                  # the git work tree (index edits, messages); default root
    staged: bool = False            # content is the index (exec-bits edits the index too)
    # the render cache of the command (kzgit.rendercache.Store), which keeps the graph too
    cache: Optional[Any] = None

    def __post_init__(self) -> None:
        self.repo = self.repo or self.root
        self.files = [f for f in self.files if not (self.config.exclude
                                                    and glob_match(f, self.config.exclude))]

    @property
    def read(self) -> ReadFn:
        """Reads repo-relative paths of the content checked."""
        return disk_reader(self.root)

    @functools.cached_property
    def graph(self) -> Graph:
        """The dependency graph of the content checked."""
        if self.cache is not None:
            return scan_cached(self.files, self.read, self.cache, roots=self.config.roots,
                               exclude=self.config.exclude)
        return scan(self.files, self.read, roots=self.config.roots, exclude=self.config.exclude)

    def path(self, rel: str) -> str:
        """Absolute path of a repo-relative path in the content checked."""
        return os.path.join(self.root, *[p for p in rel.split("/") if p and p != "."])

    def in_localized_area(self, rel: str) -> bool:
        """Whether ``rel`` lies where the configuration says localized copies live (``localized``)."""
        return not self.config.localized or glob_match(rel, self.config.localized)

    def is_changed(self, rel: str) -> bool:
        """Whether ``rel`` is among the changed files (always, with ``changed`` None)."""
        return self.changed is None or rel in self._changed_set

    @functools.cached_property
    def _changed_set(self) -> "set[str]":
        return set(self.changed or ())

    def scrub(self, message: str) -> str:
        """Replace the temporary export directory in a message by the repo's own path."""
        if self.root != self.repo:
            message = message.replace(os.path.realpath(self.root), self.repo)
            message = message.replace(self.root, self.repo)
        return message
