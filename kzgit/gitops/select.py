"""Which applications a change reaches (for the hooks and ``kzgit diff``).

An application is reached by a change of: a file its rendering reads (its path as a directory,
with what each kustomization there reaches: :meth:`kzgit.graph.Graph.directory_reach`), its own
manifest or an ancestor's (the parent that delivers it, the ApplicationSet that generates it),
what configures its controller (an ``argocd-cm``, a Flux source, a ``substituteFrom``
ConfigMap or Secret it names, a ``.sourceignore``), or kzgit's configuration.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Iterable, List, Optional, Protocol, Set
    from kzgit.gitops.catalog import Catalog
    from kzgit.gitops.model import App

    class Graph(Protocol):
        """kzgit.graph.Graph by its shape (the graph is a sibling of this package)."""

        def directory_reach(self, d: str) -> Any: ...

    Reach = Any   # kzgit.graph.Reach: files, trees, kustomization_dirs, touches(), replace()

_CONFIG_FILES = (".kzgit.toml", "pyproject.toml")


def app_reach(graph: Graph, app: App) -> Reach:
    """What ``app``'s rendering reads, by the dependency graph of its tree."""
    out: Optional[Reach] = None
    for p in app.extra.get("paths") or [app.path]:
        r = graph.directory_reach(p or "")
        out = r if out is None else out.replace(
            files=out.files | r.files, trees=out.trees | r.trees,
            kustomization_dirs=out.kustomization_dirs | r.kustomization_dirs)
    assert out is not None
    return out


def affected(catalog: Catalog, graph: Graph, changed: Optional[Iterable[str]]) -> List[App]:
    """The applications of ``catalog`` a change of ``changed`` reaches (all for None)."""
    if changed is None:
        return list(catalog.apps)
    paths = list(changed)
    if any(p in _CONFIG_FILES or p.rsplit("/", 1)[-1] == ".sourceignore" for p in paths):
        return list(catalog.apps)
    index = catalog.index
    argo_config = {index.argocd_cm.file} if index.argocd_cm is not None else set()
    flux_config = {d.file for d in index.sources.values()}
    argo_touched = any(p in argo_config for p in paths)
    flux_touched = any(p in flux_config for p in paths)
    by_id = {a.id: a for a in catalog.apps}
    out = []
    for a in catalog.apps:
        if (argo_touched and a.controller == "argocd") or (flux_touched and a.controller == "flux"):
            out.append(a)
            continue
        own = {a.file} | _substitute_files(catalog, a)
        up = by_id.get(a.parent or "") or by_id.get(a.appset or "")
        while up is not None:
            own.add(up.file)
            up = by_id.get(up.parent or "")
        if any(p in own for p in paths):
            out.append(a)
        elif a.rendered and any(app_reach(graph, a).touches(p) for p in paths):
            out.append(a)
    return out


def _substitute_files(catalog: Catalog, app: App) -> Set[str]:
    """The files defining the ConfigMaps and Secrets a Flux Kustomization's substituteFrom
    names (any namespace: where a file's object lands is known only once rendered)."""
    spec = app.obj.get("spec")
    post = spec.get("postBuild") if isinstance(spec, dict) else None
    refs = post.get("substituteFrom") if isinstance(post, dict) else None
    out: Set[str] = set()
    for ref in refs if isinstance(refs, list) else []:
        if isinstance(ref, dict):
            for d in catalog.index.named(catalog.repo, str(ref.get("kind")), str(ref.get("name"))):
                out.add(d.file)
    return out
