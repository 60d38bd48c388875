"""A commit's files read from git objects with git itself: no checkout, no libgit2.

Two programs per repository, whatever the number of files:

* :func:`list_tree`: one ``git ls-tree -r -t -z --full-tree COMMIT`` lists every entry of the
  commit's tree (mode, object id, path), directories included.  The whole tree at once rather
  than trees read lazily through the batch below, because every user of a revision needs the
  whole list anyway (``kzgit diff``'s dependency graph looks at every file), and ``ls-tree``
  walks all the trees inside one process where reading them one by one costs a round trip per
  directory.
* :func:`reader`: one long-lived ``git cat-file --batch`` (:class:`kzgit.proc.BatchProcess`)
  answers blob reads (file contents, symlink targets) one after another.  It is started at the
  first read only: a run whose renders all come from the render cache never starts it.

Object ids are whatever the repository uses (SHA-1 or SHA-256): they are passed along as git
prints them.  A reader belongs to the process that started it; a forked render worker starts
its own (:func:`reader` keys them by pid), and :func:`close_readers` stops this process's.
pygit2 is not used here: importing it costs about half a small build's CPU time.
"""
from __future__ import annotations

import os
from typing import Dict, Optional, Tuple

from kzgit import gitio, proc
from kzgit.errors import KzgitError, UsageError

#: (mode, object id) of a tree entry, the mode as an int (0o100644, 0o040000, 0o160000...)
Entry = Tuple[int, str]


class ObjectMissing(KzgitError):
    """The repository does not hold the object (a partial clone left it out, or it is damaged)."""


class ObjectTooLarge(KzgitError):
    """The object is larger than the limit the caller set; ``size`` is its size."""

    def __init__(self, oid: str, size: int) -> None:
        super().__init__(f"git object {oid} is {size} bytes")
        self.size = size


def list_tree(repo: str, commit: str) -> Dict[str, Entry]:
    """Every entry of the tree of ``commit`` by repo-relative path (directories included)."""
    out = gitio.git(["ls-tree", "-r", "-t", "-z", "--full-tree", commit], repo)
    entries: Dict[str, Entry] = {}
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, _kind, oid = meta.split(b" ")
        entries[path.decode("utf-8", "surrogateescape")] = (int(mode, 8), oid.decode("ascii"))
    return entries


class ObjectReader:
    """The objects of one repository, read through one ``git cat-file --batch``."""

    def __init__(self, repo: str, timeout: float = gitio.GIT_TIMEOUT) -> None:
        self.repo = repo
        self.timeout = timeout
        self._batch: Optional[proc.BatchProcess] = None

    @property
    def batch(self) -> Optional[proc.BatchProcess]:
        """The running ``git cat-file`` (None before the first read, and after :meth:`close`)."""
        return self._batch

    def read(self, oid: str, limit: Optional[int] = None) -> bytes:
        """The content of object ``oid``; :class:`ObjectMissing`, or :class:`ObjectTooLarge`
        when it has more than ``limit`` bytes."""
        try:
            return self._read(oid, limit)
        except (EOFError, BrokenPipeError):
            # The program ended between two reads (killed with the thread that started it,
            # PR_SET_PDEATHSIG): one new start, then its failure is the answer.
            self.close()
            try:
                return self._read(oid, limit)
            except (EOFError, BrokenPipeError):
                stderr = self._batch.stderr if self._batch is not None else b""
                self.close()
                tail = proc.stderr_tail(stderr)
                raise KzgitError(f"git cat-file stopped answering in {self.repo}"
                                 + (f": {tail}" if tail else "")) from None

    def _read(self, oid: str, limit: Optional[int]) -> bytes:
        batch = self._start()
        try:
            batch.send(oid.encode("ascii") + b"\n")
            header = batch.read_line()
            fields = header.split()
            if len(fields) != 3:
                raise ObjectMissing(f"git object {oid} is not in the repository")
            size = int(fields[2])
            if limit is not None and size > limit:
                self.close()   # its answer is not read: the next read starts a new one
                raise ObjectTooLarge(oid, size)
            data = batch.read_exact(size + 1)   # the content, then a newline
        except TimeoutError:
            self.close()
            raise KzgitError(f"git cat-file timed out after {self.timeout:g}s in {self.repo}") from None
        return data[:-1]

    def _start(self) -> proc.BatchProcess:
        if self._batch is None or self._batch.closed:
            try:
                self._batch = proc.BatchProcess(["git", "cat-file", "--batch"], cwd=self.repo,
                                                timeout=self.timeout)
            except FileNotFoundError:
                raise UsageError("git is not installed (not found on PATH)") from None
            except OSError as e:
                raise KzgitError(f"cannot run git cat-file: {e.strerror or e}") from None
        return self._batch

    def close(self) -> None:
        if self._batch is not None:
            self._batch.close()


# The readers of this process by (pid, repository): a forked worker inherits its parent's
# entries but must not use their pipes (both would read the same answers).
_READERS: Dict[Tuple[int, str], ObjectReader] = {}


def reader(repo: str) -> ObjectReader:
    """This process's reader of ``repo``'s objects (its ``git cat-file`` starts at the first read)."""
    key = (os.getpid(), repo)
    if key not in _READERS:
        _READERS[key] = ObjectReader(repo)
    return _READERS[key]


def close_readers() -> None:
    """Stop this process's ``git cat-file`` programs (a forked child forgets its parent's)."""
    pid = os.getpid()
    for key in list(_READERS):
        r = _READERS.pop(key)
        if key[0] == pid:
            r.close()
