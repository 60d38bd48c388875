"""``kzgit-render``: every kustomization root affected by the change must render.

Affected roots come from the dependency graph (:mod:`kzgit.graph`); each is
built once per run, even when several changed files reach it, in parallel
when ``jobs`` allows: processes for the builtin engine (it is CPU-bound
Python), threads for external binaries (they are processes already).  The
builtin engine goes through the persistent render cache
(:mod:`kzgit.rendercache`): a root whose inputs did not change since its last
render is not built again.  ``--shard I/N`` renders one of N disjoint parts
of the roots (:func:`kzgit.graph.shard`).
"""
from __future__ import annotations

import os
import time
from kzgit.options import BuildOptions
from kzgit.engine import Engine
from kzgit.errors import KzgitError, full_message
from kzgit.hooks import HookFinding, Workspace
from kzgit.record import Record
from kzgit.rendercache import BUILT, CACHED, FAILED, Store

# Starting a process pool costs about half a second; below this many roots a
# builtin build in one process is faster (unless jobs is set explicitly).
_MIN_ROOTS_FOR_PROCESSES = 6


class RootResult(Record):
    """How one root went: ``status`` is ``built``, ``cached`` or ``failed``."""

    __slots__ = ("root", "status", "seconds", "error", "warnings")

    def __init__(self, root: str, status: str, seconds: float, error: Optional[str] = None,
                 warnings: Optional[List[str]] = None) -> None:
        self.root = root
        self.status = status
        self.seconds = seconds
        self.error = error
        # what the build warned (the builtin engine's; ``warnings-as-errors`` fails on them)
        self.warnings: List[str] = [] if warnings is None else warnings


def options_for(ws: Workspace, offline: bool = False) -> BuildOptions:
    """Build options from the repository's configuration."""
    from kzgit import versions   # start-up: as the engine
    c = ws.config
    # the run's base cache (kzgit.builder.cache) is added by render_each, when a root is built
    return BuildOptions(load_restrictor=c.load_restrictor, enable_alpha_plugins=c.enable_alpha_plugins,
                        enable_exec=c.enable_exec, enable_helm=c.enable_helm,
                        helm_command=c.helm_command, offline=offline,
                        sandbox=c.sandbox, fs=ws.build_fs(), **versions.options(c))


TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

    Outcome = Tuple[str, float, Optional[str], Any]
    """How one root's render went: (status, seconds, error *message*, what the render gives)."""

    RenderOne = Callable[[Engine, str, BuildOptions, Optional[Store]], Outcome]
    """Renders one root in a worker (a module-level function: it is pickled to the pool)."""

    from kzgit.gitops.catalog import Catalog
    from kzgit.gitops.model import App

    LookUp = Callable[[str, BuildOptions, Store, Any], Optional[Outcome]]
    """The stored outcome of one root whose inputs are unchanged, else None."""
else:
    Outcome = RenderOne = LookUp = None   # types for checkers (modules import the names)


def _render_one(engine: Engine, path: str, options: BuildOptions, store: Optional[Store]) -> Outcome:
    """Render in a worker (exceptions may not pickle: the error travels as its message)."""
    if engine.name == "builtin":
        from kzgit.rendercache import render_yaml   # start-up: loaded only by the runs that need it
        got = render_yaml(path, options, store, looked=True)
        return got.status, got.seconds, full_message(got.error) if got.error is not None else None, got.warnings
    start = time.monotonic()
    try:
        engine.render(path, options)
    except KzgitError as e:
        return FAILED, time.monotonic() - start, full_message(e), None
    return BUILT, time.monotonic() - start, None, None


def _look_up_yaml(path: str, options: BuildOptions, store: Store, checker: Any) -> Optional[Outcome]:
    from kzgit.rendercache import lookup_yaml   # start-up: loaded only by the runs that need it
    hit = lookup_yaml(path, options, store, checker, payload=False)   # the hook needs the verdict only
    if hit is None:
        return None
    return hit.status, hit.seconds, full_message(hit.error) if hit.error else None, hit.warnings


def roots_to_build(ws: Workspace) -> List[str]:
    """The roots the change affects (every root when ``ws.changed`` is None)."""
    g = ws.graph
    return list(g.roots) if ws.changed is None else g.affected_roots(ws.changed)


