"""The git hooks, one module per hook: ``render``, ``localized_sync``, ``pinned_refs``, ``exec_bits``.

Each hook is a function ``run(workspace, ...) -> list[HookFinding]``: it never
prints; :mod:`kzgit.cli.hook` prints the findings and turns them into exit
code 1, as pre-commit expects.  A :class:`Workspace` is the content being
checked: the work tree (under the pre-commit framework, which has already
stashed unstaged changes), or a temporary export of the index or of a commit
(plain git hooks), with the changed files (``None`` = everything).
"""
from __future__ import annotations

import os
from kzgit.config import KZGIT_TOML, PYPROJECT, Config, glob_match
from kzgit.paths import repo_relative
from kzgit.errors import KzgitError, UsageError
from kzgit.graph import Graph, ReadFn, disk_reader, disk_resolver, scan, scan_cached
from kzgit.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, List, Optional, Tuple, Union

LOCALIZED_FILES_DIR = "localized-files"


class HookFinding(Record):
    """One problem a hook found; ``path`` is repo-relative."""

    __slots__ = ("path", "message", "line")

    def __init__(self, path: str, message: str, line: Optional[int] = None) -> None:
        self.path = path
        self.message = message
        self.line = line

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        msg = self.message.replace("\n", "\n    ")
        return f"{where}: {msg}"


def settings_changed(root: str, repo: str, changed: "List[str]") -> bool:
    """Whether the change touches kzgit's settings: ``.kzgit.toml``, or the ``[tool.kzgit]``
    table of ``pyproject.toml`` (compared with HEAD's, so a project's version bump is not one).
    ``root`` holds the content checked, ``repo`` is the git work tree."""
    if KZGIT_TOML in changed:
        return True
    if PYPROJECT not in changed:
        return False
    from kzgit import gitio   # start-up: only a change of pyproject.toml asks git
    from kzgit.config import tool_table   # start-up: as above
    try:
        with open(os.path.join(root, PYPROJECT), "rb") as f:
            now = f.read()
    except OSError:
        now = None
    try:
        before: "Optional[bytes]" = gitio.git(["show", f"HEAD:{PYPROJECT}"], repo)
    except KzgitError:   # no HEAD yet, or no pyproject.toml in it: any table is new
        before = None
    return tool_table(now) != tool_table(before)


