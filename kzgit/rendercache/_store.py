"""The render cache on the disk: ``<cache root>/renders/<k[:2]>/<key>/<variant>.kzr``.

A *key* names what a build's output depends on besides the files it reads
(the root, the options, the engine, kzgit's own code, the environment); a
key holds a few *variants*, one per set of recorded inputs (the base and
the head of a ``kzgit diff`` are two variants of one root).  An entry file is::

    KZGIT-RENDER 2\\n <sha256 of the header JSON, hex>\\n <header JSON>\\n <payload>

The header holds the key, what the build read (the trace), its verdict (the
error of a failed build) and the payload's length and sha256.  A caller that
needs only the verdict (the render hook) reads and verifies the header alone,
plus the file's length; a caller that uses the payload (``kzgit build``,
validate, diff) verifies it against the header's digest as well.

Entries are written to a temporary file in their directory and renamed
(atomic on POSIX: a reader sees a whole entry or none), so concurrent runs
need no lock.  An entry whose magic, checksum, length or key does not match
is ignored (and removed): it is rebuilt, never trusted; so is an entry of an
older layout.  Hits refresh the
entry's mtime; :meth:`Store.trim` removes the least recently used entries
beyond the size bound.
"""
from __future__ import annotations

import json
import os
import time

from kzgit.atomic import new_temp_file
from kzgit.sha import sha256

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, BinaryIO, Callable, Dict, Iterator, List, Optional, Tuple, TypeVar
    T = TypeVar("T")

MAGIC = b"KZGIT-RENDER 2\n"
SUFFIX = ".kzr"
# Variants kept per key: a root at a few revisions (base and head of a diff, a branch or two).
MAX_VARIANTS = 6
DEFAULT_SIZE_MB = 512
_STALE_TMP_SECONDS = 3600.0


class Store:
    """One render cache directory (picklable: worker processes open the same directory)."""

    def __init__(self, path: str, size_mb: int = DEFAULT_SIZE_MB) -> None:
        self.path = path
        self.max_bytes = size_mb * 1024 * 1024
        self.wrote = False

    # -- entries -------------------------------------------------------------------------------
    def _key_dir(self, key: str) -> str:
        return os.path.join(self.path, key[:2], key)

    def variants(self, key: str) -> List[str]:
        """Entry files of ``key``, most recently used first."""
        d = self._key_dir(key)
        try:
            names = [n for n in os.listdir(d) if n.endswith(SUFFIX)]
        except OSError:
            return []
        out: List[Tuple[float, str]] = []
        for n in names:
            p = os.path.join(d, n)
            try:
                out.append((os.stat(p).st_mtime, p))
            except OSError:
                continue
        return [p for _, p in sorted(out, reverse=True)]

    def read(self, path: str, key: str, payload: bool = True
             ) -> Optional[Tuple[Dict[str, Any], bytes]]:
        """(header, payload) of an entry of ``key``; None (and the file removed) if it is not one.

        ``payload=False``: the header alone (the payload comes back empty), for a caller that
        needs only the verdict; the header is verified, and the file's length against it.
        """
        try:
            with open(path, "rb") as f:
                parsed = _read_entry(f, key, payload)
        except OSError:
            return None
        if parsed is None:
            _remove(path)
        return parsed

    def lookup(self, key: str, accept: Callable[[Dict[str, Any], bytes], Optional[T]],
               payload: bool = True) -> Optional[T]:
        """The first entry of ``key`` (most recently used first) that ``accept`` turns into a
        value (None: not this one), marked used; None when no entry does."""
        for entry in self.variants(key):
            got = self.read(entry, key, payload)
            if got is None:
                continue
            value = accept(*got)
            if value is not None:
                self.touch(entry)
                return value
        return None

    def write(self, key: str, header: Dict[str, Any], payload: bytes) -> None:
        """Store an entry (best effort: an error leaves the cache as it was)."""
        header = dict(header, key=key, payload=len(payload),
                      payload_sha256=sha256(payload).hexdigest())
        head = json.dumps(header, sort_keys=True, separators=(",", ":")).encode("utf-8")
        variant = sha256(json.dumps(header.get("trace")).encode("utf-8")).hexdigest()[:24]
        blob = b"".join((MAGIC, sha256(head).hexdigest().encode("ascii"), b"\n", head, b"\n",
                         payload))
        d = self._key_dir(key)
        tmp = None
        try:
            os.makedirs(d, exist_ok=True)
            fd, tmp = new_temp_file(d, ".tmp-")
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
            os.replace(tmp, os.path.join(d, variant + SUFFIX))
            tmp = None
            self.wrote = True
        except OSError:
            pass
        finally:
            if tmp is not None:
                _remove(tmp)
        for old in self.variants(key)[MAX_VARIANTS:]:
            _remove(old)

    @staticmethod
    def touch(path: str) -> None:
        """Mark an entry used now (what least-recently-used eviction goes by)."""
        try:
            os.utime(path)
        except OSError:
            pass

    # -- the whole cache -----------------------------------------------------------------------
    def _entries(self) -> Iterator[Tuple[str, os.stat_result]]:
        for top, _dirs, files in os.walk(self.path):
            for n in files:
                p = os.path.join(top, n)
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                if n.startswith(".tmp-"):
                    if time.time() - st.st_mtime > _STALE_TMP_SECONDS:
                        _remove(p)    # left by a run that was killed while writing
                    continue
                if n.endswith(SUFFIX):
                    yield p, st

    def info(self) -> Dict[str, Any]:
        """Entries, their total size, where, the bound."""
        entries = list(self._entries())
        return {"path": self.path, "entries": len(entries),
                "bytes": sum(st.st_size for _, st in entries), "max_bytes": self.max_bytes}

    def trim(self) -> int:
        """Remove least recently used entries until the cache fits its bound; how many went."""
        entries = sorted(self._entries(), key=lambda e: e[1].st_mtime)
        total = sum(st.st_size for _, st in entries)
        removed = 0
        for p, st in entries:
            if total <= self.max_bytes:
                break
            if _remove(p):
                removed += 1
            total -= st.st_size
        _prune_dirs(self.path)
        return removed

    def clear(self) -> int:
        """Remove every entry; how many there were."""
        n = 0
        for p, _ in list(self._entries()):
            n += _remove(p)
        _prune_dirs(self.path)
        return n


