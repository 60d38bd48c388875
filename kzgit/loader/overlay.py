"""A file system showing some files over another (nothing written to the disk).

Builds of a tree as it would be after an edit (``kzgit fix``'s proof) or as a controller
changes it before building (a kustomization Flux generates, Argo CD's ``kustomize edit``
commands, :mod:`kzgit.gitops`) read through it.
"""
from __future__ import annotations

import posixpath

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List, Set, Tuple
    from kzgit.loader import FileSystem


class OverlayFS:
    """A :class:`kzgit.loader.FileSystem` showing ``files`` (absolute path -> bytes) over
    ``base``; the directories holding them exist too."""

    def __init__(self, base: FileSystem, files: Dict[str, bytes]) -> None:
        self.base = base
        self.files = dict(files)
        self.dirs: Set[str] = set()
        for p in self.files:
            d = posixpath.dirname(p)
            while d not in self.dirs and d != "/":
                self.dirs.add(d)
                d = posixpath.dirname(d)

    # Equal overlays are one file system: the bases a run shares between roots
    # (kzgit.builder.cache, keyed by the file system) are found again in each worker's copy.
    def _key(self) -> Tuple[Any, ...]:
        from kzgit.sha import sha256   # start-up: only the proof builds overlays
        return (type(self.base).__name__, tuple(sorted((p, sha256(b).hexdigest()) for p, b in self.files.items())))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OverlayFS) and type(other.base) is type(self.base) \
            and other.files == self.files

    def __hash__(self) -> int:
        return hash(self._key())

    def read_bytes(self, path: str) -> bytes:
        got = self.files.get(path)
        return self.base.read_bytes(path) if got is None else got

    def is_dir(self, path: str) -> bool:
        return (path in self.dirs and not self.base.is_file(path)) or self.base.is_dir(path)

    def is_file(self, path: str) -> bool:
        return path in self.files or self.base.is_file(path)

    def exists(self, path: str) -> bool:
        return path in self.files or path in self.dirs or self.base.exists(path)

    def realpath(self, path: str) -> str:
        if path in self.files or (path in self.dirs and not self.base.exists(path)):
            return path
        return self.base.realpath(path)

    def listdir(self, path: str) -> List[str]:
        names = set(self.base.listdir(path)) if self.base.is_dir(path) else set()
        prefix = path.rstrip("/") + "/"
        for p in list(self.files) + list(self.dirs):
            if p.startswith(prefix):
                names.add(p[len(prefix):].split("/", 1)[0])
        return sorted(names)
