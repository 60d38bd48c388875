"""Which applications a change reaches (for the hooks and ``kzgit diff``).

An application is reached by a change of: a file its rendering reads (its path as a directory,
with what each kustomization there reaches: :meth:`kzgit.graph.Graph.directory_reach`), its own
manifest or an ancestor's (the parent that delivers it, the ApplicationSet that generates it),
a kustomization or patch file the parent's rendering applies to the file that defines it,
what configures its controller (an ``argocd-cm``, a Flux source, a ``substituteFrom``
ConfigMap or Secret it names or the generator making one, a ``.sourceignore``), or kzgit's
configuration.
"""
from __future__ import annotations

import posixpath

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, Iterable, List, Optional, Protocol, Set, Tuple
    from kzgit.gitops.catalog import Catalog
    from kzgit.gitops.model import App

    class Graph(Protocol):
        """kzgit.graph.Graph by its shape (the graph is a sibling of this package)."""

        def directory_reach(self, d: str) -> Any: ...

        def reach(self, kdir: str) -> Any: ...

        nodes: Dict[str, Any]

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
    # changed files that can change an object a kustomization lists (not only add one): its
    # kustomization files and patch files; a parent rendering one reaches the child it lists
    from kzgit.loader import KUSTOMIZATION_FILE_NAMES   # start-up: as the builds' own
    machinery = [p for p in paths if posixpath.basename(p) in KUSTOMIZATION_FILE_NAMES
                 or p in index.patch_files]
    listing: Dict[Tuple[str, str], List[Reach]] = {}
    generated: Dict[Tuple[str, str], Set[str]] = {}
    # the kustomizations a changed file is (or is read by): only their generators can make a
    # substituteFrom ConfigMap the change reaches (a warm hook parses nothing otherwise)
    changed_set = set(paths)
    touched = [(k, n) for k, n in graph.nodes.items()
               if n.file in changed_set or not changed_set.isdisjoint(n.files)]
    out = []
    for a in catalog.apps:
        if (argo_touched and a.controller == "argocd") or (flux_touched and a.controller == "flux"):
            out.append(a)
            continue
        own = {a.file} | _substitute_files(catalog, a, touched, generated)
        # the kustomizations that applied it or an ancestor (a bootstrap: kubectl apply -k)
        applied = [a.extra["applied_by"]] if "applied_by" in a.extra else []
        delivered: List[Tuple[App, App]] = []   # (an application, the parent rendering it)
        x, up = a, by_id.get(a.parent or "") or by_id.get(a.appset or "")
        while up is not None:
            own.add(up.file)
            if "applied_by" in up.extra:
                applied.append(up.extra["applied_by"])
            if x.parent == up.id and up.rendered:
                delivered.append((x, up))
            x, up = up, by_id.get(up.parent or "")
        if any(p in own for p in paths) or any(
                graph.directory_reach(d).touches(p) for d in applied for p in paths) or (
                machinery and any(r.touches(p) for x, up in delivered
                                  for r in _listing(graph, up, x.file, listing)
                                  for p in machinery)):
            out.append(a)
        elif a.rendered and any(app_reach(graph, a).touches(p) for p in paths):
            out.append(a)
    return out


def _listing(graph: Graph, parent: App, file: str, memo: Dict[Tuple[str, str], List[Reach]]
             ) -> List[Reach]:
    """What each kustomization ``parent``'s rendering builds that lists ``file`` (directly or
    through a base) reaches: its patches, components and transformers apply to the objects of
    ``file`` as the parent delivers them (fluxcd/flux2-multi-tenancy's ``tenants/production``
    patches the tenant's Kustomization it lists from ``tenants/base``)."""
    key = (parent.id, file)
    got = memo.get(key)
    if got is None:
        dirs = memo.get((parent.id, ""))
        if dirs is None:
            dirs = [graph.reach(d) for d in sorted(app_reach(graph, parent).kustomization_dirs)]
            memo[(parent.id, "")] = dirs
        got = [r for r in dirs if file in r.files]
        memo[key] = got
    return got


def _substitute_files(catalog: Catalog, app: App, touched: List[Tuple[str, Any]],
                      generated: Dict[Tuple[str, str], Set[str]]) -> Set[str]:
    """The files defining the ConfigMaps and Secrets a Flux Kustomization's substituteFrom
    names (any namespace: where a file's object lands is known only once rendered), and those
    a kustomization of ``touched`` generating one of that name reads
    (:func:`_generator_files`)."""
    spec = app.obj.get("spec")
    post = spec.get("postBuild") if isinstance(spec, dict) else None
    refs = post.get("substituteFrom") if isinstance(post, dict) else None
    out: Set[str] = set()
    for ref in refs if isinstance(refs, list) else []:
        if isinstance(ref, dict):
            kind, name = str(ref.get("kind")), str(ref.get("name"))
            for d in catalog.index.named(catalog.repo, kind, name):
                out.add(d.file)
            key = (kind, name)
            if key not in generated:
                generated[key] = _generator_files(catalog, touched, kind, name)
            out |= generated[key]
    return out


