"""``kzgit diff``: render the roots a change affects at two revisions and compare them.

The roots come from the dependency graph of each side (:mod:`kzgit.graph`),
as for the render hook: a root is compared when the change reaches it at the
base or at the head.  A root with a kustomization at one side only is
*added* or *removed*.

Security: the head may be a stranger's pull request.  Everything that decides
what runs -- plugin, exec and helm enabling, the engine and its binary, the
load restrictor, roots and exclusions -- comes from the command line or the
*base* revision's configuration; the head's configuration is never read for
it (a note says when the head changes it).

Builtin renders go through the persistent render cache
(:mod:`kzgit.rendercache`): a base revision's files are git blobs, recorded by
object id, so re-running a check after a push renders only what the push
changed.  ``shard`` keeps one of N disjoint parts of the roots
(:func:`kzgit.graph.shard`); :func:`merge` puts the shards' reports together.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from kzgit import gitio
from kzgit.gitio import objects
from kzgit.builder import BuildOptions, build
from kzgit.config import Config
from kzgit.diff import drift as _drift
from kzgit.diff.gittree import GitTreeFS
from kzgit.diff.report import (ADDED, CHANGED, ERROR, FIXED, REMOVED, UNCHANGED, DiffReport,
                               RenderedResource, RenderError, RenderStat, RootDiff, Side, compare,
                               fingerprint, stem_from_shape)
from kzgit.diff.revision import ConfinedDiskFS, Revision, changed_paths, open_commit, open_worktree
from kzgit.engine import Engine, get_engine
from kzgit.errors import BuildError, KzgitError, UsageError, full_message
from kzgit import versions
from kzgit.graph import Graph, disk_resolver, fs_resolver, root_weights, scan, scan_cached, shard
from kzgit.loader import DiskFS, FileSystem
from kzgit.record import FrozenRecord, Record
from kzgit.rendercache import BUILT, FAILED, RenderOutcome, Store, lookup, render_cached
from kzgit.rendercache.reads import Checker
from kzgit.resource import Resource
from kzgit.yamlio import dump_documents, load_documents, load_yaml11

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from kzgit.gitops.discover import Catalog
    from kzgit.gitops.model import App, Repository

Progress = Callable[[int, int, str], None]
"""``progress(done, total, what)``: renders done out of ``total``, the one under way or just done;
called once more with ``done == total`` at the end."""


class DiffOptions(Record):
    """What to compare and how; ``None`` settings come from the base revision's configuration."""

    __slots__ = ("base", "head", "engine", "enable_alpha_plugins", "enable_exec", "enable_helm",
                 "offline", "jobs", "progress", "store", "shard", "repo", "kustomize_version",
                 "show_secrets", "on_render", "explain")

    def __init__(self, base: str = "HEAD", head: Optional[str] = None, engine: Optional[str] = None,
                 enable_alpha_plugins: bool = False, enable_exec: bool = False,
                 enable_helm: bool = False, offline: bool = False, jobs: int = 0,
                 progress: Optional[Progress] = None, store: Optional[Store] = None,
                 shard: Optional[Tuple[int, int]] = None, repo: Optional[str] = None,
                 kustomize_version: Optional[str] = None, show_secrets: bool = False,
                 on_render: Optional[Callable[[RenderStat], None]] = None,
                 explain: bool = False) -> None:
        self.base = base
        self.head = head                    # None: the working tree
        self.engine = engine                # "builtin", "kustomize", "kubectl"
        self.enable_alpha_plugins = enable_alpha_plugins   # True turns it on; False: the base's
        self.enable_exec = enable_exec
        self.enable_helm = enable_helm
        self.offline = offline
        self.jobs = jobs                    # parallel renders; 0: the base's `jobs`, else per CPU
        self.progress = progress
        self.store = store                  # the render cache; None: render everything
        self.shard = shard                  # (I, N): only part I of N of the roots
        self.repo = repo                    # the repository's top, when the caller found it
        self.kustomize_version = kustomize_version   # --kustomize-version; None: the base's
        self.show_secrets = show_secrets    # print Secret values (else redacted: kzgit.diff.redact)
        self.on_render = on_render          # told of each rendering as it finishes (-v)
        self.explain = explain              # name, on each added line, the change that set it