def shard_of(ws: Workspace, roots: Sequence[str], index: int, count: int) -> List[str]:
    """Part ``index`` of ``count`` of ``roots``, balanced by the bytes each root reaches."""
    from kzgit.graph import root_weights, shard   # start-up: loaded only by the runs that need it
    return shard(roots, root_weights(ws.graph, ws.files, _size_in(ws.root)), index, count)


def _size_in(top: str) -> Callable[[str], int]:
    def size(rel: str) -> int:
        try:
            return os.lstat(os.path.join(top, *rel.split("/"))).st_size
        except OSError:
            return 0
    return size


def workers_for(ws: Workspace, engine: Engine, jobs: int, n_roots: int) -> int:
    """How many renders to run at once: ``jobs``, the ``jobs`` setting, else one per CPU."""
    asked = jobs or ws.config.jobs
    workers = asked or (os.cpu_count() or 1)
    if not asked and engine.name == "builtin" and n_roots < _MIN_ROOTS_FOR_PROCESSES:
        workers = 1
    return max(1, min(workers, n_roots))


def render_each(ws: Workspace, engine: Engine, roots: Sequence[str], options: BuildOptions,
                jobs: int, store: Optional[Store], render_one: RenderOne = _render_one,
                look_up: LookUp = _look_up_yaml,
                on_done: Optional[Callable[[str, Outcome], None]] = None) -> Dict[str, Outcome]:
    """Render ``roots`` with ``render_one``: what the cache holds first, the rest in parallel;
    ``on_done`` hears of each root as it finishes (``-v`` lists it then, not at the end)."""
    outcomes: Dict[str, Outcome] = {}

    def done(r: str, outcome: Outcome) -> None:
        outcomes[r] = outcome
        if on_done is not None:
            on_done(r, outcome)
    todo = list(roots)
    if store is not None and engine.name == "builtin":
        # what the cache holds is answered here: a warm run starts no process pool, and
        # each file is hashed once however many roots read it
        from kzgit.loader import DiskFS
        from kzgit.rendercache.reads import Checker
        checker = Checker(options.fs if options.fs is not None else DiskFS(),
                          blob_of=_known_blobs(ws) if options.fs is None else None)
        todo = []
        for r in roots:
            hit = look_up(ws.build_path(r), options, store, checker)
            if hit is None:
                todo.append(r)
            else:
                done(r, hit)
    if todo and options.cache is None:
        from kzgit.builder.cache import BuildCache   # start-up: a warm run builds nothing
        # one cache for the run: roots sharing a base accumulate it once (per worker process)
        options = options.replace(cache=BuildCache())
    workers = workers_for(ws, engine, jobs, len(todo))
    if workers == 1:
        for r in todo:
            done(r, render_one(engine, ws.build_path(r), options, store))
    else:
        from kzgit.workers import guarded, render_pool   # start-up: only the runs that need it
        with render_pool(engine, workers) as pool:
            from concurrent.futures import as_completed   # start-up: the pool imported it already
            futures = {pool.submit(guarded, render_one, engine, ws.build_path(r), options, store): r
                       for r in todo}
            for f in as_completed(futures):
                done(futures[f], f.result())
    return outcomes


def render_roots(ws: Workspace, engine: Engine, roots: List[str], jobs: int = 0,
                 offline: bool = False, store: Optional[Store] = None,
                 on_done: Optional[Callable[[RootResult], None]] = None) -> List[RootResult]:
    """Render ``roots`` of the workspace; one result per root, in the order given (``on_done``
    hears of each as it finishes).  Messages name files by their repository-relative path."""
    def result(r: str, outcome: Outcome) -> RootResult:
        status, seconds, err, warnings = outcome
        return RootResult(r, status, seconds, ws.relative_message(err) if err is not None else None,
                          [ws.relative_message(w) for w in warnings or ()])
    hear = None if on_done is None else (lambda r, outcome: on_done(result(r, outcome)))
    outcomes = render_each(ws, engine, roots, options_for(ws, offline), jobs, store, on_done=hear)
    return [result(r, outcomes[r]) for r in roots]


def findings(results: List[RootResult], warnings_as_errors: bool = False) -> List[HookFinding]:
    """One finding per root that does not render; with ``warnings_as_errors`` (the
    configuration's ``warnings-as-errors``, kustomize issue #6040) also one per root whose build
    warns, with its warnings (those of the builtin engine: an external one's go to its stderr)."""
    said = SaidOnce()
    out = [HookFinding(r.root, "does not render: " + said.message(r.root, r.error))
           for r in results if r.error is not None]
    return out + (warning_findings(results) if warnings_as_errors else [])


