"""Reuse of base accumulations across the builds of one run.

The render hook and ``kzgit diff`` build many roots that share bases: thirty
overlays over one base would otherwise read, parse and transform that base
thirty times.  A :class:`BuildCache` handed to every build of the run (through
:attr:`kzgit.builder.BuildOptions.cache`) keeps the accumulated resources of
each *base* directory (``resources:`` entries, never components, which
accumulate into their parent) and gives each later build its own copy.

A cached result is only reused when rebuilding could not give anything else:

* the key holds everything the base's accumulation reads besides its files:
  the directory, the file system, the load restrictor and enclosing cloned
  repository, the origin path and ``buildMetadata`` handed down by the parent,
  the build options and the OpenAPI schema in force;
* subtrees whose result is not a pure function of those are never stored:
  exec/KRM/builtin plugin entries (``generators``, ``transformers``,
  ``validators``), ``helmCharts``, ``vars`` (bound to resource identities),
  ``openapi`` (global state that outlives the subtree, as in kyaml), and
  remote files fetched over HTTP;
* kustomize refuses a base directory that contains a root already on the
  loader chain (``api/internal/loader/fileloader.go``); that chain differs
  between roots, so each reuse re-checks every directory of the subtree
  against the new chain, and rebuilds (to raise kustomize's error) when one
  fails;
* failures are not cached; warnings are replayed.

Files are assumed not to change during one run (one commit, one revision).

The builds of GitOps applications (:mod:`kzgit.gitops.render`) read the repository through a
controller's view of it, which shows a kustomization the controller writes (Flux's generated
one, Argo CD's after ``kustomize edit``) over the file on disk.  Such a view names what it
shows apart from those files (``cache_identity``), so that the applications of a run share
the bases they have in common, and notes each kustomization file a build asks it about
(``kustomization_log``): a base is not kept when its subtree asked about a file the view
rewrites, nor reused by a view rewriting a file the subtree asked about (``overlaid``).

When the persistent render cache records a build (:mod:`kzgit.rendercache`),
each stored base also keeps the file system questions its accumulation asked,
and a reuse replays them into the recording: a root built from a reused base
has read that base's files as surely as if it had accumulated it.
"""
from __future__ import annotations

import _thread  # threading's Lock is this one; importing threading costs every build more
import collections
import json

from kzgit.loader import RECORDER, is_within

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Container, Hashable, List, Optional, Sequence, Set, Tuple
    from kzgit.options import BuildOptions
    from kzgit.accumulator import Accumulator
    from kzgit.loader import Loader

# Kustomization fields that make a subtree's accumulation depend on more than its files.
UNCACHEABLE_FIELDS = ("generators", "transformers", "validators", "helmCharts",
                      "helmChartInflationGenerator", "vars", "openapi")

# Distinct bases kept per process; each entry holds one copy of a base's resources.
MAX_ENTRIES = 64


class Recording:
    """What one base's accumulation touched, collected while it runs."""

    __slots__ = ("roots", "cacheable", "recorder", "scope")

    def __init__(self) -> None:
        self.roots: Set[str] = set()
        self.cacheable = True
        self.recorder = RECORDER.get()
        self.scope = self.recorder.open_scope() if self.recorder is not None else None


class _Entry:
    __slots__ = ("accumulator", "roots", "warnings", "after", "scope", "asked")

    def __init__(self, accumulator: Accumulator, roots: Tuple[str, ...], warnings: Tuple[str, ...],
                 after: Hashable = None, scope: Any = None, asked: Tuple[str, ...] = ()) -> None:
        self.accumulator = accumulator
        self.roots = roots
        self.warnings = warnings
        self.after = after  # global state the accumulation left behind, replayed on reuse
        self.scope = scope  # what it asked the file systems (kzgit.rendercache), replayed too
        self.asked = asked  # the kustomization files it asked a controller's view about


