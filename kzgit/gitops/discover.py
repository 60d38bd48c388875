"""Finding the applications of a repository as the cluster receives them.

1. Every YAML/JSON file of the repository is scanned once for the objects that matter: Flux
   ``Kustomization``s, Argo CD ``Application``s and ``ApplicationSet``s (candidates), Flux
   sources (``GitRepository`` ...), and the ``ConfigMap``s and ``Secret``s a
   ``substituteFrom`` or ``argocd-cm`` may name.
2. The entry points are the candidates no other candidate delivers (its path does not hold
   their file).  Each is rendered as its controller renders it (:mod:`kzgit.gitops.render`),
   and the applications in its output are its children, as delivered: a parent's patches,
   ``targetNamespace`` and substitutions applied, as real repositories rely on
   (onedr0p/home-ops ``kubernetes/flux/cluster/ks.yaml`` patches every child's
   ``spec.patches``).  A file that is only a patch of an application (a partial
   Kustomization listed under ``patches``) never appears in an output, so it is no
   application.  A parent is rendered for discovery only when its path holds a candidate.
   An entry point listed by a kustomization no application renders, which transforms what
   it lists (a bootstrap directory applied with ``kubectl apply -k``), is taken as that
   kustomization outputs it (:func:`_applied_roots`).
3. Ids: ``flux:<namespace>/<name>`` and ``argocd:<namespace>/<name>``; where two share one,
   ``@<directory of the defining file>``, or ``@<parent id>`` when one file is delivered by
   two parents.

Flux candidates in files the ``flux-system`` source leaves out (``.sourceignore``, its
``spec.ignore``: bjw-s/home-ops ignores ``.archive/``) are not entry points: Flux never sees
them.  An object without a namespace is given its parent's target namespace (Flux:
``targetNamespace``, else the parent's own; Argo CD: ``destination.namespace``), or, at an
entry point, the controller's install namespace (``flux-system``, ``argocd``).
"""
from __future__ import annotations

import posixpath

from kzgit.errors import KzgitError
from kzgit.gitops import argocd, flux, render
from kzgit.gitops.catalog import (ARGOCD_NAMESPACE, FLUX_NAMESPACE, KUSTOMIZATION_NAMES, Catalog,
                                  scan, scan_file)
from kzgit.gitops.model import (DIRECTORY, FLUX, NOT_RENDERED, App, Doc, Repository, app_kind,
                                as_dict, transforms)
# the repository's making lives in kzgit.gitops.repository; importable from here as before
from kzgit.gitops.repository import open_worktree, repository_for, settings_of  # noqa: F401

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List, Optional, Set, Tuple
    from kzgit.loader import FileSystem
    from kzgit.gitops.sourceignore import Matcher
    from kzgit.rendercache import Store


def _abs(repo: Repository, rel: str) -> str:
    return posixpath.join(repo.top, rel) if rel else repo.top


def resolve(catalog: Catalog, app: App) -> None:
    """Set ``app``'s path, renderer and reason (or error)."""
    try:
        if app.controller == FLUX:
            _resolve_flux(catalog, app)
        elif app.kind == "ApplicationSet":
            app.renderer = NOT_RENDERED
        else:
            _resolve_argo(catalog, app)
    except (flux.FluxError, argocd.ArgoError) as e:
        app.error = _located(app, str(e), e.field)
        app.extra["failed"] = (str(e), e.field)
        app.path = None


def _resolved_as(app: App, other: App) -> None:
    """Set ``app``'s resolution to ``other``'s, the candidate of the same object and namespace
    (what :func:`resolve` reads of an application): a child passed through as its file
    defines it is not resolved twice."""
    app.path, app.renderer, app.reason, app.error = other.path, other.renderer, other.reason, \
        other.error
    app.version, app.version_origin = other.version, other.version_origin
    app.extra.update((k, v) for k, v in other.extra.items() if k in _RESOLVED)


# what resolve sets in App.extra
_RESOLVED = ("repo", "source", "matcher", "sources", "skipped", "paths")


def _located(app: App, message: str, field: Tuple[str, ...]) -> str:
    line = app.field_line(field)
    return f"{app.file}:{line}: {message}"


