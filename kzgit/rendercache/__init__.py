"""The persistent render cache: a root whose inputs did not change is not built again.

:func:`render_yaml` renders a kustomization root with the builtin engine like
``kzgit build`` does, through a :class:`Store`: every build records what it
read (:mod:`kzgit.rendercache.reads`: each file's git blob id, directory
listings, existence and type checks, real paths) and stores its output, or
its error, with that record.  The next render of the same root with the same
options, engine, kzgit code and environment asks the same questions again;
when every answer is unchanged it returns the stored output (or raises the
stored error) without building.

A remote base pinned by a tag or branch is cached by the commit it resolved to: a lookup
resolves it again (:func:`kzgit.remote.resolve_ref`) and a moved ref is a miss.

Never cached (built every time): builds that configure exec or KRM plugins or
container functions (builtin plugin configs are cached: their files are
recorded), builds that render a helm chart (``helmCharts``, a
``HelmChartInflationGenerator``; with ``enable-helm`` every other root is still
cached), files fetched over HTTP, remote bases whose URL holds credentials, and
failures that may be passing (a remote that could not be fetched, a
plugin or usage error, an OS error).

Used by ``kzgit build``, ``kzgit hook render``, ``kzgit diff`` and
``kzgit validate``.  Nothing here prints: warnings are returned.
"""
from __future__ import annotations

import json
import os
import sys
import time

from kzgit.options import BuildOptions
from kzgit.errors import KzgitError, PluginError, RemoteError, UsageError
from kzgit.record import Record
from kzgit.rendercache._store import DEFAULT_SIZE_MB, Store, open_store
from kzgit.sha import sha256

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, List, Optional, Tuple

# Produce (the type of a build function) is for type checkers only: import it under TYPE_CHECKING
__all__ = ["BUILT", "CACHED", "DEFAULT_SIZE_MB", "FAILED", "RenderOutcome", "Store", "cache_dir",
           "default_store", "lookup", "lookup_yaml", "open_store", "render_cached", "render_yaml"]

BUILT, CACHED, FAILED = "built", "cached", "failed"
FORMAT = 2

# Environment variables a build's result may depend on besides its files: where exec
# plugins are looked up (api/konfig/general.go DefaultAbsPluginHome: KUSTOMIZE_PLUGIN_HOME,
# XDG_CONFIG_HOME, HOME) and where remote checkouts live.
ENV_VARS = ("KUSTOMIZE_PLUGIN_HOME", "XDG_CONFIG_HOME", "HOME", "KZGIT_CACHE_DIR",
            "XDG_CACHE_HOME")

# Errors that may pass on a later try with the same files: never replayed.
_TRANSIENT = (RemoteError, PluginError, UsageError)


def cache_dir() -> str:
    """``<kzgit's cache root>/renders`` (:func:`kzgit.cachedir.cache_root`)."""
    from kzgit.cachedir import cache_root   # start-up: only the builds that need it pay for it
    return os.path.join(cache_root(), "renders")


def default_store(enabled: bool = True, size_mb: int = DEFAULT_SIZE_MB
                  ) -> Tuple[Optional[Store], Optional[str]]:
    """The user's render cache, or None (disabled, or unwritable: then also the warning)."""
    if not enabled:
        return None, None
    return open_store(cache_dir(), size_mb)


class RenderOutcome(Record):
    """How one render went: ``status`` is BUILT, CACHED or FAILED (then ``error`` is set)."""

    __slots__ = ("status", "seconds", "payload", "warnings", "error", "digest")

    def __init__(self, status: str, seconds: float, payload: bytes = b"",
                 warnings: Optional[List[str]] = None, error: Optional[KzgitError] = None,
                 digest: str = "") -> None:
        self.status = status
        self.seconds = seconds
        self.payload = payload
        self.warnings: List[str] = [] if warnings is None else warnings
        self.error = error
        #: the payload's sha256, when it was read from the cache and checked against it
        self.digest = digest

    @property
    def yaml(self) -> str:
        return self.payload.decode("utf-8")


_FINGERPRINT: Optional[str] = None


