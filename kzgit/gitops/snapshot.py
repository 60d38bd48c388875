"""Discovery kept in the render cache: a hook run again over an unchanged tree restores the
catalog of applications instead of finding them again (:func:`discover_cached`).

What :func:`kzgit.gitops.discover.discover` finds depends on the repository's list of files,
the bytes of the files it reads (``Repository.read``: every YAML file, the kustomizations,
the ``.sourceignore`` files), the listings of the directories Argo CD's source type is read
from, the repository's URLs (its remotes, ``[gitops] repo-urls``), its kzgit settings and
Kustomize release, and kzgit's own code.  The entry's key holds the list of files, the
URLs, the settings and the code (:func:`kzgit.rendercache.cache_key`); its header records
each file read with its git blob id and each listing (:class:`kzgit.rendercache.reads.Recorder`);
an entry is used only when every file read has the same blob id now and every listing is
the same, else discovery runs again and records a new one.

Not kept (found again each run): a discovery that rendered anything (a parent that changes
its children, a bootstrap kustomization): a render reads more than the record covers; one
that read another ref of the repository (a GitRepository on a branch, a ``targetRevision``)
or asked git which branch is checked out; ApplicationSets (their generators read the list
of files in their own ways); a repository read through another file system than the disk
(a commit of ``kzgit diff``); an application whose manifest JSON would not give back as it is.
"""
from __future__ import annotations

import json

from kzgit.gitops.catalog import FLUX_NAMESPACE, Catalog, scan
from kzgit.gitops.model import App, Doc
from kzgit.gitops.memo import json_faithful
from kzgit.sha import sha256

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, List, Optional
    from kzgit.gitops.model import Repository
    from kzgit.gitops.sourceignore import Matcher
    from kzgit.rendercache import Store
    from kzgit.rendercache.reads import Recorder

FORMAT = 1
FLAVOUR = "gitops-catalog"
# the facts discovery leaves in App.extra that an entry holds ("matcher" and "source" by
# what they are made from); an application with any other is not kept
_EXTRA = ("paths", "sources", "skipped", "applied_by", "ref", "matcher", "source")


def discover_cached(repo: Repository, store: Optional[Store], render_children: bool = True,
                    blob_of: Optional[Callable[[str], Optional[str]]] = None) -> Catalog:
    """:func:`kzgit.gitops.discover.discover` of ``repo``, restored from ``store`` when an
    entry's record still holds (see the module docstring), else found and recorded.
    ``blob_of``: the blob id of a file as ``repo.read`` reads it, where the caller knows it
    (None: read the file and hash it)."""
    if store is None or repo.fs is not None:
        from kzgit.gitops.discover import discover   # start-up: a warm run restores instead
        return discover(repo, render_children, store)
    from kzgit.loader import DiskFS   # start-up: as the module's own, loaded where it is used
    from kzgit.rendercache.reads import Checker, Recorder, blob_id   # start-up: as DiskFS
    key = _key(repo, render_children)
    checker: Optional[Checker] = None
    for entry in store.variants(key):
        got = store.read(entry, key)
        if got is None:
            continue
        record = got[0].get("trace")
        if not isinstance(record, dict) or not _same_reads(repo, record.get("reads"), blob_of):
            continue
        if record.get("fs"):
            checker = checker or Checker(DiskFS())
            if not checker.same(record["fs"]):
                continue
        try:
            catalog = _restore(repo, json.loads(got[1].decode("utf-8")), store)
        except (ValueError, KeyError, TypeError, IndexError, AttributeError):
            continue   # not an entry this code wrote: found again, and written anew
        store.touch(entry)
        return catalog
    reads: Dict[str, Optional[str]] = {}
    changed: List[str] = []
    plain_read = repo.read

    def read(rel: str) -> Optional[bytes]:
        data = plain_read(rel)
        got = blob_id(data) if data is not None else None
        if reads.setdefault(rel, got) != got:
            changed.append(rel)   # changed while discovery ran: the record would not hold
        return data
    recorder = Recorder(DiskFS())
    from kzgit.gitops.discover import discover   # start-up: as above
    catalog = discover(repo.replace(read=read), render_children, store,
                       probe_fs=recorder.wrap_main())
    catalog.repo = repo
    catalog.probe_fs = None
    if not changed and _keepable(catalog, recorder) is None:
        payload = _snapshot(catalog)
        if payload is not None:
            store.write(key, {"trace": {"reads": sorted([rel, b] for rel, b in reads.items()),
                                        "fs": recorder.trace()}},
                        json.dumps(payload).encode("utf-8"))
    return catalog