def _where_delivered(catalog: Catalog, child: App, parent: App) -> None:
    """A child whose failing field the parent's rendering changed (a patch of its
    kustomization, a substitution) is failed where the parent is defined, saying so: the
    child's file holds another value there, and its line would point at the wrong one."""
    message, field = child.extra.get("failed") or ("", ())
    if not field:
        return
    own = next((d.obj for d in catalog.index.by_file.get(child.file, ())
                if d.line == child.line), None)
    if own is None or _value_at(own, field) == _value_at(child.obj, field):
        return
    child.error = (f"{parent.file}:{parent.line}: {message} ({'.'.join(field)} as "
                   f"{parent.base_id} renders it; {child.file}:{child.field_line(field)} "
                   "holds another value)")


def _value_at(obj: Any, field: Tuple[str, ...]) -> Any:
    for k in field:
        obj = obj.get(k) if isinstance(obj, dict) else None
    return obj


def _spec(app: App) -> Dict[str, Any]:
    spec = app.obj.get("spec")
    if not isinstance(spec, dict):
        raise flux.FluxError("malformed: spec is missing or not an object", ("spec",)) \
            if app.controller == FLUX else argocd.ArgoError("malformed: spec is missing or not "
                                                            "an object", ("spec",))
    return spec


def _resolve_flux(catalog: Catalog, app: App) -> None:
    repo = catalog.repo
    spec = _spec(app)
    ref = spec.get("sourceRef")
    if not isinstance(ref, dict) or not ref.get("name") or not ref.get("kind"):
        raise flux.FluxError("malformed: spec.sourceRef needs a kind and a name",
                             ("spec", "sourceRef"))
    kind, name = str(ref["kind"]), str(ref["name"])
    ns = str(ref.get("namespace") or app.namespace)
    if kind != "GitRepository":
        app.reason = f"source {kind} {ns}/{name} is not a git repository kzgit renders"
        return
    source = catalog.index.sources.get((kind, ns, name))
    if (ns, name) != (FLUX_NAMESPACE, FLUX_NAMESPACE):
        if source is None:
            app.reason = f"GitRepository {ns}/{name} is not defined in this repository"
            return
        from kzgit.gitops.urls import normalise   # start-up: as the module's own, loaded where it is used
        url = str((source.obj.get("spec") or {}).get("url") or "")
        if normalise(url) not in repo.urls:
            app.reason = f"GitRepository {ns}/{name} is {url or 'without a url'}, not this repository"
            return
    if (ns, name) != (FLUX_NAMESPACE, FLUX_NAMESPACE):
        # this repository at another ref: that ref's tree, where the clone has it
        revision = flux.gitrepository_revision(source)
        if revision is not None:
            tree = catalog.tree_at(*revision)
            if isinstance(tree, str):
                app.reason = f"GitRepository {ns}/{name} follows {revision[0]} {revision[1]}: {tree}"
                return
            if tree is not None:
                repo = tree
                app.extra["repo"] = tree
    app.extra["source"] = source
    path = flux.spec_path(spec)
    matcher = catalog.flux_matcher() if source is None or \
        (ns, name) == (FLUX_NAMESPACE, FLUX_NAMESPACE) else catalog.matcher_for(source, repo)
    app.extra["matcher"] = matcher
    if not _dir_exists(repo, path, matcher):
        raise flux.FluxError(f"kustomization path not found: stat {path or '.'}: no such file "
                             "or directory", ("spec", "path"))
    app.path = path
    app.version, app.version_origin = repo.version, repo.version_origin
    from kzgit.versions import name as version_name   # start-up: loaded only by what uses it
    app.renderer = f"kustomize {version_name(app.version)}"


def _dir_exists(repo: Repository, rel: str, matcher: Optional[Matcher]) -> bool:
    """Whether the directory ``rel`` holds a file of the tree the source artifact keeps."""
    if matcher is not None and rel:
        parts = rel.split("/")
        for n in range(1, len(parts) + 1):
            if matcher.excluded(parts[:n], True):
                return False
    return not rel or rel in _directories(repo)


def _directories(repo: Repository) -> Set[str]:
    """Every directory holding a file of the repository (computed once per repository)."""
    got: Optional[Set[str]] = getattr(repo, "_dirs", None)
    if got is None:
        got = set()
        for f in repo.files:
            d = posixpath.dirname(f)
            while d and d not in got:
                got.add(d)
                d = posixpath.dirname(d)
        repo._dirs = got
    return got