def diff(cwd: str, options: DiffOptions) -> DiffReport:
    """Compare the renderings of the roots affected between ``options.base`` and ``options.head``.

    Raises :class:`~kzgit.errors.UsageError` for a bad revision, configuration or
    engine; a root that does not render is reported (:attr:`DiffReport.failed`), not raised.
    """
    repo = os.path.realpath(options.repo or gitio.repo_root(cwd))
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(_TREES.clear)
        cleanup.callback(objects.close_readers)   # the git cat-file of each side's reads
        commits = gitio.resolve_commits(repo, [options.base] + ([options.head] if options.head else []))
        partial = gitio.is_partial_clone(repo)
        base = open_commit(repo, options.base, cleanup, commits[0], partial)
        head = open_commit(repo, options.head, cleanup, commits[1], partial) \
            if options.head is not None else open_worktree(repo, cleanup)
        report = DiffReport(Side(base.label, base.rev, base.commit),
                            Side(head.label, head.rev, head.commit))
        config = base.config()
        report.notes += _config_notes(base, head, config)
        engine = _engine(config, options)
        build_options = BuildOptions(
            load_restrictor=config.load_restrictor,
            enable_alpha_plugins=options.enable_alpha_plugins or config.enable_alpha_plugins,
            enable_exec=options.enable_exec or config.enable_exec,
            enable_helm=options.enable_helm or config.enable_helm,
            helm_command=config.helm_command,   # the base revision's: the head's is not trusted
            sandbox=config.sandbox,             # the base revision's too
            offline=options.offline,
            # --kustomize-version, else the environment, else the base revision's setting
            **versions.options(versions.with_flag(config, options.kustomize_version)))
        changed = changed_paths(base, head)
        base_graph, head_graph = _graph(base, config, options.store), _graph(head, config, options.store)
        roots = sorted(set(base_graph.affected_roots(changed)) | set(head_graph.affected_roots(changed)))
        report.fingerprint = fingerprint(base.commit, head.commit, roots, list(changed))
        if options.shard is not None:
            roots = _shard(roots, base, head, base_graph, head_graph, *options.shard)
            report.shard = options.shard
        labels = {"base": base.label, "head": head.label}

        def finished(job: Tuple[str, str], got: _Outcome) -> None:
            if options.on_render is not None:
                options.on_render(RenderStat(job[0], job[1], got[2], got[3], labels[job[1]]))

        results = _render_all(roots, base, head, base_graph, head_graph, engine, build_options,
                              options.jobs or config.jobs, options.progress, options.store, finished)
        report.renders = [RenderStat(root, side, status, seconds, labels[side])
                          for (root, side), (_, _, status, seconds) in sorted(results.items())]
        if options.progress:
            options.progress(len(results), len(results), "")
        report.roots = [_root_diff(root, base, head, base_graph, head_graph, results,
                                   options.show_secrets) for root in roots]
        if options.explain:
            on_disk = engine.name != "builtin" or build_options.enable_alpha_plugins or \
                build_options.enable_exec or build_options.enable_helm
            where = _where(head, on_disk)
            for rd in report.roots:
                _explain(rd, where, build_options, set(changed))
        if options.shard is None or options.shard[0] == 1:   # the applications: the first shard's
            apps, folded = _app_diffs(base, head, base_graph, head_graph, config, build_options,
                                      changed, options, report.roots)
            report.roots = [rd for rd in report.roots if rd.root not in folded] + apps
        if options.shard is None or options.shard[0] == 1:   # once across the shards
            report.drift = _drift.find(head, head_graph, config, changed)
        return report


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def _explain(rd: RootDiff, where: _Where, options: BuildOptions, changed: "set[str]") -> None:
    """``kzgit diff --explain``: each added line of a changed or added resource of ``rd`` gets a
    trailing ``# FILE:LINE STEP`` naming the step of the head's build that set its value, the
    newest one in a file the change touched when there is one (``overlays/prod/
    kustomization.yaml:14 images[0]``).  A root that does not render at the head is left as it
    is."""
    if rd.app is not None or not any(r.status in (CHANGED, ADDED) for r in rd.resources):
        return
    from kzgit.explain import explain   # start-up: --explain only
    path, opts = _builtin_inputs(where, rd.root, options)
    top = where.disk or where.repo
    try:
        blame = explain(path, opts, display=lambda p: os.path.relpath(p, top)).blame()
    except KzgitError:
        return
    for r in rd.resources:
        lines = blame.get(r.id) if r.status in (CHANGED, ADDED) else None
        if lines:
            r.diff = _annotate_diff(r.diff, lines, changed)


