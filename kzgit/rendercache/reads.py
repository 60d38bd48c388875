"""What one build read, and whether it still reads the same.

A :class:`Recorder` is installed for the duration of one build
(:data:`kzgit.loader.RECORDER`); every :class:`~kzgit.loader.Loader` of that
build hands it its file system, which it wraps in a :class:`RecordingFS`.  Each
question the build asks a file system is recorded with its answer: a file's
git blob id (so a file on the disk and the same file in a git tree are one
input), a directory's listing, a path's existence, type or real path (a
symlink's target), or the error the question raised.  The answers are the
inputs: a later build of the same root that would get the same answers to all
of them reads the same bytes and makes the same decisions, so it renders the
same output.

Some builds read what no file system question covers: exec plugins and KRM
functions (binaries, the plugin home), helm (charts, repositories), files
fetched over HTTP, remote bases whose ref is not a commit.  Each kustomization
read is inspected for helm and HTTP entries, and an external plugin marks the
build when it is about to run (:func:`kzgit.loader.mark_uncacheable`); a build that uses one
is not cached.
"""
from __future__ import annotations

import os
import posixpath
import stat

from kzgit.loader import KUSTOMIZATION_FILE_NAMES, DiskFS, FileSystem
from kzgit.sha import sha1, sha256

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, List, Optional, Tuple
    from kzgit.loader import Loader

# Kustomization fields whose builds run what no file system question covers: helm
# (kustomize api/internal/target/kusttarget_configplugin.go).  generators, transformers
# and validators entries are plugin configs read through the loader (recorded); one that
# names an external plugin (exec, KRM function, container) marks the build uncacheable
# where it runs (kzgit.plugins.external), builtin ones (apiVersion: builtin) are cached.
_PLUGIN_FIELDS = ("helmCharts", "helmChartInflationGenerator")
# Fields whose entries may be files fetched over HTTP (kusttarget.go accumulateResources,
# and the plugin config loading of kusttarget_configplugin.go).
_TARGET_FIELDS = ("resources", "bases", "components", "generators", "transformers", "validators")

MAIN, DISK = "m", "d"   # the build's own file system; the disk (a remote checkout)
REMOTE = "r"            # a remote reference: the commit its tag or branch resolves to

if TYPE_CHECKING:  # pragma: no cover
    Trace = List[List[Any]]
    """``[fs tag, question, path, answer]`` rows, JSON-friendly."""


def blob_id(data: bytes) -> str:
    """git's object id of a blob holding ``data`` (``git hash-object``)."""
    h = sha1(b"blob %d\0" % len(data))  # noqa: S324 - git's id, not a secret
    h.update(data)
    return h.hexdigest()


def _error(e: BaseException) -> List[str]:
    return ["!", type(e).__name__, str(e)]


def _listing(names: List[str]) -> str:
    return sha256("\0".join(names).encode("utf-8", "surrogateescape")).hexdigest()


def ask(fs: FileSystem, question: str, path: str) -> Any:
    """The answer ``fs`` gives now to ``question`` about ``path`` (what :class:`RecordingFS` records)."""
    try:
        if question == "read":
            fast = getattr(fs, "blob_id", None)
            if fast is not None:
                return fast(path)
            return blob_id(fs.read_bytes(path))
        if question == "list":
            return _listing(fs.listdir(path))
        if question == "real":
            return fs.realpath(path)
        if question == "dir":
            return fs.is_dir(path)
        if question == "file":
            return fs.is_file(path)
        return fs.exists(path)
    except Exception as e:  # noqa: BLE001 - an error is an answer too
        return _error(e)


class RecordingFS:
    """A file system that records every question asked and its answer in a :class:`Recorder`."""

    def __init__(self, inner: FileSystem, recorder: "Recorder", tag: str) -> None:
        self.inner = inner
        self.recorder = recorder
        self.tag = tag

    @property
    def recorded(self) -> FileSystem:
        """The file system this records (helm, which reads the disk itself, asks)."""
        return self.inner

    def _note(self, question: str, path: str, answer: Any) -> None:
        self.recorder.note((self.tag, question, path), answer)

    def _call(self, question: str, path: str, fn: Callable[[str], Any],
              answer: Callable[[Any], Any] = lambda v: v) -> Any:
        try:
            value = fn(path)
        except Exception as e:
            self._note(question, path, _error(e))
            raise
        self._note(question, path, answer(value))
        return value

    def read_bytes(self, path: str) -> bytes:
        fast = getattr(self.inner, "blob_id", None)
        data: bytes = self._call("read", path, self.inner.read_bytes,
                                 (lambda d: fast(path)) if fast is not None else blob_id)
        if posixpath.basename(path) in KUSTOMIZATION_FILE_NAMES:
            self.recorder.inspect_kustomization(data, path)
        return data

    def is_dir(self, path: str) -> bool:
        return bool(self._call("dir", path, self.inner.is_dir))

    def is_file(self, path: str) -> bool:
        return bool(self._call("file", path, self.inner.is_file))

    def exists(self, path: str) -> bool:
        return bool(self._call("exists", path, self.inner.exists))

    def realpath(self, path: str) -> str:
        return str(self._call("real", path, self.inner.realpath))

    def listdir(self, path: str) -> List[str]:
        names: List[str] = self._call("list", path, self.inner.listdir, _listing)
        return names


