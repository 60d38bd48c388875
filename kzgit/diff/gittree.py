"""A read-only :class:`kzgit.loader.FileSystem` over a git commit's tree, read with git itself.

``kzgit diff`` renders a revision straight from git objects: no checkout, no
worktree, nothing written.  The tree is *mounted* at an absolute path (the
repository's own path, so build messages name the files a user knows) and
behaves as the disk would under it: symlinks stored in the tree are followed
for ``realpath``, ``is_dir``, ``is_file`` and ``read_bytes`` (not for
``exists``, which is ``lexists``), a missing path raises
:class:`FileNotFoundError`, a submodule is an empty directory (what a
checkout without ``--recurse-submodules`` leaves).

A path outside the mount (an absolute symlink, or ``..`` above the top) is
never looked up on the disk: ``realpath`` returns it unresolved so the load
restrictor can name it, and reading it is a :class:`~kzgit.errors.BuildError`.

The tree's entries come from one ``git ls-tree`` when the file system is made;
file contents and symlink targets from the repository's ``git cat-file --batch``
(:mod:`kzgit.gitio.objects`), looked up by pid at each read, so a forked render
worker holding a copy of this object reads through its own.
"""
from __future__ import annotations

import errno
import posixpath
from typing import Dict, List, Optional, Tuple

from kzgit.errors import BuildError
from kzgit.gitio import objects
from kzgit.gitio.objects import Entry
from kzgit.loader import MAX_FILE_BYTES

# git tree entry modes (object type bits of the filemode)
_TYPE_MASK = 0o170000
_TREE = 0o040000
_BLOB = 0o100000
_LINK = 0o120000
_COMMIT = 0o160000    # a submodule (gitlink)
# Linux's MAXSYMLINKS: a longer chain is a loop (ELOOP), as on the disk.
_MAX_LINKS = 40