def this_repo_sources(app: App, repo: Repository) -> Tuple[List[Dict[str, Any]], List[str]]:
    """An Application's sources kzgit renders, and why the others are not."""
    from kzgit.gitops.urls import normalise   # start-up: as the module's own, loaded where it is used
    spec = _spec(app)
    if isinstance(spec.get("source"), dict):
        sources = [spec["source"]]
    elif isinstance(spec.get("sources"), list) and spec["sources"]:
        sources = [s for s in spec["sources"] if isinstance(s, dict)]
    else:
        raise argocd.ArgoError("malformed: spec.source or spec.sources is required",
                               ("spec",))
    ours, others = [], []
    for s in sources:
        url = str(s.get("repoURL") or "")
        if s.get("chart"):
            others.append(f"Helm chart {s.get('chart')} from {url}: helm: not rendered")
        elif normalise(url) not in repo.urls:
            others.append(f"source {url or '(no repoURL)'} is not this repository")
        elif s.get("path") is None:
            if not s.get("ref"):
                others.append(f"source {url} has no path")
        else:
            ours.append(s)
    return ours, others


def _resolve_argo(catalog: Catalog, app: App) -> None:
    repo = catalog.repo
    ours, others = this_repo_sources(app, repo)
    if not ours:
        app.reason = "; ".join(others) or "no source kzgit renders"
        app.renderer = "helm: not rendered" if any("helm" in o for o in others) else NOT_RENDERED
        return
    for s in ours:
        # targetRevision: HEAD, the branch checked out or the default branch is the working
        # tree; another ref renders from its tree where the clone has it
        tree = catalog.tree_at("revision", str(s.get("targetRevision") or "HEAD"))
        if isinstance(tree, str):
            app.reason = f"targetRevision {s.get('targetRevision')}: {tree}"
            return
        if tree is not None:
            app.extra["repo"] = tree
            repo = tree
    app.extra["sources"] = ours
    app.extra["skipped"] = others
    renderers = []
    paths = []
    for i, s in enumerate(ours):
        path = flux.spec_path({"path": s.get("path")})
        if not _dir_exists(repo, path, None):
            raise argocd.ArgoError(f"{s.get('path')}: app path does not exist",
                                   ("spec", "source", "path"))
        files = _file_set(repo)
        overrides = [(f, repo.read(f) or b"") for f in argocd.override_files(path, app)
                     if f in files]
        if overrides:
            s = ours[i] = argocd.merged_source(s, overrides)
        typ = argocd.explicit_type(s)
        if typ is None:
            from kzgit.loader import DiskFS   # start-up: loaded only by what uses it
            probe = catalog.probe_fs if repo is catalog.repo else None
            typ = argocd.discovered_type(probe or repo.fs or DiskFS(), _abs(repo, path))
        if typ == argocd.HELM:
            app.renderer, app.reason = "helm: not rendered", f"{path or '.'} is a Helm chart"
            return
        if typ == argocd.PLUGIN:
            app.renderer, app.reason = "plugin: not rendered", "a config management plugin"
            return
        if typ == argocd.DIRECTORY:
            from kzgit.loader import DiskFS   # start-up: loaded only by what uses it
            probe = catalog.probe_fs if repo is catalog.repo else None
            jsonnet = argocd.jsonnet_file(probe or repo.fs or DiskFS(), _abs(repo, path),
                                          as_dict(s.get("directory")))
            if jsonnet is not None:
                app.renderer = "jsonnet: not rendered"
                app.reason = (f"{posixpath.join(path, jsonnet) if path else jsonnet}: a jsonnet "
                              "file of a directory application (kzgit does not evaluate jsonnet)")
                return
        paths.append(path)
        s["_kzgit_type"] = typ
        if typ == argocd.KUSTOMIZE:
            opts = as_dict(s.get("kustomize"))
            if opts.get("version"):
                app.version, app.version_origin = argocd.resolve_version(
                    str(opts["version"]), catalog.argo_settings())
            else:
                app.version, app.version_origin = repo.version, repo.version_origin
            from kzgit.versions import name as version_name   # start-up: loaded only by what uses it
            renderers.append(f"kustomize {version_name(app.version)}")
        else:
            renderers.append(DIRECTORY)
    app.path = paths[0]
    app.extra["paths"] = paths
    app.renderer = ", ".join(dict.fromkeys(renderers))


# -- the walk ------------------------------------------------------------------------------