def open_store(root: str, size_mb: int = DEFAULT_SIZE_MB) -> Tuple[Optional[Store], Optional[str]]:
    """The store at ``root``, or None and why it cannot be written (a warning, not an error)."""
    try:
        os.makedirs(root, exist_ok=True)
        fd, probe = new_temp_file(root, ".tmp-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        return None, (f"the render cache {root} is not writable ({e.strerror or e}); "
                      "building without it")
    return Store(root, size_mb), None


def _read_entry(f: BinaryIO, key: str, payload: bool) -> Optional[Tuple[Dict[str, Any], bytes]]:
    """The (header, payload) of the entry open as ``f`` if it is a whole entry of ``key``."""
    if f.readline(len(MAGIC)) != MAGIC:
        return None
    digest = f.readline(65)
    # no size limit: BufferedReader.readline(n) allocates n bytes up front, and a damaged
    # entry read whole costs what reading an entry whole always did
    head = f.readline()
    if not (digest.endswith(b"\n") and head.endswith(b"\n")):
        return None
    head = head[:-1]
    if sha256(head).hexdigest().encode("ascii") != digest[:-1]:
        return None
    try:
        header = json.loads(head)
    except ValueError:
        return None
    if not isinstance(header, dict) or header.get("key") != key:
        return None
    size = header.get("payload")
    if not isinstance(size, int) or isinstance(size, bool):
        return None
    start = f.tell()
    if not payload:
        # a truncated or extended file is not trusted even when its payload is not read
        return (header, b"") if os.fstat(f.fileno()).st_size == start + size else None
    data = f.read(size + 1)
    if len(data) != size or sha256(data).hexdigest() != header.get("payload_sha256"):
        return None
    return header, data


def _remove(path: str) -> bool:
    try:
        os.unlink(path)
        return True
    except OSError:
        return False


def _prune_dirs(root: str) -> None:
    for top, dirs, files in os.walk(root, topdown=False):
        if top != root and not dirs and not files:
            try:
                os.rmdir(top)
            except OSError:
                pass