class BuildCache:
    """Accumulated bases of one run, shared by its builds (thread-safe)."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self._entries: "collections.OrderedDict[Hashable, _Entry]" = collections.OrderedDict()
        self._max = max_entries
        self._lock = _thread.allocate_lock()
        self.hits = 0
        self.misses = 0

    def __reduce__(self) -> Tuple[Any, Tuple[()]]:
        # A process pool pickles the options of every task: each worker process uses its
        # own cache across the tasks it runs rather than a fresh empty copy per task.
        return (process_cache, ())

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable, chain: Sequence[str], overlaid: Optional[Container[str]] = None
            ) -> Optional[Tuple["Accumulator", Tuple[str, ...], Tuple[str, ...], Hashable,
                                Tuple[str, ...]]]:
        """A copy of the base accumulated under ``key``, its warnings, directories, ``after``
        and the kustomization files it asked a controller's view about.

        ``chain`` is the loader chain of the kustomization asking (its root and
        ancestors): a hit is refused when a directory of the cached subtree
        contains one of them, since kustomize reports a cycle there.  ``overlaid``: the
        files the asking build's view rewrites; a hit is refused when the subtree asked
        about one of them.
        """
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
        if entry is None or any(is_within(r, d) for d in entry.roots for r in chain) or (
                overlaid and any(p in overlaid for p in entry.asked)):
            self.misses += 1
            return None
        self.hits += 1
        recorder = RECORDER.get()
        if recorder is not None:
            if entry.scope is None:   # stored by a build nobody recorded: its reads are unknown
                recorder.mark_uncacheable("a reused base was accumulated unrecorded")
            else:
                recorder.replay(entry.scope)
        return (copy_accumulator(entry.accumulator), entry.warnings, entry.roots, entry.after,
                entry.asked)

    def put(self, key: Hashable, ra: "Accumulator", rec: Recording, warnings: List[str],
            after: Hashable = None, asked: Tuple[str, ...] = ()) -> None:
        """Keep a copy of ``ra``, the base accumulated under ``key``, if ``rec`` allows.

        ``after`` is global state the accumulation changed (kyaml's lazy schema parse),
        handed back by :meth:`get` so a reuse leaves it as a rebuild would.  ``asked``: the
        kustomization files the accumulation asked a controller's view about.
        """
        if rec.recorder is not None and rec.scope is not None:
            rec.recorder.close_scope(rec.scope)
        if not rec.cacheable:
            return
        entry = _Entry(copy_accumulator(ra), tuple(sorted(rec.roots)), tuple(warnings), after,
                       rec.scope, asked)
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)


_PROCESS_CACHE: Optional[BuildCache] = None


def process_cache() -> BuildCache:
    """The cache of this process (what a pickled :class:`BuildCache` becomes)."""
    global _PROCESS_CACHE
    if _PROCESS_CACHE is None:
        _PROCESS_CACHE = BuildCache()
    return _PROCESS_CACHE


def copy_accumulator(ra: "Accumulator") -> "Accumulator":
    """An accumulator sharing no resource or table with ``ra`` (vars are never cached)."""
    from kzgit.accumulator import Accumulator   # cycle: the pipeline imports this module
    out = Accumulator(None)
    out.resmap.append_all(r.copy() for r in ra.resmap.resources())
    out.config = ra.config.copy()
    return out


def cache_key(loader: "Loader", origin: Optional[str], build_metadata: Any,
              options: "BuildOptions", schema: Hashable) -> Hashable:
    """Everything besides its files that a base's accumulation depends on."""
    opts = tuple((f, repr(getattr(options, f))) for f in options.fields() if f not in ("fs", "cache"))
    fs = fs_identity(view_of(loader))
    return (loader.root, fs, loader.restrictor, loader.repo_root, loader.remote_label,
            origin, json.dumps(build_metadata, sort_keys=True, default=str), opts, schema)


def view_of(loader: "Loader") -> Any:
    """The file system ``loader`` reads through, the render cache's recording wrapper looked
    through."""
    return getattr(loader.fs, "inner", loader.fs)


def fs_identity(fs: Any) -> Hashable:
    """A file system as a cache key part: every build makes its own DiskFS; a controller's
    view names itself (``cache_identity``); any other file system (a git tree) is keyed by
    the object itself, which the key keeps alive so its id cannot be reused."""
    from kzgit.loader import DiskFS   # start-up: only the builds that need it pay for it
    fs = getattr(fs, "inner", fs)
    if type(fs) is DiskFS:
        return "disk"
    ident = getattr(fs, "cache_identity", None)
    return ident() if ident is not None else fs