def _placed(candidates: List[App]) -> Tuple[Dict[str, List[App]], Dict[str, List[App]]]:
    """Which candidates each directory holds (a file's every ancestor), and which render each
    path: "delivered by another" and "holds a candidate" without n*n scans."""
    under: Dict[str, List[App]] = {}
    renders_at: Dict[str, List[App]] = {}
    for a in candidates:
        for d in _ancestor_dirs(a.file):
            under.setdefault(d, []).append(a)
        if a.rendered and a.extra.get("repo") is None:
            # (an application reading another ref renders that ref's tree, not this one's)
            for p in a.extra.get("paths") or [a.path]:
                renders_at.setdefault(p or "", []).append(a)
    return under, renders_at


def _entry_points(candidates: List[App], renders_at: Dict[str, List[App]],
                  patch_files: Any) -> List[App]:
    """The candidates no other one renders (nor used as a patch file): the entry points."""
    return [a for a in candidates if a.file not in patch_files
            and not any(d is not a for p in _ancestor_dirs(a.file)
                        for d in renders_at.get(p, ()))]


def _ancestor_dirs(file: str) -> List[str]:
    """The directories above ``file``, the top ("") included."""
    out = [""]
    parts = file.split("/")[:-1]
    for n in range(1, len(parts) + 1):
        out.append("/".join(parts[:n]))
    return out


def discover(repo: Repository, render_children: bool = True, store: Optional[Store] = None,
             probe_fs: Optional[FileSystem] = None) -> Catalog:
    """The applications of ``repo`` (see the module docstring); ``store``: the render cache,
    where the scan's parses are kept (:func:`kzgit.gitops.catalog.scan`); ``probe_fs``: what
    an Argo CD source's directory is listed through (:attr:`Catalog.probe_fs`)."""
    catalog = Catalog(repo, scan(repo, store))
    catalog.probe_fs = probe_fs
    index = catalog.index
    candidates: List[App] = []
    for doc in index.candidates:
        controller = app_kind(doc.obj)
        assert controller is not None
        app = App(controller, doc.obj, doc)
        if not app.namespace:
            app.namespace = FLUX_NAMESPACE if controller == FLUX else ARGOCD_NAMESPACE
        if controller == FLUX:
            from kzgit.gitops.sourceignore import excluded_path   # start-up
            if excluded_path(catalog.flux_matcher(), doc.file):
                continue   # outside every artifact Flux builds (.sourceignore, spec.ignore)
        chart = _chart_of(repo, doc.file)
        if chart is not None:
            # a template of a Helm chart (an app-of-apps Helm renders): what it makes is known
            # only once Helm renders the chart with its values
            app.renderer = "helm: not rendered"
            app.reason = f"made by the Helm chart {chart}; kzgit does not render Helm templates"
            candidates.append(app)
            continue
        resolve(catalog, app)
        candidates.append(app)
    under, renders_at = _placed(candidates)
    for rel in index.templates:
        # Applications a Helm chart's template makes: listed, with why, never rendered
        chart = _chart_of(repo, rel) or posixpath.dirname(posixpath.dirname(rel)) or "."
        doc = Doc({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                   "metadata": {"name": rel, "namespace": ARGOCD_NAMESPACE}}, rel, 1, "")
        app = App("argocd", doc.obj, doc)
        app.renderer = "helm: not rendered"
        app.reason = (f"Applications made by the Helm chart {chart} (a template: kzgit does "
                      "not render Helm templates)")
        candidates.append(app)
    for rel, line, error in index.broken:
        group = "argocd" if b"argoproj.io/" in (repo.read(rel) or b"") else FLUX
        doc = Doc({"kind": "Application" if group == "argocd" else "Kustomization",
                   "metadata": {"name": f"{rel}:{line}", "namespace": ARGOCD_NAMESPACE
                                if group == "argocd" else FLUX_NAMESPACE}}, rel, line, "")
        app = App(group, doc.obj, doc)
        app.error = f"{rel}:{line}: malformed: {error}"
        candidates.append(app)
    entries = _entry_points(candidates, renders_at, index.patch_files)
    replaced = _applied_roots(catalog, entries, renders_at)
    if replaced:
        # what those entries deliver is found from their paths as applied
        candidates = [replaced.get(id(a), a) for a in candidates]
        under, renders_at = _placed(candidates)
        entries = _entry_points(candidates, renders_at, index.patch_files)
    seen_docs: Set[Tuple[str, int]] = set()
    queue: List[App] = []
    for a in entries:
        queue.append(a)
    out: List[App] = []
    visiting = 0
    while visiting < len(queue):
        app = queue[visiting]
        visiting += 1
        if app.parent is None and (app.file, app.line) in seen_docs:
            continue   # an entry point some application delivers after all
        out.append(app)
        if app.kind == "ApplicationSet":
            from kzgit.gitops import appset   # start-up: Go templates load only where used
            for child in appset.expand(catalog, app):
                resolve(catalog, child)
                queue.append(child)
            continue
        if not render_children or not app.rendered:
            continue
        holds = list({id(c): c for p in (app.extra.get("paths") or [app.path])
                      for c in under.get(p or "", ()) if c is not app}.values())
        if not holds:
            continue
        ancestors = _ancestry(app, queue)
        passed = _passed_through(catalog, app, holds, ancestors)
        if passed is not None:
            for c in passed:
                seen_docs.add((c.file, c.line))
                child = App(c.controller, c.obj, c.doc, parent=_ref(app))
                child.namespace = c.namespace if c.obj.get("metadata", {}).get("namespace") \
                    else _child_namespace(app)
                if child.namespace == c.namespace:
                    _resolved_as(child, c)   # the same object in the same namespace
                else:
                    resolve(catalog, child)
                queue.append(child)
            continue
        try:
            rendered = render.render_app(catalog, app)
        except KzgitError as e:
            catalog.render_errors[id(app)] = e
            for c in holds:   # the children as their files define them, still checked
                if (c.file, c.line) not in seen_docs:
                    seen_docs.add((c.file, c.line))
                    child = App(c.controller, c.obj, c.doc, parent=_ref(app))
                    child.namespace = c.namespace
                    resolve(catalog, child)
                    queue.append(child)
            continue
        for r in rendered.resources:
            controller = app_kind(r.obj)
            if controller is None:
                continue
            doc = _doc_of(catalog, r)
            child = App(controller, r.obj, doc, parent=_ref(app))
            if not child.namespace:
                child.namespace = _child_namespace(app)
            if (child.controller, child.kind, child.namespace, child.name) in ancestors:
                continue   # the application delivering itself (flux-system)
            seen_docs.add((doc.file, doc.line))
            resolve(catalog, child)
            if child.error:
                _where_delivered(catalog, child, app)
            queue.append(child)
    out = _without_delivered_entries(out, seen_docs)
    # queue order is a breadth-first walk: parents come before their children
    catalog.apps = out
    assign_ids(out)   # (every error is located already: resolve's, a broken file's)
    return catalog


