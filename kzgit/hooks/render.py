"""``kzgit-render``: every kustomization root affected by the change must render.

Affected roots come from the dependency graph (:mod:`kzgit.graph`); each is
built once per run, even when several changed files reach it, in parallel
when ``jobs`` allows: processes for the builtin engine (it is CPU-bound
Python), threads for external binaries (they are processes already).
"""
from __future__ import annotations

import os
from typing import List, Optional, Tuple

from kzgit.build import BuildOptions
from kzgit.engine import Engine, render_pool
from kzgit.errors import KzgitError, full_message
from kzgit.hooks import Finding, Workspace


# Starting a process pool costs about half a second; below this many roots a
# builtin build in one process is faster (unless jobs is set explicitly).
_MIN_ROOTS_FOR_PROCESSES = 6


def options_for(ws: Workspace, offline: bool = False) -> BuildOptions:
    """Build options from the repository's configuration."""
    c = ws.config
    from kzgit.build.cache import BuildCache
    # one cache for the run: roots sharing a base accumulate it once (per worker process)
    return BuildOptions(load_restrictor=c.load_restrictor, enable_alpha_plugins=c.enable_alpha_plugins,
                        enable_exec=c.enable_exec, enable_helm=c.enable_helm,
                        helm_command=c.helm_command, offline=offline,
                        cache=BuildCache())


def _render_one(engine: Engine, path: str, options: BuildOptions) -> Optional[str]:
    """Render in a worker; the error *message* comes back (exceptions may not pickle)."""
    try:
        engine.render(path, options)
    except KzgitError as e:
        return full_message(e)
    return None


def roots_to_build(ws: Workspace) -> List[str]:
    """The roots the change affects (every root when ``ws.changed`` is None)."""
    g = ws.graph
    return list(g.roots) if ws.changed is None else g.affected_roots(ws.changed)


def run(ws: Workspace, engine: Engine, jobs: int = 0, offline: bool = False) -> List[Finding]:
    """Build every affected root; one finding per root that does not render."""
    roots = roots_to_build(ws)
    options = options_for(ws, offline)
    asked = jobs or ws.config.jobs
    workers = asked or (os.cpu_count() or 1)
    if not asked and engine.name == "builtin" and len(roots) < _MIN_ROOTS_FOR_PROCESSES:
        workers = 1
    workers = max(1, min(workers, len(roots)))
    results: List[Tuple[str, Optional[str]]] = []
    if workers == 1:
        results = [(r, _render_one(engine, ws.path(r), options)) for r in roots]
    else:
        with render_pool(engine, workers) as pool:
            futures = [(r, pool.submit(_render_one, engine, ws.path(r), options)) for r in roots]
            results = [(r, f.result()) for r, f in futures]
    return [Finding(root, "does not render: " + ws.scrub(err)) for root, err in results if err]