def _key(repo: Repository, render_children: bool) -> str:
    from kzgit.options import BuildOptions   # start-up: as the module's own, loaded where it is used
    from kzgit.rendercache import cache_key   # start-up: as BuildOptions
    settings = repo.settings
    parts = [FORMAT, cache_key("/", BuildOptions(), FLAVOUR), repo.top, repo.label,
             repo.git_top, sorted(repo.urls), [getattr(settings, f) for f in settings.fields()],
             list(repo.version), repo.version_origin, repo.enable_helm,
             repo.enable_alpha_plugins, repo.enable_exec, render_children,
             sha256("\0".join(repo.files).encode("utf-8", "surrogateescape")).hexdigest()]
    return sha256(json.dumps(parts, default=repr).encode("utf-8", "surrogateescape")).hexdigest()


def _same_reads(repo: Repository, reads: Any,
                blob_of: Optional[Callable[[str], Optional[str]]]) -> bool:
    """Whether each ``[file, blob id]`` of ``reads`` is read the same now (None: unreadable)."""
    from kzgit.rendercache.reads import blob_id   # start-up: as the module's own, loaded where it is used
    if not isinstance(reads, list):
        return False
    for row in reads:
        if not (isinstance(row, list) and len(row) == 2 and isinstance(row[0], str)):
            return False
        got = blob_of(row[0]) if blob_of is not None else None
        if got is None:
            data = repo.read(row[0])
            got = blob_id(data) if data is not None else None
        if got != row[1]:
            return False
    return True


def _keepable(catalog: Catalog, recorder: Recorder) -> Optional[str]:
    """Why ``catalog`` is not kept (None: it is)."""
    if catalog.not_kept:
        return catalog.not_kept
    if catalog.renders or catalog.render_errors:
        return "a parent was rendered"
    if catalog._trees or catalog._branches is not None:
        return "another ref of the repository was read"
    if recorder.uncacheable:
        return recorder.uncacheable
    for a in catalog.apps:
        if a.kind == "ApplicationSet" or a.appset or a.expanded is not None:
            return "an ApplicationSet"
        if a.doc.obj is not a.obj or any(k not in _EXTRA for k in a.extra):
            return f"{a.id} is not one an entry holds"
    return None


def _doc(doc: Optional[Doc]) -> Optional[List[Any]]:
    return None if doc is None else [doc.obj, doc.file, doc.line, doc.text]


def _snapshot(catalog: Catalog) -> Optional[Dict[str, Any]]:
    """``catalog`` as plain data (None where JSON would not give it back as it is)."""
    flux_source = catalog.index.sources.get(("GitRepository", FLUX_NAMESPACE, FLUX_NAMESPACE)) \
        if catalog._matcher is not None else None
    apps = []
    for a in catalog.apps:
        extra: Dict[str, Any] = {}
        for k, v in a.extra.items():
            if k == "matcher":
                # Flux's flux-system artifact (shared by its applications), or the source's own
                if v is catalog._matcher:
                    extra[k] = "flux"
                elif a.extra.get("source") is not None:
                    extra[k] = "source"
                else:
                    return None
            elif k == "source":
                extra[k] = _doc(v)
            else:
                extra[k] = v
        one = {"controller": a.controller, "kind": a.kind, "name": a.name,
               "namespace": a.namespace, "id": a.id, "obj": a.obj,
               "doc": [a.doc.file, a.doc.line, a.doc.text], "parent": a.parent,
               "path": a.path, "renderer": a.renderer, "reason": a.reason, "error": a.error,
               "version": None if a.version is None else list(a.version),
               "version_origin": a.version_origin}
        # each piece on its own: the sources of extra are the very objects of obj's spec
        if not all(json_faithful(v, set()) for v in [*one.values(), *extra.values()]):
            return None
        one["extra"] = extra
        apps.append(one)
    argocd_cm = None
    if catalog.argocd_cm is None and catalog._index is not None:
        argocd_cm = [_doc(catalog.index.argocd_cm)]
    # each application's render cache key: a function of what the key and the record of this
    # entry hold (its object and text, what discovery resolved, argocd-cm, the settings,
    # kzgit's code and environment); not where substituteFrom names a ConfigMap or Secret,
    # which a run may find delivered by another application's render (Catalog.lookup_object):
    # that key is made in the run (False here)
    from kzgit.errors import KzgitError   # start-up: only a discovery that is written
    from kzgit.gitops.cache import app_key   # start-up: as above
    try:
        keys = [False if _substitutes_from(a) else app_key(catalog, a) for a in catalog.apps]
    except KzgitError:
        return None
    out = {"apps": apps, "flux_source": _doc(flux_source), "flux_matcher": catalog._matcher
           is not None, "argocd_cm": argocd_cm, "keys": keys}
    if not all(json_faithful(v, set()) for v in (out["flux_source"], argocd_cm)):
        return None
    return out