def _without_delivered_entries(apps: List[App], seen_docs: Set[Tuple[str, int]]) -> List[App]:
    """``apps`` less the entry points an application delivered after all, and what they
    delivered: an entry's file that another application's rendering reaches through a
    kustomization base (not a directory it renders: fluxcd/flux2-multi-tenancy's
    ``tenants/base``, listed and patched by ``tenants/production``) is visited before that
    application is rendered when it is delivered deeper in the walk; it is then that
    application's child, as delivered, and not an application of its own."""
    gone = {a.extra.get("ref") or f"#{id(a)}" for a in apps
            if a.parent is None and (a.file, a.line) in seen_docs}
    if not gone:
        return apps
    out = []
    for a in apps:   # parents come before their children
        if a.parent is None and (a.extra.get("ref") or f"#{id(a)}") in gone:
            continue
        if a.parent is not None and a.parent in gone:
            gone.add(a.extra.get("ref") or f"#{id(a)}")
            continue
        out.append(a)
    return out


# kustomization fields that change the objects it lists (what a bootstrap kustomization
# applied as it is, kubectl apply -k, may do to the applications it holds)
_KUSTOMIZATION_TRANSFORMS = ("patches", "patchesStrategicMerge", "patchesJson6902", "namespace",
                             "namePrefix", "nameSuffix", "labels", "commonLabels",
                             "commonAnnotations", "components", "replacements", "images")


