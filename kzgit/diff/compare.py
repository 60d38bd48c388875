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
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
from typing import Callable, List, Optional

from kzgit.build import BuildOptions
from kzgit.config import Config, glob_match
from kzgit.diff import drift as _drift
from kzgit.diff.report import (ADDED, CHANGED, ERROR, REMOVED, UNCHANGED, DiffReport, RenderedResource,
                               RenderError, RootDiff, Side, compare, stem_from_shape)
from kzgit.diff.revision import Revision, changed_paths, open_commit, open_worktree
from kzgit.engine import Engine, get_engine
from kzgit.errors import BuildError, KzgitError, UsageError
from kzgit.graph import Graph, scan
from kzgit.resource import Resource

Progress = Callable[[int, int, str], None]
"""``progress(done, total, root)``: called before each root is rendered, and once at the end."""


@dataclasses.dataclass
class DiffOptions:
    """What to compare and how; ``None`` settings come from the base revision's configuration."""

    base: str = "HEAD"
    head: Optional[str] = None                  # None: the working tree
    engine: Optional[str] = None                # "builtin", "kustomize", "kubectl"
    enable_alpha_plugins: bool = False          # True turns it on; False leaves the base's setting
    enable_exec: bool = False
    enable_helm: bool = False
    offline: bool = False
    progress: Optional[Progress] = None


def diff(cwd: str, options: DiffOptions) -> DiffReport:
    """Compare the renderings of the roots affected between ``options.base`` and ``options.head``.

    Raises :class:`~kzgit.errors.UsageError` for a bad revision, configuration or
    engine; a root that does not render is reported (:attr:`DiffReport.failed`), not raised.
    """
    from kzgit import gitio
    repo = os.path.realpath(gitio.repo_root(cwd))
    with contextlib.ExitStack() as cleanup:
        base = open_commit(repo, options.base, cleanup)
        head = open_commit(repo, options.head, cleanup) if options.head is not None \
            else open_worktree(repo, cleanup)
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
            offline=options.offline)
        changed = changed_paths(base, head)
        base_graph, head_graph = _graph(base, config), _graph(head, config)
        roots = sorted(set(base_graph.affected_roots(changed)) | set(head_graph.affected_roots(changed)))
        renderer = _Renderer(engine, build_options)
        for i, root in enumerate(roots):
            if options.progress:
                options.progress(i, len(roots), root)
            report.roots.append(_root_diff(root, base, head, base_graph, head_graph, renderer))
        if options.progress:
            options.progress(len(roots), len(roots), "")
        from kzgit.localize import LOCK_FILE_NAME, check_copy
        report.drift = _drift.find(head, head_graph, config, changed, check_copy, LOCK_FILE_NAME)
        return report


def _graph(side: Revision, config: Config) -> Graph:
    files = [f for f in side.files if not (config.exclude and glob_match(f, config.exclude))]
    return scan(files, side.read, roots=config.roots, exclude=config.exclude)


def _engine(config: Config, options: DiffOptions) -> Engine:
    if options.engine and options.engine != config.engine:
        return get_engine(options.engine, None, config.timeout, source="--engine")
    return get_engine(config.engine, config.engine_path, config.timeout,
                      source=config.source or "configuration")


def _config_notes(base: Revision, head: Revision, config: Config) -> List[str]:
    try:
        theirs: Optional[Config] = head.config()
    except UsageError:
        theirs = None
    if theirs is not None and dataclasses.replace(theirs, source=None) == dataclasses.replace(config, source=None):
        return []
    return [f"the kzgit configuration differs at {head.label}; kzgit diff uses the one at "
            f"{base.label} (plugins, exec and helm are never enabled by the revision under review)"]


def _root_diff(root: str, base: Revision, head: Revision, base_graph: Graph, head_graph: Graph,
               renderer: "_Renderer") -> RootDiff:
    at_base, at_head = base_graph.nodes.get(root), head_graph.nodes.get(root)
    node = at_head or at_base
    assert node is not None
    out = RootDiff(root, node.file, UNCHANGED)
    before: List[RenderedResource] = []
    after: List[RenderedResource] = []
    if at_base is not None:
        try:
            before = renderer.render(base, root)
        except BuildError as e:
            out.errors.append(RenderError("base", base.label, str(e)))
    if at_head is not None:
        try:
            after = renderer.render(head, root)
        except BuildError as e:
            out.errors.append(RenderError("head", head.label, str(e)))
    if out.errors:
        out.status = ERROR
        return out
    out.resources = compare(root, before, after)
    if at_base is None:
        out.status = ADDED
    elif at_head is None:
        out.status = REMOVED
    elif out.resources:
        out.status = CHANGED
    return out


class _Renderer:
    """Renders one root of one side: in process from git objects when it is safe, else on disk."""

    def __init__(self, engine: Engine, options: BuildOptions) -> None:
        self.engine = engine
        self.options = options
        # Exec and KRM plugins, and helm, run binaries and read charts by path on the disk:
        # a revision must then really be there, or the working tree's files would be used.
        self.needs_disk = (engine.name != "builtin" or options.enable_alpha_plugins
                           or options.enable_exec or options.enable_helm)

    def render(self, side: Revision, root: str) -> List[RenderedResource]:
        rel = [p for p in root.split("/") if p != "."]
        try:
            if self.needs_disk or side.disk_only:
                path = os.path.join(side.on_disk(), *rel)
                if self.engine.name == "builtin":
                    return self._builtin(path, dataclasses.replace(self.options, fs=None))
                return _from_yaml(self.engine.render(path, self.options), root)
            return self._builtin(os.path.join(side.repo, *rel),
                                 dataclasses.replace(self.options, fs=side.fs))
        except UsageError:
            raise      # the engine cannot run at all: not this root's fault
        except KzgitError as e:
            raise BuildError(side.scrub(str(e))) from None
        except OSError as e:   # a file system error on the content read is the content's
            raise BuildError(side.scrub(f"{e.filename or root}: {e.strerror or e}")) from None

    @staticmethod
    def _builtin(path: str, options: BuildOptions) -> List[RenderedResource]:
        from kzgit.build import build
        return [_from_resource(r) for r in build(path, options).resources]


def _recorded_stem(r: Resource) -> Optional[str]:
    """The name before the build appended a hash suffix (hashing.py add_hashes), if it did."""
    if not r.needs_hash or not r.prev_ids:
        return None
    before = r.prev_ids[-1].name
    if r.name.startswith(before + "-") and len(r.name) == len(before) + 11:
        return before
    return None


def _from_resource(r: Resource) -> RenderedResource:
    from kzgit.yamlio import dump_documents
    return RenderedResource(r.api_version, r.kind, r.namespace, r.name, dump_documents([r.obj]),
                            _recorded_stem(r))


def _from_yaml(text: str, root: str) -> List[RenderedResource]:
    from kzgit.yamlio import dump_documents, load_documents
    out: List[RenderedResource] = []
    for obj in load_documents(text, f"the rendering of {root}"):
        if not isinstance(obj, dict):
            raise BuildError(f"the rendering of {root} holds a document that is not a map")
        r = Resource(obj)
        out.append(RenderedResource(r.api_version, r.kind, r.namespace, r.name, dump_documents([obj]),
                                    stem_from_shape(r.kind, r.name)))
    return out