def code_fingerprint() -> str:
    """kzgit's version and the state of its files (a development checkout changes without a release)."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        from kzgit import _version   # start-up: only the builds that need it pay for it
        h = sha256(_version.__version__.encode())
        # os.scandir, not os.walk and os.path: every run that uses the cache makes this, and
        # joining and relativising each path cost more than the stat calls
        stack = [("", os.path.dirname(os.path.abspath(_version.__file__)))]   # kzgit/
        while stack:
            rel, d = stack.pop()
            try:
                with os.scandir(d) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError:
                continue
            for e in entries:
                try:
                    if e.is_dir(follow_symlinks=False):
                        if e.name != "__pycache__":
                            stack.append((f"{rel}{e.name}/", e.path))
                        continue
                    if e.name.endswith((".pyc", ".pyo")):
                        continue
                    st = e.stat()
                except OSError:
                    continue
                h.update(f"{rel}{e.name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode(
                    "utf-8", "surrogateescape"))
        _FINGERPRINT = h.hexdigest()
    return _FINGERPRINT


def cache_key(path: str, options: BuildOptions, flavour: str) -> str:
    """What a render depends on besides the files it reads."""
    from kzgit import _version   # start-up: only the builds that need it pay for it
    opts = tuple(repr(getattr(options, f)) for f in options.fields() if f not in ("fs", "cache"))
    # a run looks up many roots with one set of options: the rest of the key is made once
    settings = (flavour, _version.__version__, opts, tuple(os.environ.get(v) for v in ENV_VARS))
    common = _COMMON_KEYS.get(settings)
    if common is None:
        parts: Dict[str, Any] = {
            "format": FORMAT, "flavour": flavour, "engine": "builtin",
            "kzgit": [_version.__version__, code_fingerprint()],
            "python": list(sys.version_info[:2]), "pyyaml": _pyyaml_version(),
            "options": [[f, r] for f, r in zip(
                [f for f in options.fields() if f not in ("fs", "cache")], opts)],
            "env": list(settings[3]),
        }
        common = _COMMON_KEYS[settings] = sha256(
            json.dumps(parts, sort_keys=True).encode("utf-8")).hexdigest()
    # messages name the root as given: a relative path depends on where kzgit runs
    where = json.dumps([path, "" if os.path.isabs(path) else os.getcwd()])
    return sha256(f"{common}\0{where}".encode("utf-8", "surrogateescape")).hexdigest()


_COMMON_KEYS: Dict[Tuple[Any, ...], str] = {}


def _pyyaml_version() -> str:
    """PyYAML's ``__version__``, read from its source unless it is imported: a cache hit
    does not import PyYAML (its import costs more than the rest of the hit)."""
    mod = sys.modules.get("yaml")
    if mod is not None:
        return str(getattr(mod, "__version__", ""))
    from importlib.machinery import PathFinder   # start-up: only the builds that need it pay for it
    spec = PathFinder.find_spec("yaml")
    try:
        with open(spec.origin if spec is not None and spec.origin else "", "rb") as f:
            source = f.read()
    except OSError:
        return ""
    for line in source.decode("utf-8", "replace").splitlines():
        if line.startswith("__version__"):
            return line.partition("=")[2].strip().strip("'\"")
    return ""


def _replay_error(header: Dict[str, Any]) -> KzgitError:
    import kzgit.errors as errors   # start-up: only the builds that need it pay for it
    cls = getattr(errors, str(header.get("error_class")), None)
    if not (isinstance(cls, type) and issubclass(cls, KzgitError)):
        cls = errors.BuildError
    e = cls(str(header.get("error")), tip=header.get("tip"))
    if header.get("lead"):
        e.lead = str(header["lead"])   # the one line a person reads first (kzgit.errors)
    return e


if TYPE_CHECKING:  # pragma: no cover
    Produce = Callable[[BuildOptions], Tuple[bytes, List[str]]]
    """Build with these options; return the payload to store and the build's warnings."""