def _restore(repo: Repository, data: Dict[str, Any], store: Optional[Store]) -> Catalog:
    """The catalog :func:`_snapshot` wrote (its scan made again only if asked for)."""
    catalog = Catalog(repo, None, lambda: scan(repo, store))

    def doc_of(row: Optional[List[Any]]) -> Optional[Doc]:
        return None if row is None else Doc(row[0], str(row[1]), int(row[2]), str(row[3]))
    if data["argocd_cm"] is not None:
        catalog.argocd_cm = (doc_of(data["argocd_cm"][0]),)
    if data["flux_matcher"]:
        flux_source = doc_of(data["flux_source"])
        catalog._matcher = _LazyMatcher(lambda: catalog.matcher_for(flux_source))   # type: ignore[assignment]
    apps = []
    for one in data["apps"]:
        obj = one["obj"]
        file, line, text = one["doc"]
        a = App(str(one["controller"]), obj, Doc(obj, str(file), int(line), str(text)))
        a.kind, a.name, a.namespace, a.id = one["kind"], one["name"], one["namespace"], one["id"]
        a.parent, a.path, a.renderer = one["parent"], one["path"], one["renderer"]
        a.reason, a.error, a.version_origin = one["reason"], one["error"], one["version_origin"]
        a.version = None if one["version"] is None else tuple(one["version"])
        for k, v in one["extra"].items():
            if k == "source":
                a.extra[k] = doc_of(v)
            elif k == "matcher":
                a.extra[k] = catalog.flux_matcher() if v == "flux" else _LazyMatcher(
                    _matcher_of(catalog, doc_of(one["extra"]["source"])))
            else:
                a.extra[k] = v
        apps.append(a)
    catalog.apps = apps
    keys = data["keys"]
    if not (isinstance(keys, list) and len(keys) == len(apps)):
        raise ValueError("not an entry of this layout")
    catalog.app_keys = {id(a): None if k is None else str(k) for a, k in zip(apps, keys)
                        if k is not False}
    return catalog


def _substitutes_from(app: App) -> bool:
    spec = app.obj.get("spec")
    post = spec.get("postBuild") if isinstance(spec, dict) else None
    return isinstance(post, dict) and post.get("substituteFrom") not in (None, [], {}, "")


def _matcher_of(catalog: Catalog, source: Optional[Doc]) -> Callable[[], Matcher]:
    return lambda: catalog.matcher_for(source, catalog.repo)


class _LazyMatcher:
    """A :class:`kzgit.gitops.sourceignore.Matcher` made when first used: a warm run whose
    applications all come from the render cache reads no ``.sourceignore`` (their keys are
    restored with them) and loads nothing of the ignore rules."""

    def __init__(self, make: Callable[[], Matcher]) -> None:
        self._make = make
        self._made: Optional[Matcher] = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_make", "_made"):
            raise AttributeError(name)   # (copy and pickle ask before __init__ ran)
        if self._made is None:
            self._made = self._make()
        return getattr(self._made, name)