class _Outside(Exception):
    """The path leaves the mounted tree; ``path`` is where it points."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


class GitTreeFS:
    """The files of the tree of ``commit`` in the repository ``repo``, mounted at the absolute
    path ``mount`` (the repository's own path unless given)."""

    def __init__(self, repo: str, commit: str, mount: Optional[str] = None) -> None:
        self.repo = repo
        self.commit = commit
        self.mount = posixpath.normpath(mount or repo)
        self.entries = objects.list_tree(repo, commit)
        self._root: Entry = (_TREE, "")
        # directory (tuple of real, symlink-free components) -> its entries; a submodule is
        # an empty directory
        self._dirs: Dict[Tuple[str, ...], Dict[str, Entry]] = {(): {}}
        for path, entry in self.entries.items():
            parts = tuple(path.split("/"))
            self._dirs.setdefault(parts[:-1], {})[parts[-1]] = entry
            if entry[0] & _TYPE_MASK in (_TREE, _COMMIT):
                self._dirs.setdefault(parts, {})

    # -- the tree ------------------------------------------------------------------------
    def _object(self, oid: str, what: str, limit: Optional[int] = None) -> bytes:
        try:
            return objects.reader(self.repo).read(oid, limit)
        except objects.ObjectMissing:
            # what a partial (blobless/treeless) clone left out, read without fetching it
            raise BuildError(f"'{what}': git object {oid} is not in the repository "
                             "(a partial clone?); fetch it, or clone without --filter") from None
        except objects.ObjectTooLarge:
            raise BuildError(f"'{what}' is larger than {MAX_FILE_BYTES} bytes") from None

    def _entries(self, parts: Tuple[str, ...]) -> Optional[Dict[str, Entry]]:
        """Entries of the directory ``parts``; None when it is not a directory."""
        return self._dirs.get(parts)

    def _inside(self, path: str) -> bool:
        return path == self.mount or path.startswith(self.mount.rstrip("/") + "/")

    def _rel_parts(self, path: str) -> List[str]:
        """Components of ``path`` below the mount (``..`` kept: it is resolved after symlinks)."""
        if not path.startswith("/"):
            raise FileNotFoundError(errno.ENOENT, "not an absolute path", path)
        if not self._inside(path):
            norm = posixpath.normpath(path)
            if not self._inside(norm):
                raise _Outside(norm)
            path = norm
        return [p for p in path[len(self.mount):].split("/") if p not in ("", ".")]

    def _walk(self, path: str, follow_last: bool) -> Tuple[str, Entry]:
        """(real path, entry) of ``path``; FileNotFoundError / NotADirectoryError / ELOOP / _Outside."""
        pending = self._rel_parts(path)
        real: List[str] = []
        entry = self._root
        links = 0
        while pending:
            name = pending.pop(0)
            if name in ("", "."):
                continue
            if name == "..":
                if not real:
                    raise _Outside(posixpath.normpath("/".join([self.mount, "..", *pending])))
                real.pop()
                entry = self._lookup(real)
                continue
            entries = self._entries(tuple(real))
            if entries is None:
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory", path)
            found = entries.get(name)
            if found is None:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
            if found[0] & _TYPE_MASK == _LINK and (pending or follow_last):
                links += 1
                if links > _MAX_LINKS:
                    raise OSError(errno.ELOOP, "Too many levels of symbolic links", path)
                target = self._object(found[1], path).decode("utf-8", "surrogateescape")
                if target.startswith("/"):
                    real, entry = [], self._root
                    pending = self._rel_parts("/".join([target, *pending]))
                else:
                    pending = [p for p in target.split("/") if p] + pending
                continue
            real.append(name)
            entry = found
        return "/".join([self.mount, *real]) if real else self.mount, entry

    def _lookup(self, real: List[str]) -> Entry:
        if not real:
            return self._root
        entries = self._entries(tuple(real[:-1]))
        assert entries is not None and real[-1] in entries  # real was walked already
        return entries[real[-1]]

    def _kind(self, path: str, follow: bool = True) -> Optional[int]:
        """The type bits of what ``path`` names, or None when there is nothing there."""
        try:
            return self._walk(path, follow)[1][0] & _TYPE_MASK
        except (OSError, _Outside):
            return None

    # -- kzgit.loader.FileSystem -----------------------------------------------------------
    def read_bytes(self, path: str) -> bytes:
        try:
            real, (mode, oid) = self._walk(path, True)
        except _Outside as o:
            raise BuildError(f"'{path}' resolves to '{o.path}', outside the repository; "
                             "kzgit diff reads a revision from git objects only") from None
        if mode & _TYPE_MASK != _BLOB:
            raise BuildError(f"'{path}' is not a regular file")
        return self._object(oid, path, MAX_FILE_BYTES)

    def blob_id(self, path: str) -> str:
        """The git object id of the file ``path`` names, without reading it: what the render
        cache records for a file (a file on the disk is keyed by the same id)."""
        try:
            _, (mode, oid) = self._walk(path, True)
        except _Outside as o:
            raise BuildError(f"'{path}' resolves to '{o.path}', outside the repository") from None
        if mode & _TYPE_MASK != _BLOB:
            raise BuildError(f"'{path}' is not a regular file")
        return oid

    def is_dir(self, path: str) -> bool:
        return self._kind(path) in (_TREE, _COMMIT)

    def is_file(self, path: str) -> bool:
        return self._kind(path) == _BLOB

    def exists(self, path: str) -> bool:
        return self._kind(path, follow=False) is not None

    def realpath(self, path: str) -> str:
        try:
            return self._walk(path, True)[0]
        except _Outside as o:
            return o.path
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise BuildError(f"evalsymlink failure on '{path}' : too many links") from None
            raise

    def listdir(self, path: str) -> List[str]:
        try:
            real, (mode, _) = self._walk(path, True)
        except _Outside:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path) from None
        entries = self._entries(tuple(self._rel_parts(real)))
        if entries is None:
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", path)
        return sorted(entries)

    # -- for the dependency graph ----------------------------------------------------------
    def files(self) -> List[str]:
        """Repo-relative paths of every blob and symlink in the tree (as ``git ls-tree -r``)."""
        return sorted(p for p, (mode, _) in self.entries.items()
                      if mode & _TYPE_MASK in (_BLOB, _LINK))

    def blob_rel(self, rel: str) -> Optional[str]:
        """The blob id of a repo-relative file, where :meth:`read_rel` would read one; else None."""
        try:
            return self.blob_id(posixpath.join(self.mount, rel))
        except (OSError, BuildError):
            return None

    def read_rel(self, rel: str) -> Optional[bytes]:
        """Bytes of a repo-relative file (symlinks inside the tree followed); None when unreadable."""
        try:
            return self.read_bytes(posixpath.join(self.mount, rel))
        except (OSError, BuildError):
            return None


def changed_between(old: GitTreeFS, new: GitTreeFS) -> List[str]:
    """Repo-relative paths whose entry differs between two trees, sorted: what
    ``git diff --name-only --no-renames OLD NEW`` prints (a file, symlink or submodule added,
    removed, or changed in mode or object), from the listings already made."""
    def leaves(fs: GitTreeFS) -> "set[Tuple[str, Entry]]":
        return {(p, e) for p, e in fs.entries.items() if e[0] & _TYPE_MASK != _TREE}
    return sorted({p for p, _ in leaves(old) ^ leaves(new)})