class SaidOnce:
    """A render failure's whole chain once: a shared base breaks every root above it, and the
    roots after the first get its one-line lead and ``(as ROOT, above)`` (the render, validate
    and lint hooks say it alike)."""

    def __init__(self) -> None:
        self.first: Dict[str, str] = {}   # an error's first line -> the first root that showed it

    def message(self, root: str, error: str) -> str:
        lead = error.split("\n", 1)[0]
        shown = self.first.setdefault(lead, root)
        return f"{lead} (as {shown}, above)" if shown != root and "\n" in error else error


def warning_findings(results: List[RootResult]) -> List[HookFinding]:
    """One finding per root that renders with warnings (``warnings-as-errors``)."""
    return [HookFinding(r.root, "warns (warnings-as-errors): " + "\n".join(r.warnings))
            for r in results if r.error is None and r.warnings]


def summary(results: List[RootResult], warnings_as_errors: bool = False) -> Optional[str]:
    """The one line that counts the rest when some roots do not render, or warn with
    ``warnings_as_errors`` (None when all render cleanly)."""
    failed = sum(r.error is not None for r in results)
    warned = sum(r.error is None and bool(r.warnings) for r in results) if warnings_as_errors else 0
    if not failed and not warned:
        return None
    rest = [r for r in results if r.error is None]
    cached = sum(r.status == "cached" for r in rest)
    warns = f" ({warned} of them warn{'s' if warned == 1 else ''})" if warned else ""
    return (f"{failed} of {len(results)} {checked_noun([r.root for r in results])} "
            f"{'does' if failed == 1 else 'do'} not render; "
            f"{len(rest)} rendered{warns} ({len(rest) - cached} built, {cached} cached; -v lists them)")


def checked_noun(names: Sequence[str]) -> str:
    """What a run checked, for its count line: ``roots``, ``applications`` (ids
    ``flux:...``/``argocd:...``) or ``roots and applications``."""
    apps = sum(n.startswith(("flux:", "argocd:")) for n in names)
    if apps == 0:
        return "roots"
    return "applications" if apps == len(names) else "roots and applications"


def run(ws: Workspace, engine: Engine, jobs: int = 0, offline: bool = False,
        store: Optional[Store] = None) -> List[HookFinding]:
    """Build every affected root; one finding per root that does not render (or warns, with
    ``warnings-as-errors``)."""
    return findings(render_roots(ws, engine, roots_to_build(ws), jobs, offline, store),
                    ws.config.warnings_as_errors)


# -- applications (kzgit.gitops): what the cluster receives ---------------------------------

def app_catalog(ws: Workspace) -> Optional[Catalog]:
    """The Argo CD Applications and Flux Kustomizations of the content checked (None when it
    has none), found once per run."""
    memo = ws.memo("gitops")
    if "catalog" in memo:
        got: Optional[Catalog] = memo["catalog"]
        return got
    catalog = None
    if _mentions_applications(ws):
        from kzgit.gitops.repository import repository_for   # start-up: only YAML repos
        from kzgit.gitops.snapshot import discover_cached   # start-up: as above
        catalog = discover_cached(repository_for(ws.build_root, ws.files, _read_once(ws),
                                                 ws.build_fs(), ws.config, remotes_of=ws.repo,
                                                 store=ws.cache), ws.cache,
                                  blob_of=_blob_once(ws))
        if not catalog.apps:
            catalog = None
    memo["catalog"] = catalog
    return catalog


# apiVersion groups of the applications kzgit renders (kzgit.gitops.model), as bytes
_APP_MARKS = (b"kustomize.toolkit.fluxcd.io", b"argoproj.io")


def _mentions_applications(ws: Workspace) -> bool:
    """Whether a YAML or JSON file of the content names a Flux or Argo CD API group: a byte
    search, so that a repository without applications loads nothing more for them (a warm
    hook stays as light as it was)."""
    read = ws.read
    seen = ws.memo("gitops-bytes")   # what discovery reads next, read once
    found = False
    for f in ws.files:
        if f.endswith((".yaml", ".yml", ".json")):
            data = read(f)
            seen[f] = data
            if not found and data and any(m in data for m in _APP_MARKS):
                found = True
    if not found:
        seen.clear()
    return found


