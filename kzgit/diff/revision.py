"""One side of a ``kzgit diff``: a commit read from git objects, or the working tree.

A :class:`Revision` gives the dependency graph what it needs (the file list
and a read function) and the build a :class:`~kzgit.loader.FileSystem`: a
:class:`~kzgit.diff.gittree.GitTreeFS` mounted at the repository's path for a
commit, the disk for the working tree.  Code that runs binaries (exec and KRM
plugins, helm, an external engine) reads paths on the disk itself, so for
those a commit is exported once into a temporary directory *outside* the
repository (:meth:`Revision.on_disk`), removed when the diff ends, Ctrl-C
included.
"""
from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, List, Optional

from kzgit import gitio
from kzgit.config import Config, config_from_reader, settings_table
from kzgit.diff.gittree import GitTreeFS, changed_between
from kzgit.errors import BuildError, KzgitError, UsageError
from kzgit.graph import ReadFn, disk_reader
from kzgit.loader import DiskFS, FileSystem, is_within
from kzgit.paths import repo_relative

WORKTREE_LABEL = "working tree"


class Revision:
    """The content of one side of the diff."""

    def __init__(self, repo: str, rev: Optional[str], commit: Optional[str],
                 fs: FileSystem, files: List[str], read: ReadFn,
                 cleanup: contextlib.ExitStack) -> None:
        self.repo = repo          # the repository's real path (where the content is mounted)
        self.rev = rev            # as the user wrote it; None for the working tree
        self.commit = commit      # full SHA; None for the working tree
        self.fs = fs
        self.files = files        # repo-relative
        self.read = read
        self._cleanup = cleanup
        self._disk: Optional[str] = None if commit else repo
        self.disk_only = False    # read from the export only (objects git must fetch first)
        # a file's git blob id without reading it, when it is what kzgit.rendercache's blob_id
        # of its content gives: in a commit of a SHA-1 repository
        self.blob_of: Optional[Callable[[str], Optional[str]]] = None

    @property
    def label(self) -> str:
        """How messages name this side: the revision as written, or "working tree"."""
        return self.rev if self.rev is not None else WORKTREE_LABEL

    @property
    def is_worktree(self) -> bool:
        return self.commit is None

    def on_disk(self) -> str:
        """A directory on the disk holding this content (exported once, outside the repository)."""
        if self._disk is None:
            assert self.commit is not None
            # start-up: tempfile (and the shutil it imports) only for a revision exported to the disk
            import shutil
            import tempfile
            tmp = tempfile.mkdtemp(prefix=f"kzgit-diff-{self.commit[:12]}-")
            self._cleanup.callback(shutil.rmtree, tmp, ignore_errors=True)
            real = os.path.realpath(tmp)
            if is_within(real, self.repo):
                raise UsageError(f"the temporary directory '{real}' is inside the repository",
                                 tip="point TMPDIR outside the repository")
            gitio.export_rev(self.repo, self.commit, real)
            self._disk = real
        return self._disk

    def scrub(self, message: str) -> str:
        """Replace a temporary export's path in a message by the repository's."""
        if self._disk and self._disk != self.repo:
            message = message.replace(self._disk, self.repo)
        return message

    def relative(self, message: str) -> str:
        """:meth:`scrub`, then paths inside the repository made relative to its top, as the
        hooks write them (``base/kustomization.yaml: resources: ...``)."""
        return repo_relative(self.scrub(message), self.repo)

    def config(self) -> Config:
        """The kzgit configuration this side holds (``REV:.kzgit.toml`` in messages)."""
        prefix = f"{self.rev}:" if self.rev is not None else ""
        return config_from_reader(lambda name: self.read(name) if name in self._file_set() else None,
                                  lambda name: prefix + name)

    def settings(self) -> Any:
        """This side's settings as written (:func:`kzgit.config.settings_table`)."""
        return settings_table(lambda name: self.read(name) if name in self._file_set() else None)

    def _file_set(self) -> "set[str]":
        return set(self.files)


class ConfinedDiskFS(DiskFS):
    """The disk below ``top`` only: an export of a revision under review reads nothing else,
    whatever its symlinks, or ``../`` paths under ``LoadRestrictionsNone``, point at."""

    def __init__(self, top: str) -> None:
        self.top = os.path.realpath(top)

    def _inside(self, path: str) -> bool:
        return is_within(os.path.realpath(path), self.top)

    def read_bytes(self, path: str) -> bytes:
        if not self._inside(path):
            raise BuildError(f"'{path}' resolves outside the repository; kzgit diff reads a "
                             "revision's own files only")
        return super().read_bytes(path)

    def is_dir(self, path: str) -> bool:
        return self._inside(path) and super().is_dir(path)

    def is_file(self, path: str) -> bool:
        return self._inside(path) and super().is_file(path)

    def listdir(self, path: str) -> List[str]:
        if not self._inside(path):
            raise FileNotFoundError(path)
        return super().listdir(path)


def open_commit(repo: str, rev: str, cleanup: contextlib.ExitStack, commit: Optional[str] = None,
                partial: Optional[bool] = None) -> Revision:
    """The commit ``rev`` names, read from git objects.  ``commit`` (its full id) and ``partial``
    (whether ``repo`` is a partial clone) are asked of git unless the caller did already."""
    commit = commit or gitio.resolve_commit(repo, rev)
    if partial if partial is not None else gitio.is_partial_clone(repo):
        return _exported(repo, rev, commit, cleanup)
    try:
        fs = GitTreeFS(repo, commit)
    except KzgitError as e:
        raise UsageError(f"cannot read revision '{rev}' ({commit}) in {repo}: {e}") from None
    side = Revision(repo, rev, commit, fs, fs.files(), fs.read_rel, cleanup)
    if len(commit) == 40:   # SHA-1: a blob's id is the hash of its content, as blob_id computes
        side.blob_of = fs.blob_rel
    return side


def _exported(repo: str, rev: str, commit: str, cleanup: contextlib.ExitStack) -> Revision:
    """A commit of a partial clone: git fetches what the filter left out while exporting it,
    and the whole revision is then read from the export."""
    files = gitio.rev_files(repo, commit)
    side = Revision(repo, rev, commit, DiskFS(), files, lambda rel: None, cleanup)
    side.read = disk_reader(side.on_disk())
    side.disk_only = True
    return side


def open_worktree(repo: str, cleanup: contextlib.ExitStack) -> Revision:
    """The working tree: tracked files (staged and unstaged changes) and untracked, unignored ones."""
    files = [f for f in gitio.worktree_files(repo)
             if os.path.lexists(os.path.join(repo, *f.split("/")))]
    return Revision(repo, None, None, DiskFS(), sorted(set(files)), disk_reader(repo), cleanup)


def changed_paths(base: Revision, head: Revision) -> List[str]:
    """Repo-relative paths that differ between the two sides."""
    assert base.commit is not None
    if head.commit is None:
        return gitio.worktree_changes(base.repo, base.commit)
    if isinstance(base.fs, GitTreeFS) and isinstance(head.fs, GitTreeFS):
        return changed_between(base.fs, head.fs)   # both trees are listed already: no git run
    return gitio.changed_between(base.repo, base.commit, head.commit) or []