class LayeredFS:
    """A view over a :class:`RecordingFS` of ``recorder`` (a controller's rewritten file
    shown in place, paths it hides, a confinement: :mod:`kzgit.gitops.render`), whose answers
    come from what is recorded below plus what the caller's cache key holds; the loader
    takes it as it is (:meth:`Recorder.watch`), so the questions recorded are those that
    reach the repository.  A kustomization read through it (a generated one included) is
    inspected for what makes a build uncacheable."""

    def __init__(self, view: FileSystem, recorder: "Recorder") -> None:
        self.view = view
        self.recorder = recorder

    def read_bytes(self, path: str) -> bytes:
        data = self.view.read_bytes(path)
        if posixpath.basename(path) in KUSTOMIZATION_FILE_NAMES:
            self.recorder.inspect_kustomization(data, path)
        return data

    def is_dir(self, path: str) -> bool:
        return self.view.is_dir(path)

    def is_file(self, path: str) -> bool:
        return self.view.is_file(path)

    def exists(self, path: str) -> bool:
        return self.view.exists(path)

    def realpath(self, path: str) -> str:
        return self.view.realpath(path)

    def listdir(self, path: str) -> List[str]:
        return self.view.listdir(path)


class Recorder:
    """The questions one build asked, and why it cannot be cached (if it cannot)."""

    def __init__(self, main: FileSystem) -> None:
        self.main = main
        self.answers: Dict[Tuple[str, str, str], Any] = {}
        self.uncacheable: Optional[str] = None
        # open scopes: what the accumulation of one base asked, for the run's base cache
        # (kzgit.builder.cache), which replays it into the build that reuses that base
        self.scopes: List[Scope] = []

    def note(self, key: Tuple[str, str, str], answer: Any) -> None:
        self.answers[key] = answer
        for s in self.scopes:
            s.answers[key] = answer

    def mark_uncacheable(self, why: str) -> None:
        if self.uncacheable is None:
            self.uncacheable = why
        for s in self.scopes:
            s.uncacheable = s.uncacheable or why

    def open_scope(self) -> "Scope":
        scope = Scope()
        self.scopes.append(scope)
        return scope

    def close_scope(self, scope: "Scope") -> None:
        if scope in self.scopes:
            self.scopes.remove(scope)

    def replay(self, scope: "Scope") -> None:
        """Count what a reused base asked and met as asked by this build."""
        for key, answer in scope.answers.items():
            self.note(key, answer)
        if scope.uncacheable:
            self.mark_uncacheable(scope.uncacheable)

    def wrap_main(self) -> RecordingFS:
        return RecordingFS(self.main, self, MAIN)

    def watch(self, loader: "Loader") -> FileSystem:
        """The file system ``loader`` should use: its own, recorded (kzgit.loader.RECORDER)."""
        fs = loader.fs
        if loader.remote_label is not None or loader.repo_root is not None:
            self._note_remote(loader)
        if isinstance(fs, LayeredFS) and fs.recorder is self:
            return fs   # its reads reach this recorder's own RecordingFS below
        if isinstance(fs, RecordingFS):
            if fs.recorder is self:
                return fs
            fs = fs.inner
        return RecordingFS(fs, self, MAIN if fs is self.main else DISK)

    def _note_remote(self, loader: "Loader") -> None:
        # A checkout of a commit never changes; a branch or tag may point elsewhere next time:
        # what it resolves to is a question of the record, asked again by a lookup (through
        # the remote cache, which asks the remote at most once a minute: RESOLVED_FOR)
        from kzgit.remote import parse_repo_spec
        label = loader.remote_label or ""
        spec = parse_repo_spec(label)
        commit = os.path.basename(loader.repo_root or "").split("-", 1)[0]
        if spec is not None and len(spec.ref) == 40 and spec.ref.lower() == commit.lower():
            return
        if spec is None or not commit or "***" in label:
            # (a URL whose credentials were redacted: the record would need them to ask again)
            self.mark_uncacheable(f"remote reference '{label}' is not pinned to a commit")
            return
        self.note((REMOTE, "resolve", label), commit)

    def inspect_kustomization(self, data: bytes, path: str) -> None:
        """Mark the build uncacheable when this kustomization uses plugins, helm or HTTP files."""
        import yaml   # start-up: only the builds that need it pay for it
        try:
            doc = yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except Exception:  # noqa: BLE001 - the build reports it; just do not trust it here
            self.mark_uncacheable(f"{path} is not plain YAML")
            return
        if not isinstance(doc, dict):
            return
        for field in _PLUGIN_FIELDS:
            if doc.get(field):
                self.mark_uncacheable(f"{path} uses {field}")
        from kzgit.remote import is_http_url   # start-up: only the builds that need it pay for it
        for field in _TARGET_FIELDS:
            entries = doc.get(field)
            for e in entries if isinstance(entries, list) else ():
                if isinstance(e, str) and is_http_url(e):
                    self.mark_uncacheable(f"{path} reads {e} over HTTP")

    def trace(self) -> Trace:
        return [[tag, q, p, a] for (tag, q, p), a in sorted(self.answers.items())]