def _annotate_diff(diff: str, lines: "Dict[int, List[Any]]", changed: "set[str]") -> str:
    out: List[str] = []
    head_line = 0
    for line in diff.splitlines(keepends=True):
        m = _HUNK.match(line)
        if m:
            head_line = int(m.group(1))
        elif line.startswith("+") and not line.startswith("+++"):
            chain = lines.get(head_line) or []
            touched = [s for s in chain if s.file in changed]
            step = (touched or chain or [None])[-1]
            if step is not None and step.where:
                what = step.detail if step.detail.startswith(step.kind) else step.kind
                line = line.rstrip("\n") + f"  # {step.where} {what}" + ("\n" if line.endswith("\n") else "")
            head_line += 1
        elif line.startswith(" "):
            head_line += 1
        out.append(line)
    return "".join(out)


def _shard(roots: List[str], base: Revision, head: Revision, base_graph: Graph, head_graph: Graph,
           index: int, count: int) -> List[str]:
    """Part ``index`` of ``count`` of ``roots``, weighed by their inputs at the head (else the base)."""

    def size_in(side: Revision) -> Callable[[str], int]:
        return lambda rel: len(side.read(rel) or b"")

    weights = root_weights(base_graph, base.files, size_in(base))
    weights.update(root_weights(head_graph, head.files, size_in(head)))
    return shard(roots, weights, index, count)


def _graph(side: Revision, config: Config, store: Optional[Store]) -> Graph:
    """The side's dependency graph, as the hooks scan it: every file (``exclude`` keeps
    kustomizations from being roots, and what a root reaches is followed wherever it lies),
    symbolic links followed as the build follows them."""
    if side.is_worktree or side.disk_only:   # on the disk: the work tree, or a commit's export
        resolve = disk_resolver(side.repo if side.is_worktree else side.on_disk())
    else:
        resolve = fs_resolver(side.fs, side.repo)
    if store is not None:   # kept in the render cache, checked against the blobs it read
        return scan_cached(side.files, side.read, store, roots=config.roots, exclude=config.exclude,
                           blob_of=side.blob_of, resolve=resolve)
    return scan(side.files, side.read, roots=config.roots, exclude=config.exclude, resolve=resolve)


def _engine(config: Config, options: DiffOptions) -> Engine:
    if options.engine and options.engine != config.engine:
        return get_engine(options.engine, None, config.timeout, source="--engine")
    return get_engine(config.engine, config.engine_path, config.timeout,
                      source=config.source or "configuration")


def _config_notes(base: Revision, head: Revision, config: Config) -> List[str]:
    try:
        same = head.settings() == base.settings()
    except UsageError:
        same = False
    if same:
        return []
    return [f"the kzgit configuration differs at {head.label}; kzgit diff uses the one at "
            f"{base.label} (plugins, exec and helm are never enabled by the revision under review)"]


_Outcome = Tuple[Optional[List[RenderedResource]], Optional[str], str, float]
"""A rendering, or the message of why there is none (messages cross processes; exceptions may
not), how it went (built, cached or failed) and how long it took."""

# Starting a process pool costs about half a second; below this many roots a builtin
# render in one process is faster (unless jobs is set), as in the render hook.
_MIN_ROOTS_FOR_PROCESSES = 6


class _Where(FrozenRecord):
    """Where a render finds one side's content; picklable, for worker processes."""

    __slots__ = ("repo", "commit", "disk")
    repo: str                 # the repository (and the mount of a commit's tree)
    commit: Optional[str]
    disk: Optional[str]       # render from this directory on the disk; None: the commit's tree

    def __init__(self, repo: str, commit: Optional[str], disk: Optional[str]) -> None:
        object.__setattr__(self, "repo", repo)
        object.__setattr__(self, "commit", commit)
        object.__setattr__(self, "disk", disk)