class Workspace:
    """What a hook checks: files under ``root``, the changed ones, the repo's config.

    A plain class (no ``dataclasses``, whose import costs a warm hook a tenth of its time).
    """

    def __init__(self, root: str, files: Union[List[str], Callable[[Optional[Any]], List[str]]],
                 changed: Optional[List[str]], config: Config,
                 repo: str = "", staged: bool = False, cache: Optional[Any] = None,
                 mounted: bool = False) -> None:
        self.root = root                # directory holding the content checked
        self.config = config
        # repo-relative files of that content, or what lists them given the render cache
        # (kzgit.hooks.listing), called when they are first needed
        self._files: Optional[List[str]] = None
        self._own: Optional[List[str]] = None
        self._lister = files
        self.repo = repo or root        # the git work tree (index edits, messages)
        if changed is not None and settings_changed(root, self.repo, changed):
            # a setting (the Kustomize release, a build option, a rule's severity) can change
            # every rendering and verdict: re-check everything, as after `--all`
            changed = None
        self.changed = changed          # repo-relative changed files; None = all
        self.staged = staged            # content is the index (exec-bits edits the index too)
        # the render cache of the command (kzgit.rendercache.Store), which keeps the graph too
        self.cache = cache
        # ``root`` is a temporary export that builtin builds see at ``repo`` (kzgit.hooks._mount)
        self.mounted = mounted and self.repo != root
        self._graph: Optional[Graph] = None
        self._changed: Optional["set[str]"] = None
        self._memos: "dict[str, dict[str, Any]]" = {}

    @property
    def files(self) -> List[str]:
        """Repo-relative files of the content checked, those ``exclude`` names included: the
        graph follows whatever a root reaches (``exclude`` only keeps kustomizations from
        being roots)."""
        if self._files is None:
            self._files = self._lister if isinstance(self._lister, list) else self._lister(self.cache)
        return self._files

    @property
    def own_files(self) -> List[str]:
        """:attr:`files` but those ``exclude`` names: what the hooks that look at files by
        themselves, not through a root (exec-bits, localized-sync), look at."""
        if self._own is None:
            exclude = self.config.exclude
            self._own = [f for f in self.files if not (exclude and glob_match(f, exclude))]
        return self._own

    @property
    def read(self) -> ReadFn:
        """Reads repo-relative paths of the content checked."""
        return disk_reader(self.root)

    @property
    def graph(self) -> Graph:
        """The dependency graph of the content checked (scanned once)."""
        if self._graph is None:
            resolve = disk_resolver(self.root)   # symbolic links, followed as builds follow them
            if self.cache is not None:
                self._graph = scan_cached(self.files, self.read, self.cache, roots=self.config.roots,
                                          exclude=self.config.exclude, resolve=resolve)
            else:
                self._graph = scan(self.files, self.read, roots=self.config.roots,
                                   exclude=self.config.exclude, resolve=resolve)
            if self._graph.unmatched:
                raise self._unmatched(self._graph.unmatched)
        return self._graph

    def _unmatched(self, unmatched: "List[Tuple[str, str]]") -> UsageError:
        """The configuration error for ``roots``/``exclude`` globs that select nothing: a typo
        would otherwise make every hook pass having checked nothing."""
        src = self.config.source or "configuration"
        prefix = "tool.kzgit." if src.endswith("pyproject.toml") else ""
        if os.path.isabs(src):
            src = os.path.relpath(src, self.repo)
        lines = [f"{src}: {prefix}{key}: '{glob}' " + ("selects no kustomization root" if key == "roots"
                                                       else "matches no file or directory")
                 for key, glob in unmatched]
        tips = []
        if any(key == "roots" for key, _ in unmatched):
            tips.append("a roots glob names directories holding a kustomization, or directories above "
                        "them, from the top of the repository; a component only by its own directory")
        if any(key == "exclude" for key, _ in unmatched):
            tips.append("an exclude glob names files or directories from the top of the repository")
        return UsageError("\n".join(lines), tip="; ".join(tips))

    def path(self, rel: str) -> str:
        """Absolute path of a repo-relative path in the content checked."""
        return os.path.join(self.root, *[p for p in rel.split("/") if p and p != "."])

    def memo(self, name: str) -> "dict[str, Any]":
        """A dictionary named ``name`` for what a run learns about the content once (it does
        not change while a hook runs)."""
        return self._memos.setdefault(name, {})

    @property
    def build_root(self) -> str:
        """Where builds see the content: ``repo`` for a mounted export, else ``root``."""
        return self.repo if self.mounted else self.root

    def build_path(self, rel: str) -> str:
        """Absolute path of a repo-relative path as builds see it (:attr:`build_root`)."""
        return os.path.join(self.build_root, *[p for p in rel.split("/") if p and p != "."])

    def build_fs(self) -> Optional[Any]:
        """The file system builds read (None: the disk)."""
        if not self.mounted:
            return None
        from kzgit.hooks._mount import MountedFS   # start-up: only the plain git hooks mount
        return MountedFS(self.root, self.repo)

    def relative(self, path: str) -> Optional[str]:
        """The repo-relative form of an absolute path a build named, if it is in the content."""
        for top in (self.root, self.build_root):
            rel = os.path.relpath(path, top)
            if not (rel == ".." or rel.startswith(".." + os.sep)):
                return rel.replace(os.sep, "/")
        return None

    def in_localized_area(self, rel: str) -> bool:
        """Whether ``rel`` lies where the configuration says localized copies live (``localized``)."""
        return not self.config.localized or glob_match(rel, self.config.localized)

    def is_changed(self, rel: str) -> bool:
        """Whether ``rel`` is among the changed files (always, with ``changed`` None)."""
        if self.changed is None:
            return True
        if self._changed is None:
            self._changed = set(self.changed)
        return rel in self._changed

    def relative_message(self, message: str) -> str:
        """:meth:`scrub`, then paths inside the repository made relative to its top, as the
        hooks name roots (``overlays/dev/kustomization.yaml``, not ``/home/.../overlays/...``)."""
        return repo_relative(self.scrub(message), self.repo)

    def scrub(self, message: str) -> str:
        """Replace the temporary export directory in a message by the repo's own path."""
        if self.root != self.repo:
            message = message.replace(os.path.realpath(self.root), self.repo)
            message = message.replace(self.root, self.repo)
        return message