def _read_once(ws: Workspace) -> Callable[[str], Optional[bytes]]:
    """``ws.read`` answering first from what :func:`_mentions_applications` read."""
    seen = ws.memo("gitops-bytes")
    read = ws.read

    def get(rel: str) -> Optional[bytes]:
        if rel in seen:
            data: Optional[bytes] = seen[rel]
            return data
        return read(rel)
    return get


def _known_blobs(ws: Workspace) -> Optional[Callable[[str], Optional[str]]]:
    """The blob id of a file (by its absolute path as builds see it) that the search for
    applications read this run (:func:`_blob_once`); None when it read none (a repository
    without applications): a root's recorded reads then read the file."""
    if not ws.memo("gitops-bytes"):
        return None
    top = ws.build_root.rstrip("/") + "/"
    by_rel = _blob_once(ws)

    def blob_of(path: str) -> Optional[str]:
        return by_rel(path[len(top):]) if path.startswith(top) else None
    return blob_of


def _blob_once(ws: Workspace) -> Callable[[str], Optional[str]]:
    """The git blob id of a file :func:`_mentions_applications` read (None for another),
    hashed once per run for the render cache's checks (kzgit.gitops.snapshot, the
    applications' records)."""
    seen = ws.memo("gitops-bytes")
    blobs: Dict[str, Optional[str]] = ws.memo("gitops-blobs")

    def blob(rel: str) -> Optional[str]:
        got = blobs.get(rel)
        if got is None and rel not in blobs:
            data = seen.get(rel)
            if data is not None:
                from kzgit.rendercache.reads import blob_id   # start-up: only runs with the cache
                got = blob_id(data)
            blobs[rel] = got
        return got
    return blob


def affected_apps(ws: Workspace, catalog: Catalog) -> List[App]:
    """The applications the change reaches (:func:`kzgit.gitops.select.affected`)."""
    from kzgit.gitops.select import affected   # start-up: only repositories with applications
    return affected(catalog, ws.graph, ws.changed)


def plain_app(ws: Workspace, catalog: Catalog, app: App) -> bool:
    """Whether ``app`` renders exactly as the kustomization root at its path renders with the
    repository's settings (then the root's render is its check, through the render cache)."""
    memo = ws.memo("gitops-plain")
    got = memo.get(app.id)
    if got is None:
        got = memo[app.id] = _plain_app(ws, catalog, app)
    return bool(got)


def _plain_app(ws: Workspace, catalog: Catalog, app: App) -> bool:
    from kzgit.gitops.select import deploys_root_as_is   # start-up: only repositories with apps
    roots = ws.memo("gitops-roots").setdefault("set", set(ws.graph.roots))
    memo = ws.memo("gitops-lists")
    if "paths" not in memo:
        # the kustomizations whose resources decide (deploys_root_as_is asks last, when all
        # else says plain), parsed together: one render cache entry for all of them
        asked: Set[str] = set()

        def ask(path: str) -> bool:
            asked.add(path or ".")
            return True
        for a in catalog.apps:
            deploys_root_as_is(catalog, a, roots, ask, ws.config.load_restrictor,
                               catalog.repo.version)
        memo["paths"] = _resource_lists(ws, sorted(asked))
    lists: Dict[str, bool] = memo["paths"]
    return deploys_root_as_is(catalog, app, roots, lambda path: lists.get(path or ".", False),
                              ws.config.load_restrictor, catalog.repo.version)


def _resource_lists(ws: Workspace, wanted: List[str]) -> Dict[str, bool]:
    """Whether the kustomization at each of ``wanted`` lists resources: each parsed once,
    through the render cache (:func:`kzgit.gitops.memo.parsed`, keyed by the files' blob
    ids)."""
    from kzgit.gitops.memo import parsed   # start-up: only repositories with applications
    read = _read_once(ws)
    paths: List[str] = []
    files: List[Tuple[str, bytes]] = []
    for p in wanted:
        node = ws.graph.nodes.get(p)
        if node is not None:
            paths.append(p)
            files.append((node.file, read(node.file) or b""))
    blob = _blob_once(ws)
    return dict(zip(paths, parsed(ws.cache, "gitops-lists-resources", files, _lists_resources,
                                  blob)))