def _where(side: Revision, on_disk: bool) -> _Where:
    # Exec and KRM plugins, helm and external engines run binaries and read charts by path:
    # a commit must then really be on the disk, or the working tree's files would be used.
    disk = side.on_disk() if on_disk or side.disk_only or side.is_worktree else None
    if disk is None and side.commit is not None:
        _TREES[(side.repo, side.commit)] = side.fs   # in process: reuse its listing and caches
    return _Where(side.repo, side.commit, disk)


# The tree file systems of the commits being compared.  A forked worker inherits them (a
# listing is plain data) and reads blobs through a git cat-file of its own
# (kzgit.gitio.objects.reader keys them by pid); a worker that did not inherit them lists
# the tree again.
_TREES: Dict[Tuple[str, str], FileSystem] = {}


def _tree_fs(where: _Where) -> FileSystem:
    assert where.commit is not None
    key = (where.repo, where.commit)
    if key not in _TREES:
        _TREES[key] = GitTreeFS(where.repo, where.commit)
    return _TREES[key]


def _builtin_inputs(where: _Where, root: str, options: BuildOptions) -> Tuple[str, BuildOptions]:
    """The path and options the builtin engine renders ``root`` of one side with."""
    rel = [p for p in root.split("/") if p != "."]
    if where.disk is not None:
        fs = ConfinedDiskFS(where.disk) if where.commit else None
        return os.path.join(where.disk, *rel), options.replace(fs=fs)
    return os.path.join(where.repo, *rel), options.replace(fs=_tree_fs(where))


def _render(where: _Where, root: str, engine: Engine, options: BuildOptions,
            store: Optional[Store] = None, looked: bool = False) -> _Outcome:
    """Render ``root`` of one side (in a worker, or in process)."""
    start = time.monotonic()
    try:
        if engine.name == "builtin":
            return _builtin(*_builtin_inputs(where, root, options), store, looked)
        assert where.disk is not None
        path = os.path.join(where.disk, *[p for p in root.split("/") if p != "."])
        got = _from_yaml(engine.render(path, options), root)
        return got, None, BUILT, time.monotonic() - start
    except UsageError:
        raise      # the engine cannot run at all: not this root's fault
    except KzgitError as e:
        return None, full_message(e), FAILED, time.monotonic() - start
    except OSError as e:   # a file system error on the content read is the content's
        return None, f"{e.filename or root}: {e.strerror or e}", FAILED, time.monotonic() - start


_FLAVOUR = "diff-resources"


def _produce(path: str) -> "Callable[[BuildOptions], Tuple[bytes, List[str]]]":
    def produce(opts: BuildOptions) -> Tuple[bytes, List[str]]:
        result = build(path, opts)
        rows = [_row(r) for r in result.resources]
        return json.dumps(rows, ensure_ascii=False).encode("utf-8"), list(result.warnings)
    return produce


def _outcome(got: "RenderOutcome") -> _Outcome:
    if got.error is not None:
        if isinstance(got.error, UsageError):
            raise got.error
        return None, full_message(got.error), FAILED, got.seconds
    rendered = [RenderedResource(*row) for row in json.loads(got.payload)]
    return rendered, None, got.status, got.seconds


def _builtin(path: str, options: BuildOptions, store: Optional[Store], looked: bool = False) -> _Outcome:
    return _outcome(render_cached(path, options, store, _FLAVOUR, _produce(path), looked))