def _applied_roots(catalog: Catalog, entries: List[App],
                   renders_at: Dict[str, List[App]]) -> Dict[int, App]:
    """Entry points as the kustomization nearest above their file delivers them, where that
    kustomization transforms what it lists (a bootstrap directory applied with ``kubectl
    apply -k``: argoproj/argocd-autopilot's ``bootstrap/``, a root Application patched per
    cluster) and no application renders its directory.  It is built as ``kubectl apply -k``
    builds it (load restrictions root-only, the repository's Kustomize release); an entry it
    does not output, or a kustomization that does not build, leaves the file's object as
    written.  Returns the entries replaced, by ``id`` of the file's own."""
    repo = catalog.repo
    kdirs = _kustomization_dirs(repo)
    by_dir: Dict[str, List[App]] = {}
    for a in entries:
        if a.error or not a.file.endswith((".yaml", ".yml", ".json")):
            continue
        for d in reversed(_ancestor_dirs(a.file)):   # the nearest kustomization
            if d in kdirs:
                # (a directory some application renders is delivered by it, not applied)
                if not any(p in renders_at for p in _ancestor_dirs(d + "/_")) \
                        and _transforms(repo, d):
                    by_dir.setdefault(d, []).append(a)
                break
    replaced: Dict[int, App] = {}
    if not by_dir:
        return replaced
    catalog.not_kept = "a bootstrap kustomization is built"
    for d, apps in sorted(by_dir.items()):
        from kzgit.builder import BuildOptions, build   # start-up: only such repositories
        from kzgit.loader import ROOT_ONLY   # start-up: as above
        try:
            result = build(_abs(repo, d), BuildOptions(
                load_restrictor=ROOT_ONLY, fs=repo.fs, kustomize_version=repo.version,
                kustomize_version_origin=repo.version_origin or "the default"))
        except KzgitError:
            continue
        delivered: Dict[Tuple[str, int], App] = {}
        for r in result.resources:
            controller = app_kind(r.obj)
            if controller is None:
                continue
            doc = _doc_of(catalog, r)
            app = App(controller, r.obj, doc)
            if not app.namespace:
                app.namespace = FLUX_NAMESPACE if controller == FLUX else ARGOCD_NAMESPACE
            delivered.setdefault((doc.file, doc.line), app)
        for a in apps:
            got = delivered.get((a.file, a.line))
            if got is not None and got.kind == a.kind:
                resolve(catalog, got)
                got.extra["applied_by"] = d   # a change it reaches reaches the application
                replaced[id(a)] = got
    return replaced


def _transforms(repo: Repository, d: str) -> bool:
    """Whether the kustomization in ``d`` has a field that changes what it lists."""
    from kzgit.yamlio import load_yaml11   # start-up: only such repositories
    for name in KUSTOMIZATION_NAMES:
        rel = posixpath.join(d, name) if d else name
        data = repo.read(rel)
        if data is None:
            continue
        try:
            k = load_yaml11(data, rel)
        except KzgitError:
            return False
        return isinstance(k, dict) and any(k.get(f) for f in _KUSTOMIZATION_TRANSFORMS)
    return False


def _passed_through(catalog: Catalog, app: App, holds: List[App],
                    ancestors: Set[Tuple[str, str, str, str]]) -> Optional[List[App]]:
    """The children of ``app`` without rendering it, where its rendering passes their files'
    objects through unchanged; None where it must be rendered.

    A Flux Kustomization whose spec transforms nothing builds the kustomization it generates,
    which lists each manifest as it is (kustomize_generator.go scanManifests): a child whose
    file no kustomization directory holds (between the path and the file) arrives as written.
    A plain Argo CD directory application reads each manifest as it is (findManifests).  Any
    other case (a kustomization on the way, a transforming field, include/exclude globs, a
    file the artifact leaves out) is rendered, as the controller would."""
    spec = as_dict(app.obj.get("spec"))
    if app.controller == FLUX:
        if transforms(spec):
            return None
    else:
        sources = app.extra.get("sources") or []
        if len(sources) != 1 or sources[0].get("_kzgit_type") != argocd.DIRECTORY:
            return None
        directory = as_dict(sources[0].get("directory"))
        if directory.get("include") or directory.get("exclude") or directory.get("jsonnet"):
            return None
    kdirs = _kustomization_dirs(catalog.repo)
    top = app.path or ""
    out = []
    for c in holds:
        if (c.controller, c.kind, c.namespace, c.name) in ancestors:
            continue   # the application delivering itself (flux-system)
        d = posixpath.dirname(c.file)
        between = [x for x in _ancestor_dirs(c.file) + [d] if x == top or
                   (x.startswith(top + "/") if top else True)]
        if any(x in kdirs for x in between):
            return None
        if app.controller != FLUX and d != top and as_dict(
                (app.extra.get("sources") or [{}])[0].get("directory")).get("recurse") is not True:
            continue   # a directory application reads its own directory only
        if app.controller == FLUX:
            from kzgit.gitops.sourceignore import excluded_path   # start-up
            if excluded_path(app.extra["matcher"], c.file):
                continue
        out.append(c)
    return sorted(out, key=lambda c: (c.file, c.line))