_GENERATOR_FIELDS = {"ConfigMap": "configMapGenerator", "Secret": "secretGenerator"}


def _generator_files(catalog: Catalog, nodes: List[Tuple[str, Any]], kind: str, name: str
                     ) -> Set[str]:
    """Of the kustomizations ``nodes`` ((directory, graph node)), the files of those with a
    ``configMapGenerator`` (``secretGenerator``) entry named ``name`` and the files that entry
    reads (``envs``, ``env``, ``files``): the ConfigMap a substituteFrom names is often
    generated (flux2's documented ``cluster-settings``), and a change of what makes it
    changes every Kustomization substituting from it."""
    field = _GENERATOR_FIELDS.get(kind)
    if field is None or not name or not nodes:
        return set()
    from kzgit.errors import KzgitError   # start-up: only repositories with substituteFrom
    from kzgit.kustomization import KUSTOMIZATION   # start-up: as above
    from kzgit.yamlio import load_yaml11   # start-up: as above
    from kzgit.yamlio.gostruct import GoDecodeError, decode_json   # start-up: as above
    want = name.encode("utf-8", "surrogateescape")
    out: Set[str] = set()
    for kdir, node in nodes:
        data = catalog.repo.read(node.file)
        if not data or want not in data:
            continue
        try:
            raw = load_yaml11(data, node.file)
            doc = decode_json(raw, KUSTOMIZATION) if isinstance(raw, dict) else {}
        except (KzgitError, GoDecodeError):
            continue   # (the build reports it)
        base = "" if kdir == "." else kdir
        for gen in doc.get(field) or []:
            if not isinstance(gen, dict) or gen.get("name") != name:
                continue
            out.add(node.file)
            refs = [*(gen.get("envs") or []), gen.get("env"),
                    *[f.split("=", 1)[-1] for f in gen.get("files") or [] if isinstance(f, str)]]
            out.update(posixpath.normpath(posixpath.join(base, r)) for r in refs
                       if isinstance(r, str) and r)
    return out


# Flux Kustomization fields that change what the generated kustomization renders



def deploys_root_as_is(catalog: Catalog, app: App, roots: Set[str],
                       lists_resources: Callable[[str], bool], load_restrictor: str,
                       version: Optional[Tuple[int, int, int]]) -> bool:
    """Whether ``app`` renders exactly as the kustomization root at its path renders with the
    repository's settings (``load_restrictor``, Kustomize release ``version``): then the
    root's render stands for the application's (the hooks check it through the render cache;
    ``kzgit diff`` shows one section for both).  ``lists_resources(path)``: whether the
    kustomization at ``path`` lists resources."""
    if not app.rendered or app.path is None or app.extra.get("repo") is not None:
        return False
    if (app.path or ".") not in roots or app.version != version:
        return False
    from kzgit.gitops.model import as_dict, transforms   # start-up: only repositories with apps
    spec = as_dict(app.obj.get("spec"))
    if app.controller == "flux":
        if transforms(spec) or spec.get("decryption") not in (None, {}):
            # (the controller decrypts the SOPS-encrypted resources and generator sources:
            # the root's render, with their ciphertext, is not the application's)
            return False
        # Flux builds with load restrictions off: what renders under the repository's own
        # restrictor renders the same without one, so the root's check stands for the
        # application (a root that needs files outside it fails as a root, whatever deploys
        # it: the load-restrictor setting decides, as for every root).  A file listing no
        # resources gets buildMetadata: [originAnnotations] (kustomize_generator.go).
        return lists_resources(app.path)
    sources = app.extra.get("sources") or []
    if len(sources) != 1 or sources[0].get("_kzgit_type") != "Kustomize":
        return False
    opts = sources[0].get("kustomize")
    if isinstance(opts, dict) and any(v not in (None, [], {}, "", False) for k, v in opts.items()
                                      if k != "version"):
        return False
    settings = catalog.argo_settings()
    return not ((settings is not None and settings.build_options)
                or catalog.repo.settings.argocd_build_options) \
        and load_restrictor == "LoadRestrictionsRootOnly"