def _render_all(roots: List[str], base: Revision, head: Revision, base_graph: Graph,
                head_graph: Graph, engine: Engine, options: BuildOptions, jobs: int,
                progress: Optional[Progress], store: Optional[Store] = None,
                finished: Optional[Callable[[Tuple[str, str], _Outcome], None]] = None
                ) -> Dict[Tuple[str, str], _Outcome]:
    """Every (root, side) rendering, keyed by (root, "base"|"head"); in parallel when it pays.
    ``finished(job, outcome)`` is told of each as it is answered or done."""
    def done(job: Tuple[str, str], got: _Outcome) -> None:
        results[job] = got
        if finished is not None:
            finished(job, got)

    on_disk = (engine.name != "builtin" or options.enable_alpha_plugins or options.enable_exec
               or options.enable_helm)
    sides = {"base": (base, base_graph), "head": (head, head_graph)}
    where = {name: _where(side, on_disk) for name, (side, _) in sides.items()}
    todo = [(root, name) for root in roots for name, (_, graph) in sides.items() if root in graph.nodes]
    results: Dict[Tuple[str, str], _Outcome] = {}
    looked = False
    if store is not None and engine.name == "builtin":
        # what the cache holds is answered here (no process pool for a warm run), each
        # side's files hashed once however many roots read them
        checkers: Dict[str, Checker] = {}
        misses = []
        for job in todo:
            path, opts = _builtin_inputs(where[job[1]], job[0], options)
            checker = checkers.setdefault(job[1], Checker(opts.fs if opts.fs is not None else DiskFS()))
            hit = lookup(path, opts, store, _FLAVOUR, checker)
            if hit is None:
                misses.append(job)
            else:
                done(job, _outcome(hit))
        todo, looked = misses, True
        if progress and results:
            progress(len(results), len(results) + len(todo), "")
    if any(sum(1 for _, n in todo if n == name) > 1 for name in sides):
        # roots of one revision share bases: accumulate each once (two revisions share nothing)
        from kzgit.builder.cache import BuildCache   # start-up: only where a revision builds two roots
        options = options.replace(cache=BuildCache())
    workers = jobs or (os.cpu_count() or 1)
    if not jobs and engine.name == "builtin" and len({r for r, _ in todo}) < _MIN_ROOTS_FOR_PROCESSES:
        workers = 1
    workers = max(1, min(workers, len(todo)))

    def tell(done: int, job: Tuple[str, str]) -> None:
        if progress:
            progress(done, len(todo), f"{job[0]} at {sides[job[1]][0].label}")

    if workers == 1:
        for i, job in enumerate(todo):
            tell(i, job)
            done(job, _render(where[job[1]], job[0], engine, options, store, looked))
        return results
    # start-up: the pool's modules (concurrent.futures loads logging, traceback...) only with a pool
    import concurrent.futures
    from kzgit.workers import guarded, render_pool
    with render_pool(engine, workers) as pool:
        futures = {pool.submit(guarded, _render, where[job[1]], job[0], engine, options, store,
                               looked): job for job in todo}
        for i, future in enumerate(concurrent.futures.as_completed(futures)):
            done(futures[future], future.result())
            tell(i + 1, futures[future])
    return results


def _root_diff(root: str, base: Revision, head: Revision, base_graph: Graph, head_graph: Graph,
               results: Dict[Tuple[str, str], _Outcome], show_secrets: bool = False) -> RootDiff:
    at_base, at_head = base_graph.nodes.get(root), head_graph.nodes.get(root)
    node = at_head or at_base
    assert node is not None
    out = RootDiff(root, node.file, UNCHANGED)
    rendered: Dict[str, List[RenderedResource]] = {"base": [], "head": []}
    for name, side in (("base", base), ("head", head)):
        if (root, name) not in results:
            continue
        resources, error, _, _ = results[(root, name)]
        if error is not None:
            out.errors.append(RenderError(name, side.label, side.relative(error)))
        rendered[name] = resources or []
    return _settled(out, root, rendered, at_base is not None, at_head is not None,
                    (root, "head") in results, show_secrets)


def _settled(out: RootDiff, label: str, rendered: Dict[str, List[RenderedResource]], at_base: bool,
             at_head: bool, head_rendered: bool, show_secrets: bool) -> RootDiff:
    """``out`` (a root's or an application's section, its errors collected) with its resources
    compared and its status: the one rule of both."""
    if out.errors and all(e.side == "base" for e in out.errors) and head_rendered:
        # broken at the base, renders at the head: the change is a fix, shown with the head's
        # whole rendering (a pull request that repairs a root must not fail the check)
        out.status = FIXED
        out.resources = compare(label, [], rendered["head"])
        return out
    if out.errors:
        out.status = ERROR
        return out
    out.resources = compare(label, rendered["base"], rendered["head"], show_secrets)
    if not at_base:
        out.status = ADDED
    elif not at_head:
        out.status = REMOVED
    elif out.resources:
        out.status = CHANGED
    return out


def _recorded_stem(r: Resource) -> Optional[str]:
    """The name before the build appended a hash suffix (hashing.py add_hashes), if it did."""
    if not r.needs_hash or not r.prev_ids:
        return None
    before = r.prev_ids[-1].name
    if r.name.startswith(before + "-") and len(r.name) == len(before) + 11:
        return before
    return None


