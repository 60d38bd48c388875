"""Applications in the persistent render cache (:mod:`kzgit.rendercache`): the verdict of an
application whose inputs did not change since its last render is not rendered again.

The key holds what a render depends on besides the repository's files: the application
(its object as delivered, the text it is defined in, its id, namespace and resolved paths,
sources and Kustomize release), what discovery resolved for it (the artifact's ignore
patterns, Flux's post-build variables, argocd-cm's build options), the repository's kzgit
settings, kzgit's code and environment (:func:`kzgit.rendercache.cache_key`).  The record
is what the render read of the repository (:class:`kzgit.rendercache.reads.Recorder`,
through the controller's view: a generated or edited kustomization is derived from what is
read and the key).  Not cached: an application on another ref's tree (an export of this
run), one already rendered by discovery, a render that runs plugins or reads remotes the
record cannot ask again, and errors that may pass on a later try.

Only the hook's verdict is stored (failed or not, the error and its line, the warnings)
with the ConfigMaps and Secrets the render delivers (a later application's
``substituteFrom`` may name them).
"""
from __future__ import annotations

import json

from kzgit.gitops.model import FLUX, App, Doc, as_dict
from kzgit.sha import sha256

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List, Optional, Tuple
    from kzgit.gitops.catalog import Catalog
    from kzgit.rendercache import Store
    from kzgit.rendercache.reads import Checker

    Verdict = Tuple[Optional[str], Optional[int], List[str]]
    """(the controller's error or None, the line it points at, the warnings)."""

FLAVOUR = "gitops-app"
def app_key(catalog: Catalog, app: App) -> Optional[str]:
    """The cache key of ``app``'s render, or None when it is not cached."""
    if not app.rendered or app.error or app.extra.get("repo") is not None \
            or id(app) in catalog.renders or id(app) in catalog.render_errors:
        return None
    if id(app) in catalog.app_keys:
        # a catalog restored from the render cache (kzgit.gitops.snapshot): the key was made
        # from what that entry's record holds unchanged
        return catalog.app_keys[id(app)]
    repo = catalog.repo
    spec = as_dict(app.obj.get("spec"))
    parts: Dict[str, Any] = {
        "controller": app.controller, "id": app.id, "file": app.file, "line": app.line,
        "namespace": app.namespace, "obj": app.obj,
        "text": sha256(app.doc.text.encode("utf-8", "surrogateescape")).hexdigest(),
        "version": list(app.version or ()), "version_origin": app.version_origin,
        "path": app.path, "paths": app.extra.get("paths"), "sources": app.extra.get("sources"),
        "skipped": app.extra.get("skipped"),
        "settings": [repo.settings.flux_strict_substitution, repo.settings.argocd_build_options,
                     repo.settings.source, repo.enable_helm, repo.enable_alpha_plugins,
                     repo.enable_exec],
    }
    if app.controller == FLUX:
        matcher = app.extra.get("matcher")
        parts["ignore"] = [[p.domain, p.parts, p.inclusion, p.dir_only]
                           for p in (matcher.patterns if matcher is not None else [])]
        if isinstance(spec.get("postBuild"), dict):
            from kzgit.gitops import flux   # start-up: as above
            from kzgit.errors import KzgitError   # start-up: as above
            try:
                variables = flux.load_variables(app, spec, catalog.lookup_object)
                parts["variables"] = [variables.values, variables.encrypted]
            except KzgitError as e:
                parts["variables"] = ["error", type(e).__name__, str(e)]
    else:
        settings = catalog.argo_settings()
        parts["argocd-cm"] = None if settings is None else [
            settings.build_options, settings.version_options, settings.where]
    common = catalog.common_key
    if common is None:
        from kzgit.options import BuildOptions   # start-up: only cached application renders
        from kzgit.rendercache import cache_key   # start-up: as above
        common = catalog.common_key = cache_key(repo.top, BuildOptions(), FLAVOUR)
    text = json.dumps(parts, sort_keys=True, default=repr)
    return sha256(f"{common}\0{text}".encode("utf-8", "surrogateescape")).hexdigest()


def lookup(catalog: Catalog, app: App, store: Store, key: str, checker: Checker
           ) -> Optional[Verdict]:
    """The stored verdict of ``app`` whose recorded reads are all unchanged, else None; the
    ConfigMaps and Secrets its render delivered are delivered again."""
    for entry in store.variants(key):
        got = store.read(entry, key, payload=False)
        if got is None:
            continue
        header = got[0]
        if not checker.same(header.get("trace")):
            continue
        store.touch(entry)
        for kind, ns, name, obj in header.get("delivered") or []:
            catalog.delivered.setdefault((kind, ns, name), Doc(obj, app.file, app.line, ""))
        line = header.get("line")
        return (None if header.get("error") is None else str(header["error"]),
                line if isinstance(line, int) else None,
                [str(w) for w in header.get("warnings") or []])
    return None


def render(catalog: Catalog, app: App, store: Store, key: str) -> Verdict:
    """Render ``app`` (:func:`kzgit.gitops.render.render_app`) recording what it reads, and
    store the verdict when the record covers it."""
    from kzgit.errors import PluginError, RemoteError, UsageError   # start-up: as above
    from kzgit.gitops.render import AppError, render_app   # start-up: as above
    from kzgit.loader import RECORDER, DiskFS   # start-up: as above
    from kzgit.rendercache.reads import Recorder   # start-up: as above
    recorder = Recorder(catalog.repo.fs or DiskFS())
    token = RECORDER.set(recorder)
    try:
        got = render_app(catalog, app, recorder)
    except AppError as e:
        RECORDER.reset(token)
        if recorder.uncacheable is None and not isinstance(
                e.cause, (RemoteError, PluginError, UsageError)):
            store.write(key, {"trace": recorder.trace(), "error": e.detail, "line": e.line,
                              "warnings": []}, b"")
        return e.detail, e.line, []
    except BaseException:
        RECORDER.reset(token)
        raise
    RECORDER.reset(token)
    if recorder.uncacheable is None:
        delivered = []
        for r in got.resources:
            if r.obj.get("apiVersion") == "v1" and r.obj.get("kind") in ("ConfigMap", "Secret"):
                meta = as_dict(r.obj.get("metadata"))
                delivered.append([str(r.obj["kind"]), str(meta.get("namespace") or ""),
                                  str(meta.get("name") or ""), r.obj])
        store.write(key, {"trace": recorder.trace(), "error": None, "line": None,
                          "warnings": list(got.warnings), "delivered": delivered}, b"")
    return None, None, list(got.warnings)