def _kustomization_dirs(repo: Repository) -> Set[str]:
    """The directories holding a kustomization file (computed once per repository)."""
    got = repo._kdirs
    if got is None:
        got = repo._kdirs = {d for d, _, name in (f.rpartition("/") for f in repo.files)
                             if name in KUSTOMIZATION_NAMES}
    return got


def _chart_of(repo: Repository, file: str) -> Optional[str]:
    """The Helm chart directory whose ``templates/`` holds ``file``, if any."""
    parts = file.split("/")
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] == "templates":
            chart = "/".join(parts[:i])
            if (f"{chart}/Chart.yaml" if chart else "Chart.yaml") in _file_set(repo):
                return chart or "."
    return None


def _file_set(repo: Repository) -> Set[str]:
    got: Optional[Set[str]] = getattr(repo, "_files", None)
    if got is None:
        got = set(repo.files)
        repo._files = got
    return got


def _ref(app: App) -> str:
    """A provisional reference to a parent (its final id is set by :func:`assign_ids`)."""
    app.extra.setdefault("ref", f"#{id(app)}")
    return str(app.extra["ref"])


def _ancestry(app: App, queue: List[App]) -> Set[Tuple[str, str, str, str]]:
    by_ref = {a.extra.get("ref"): a for a in queue if a.extra.get("ref")}
    out = set()
    cur: Optional[App] = app
    while cur is not None:
        out.add((cur.controller, cur.kind, cur.namespace, cur.name))
        cur = by_ref.get(cur.parent) if cur.parent else None
    return out


def _child_namespace(parent: App) -> str:
    spec = as_dict(parent.obj.get("spec"))
    if parent.controller == FLUX:
        return str(spec.get("targetNamespace") or parent.namespace)
    dest = as_dict(spec.get("destination"))
    return str(dest.get("namespace") or parent.namespace)


def _doc_of(catalog: Catalog, r: Any) -> Doc:
    """The file document a rendered application came from (by its source file and name)."""
    repo = catalog.repo
    src = getattr(r, "source", "") or ""
    src = posixpath.normpath(src) if src else src
    rel = src[len(repo.top) + 1:] if src.startswith(repo.top + "/") else src
    if rel and rel not in catalog.index.by_file:
        scan_file(catalog.index, repo, rel, now=True)   # untracked, or parsed later
    docs = catalog.index.by_file.get(rel, [])
    names = {str((r.obj.get("metadata") or {}).get("name") or "")}
    try:
        names.add(r.org_id.name)
    except AttributeError:
        pass
    for d in docs:
        meta = as_dict(d.obj.get("metadata"))
        if d.obj.get("kind") == r.obj.get("kind") and meta.get("name") in names:
            return Doc(r.obj, d.file, d.line, d.text)
    for d in docs:
        if d.obj.get("kind") == r.obj.get("kind"):
            return Doc(r.obj, d.file, d.line, d.text)
    return Doc(r.obj, rel or "?", 1, "")


def assign_ids(apps: List[App]) -> None:
    """Set each application's id (the module docstring's rule)."""
    groups: Dict[str, List[App]] = {}
    for a in apps:
        groups.setdefault(a.base_id, []).append(a)
    by_ref = {a.extra.get("ref"): a for a in apps if a.extra.get("ref")}
    taken: Set[str] = set()
    for a in apps:   # parents first: a child's "@parent" uses the parent's final id
        group = groups[a.base_id]
        if len(group) == 1:
            a.id = a.base_id
        else:
            d = posixpath.dirname(a.file) or "."
            same_dir = [b for b in group if (posixpath.dirname(b.file) or ".") == d]
            parent = by_ref.get(a.parent) if a.parent else None
            if len(same_dir) == 1 or parent is None:
                a.id = f"{a.base_id}@{d}"
            else:
                a.id = f"{a.base_id}@{parent.id}"
        base, n = a.id, 2
        while a.id in taken:
            a.id = f"{base}#{n}"
            n += 1
        taken.add(a.id)
    for a in apps:
        if a.parent and a.parent in by_ref:
            a.parent = by_ref[a.parent].id
        if a.appset and a.appset in by_ref:
            a.appset = by_ref[a.appset].id