def _row(r: Resource) -> List[Optional[str]]:
    """The fields of the :class:`RenderedResource` of ``r``, in order (what the cache stores)."""
    return [r.api_version, r.kind, r.namespace, r.name, dump_documents([r.obj]), _recorded_stem(r)]


def _from_yaml(text: str, root: str) -> List[RenderedResource]:
    out: List[RenderedResource] = []
    for obj in load_documents(text, f"the rendering of {root}"):
        if not isinstance(obj, dict):
            raise BuildError(f"the rendering of {root} holds a document that is not a map")
        r = Resource(obj)
        out.append(RenderedResource(r.api_version, r.kind, r.namespace, r.name, dump_documents([obj]),
                                    stem_from_shape(r.kind, r.name)))
    return out


# -- applications (kzgit.gitops) ----------------------------------------------------------------

def _side_repository(side: Revision, config: Config, build_options: BuildOptions,
                     flag: Optional[str], remotes_of: str) -> "Repository":
    """One side as kzgit.gitops reads it: what widens what runs (plugins, [gitops]) is the
    base's (``config``); the Kustomize release is the side's own, so a pull request that bumps
    ``kustomize-version`` (a deployer upgrade) shows what the bump changes."""
    from kzgit.gitops.discover import repository_for   # start-up: only repositories with apps
    try:
        own = side.config()
    except UsageError:
        own = config
    mixed = versions.with_flag(config.replace(kustomize_version=own.kustomize_version,
                                              kustomize_version_origin=own.kustomize_version_origin),
                               flag)
    mixed = mixed.replace(enable_helm=build_options.enable_helm,
                          enable_exec=build_options.enable_exec,
                          enable_alpha_plugins=build_options.enable_alpha_plugins)
    fs = None if side.is_worktree else side.fs
    return repository_for(side.repo, side.files, side.read, fs, mixed, remotes_of=remotes_of,
                          label=side.label)


_APP_MARKS = (b"kustomize.toolkit.fluxcd.io", b"argoproj.io")


def _mentions_apps(side: Revision, store: Optional[Store]) -> bool:
    """Whether a YAML or JSON file of the side names a Flux or Argo CD API group.  For a
    commit the verdict is kept in the render cache, keyed by the files' blob ids, so a warm
    diff reads no blob for it."""
    names = [f for f in side.files if f.endswith((".yaml", ".yml", ".json"))]
    key = None
    if store is not None and side.blob_of is not None:
        from kzgit.rendercache import code_fingerprint   # start-up: as the cache's own users
        from kzgit.sha import sha256   # start-up: as above
        blobs = [(f, side.blob_of(f)) for f in names]
        key = sha256(json.dumps(["gitops-marks", code_fingerprint(), blobs]).encode()).hexdigest()
        for entry in store.variants(key):
            got = store.read(entry, key, payload=False)
            if got is not None:
                return bool(got[0].get("apps"))
    found = False
    for f in names:
        data = side.read(f)
        if data and any(m in data for m in _APP_MARKS):
            found = True
            break
    if store is not None and key is not None:
        store.write(key, {"apps": found}, b"")
    return found