def _lists_resources(name: str, data: bytes) -> bool:
    from kzgit.yamlio import load_yaml11   # start-up: only repositories with applications
    try:
        k = load_yaml11(data, name)
    except KzgitError:
        return False
    return isinstance(k, dict) and bool(k.get("resources"))


def plain_roots(ws: Workspace, catalog: Catalog, apps: Sequence[App]) -> List[str]:
    """The roots whose render checks a plain application (:func:`plain_app`) the change
    reaches: they are checked even when the change reaches only the application's manifest."""
    return sorted({(a.path or ".") for a in apps if plain_app(ws, catalog, a)})


def replaced_roots(ws: Workspace, catalog: Catalog, apps: Sequence[App]) -> List[str]:
    """The roots an application deploys with changes of its controller's: each is checked
    as that application renders it (what the cluster receives), not as a plain root."""
    roots = set(ws.graph.roots)
    out = set()
    for a in apps:
        if not a.rendered or plain_app(ws, catalog, a):
            continue
        for p in a.extra.get("paths") or [a.path]:
            if (p or ".") in roots:
                out.add(p or ".")
    return sorted(out)


class AppOutcome(Record):
    """How one application's render went, as a worker process returns it: ``status`` built or
    failed, the controller's error and the line it points at, the warnings, and (when asked
    for) the rendered objects as (object, source file, former names)."""

    __slots__ = ("status", "seconds", "error", "line", "warnings", "items")

    def __init__(self, status: str, seconds: float, error: Optional[str] = None,
                 line: Optional[int] = None, warnings: Optional[List[str]] = None,
                 items: Optional[List[Tuple[Dict[str, Any], str, Tuple[str, ...]]]] = None) -> None:
        self.status = status
        self.seconds = seconds
        self.error = error
        self.line = line
        self.warnings: List[str] = [] if warnings is None else warnings
        self.items = items


# The applications a render pool's workers render, by index: the pool forks after this is
# set, so each worker inherits the catalog (its files read, its parents rendered) instead of
# discovering again; what a worker returns is plain data.  With a render cache key, the
# render records what it reads and stores its verdict (kzgit.gitops.cache).
_APP_JOBS: Dict[int, Tuple[Catalog, App, bool, Optional[Store], Optional[str]]] = {}


def _render_app_job(index: int) -> AppOutcome:
    from kzgit.gitops.render import AppError, render_app   # start-up: as app_catalog
    catalog, app, want_items, store, key = _APP_JOBS[index]
    start = time.monotonic()
    if store is not None and key is not None and not want_items:
        from kzgit.gitops import cache   # start-up: only runs with the render cache
        error, line, warnings = cache.render(catalog, app, store, key)
        return AppOutcome(BUILT if error is None else FAILED, time.monotonic() - start, error,
                          line, warnings)
    try:
        got = render_app(catalog, app)
    except AppError as e:
        return AppOutcome(FAILED, time.monotonic() - start, e.detail, e.line)
    items = [(r.obj, r.source, tuple(i.name for i in r.prev_ids)) for r in got.resources] \
        if want_items else None
    return AppOutcome(BUILT, time.monotonic() - start, None, None, list(got.warnings), items)