def render_cached(path: str, options: BuildOptions, store: Optional[Store], flavour: str,
                  produce: Produce, looked: bool = False) -> RenderOutcome:
    """Run ``produce`` for the root at ``path``, or return what it gave last time for the same inputs.

    ``looked``: the caller's :func:`lookup` just missed; build without looking again.  A failure comes back as a FAILED :class:`RenderOutcome` carrying the error (stored, and
    replayed, when it can only come from the files).  Exceptions other than
    :class:`~kzgit.errors.KzgitError` propagate.
    """
    start = time.monotonic()
    if store is None:
        return _uncached(options, produce, start)
    from kzgit.loader import RECORDER, DiskFS   # start-up: only the builds that need it pay for it
    from kzgit.rendercache.reads import Recorder   # start-up: only the builds that need it pay for it
    key = cache_key(path, options, flavour)
    main = options.fs if options.fs is not None else DiskFS()
    hit = None if looked else lookup(path, options, store, flavour, key=key)
    if hit is not None:
        return hit
    recorder = Recorder(main)
    token = RECORDER.set(recorder)
    try:
        payload, warnings = produce(options.replace(fs=recorder.wrap_main()))
    except KzgitError as e:
        RECORDER.reset(token)
        if recorder.uncacheable is None and not isinstance(e, _TRANSIENT):
            store.write(key, {"trace": recorder.trace(), "warnings": [],
                              "error_class": type(e).__name__, "error": e.message, "tip": e.tip,
                              "lead": getattr(e, "lead", None)},
                        b"")
        return RenderOutcome(FAILED, time.monotonic() - start, error=e)
    except BaseException:
        RECORDER.reset(token)
        raise
    RECORDER.reset(token)
    if recorder.uncacheable is None:
        store.write(key, {"trace": recorder.trace(), "warnings": warnings}, payload)
    return RenderOutcome(BUILT, time.monotonic() - start, payload, warnings)


def lookup(path: str, options: BuildOptions, store: Store, flavour: str,
           checker: Optional[Any] = None, key: Optional[str] = None,
           payload: bool = True) -> Optional[RenderOutcome]:
    """The stored render of ``path`` whose recorded inputs are all unchanged, else None.

    ``checker`` (a :class:`~kzgit.rendercache.reads.Checker` over ``options.fs``) may be
    shared by the lookups of one run: each file is then hashed once, however many roots
    read it.  ``payload=False``: the verdict alone (rendered or failed, the warnings); the
    stored output is neither read nor verified and :attr:`RenderOutcome.payload` is empty.
    """
    start = time.monotonic()
    if checker is None:
        from kzgit.loader import DiskFS   # start-up: only the builds that need it pay for it
        from kzgit.rendercache.reads import Checker   # start-up: only the builds that need it pay for it
        checker = Checker(options.fs if options.fs is not None else DiskFS())
    key = key or cache_key(path, options, flavour)
    same = checker.same

    def accept(header: Dict[str, Any], output: bytes) -> Optional[RenderOutcome]:
        if not same(header.get("trace")):
            return None   # what the build read then is not what it would read now
        warnings = [str(w) for w in header.get("warnings") or []]
        if header.get("error_class"):
            return RenderOutcome(FAILED, time.monotonic() - start, warnings=warnings,
                                 error=_replay_error(header))
        digest = str(header.get("payload_sha256", "")) if payload else ""
        return RenderOutcome(CACHED, time.monotonic() - start, output, warnings, digest=digest)
    return store.lookup(key, accept, payload)


def _uncached(options: BuildOptions, produce: Produce, start: float) -> RenderOutcome:
    try:
        payload, warnings = produce(options)
    except KzgitError as e:
        return RenderOutcome(FAILED, time.monotonic() - start, error=e)
    return RenderOutcome(BUILT, time.monotonic() - start, payload, warnings)


def _produce_yaml(path: str) -> Produce:
    def produce(options: BuildOptions) -> Tuple[bytes, List[str]]:
        from kzgit.builder import build   # start-up: only the builds that need it pay for it
        result = build(path, options)
        return result.to_yaml().encode("utf-8"), list(result.warnings)
    return produce


def render_yaml(path: str, options: BuildOptions, store: Optional[Store],
                looked: bool = False) -> RenderOutcome:
    """Render the root at ``path`` as ``kzgit build`` prints it, through ``store`` (None: no cache).

    The API for every command that needs a root's YAML (``kzgit build``, the render
    hook, ``kzgit validate``): check :attr:`RenderOutcome.error`, then use
    :attr:`RenderOutcome.yaml` / :attr:`RenderOutcome.payload` and :attr:`RenderOutcome.warnings`.
    """
    return render_cached(path, options, store, "yaml", _produce_yaml(path), looked)


def lookup_yaml(path: str, options: BuildOptions, store: Store, checker: Optional[Any] = None,
                payload: bool = True) -> Optional[RenderOutcome]:
    """:func:`lookup` of what :func:`render_yaml` stores."""
    return lookup(path, options, store, "yaml", checker, payload=payload)