def _app_diffs(base: Revision, head: Revision, base_graph: Graph, head_graph: Graph,
               config: Config, build_options: BuildOptions, changed: List[str],
               options: DiffOptions, root_sections: Sequence[RootDiff]
               ) -> Tuple[List[RootDiff], Set[str]]:
    """One section per Argo CD Application or Flux Kustomization the change reaches at either
    side, comparing what each side's controller would render (each side's own specs); and
    the roots whose sections they replace.

    An application that deploys a root as it is at both sides (it renders as the root
    renders with these settings: :func:`kzgit.gitops.select.deploys_root_as_is`) takes the
    root's section, which is then not shown on its own: the root is what the application
    deploys, and one section says it once.  A root section with an error stays (Flux builds
    without load restrictions: the application may render where the root does not), and the
    application is then rendered for its own section."""
    if not (_mentions_apps(base, options.store) or _mentions_apps(head, options.store)):
        return [], set()
    from kzgit.gitops.discover import discover   # start-up: only repositories with apps
    from kzgit.gitops.select import affected   # start-up: as above
    catalogs = {}
    picked: Dict[str, Dict[str, "App"]] = {}
    order: List[str] = []
    for name, side, graph in (("base", base, base_graph), ("head", head, head_graph)):
        catalog = discover(_side_repository(side, config, build_options,
                                            options.kustomize_version, base.repo))
        catalogs[name] = catalog
        picked[name] = {a.id: a for a in catalog.apps}
        for a in affected(catalog, graph, changed):
            if a.id not in order:
                order.append(a.id)
    # argocd-cm's build options widen what a build reads (a load restrictor) and runs (helm):
    # the head renders with the base's, as every widening setting (its own kustomize.version
    # registrations stay: which release renders is each side's own)
    head_argo, base_argo = catalogs["head"].argo_settings(), catalogs["base"].argo_settings()
    if head_argo is not None:
        head_argo.build_options = base_argo.build_options if base_argo is not None else None
        head_argo.version_options = dict(base_argo.version_options) if base_argo is not None \
            else {}
    sections = {rd.root: rd for rd in root_sections if rd.app is None and not rd.errors}
    sides = {"base": (base, base_graph), "head": (head, head_graph)}
    out = []
    folded: Set[str] = set()
    for app_id in order:
        section = _as_its_root(app_id, picked, catalogs, sides, sections, build_options)
        if section is not None:
            folded.add(section.root)
            out.append(RootDiff(app_id, (picked["head"][app_id]).file, section.status,
                                section.resources, section.errors, app=app_id))
            continue
        out.append(_app_diff(app_id, base, head, catalogs, picked, options.show_secrets))
    return out, folded


def _as_its_root(app_id: str, picked: Dict[str, Dict[str, "App"]],
                 catalogs: Dict[str, "Catalog"], sides: Dict[str, Tuple[Revision, Graph]],
                 sections: Dict[str, RootDiff], build_options: BuildOptions
                 ) -> Optional[RootDiff]:
    """The section of the root ``app_id`` deploys as it is at both sides, if there is one."""
    from kzgit.gitops.select import deploys_root_as_is   # start-up: as _app_diffs
    found = None
    for name in ("base", "head"):
        app = picked[name].get(app_id)
        if app is None:
            return None
        side, graph = sides[name]
        section = sections.get(app.path or ".")
        if section is None or (found is not None and found is not section):
            return None
        found = section

        def lists_resources(path: str, side: Revision = side, graph: Graph = graph) -> bool:
            node = graph.nodes.get(path or ".")
            if node is None:
                return False
            try:
                k = load_yaml11(side.read(node.file) or b"", node.file)
            except KzgitError:
                return False
            return isinstance(k, dict) and bool(k.get("resources"))
        # the roots render with the base's settings and the run's Kustomize release
        if not deploys_root_as_is(catalogs[name], app, set(graph.roots), lists_resources,
                                  build_options.load_restrictor, build_options.kustomize_version):
            return None
    return found


def _app_rendering(catalog: "Catalog", app: "App") -> Tuple[Optional[List[RenderedResource]],
                                                             Optional[str]]:
    from kzgit.gitops.render import AppError, render_app   # start-up: as _app_diffs
    if not app.rendered and not app.error:
        return [], None   # listed, not rendered (another repository, Helm): nothing to compare
    try:
        got = render_app(catalog, app)
    except AppError as e:
        return None, f"{app.file}:{e.line}: {e.detail}"
    return [RenderedResource(r.api_version, r.kind, r.namespace, r.name, dump_documents([r.obj]),
                             _recorded_stem(r)) for r in got.resources], None


def _app_diff(app_id: str, base: Revision, head: Revision, catalogs: Dict[str, "Catalog"],
              picked: Dict[str, Dict[str, "App"]], show_secrets: bool) -> RootDiff:
    at_base, at_head = picked["base"].get(app_id), picked["head"].get(app_id)
    shown = at_head or at_base
    assert shown is not None
    out = RootDiff(app_id, shown.file, UNCHANGED, app=app_id)
    rendered: Dict[str, List[RenderedResource]] = {"base": [], "head": []}
    for name, side, app in (("base", base, at_base), ("head", head, at_head)):
        if app is None:
            continue
        resources, error = _app_rendering(catalogs[name], app)
        if error is not None:
            out.errors.append(RenderError(name, side.label, side.relative(error)))
        rendered[name] = resources or []
    return _settled(out, app_id, rendered, at_base is not None, at_head is not None,
                    at_head is not None, show_secrets)
