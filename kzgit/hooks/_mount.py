"""A temporary export of the index or of a commit, seen by builds at the repository's path.

The plain git hooks check what is being committed or pushed: git exports it into a
temporary directory (a new one each run).  Built there, a root's render-cache key
(its path) and everything its build read (paths under the export) would change on
every run, so nothing could ever be reused.  :class:`MountedFS` shows the export at
the repository's own path instead, as ``kzgit diff`` mounts a git tree there: the
render cache then keys a root as a work-tree build does, and what the build read is
recorded by content (git blob ids), so the same staged content renders once, and a
work-tree render of identical files is reused by the hook.  Messages name the
repository's files, as the user knows them.

Only the builtin engine without external plugins reads files through the build's file
system; programs (exec and KRM plugins, helm, an external engine) read the disk, so
for those the export itself is built (and not cached).
"""
from __future__ import annotations

import os

from kzgit.errors import KzgitError
from kzgit.loader import DiskFS

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, List


class MountedFS:
    """The directory ``top`` on the disk, seen at the absolute path ``mount`` (a
    :class:`kzgit.loader.FileSystem`); paths outside ``mount`` are the disk's own."""

    def __init__(self, top: str, mount: str) -> None:
        self.top = os.path.realpath(top)
        self.mount = os.path.normpath(mount)
        self._disk = DiskFS()

    def _on_disk(self, path: str) -> str:
        return _moved(path, self.mount, self.top)

    def _shown(self, path: str) -> str:
        return _moved(path, self.top, self.mount)

    def _ask(self, fn: "Callable[[str], Any]", path: str) -> "Any":
        try:
            return fn(self._on_disk(path))
        except KzgitError as e:
            # the message names the file as the build asked for it, never the export
            e2 = e.reworded(e.message.replace(self.top, self.mount))
            if e2.lead:
                e2.lead = e2.lead.replace(self.top, self.mount)
            raise e2 from None
        except OSError as e:
            if e.errno is None:
                raise type(e)(str(e).replace(self.top, self.mount)) from None
            raise type(e)(e.errno, e.strerror, path) from None

    def read_bytes(self, path: str) -> bytes:
        data: bytes = self._ask(self._disk.read_bytes, path)
        return data

    def is_dir(self, path: str) -> bool:
        return bool(self._ask(self._disk.is_dir, path))

    def is_file(self, path: str) -> bool:
        return bool(self._ask(self._disk.is_file, path))

    def exists(self, path: str) -> bool:
        return bool(self._ask(self._disk.exists, path))

    def realpath(self, path: str) -> str:
        return self._shown(self._ask(self._disk.realpath, path))

    def listdir(self, path: str) -> "List[str]":
        names: List[str] = self._ask(self._disk.listdir, path)
        return names


def _moved(path: str, src: str, dst: str) -> str:
    """``path`` with the directory ``src`` it lies in replaced by ``dst`` (else unchanged)."""
    if path == src:
        return dst
    if path.startswith(src + "/"):
        return dst + path[len(src):]
    return path