def render_apps(ws: Workspace, engine: Engine, catalog: Catalog, apps: Sequence[App],
                jobs: int = 0, want_items: bool = False,
                on_done: Optional[Callable[[App, AppOutcome], None]] = None,
                store: Optional[Store] = None) -> Dict[str, AppOutcome]:
    """Render ``apps`` (by id), in a pool of worker processes when there are enough, as
    roots are rendered (:func:`workers_for`).  With ``store`` (verdicts only, not
    ``want_items``): what the render cache holds first (:mod:`kzgit.gitops.cache`), the rest
    rendered and stored."""
    out: Dict[str, AppOutcome] = {}
    keys: Dict[int, Optional[str]] = {}
    if store is not None and not want_items:
        from kzgit.gitops import cache   # start-up: only runs with the render cache
        from kzgit.loader import DiskFS   # start-up: as above
        from kzgit.rendercache.reads import Checker   # start-up: as above
        # looked up here, before any render: a warm run starts no process pool, each file is
        # hashed once however many applications read it, and a hit delivers its ConfigMaps
        # and Secrets as the render did
        # the files discovery read (app_catalog) are not read again to be hashed, nor hashed
        # twice
        checker = Checker(catalog.repo.fs or DiskFS(),
                          blob_of=_known_blobs(ws) if catalog.repo.fs is None else None)
        rest = []
        for a in apps:
            key = cache.app_key(catalog, a)
            start = time.monotonic()
            hit = cache.lookup(catalog, a, store, key, checker) if key is not None else None
            if hit is None:
                keys[id(a)] = key
                rest.append(a)
                continue
            out[a.id] = got = AppOutcome(CACHED if hit[0] is None else FAILED,
                                         time.monotonic() - start, hit[0], hit[1], hit[2])
            if on_done is not None:
                on_done(a, got)
        apps = rest
    workers = workers_for(ws, engine if engine.name == "builtin" else _BUILTIN, jobs, len(apps))
    base = len(_APP_JOBS)
    for i, a in enumerate(apps):
        _APP_JOBS[base + i] = (catalog, a, want_items, store, keys.get(id(a)))
    try:
        if workers == 1:
            for i, a in enumerate(apps):
                out[a.id] = got = _render_app_job(base + i)
                if on_done is not None:
                    on_done(a, got)
            return out
        from kzgit.workers import guarded, render_pool   # start-up: only the runs that need it
        with render_pool(_BUILTIN, workers) as pool:
            from concurrent.futures import as_completed   # start-up: the pool imported it already
            futures = {pool.submit(guarded, _render_app_job, base + i): a
                       for i, a in enumerate(apps)}
            for f in as_completed(futures):
                a = futures[f]
                out[a.id] = got = f.result()
                if on_done is not None:
                    on_done(a, got)
        return out
    finally:
        for i in range(len(apps)):
            _APP_JOBS.pop(base + i, None)


class _Builtin:
    """What :func:`kzgit.workers.render_pool` and :func:`workers_for` read of an engine: its
    name (applications always render with the builtin engine)."""

    name = "builtin"


_BUILTIN: Any = _Builtin()


def app_findings(ws: Workspace, engine: Engine, catalog: Catalog, apps: Sequence[App],
                 jobs: int = 0, on_done: Optional[Callable[[RootResult], None]] = None,
                 store: Optional[Store] = None) -> Tuple[List[HookFinding], List[RootResult]]:
    """Render each application that is not plain (through the render cache ``store``); one
    finding per application that does not render (or whose manifest is malformed), naming
    it and the line of its definition, and one result for each (a malformed one failed)."""
    out: List[HookFinding] = []
    todo = []
    malformed: List[RootResult] = []   # counted with the others (summary's count line)
    for a in apps:
        if a.error:
            path, _, rest = a.error.partition(":")
            line, _, msg = rest.partition(": ")
            out.append(HookFinding(path, f"{a.id}: {msg}", int(line) if line.isdigit() else None))
            malformed.append(RootResult(a.id, FAILED, 0.0, a.error))
        elif a.rendered and not plain_app(ws, catalog, a):
            todo.append(a)

    def result(a: App, got: AppOutcome) -> RootResult:
        return RootResult(a.id, got.status, got.seconds, got.error,
                          [ws.relative_message(w) for w in got.warnings])
    hear = None if on_done is None else (lambda a, got: on_done(result(a, got)))
    outcomes = render_apps(ws, engine, catalog, todo, jobs, on_done=hear, store=store)
    results = []
    for a in todo:
        got = outcomes[a.id]
        if got.error is not None:
            out.append(HookFinding(a.file, f"{a.id}: does not render: "
                                   + ws.relative_message(got.error), got.line))
        results.append(result(a, got))
    return out, malformed + results


def app_components(catalog: Catalog) -> Set[str]:
    """The component directories (repo-relative) the applications' own specs include (Flux
    ``spec.components``, Argo CD ``kustomize.components``): checked by those applications."""
    import posixpath   # start-up: only repositories with applications
    out: Set[str] = set()
    for a in catalog.apps:
        spec = a.obj.get("spec")
        spec = spec if isinstance(spec, dict) else {}
        lists = [spec.get("components")] if a.controller == "flux" else [
            (s.get("kustomize") or {}).get("components") for s in a.extra.get("sources") or []
            if isinstance(s.get("kustomize"), dict)]
        for comps in lists:
            for c in comps if isinstance(comps, list) else []:
                if isinstance(c, str) and a.path is not None:
                    out.add(posixpath.normpath(posixpath.join(a.path or ".", c)))
    return out
