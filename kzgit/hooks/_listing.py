"""The work tree's top and the files of the git index, with one git run when nothing changed.

A hook under the pre-commit framework (or ``kzgit hook ... --all``) needs two answers from
git: where the work tree's top is, and which files the index holds.  One ``git rev-parse``
gives the top and where the index file is (``GIT_INDEX_FILE`` honoured, as ``git commit -a``
sets it).  The index file ends with a checksum of its own content (git's
``Documentation/gitformat-index.txt``: "SHA-1 over the content of the index file before
this checksum"), and ``git ls-files --cached`` prints a function of that content alone, so
the render cache keeps the list under that checksum: while the index is unchanged, the
list is read from the cache and ``git ls-files`` does not run.  An index written without
the checksum (``index.skipHash``, all zeros) is listed by git every time.
"""
from __future__ import annotations

import json
import os

from kzgit import gitio
from kzgit.errors import KzgitError, UsageError
from kzgit.sha import sha256

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import List, Optional, Tuple
    from kzgit.rendercache import Store

FORMAT = 1
_SIGNATURE = b"DIRC"
_TRAILER = 20   # the last bytes of a SHA-1 checksum, or of a SHA-256 one (sha256 repositories)


def top_and_index(cwd: str = ".") -> "Tuple[str, Optional[str]]":
    """The work tree's top (as :func:`kzgit.gitio.repo_root`) and the absolute path of the
    index git uses there (None when the answer cannot be read unambiguously)."""
    try:
        out = gitio.git(["rev-parse", "--show-toplevel", "--git-path", "index"], cwd)
    except KzgitError:
        raise UsageError(f"'{os.path.abspath(cwd)}' is not inside a git work tree") from None
    lines = out.decode("utf-8", "surrogateescape").split("\n")
    if len(lines) != 3 or lines[2] or not lines[0]:
        # a newline inside a path: ask for the top alone, and do not guess the index
        return gitio.repo_root(cwd), None
    return lines[0], os.path.join(os.path.abspath(cwd), lines[1])


def _checksum(index: str) -> "Optional[str]":
    """The checksum that ends the index file ``index`` (hex), or None: no index, not an
    index, or one written without a checksum."""
    try:
        with open(index, "rb") as f:
            if f.read(len(_SIGNATURE)) != _SIGNATURE:
                return None
            size = os.fstat(f.fileno()).st_size
            if size < 12 + _TRAILER:
                return None
            f.seek(size - _TRAILER)
            trailer = f.read(_TRAILER)
    except OSError:
        return None
    return None if trailer.count(0) == len(trailer) else trailer.hex()


def index_files(top: str, index: "Optional[str]", store: "Optional[Store]") -> "List[str]":
    """``git ls-files --cached`` at ``top``: from ``store`` while the index file ``index`` has
    the checksum it had when git listed it."""
    before = _checksum(index) if index is not None and store is not None else None
    if before is None or index is None or store is None:
        return gitio.index_files(top)
    key = sha256(json.dumps(["index-files", FORMAT, top, index, before]).encode(
        "utf-8", "surrogateescape")).hexdigest()
    for entry in store.variants(key):
        got = store.read(entry, key)
        if got is not None:
            store.touch(entry)
            return gitio._z(got[1])
    listed = gitio.git(["ls-files", "-z", "--cached"], top)
    if _checksum(index) == before:   # not rewritten while git listed it
        store.write(key, {"trace": None}, listed)
    return gitio._z(listed)