class Scope:
    """The questions asked while one base accumulated."""

    __slots__ = ("answers", "uncacheable")

    def __init__(self) -> None:
        self.answers: Dict[Tuple[str, str, str], Any] = {}
        self.uncacheable: Optional[str] = None


class _ResolvingDiskFS(DiskFS):
    """The disk, whose ``realpath`` resolves each parent directory once per :class:`Checker`.

    Roots of one run sit side by side (``overlays/a``, ``overlays/b``): os.path.realpath
    would check every component of every path again.  ``parent/name`` resolves to
    ``realpath(parent)/name`` when ``name`` is there and not a symlink; anything else (a
    symlink, a missing file, ``..``) is answered by :meth:`DiskFS.realpath` itself, so the
    answers, errors included, are the ones a build records.
    """

    def __init__(self) -> None:
        self._dirs: Dict[str, str] = {}

    def realpath(self, path: str) -> str:
        parent, name = os.path.split(path)
        if name in ("", ".", "..") or not os.path.isabs(path) or os.path.normpath(path) != path:
            return super().realpath(path)
        base = self._dirs.get(parent)
        try:
            if base is None:
                base = self._dirs[parent] = super().realpath(parent)
            found = os.path.join(base, name)
            if not stat.S_ISLNK(os.lstat(found).st_mode):
                return found
        except Exception:  # noqa: BLE001 - the whole path's own answer says what is wrong
            pass
        return super().realpath(path)


class Checker:
    """Asks recorded questions again, remembering answers across the entries of one lookup."""

    def __init__(self, main: FileSystem, read: Optional[Dict[str, bytes]] = None,
                 blob_of: Optional[Callable[[str], Optional[str]]] = None) -> None:
        disk = _ResolvingDiskFS()
        self.fs = {MAIN: disk if type(main) is DiskFS else main, DISK: disk}
        self._memo: Dict[Tuple[str, str, str], Any] = {}
        # ``read``: files of the main file system this run has read already (absolute path
        # -> bytes): their blob ids are taken from those bytes, not read again; ``blob_of``:
        # the same, asked for one file when a record names it (None: not read, ask the file)
        if read:
            for path, data in read.items():
                self._memo[(MAIN, "read", path)] = blob_id(data)
        self._blob_of = blob_of

    def same(self, trace: Any) -> bool:
        """Whether every question of ``trace`` gets its recorded answer now."""
        if not isinstance(trace, list):
            return False
        for row in trace:
            if not (isinstance(row, list) and len(row) == 4 and (row[0] in self.fs or row[0] == REMOTE)):
                return False
            tag, question, path, recorded = row
            k = (tag, question, path)
            if k not in self._memo and self._blob_of is not None and tag == MAIN \
                    and question == "read":
                known = self._blob_of(path)
                if known is not None:
                    self._memo[k] = known
            if k not in self._memo:
                self._memo[k] = (_resolve(path) if tag == REMOTE
                                 else _jsonish(ask(self.fs[tag], question, path)))
            if self._memo[k] != recorded:
                return False
        return True


def _resolve(label: str) -> Optional[str]:
    """The commit the remote reference ``label`` resolves to now (None when unknown)."""
    from kzgit.remote import parse_repo_spec, resolve_ref   # start-up: records with remotes only
    spec = parse_repo_spec(label)
    return resolve_ref(spec) if spec is not None else None


def _jsonish(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v
