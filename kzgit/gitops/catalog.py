"""What a scan of the repository found, and the catalog of its applications.

:func:`scan` reads every YAML and JSON file once: the documents that name a Flux or Argo CD API
group (or ``argocd-cm``) are parsed at once; a file that may hold only ConfigMaps and Secrets
is parsed when a lookup names one of its objects.  :class:`Catalog` holds the applications
:func:`kzgit.gitops.discover.discover` finds, with what rendering them needs (renders already
made, ConfigMaps and Secrets delivered, the Flux ignore rules, argocd-cm's settings).
"""
from __future__ import annotations

import posixpath
import re

from kzgit.errors import KzgitError, UsageError
from kzgit.gitops import argocd
from kzgit.gitops.model import (FLUX_SOURCE_GROUP, App, Doc, Repository, app_kind, as_dict,
                                file_reader, first_line_offset, group_of)
from kzgit.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, List, Optional, Set, Tuple
    from kzgit.gitops.sourceignore import Matcher
    from kzgit.loader import FileSystem
    from kzgit.rendercache import Store

_EXTS = (".yaml", ".yml", ".json")
# what makes a file worth parsing at once: the API groups of applications and sources, argocd-cm
_EAGER = (b"toolkit.fluxcd.io", b"argoproj.io", b"argocd-cm")
FLUX_NAMESPACE = "flux-system"
ARGOCD_NAMESPACE = "argocd"
_FLUX_SOURCE_KINDS = ("GitRepository", "OCIRepository", "Bucket", "HelmRepository",
                      "HelmChart", "ExternalArtifact")


class Index(Record):
    """What the scan found, by kind."""

    __slots__ = ("candidates", "sources", "objects", "by_file", "argocd_cm", "patch_files",
                 "deferred", "templates", "broken")

    def __init__(self) -> None:
        self.candidates: List[Doc] = []
        self.sources: Dict[Tuple[str, str, str], Doc] = {}   # (kind, ns, name)
        self.objects: Dict[Tuple[str, str], List[Doc]] = {}   # (kind, name) -> docs
        self.by_file: Dict[str, List[Doc]] = {}
        self.argocd_cm: Optional[Doc] = None
        #: files some kustomization uses as a patch (a partial Kustomization there is no app)
        self.patch_files: Set[str] = set()
        #: files that may hold only ConfigMaps and Secrets, parsed when a lookup needs them
        self.deferred: Dict[str, bytes] = {}
        #: Helm templates naming Argo CD's API group (Applications a chart makes)
        self.templates: List[str] = []
        #: (file, line, error) of documents naming an application's API group that do not parse
        self.broken: List[Tuple[str, int, str]] = []

    def named(self, repo: Repository, kind: str, name: str) -> List[Doc]:
        """The ConfigMaps or Secrets (``kind``) named ``name`` the repository's files define."""
        if self.deferred and name:
            want = name.encode("utf-8", "surrogateescape")
            for rel in [r for r, data in self.deferred.items() if want in data]:
                del self.deferred[rel]
                scan_file(self, repo, rel, now=True)
        return self.objects.get((kind, name), [])


def scan(repo: Repository, store: Optional[Store] = None) -> Index:
    """Step 1: the documents of every YAML/JSON file that may matter.  With the render cache
    ``store``, what the parses give is taken from it when every file to parse has the bytes it
    had (:func:`kzgit.gitops.cache.parsed`)."""
    index = Index()
    work: List[Tuple[str, str, bytes]] = []   # (what, file, bytes) to parse: "k" or "f"
    for rel in repo.files:
        if posixpath.basename(rel) in KUSTOMIZATION_NAMES:
            data = repo.read(rel)
            if data and b"atches" in data:
                work.append(("k", rel, data))
            continue
        if rel.endswith(_EXTS):
            data = repo.read(rel)
            if _to_parse(index, rel, data):
                assert data is not None
                work.append(("f", rel, data))
    from kzgit.gitops.memo import parsed   # start-up: as the module's own, loaded where it is used
    got = parsed(store, "gitops-scan", [(rel, data) for _, rel, data in work], _parse_any)
    for (what, rel, _), one in zip(work, got):
        if what == "k":
            index.patch_files.update(one)
        else:
            _add_parsed(index, rel, one)
    return index


def _parse_any(rel: str, data: bytes) -> List[Any]:
    """What a scan learns of ``rel``: a kustomization's patch files, another file's documents."""
    if posixpath.basename(rel) in KUSTOMIZATION_NAMES:
        return _patch_paths(rel, data)
    return _parse_file(rel, data)


def scan_file(index: Index, repo: Repository, rel: str, now: bool = False) -> None:
    """Index ``rel``'s documents: at once when it names an application or source API group
    (or ``argocd-cm``); a file that may hold only ConfigMaps and Secrets is parsed when a
    lookup names one of its objects (:meth:`Index.load_named`), or with ``now``."""
    data = repo.read(rel)
    if _to_parse(index, rel, data, now):
        assert data is not None
        _add_parsed(index, rel, _parse_file(rel, data))


def _to_parse(index: Index, rel: str, data: Optional[bytes], now: bool = False) -> bool:
    """Whether ``rel`` (holding ``data``) is parsed now; a file that may hold only ConfigMaps
    and Secrets is noted in ``index.deferred``, a Helm template in ``index.templates``."""
    if not data or b"kind" not in data:
        return False
    if not now and not any(m in data for m in _EAGER):
        if b"ConfigMap" in data or b"Secret" in data:
            index.deferred[rel] = data
        return False
    if b"{{" in data and b"argoproj.io" in data and "/templates/" in f"/{rel}" \
            and _ARGO_KIND.search(data):
        # a Helm template (an app-of-apps Helm renders): its Applications exist only once
        # Helm renders the chart with its values; listed as such by discover
        index.templates.append(rel)
        return False
    return True


def _parse_file(rel: str, data: bytes) -> List[List[Any]]:
    """``rel``'s documents, as plain data: ``["doc", object, line, text]`` for each that
    parses to one mapping, ``["broken", line, error]`` for an application or source that does
    not parse (one finding of the hooks; other documents are the builds' findings)."""
    from kzgit.yamlio.load import decode_text, load_documents, split_documents   # start-up
    try:
        text = decode_text(data, rel)
        parts = split_documents(text.replace("\r\n", "\n"), rel)
    except KzgitError:
        return []
    out: List[List[Any]] = []
    for part, line in parts:
        try:
            # kept: the render of the application delivering this file reads it again
            docs = load_documents(part, rel, keep=True)
        except KzgitError as e:
            if any(m in part for m in _APP_TEXT) and _APP_KIND.search(part) and "{{" not in part:
                out.append(["broken", line + first_line_offset(part), str(e)])
            continue
        if len(docs) != 1 or not isinstance(docs[0], dict):
            continue
        out.append(["doc", docs[0], line + first_line_offset(part), part])
    return out


def _add_parsed(index: Index, rel: str, parsed: List[List[Any]]) -> None:
    for item in parsed:
        if item[0] == "broken":
            index.broken.append((rel, item[1], item[2]))
        else:
            _index(index, Doc(item[1], rel, item[2], item[3]))


KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
_APP_TEXT = ("kustomize.toolkit.fluxcd.io", "argoproj.io/")
_APP_KIND = re.compile(r"(?m)^\s*kind:\s*[\"']?(Kustomization|Application|ApplicationSet)[\"']?\s*$")
_ARGO_KIND = re.compile(rb"(?m)^\s*kind:\s*[\"']?Application(Set)?[\"']?\s*$")


def _patch_paths(rel: str, data: bytes) -> List[str]:
    """The files the kustomization ``rel`` (holding ``data``) names as patches
    (``patches[].path``, ``patchesStrategicMerge`` paths), repo-relative."""
    from kzgit.yamlio import load_yaml11   # start-up: loaded only by what uses it
    try:
        k = load_yaml11(data, rel)
    except KzgitError:
        return []
    if not isinstance(k, dict):
        return []
    base = posixpath.dirname(rel)
    paths = [p.get("path") for p in (k.get("patches") or []) if isinstance(p, dict)]
    paths += [p for p in (k.get("patchesStrategicMerge") or []) if isinstance(p, str)
              and "\n" not in p]
    return [posixpath.normpath(posixpath.join(base, p)) for p in paths if isinstance(p, str) and p]


def _index(index: Index, doc: Doc) -> None:
    obj = doc.obj
    kind = obj.get("kind")
    if not isinstance(kind, str):
        return
    meta = as_dict(obj.get("metadata"))
    name, ns = str(meta.get("name") or ""), str(meta.get("namespace") or "")
    if app_kind(obj):
        index.candidates.append(doc)
    elif group_of(obj.get("apiVersion")) == FLUX_SOURCE_GROUP and kind in _FLUX_SOURCE_KINDS:
        index.sources[(kind, ns or FLUX_NAMESPACE, name)] = doc
    elif obj.get("apiVersion") == "v1" and kind in ("ConfigMap", "Secret"):
        index.objects.setdefault((kind, name), []).append(doc)
        if kind == "ConfigMap" and name == "argocd-cm":
            index.argocd_cm = doc
    else:
        return
    index.by_file.setdefault(doc.file, []).append(doc)


class Catalog:
    """The applications of a repository (:func:`discover`), and what rendering them needs."""

    def __init__(self, repo: Repository, index: Optional[Index],
                 rescan: Optional[Callable[[], Index]] = None) -> None:
        self.repo = repo
        # the scan; a catalog restored from the render cache (kzgit.gitops.snapshot) scans
        # again (``rescan``) only when something asks for it
        self._index = index
        self._rescan = rescan
        self.apps: List[App] = []
        # id(app) -> its rendering (a kzgit.gitops.render.Rendered, which imports this module)
        self.renders: Dict[int, Any] = {}
        self.render_errors: Dict[int, KzgitError] = {}
        # ConfigMaps and Secrets delivered by rendered applications: (kind, ns, name) -> Doc
        self.delivered: Dict[Tuple[str, str, str], Doc] = {}
        self._matcher: Optional[Matcher] = None
        self._trees: Dict[str, Repository] = {}   # exports of other refs, by commit
        self._branches: Optional[Set[str]] = None   # what renders as the working tree
        self._argo: Optional[argocd.KustomizeSettings] = None
        self._argo_read = False
        #: argocd-cm as a restored catalog knows it (kzgit.gitops.snapshot), else the scan's
        self.argocd_cm: Optional[Tuple[Optional[Doc]]] = None
        #: why discovery's answer depends on more than the files it read through ``repo.read``,
        #: the listings ``probe_fs`` recorded and the settings (a build of a bootstrap
        #: kustomization, kzgit.gitops.discover._applied_roots): then it is not kept
        self.not_kept: Optional[str] = None
        #: the file system Argo CD's source type is read through (None: the repository's)
        self.probe_fs: Optional[FileSystem] = None
        #: the applications' render cache keys as a restored catalog knows them, by id(app),
        #: and the part of every key the applications share (kzgit.gitops.cache.app_key)
        self.app_keys: Dict[int, Optional[str]] = {}
        self.common_key: Optional[str] = None
        self._bases: Optional[Any] = None

    def bases(self) -> Any:
        """The bases the applications' builds share in this run (a
        :class:`~kzgit.builder.cache.BuildCache`; a pool's worker fills its own copy)."""
        if self._bases is None:
            from kzgit.builder.cache import BuildCache   # start-up: only runs that build
            self._bases = BuildCache()
        return self._bases

    @property
    def index(self) -> Index:
        if self._index is None:
            assert self._rescan is not None
            self._index = self._rescan()
        return self._index

    # -- lookups ----------------------------------------------------------------------------
    def find(self, query: str) -> App:
        """The application ``query`` names: its id, or a shorter spelling that is unique
        (``flux-system/apps``, ``apps``)."""
        exact = [a for a in self.apps if a.id == query]
        if exact:
            return exact[0]
        hits = [a for a in self.apps if query in (a.id.split(":", 1)[1], a.base_id,
                                                  a.base_id.split(":", 1)[1], a.name)]
        if len(hits) == 1:
            return hits[0]
        if not hits:
            known = ", ".join(a.id for a in self.apps[:20]) or "none"
            raise UsageError(f"no application {query!r} in this repository",
                             tip=f"kzgit apps lists them ({known})")
        raise UsageError(f"{query!r} names {len(hits)} applications: "
                         + ", ".join(a.id for a in hits), tip="pass one of these ids")

    def lookup_object(self, kind: str, namespace: str, name: str) -> Optional[Doc]:
        """A ConfigMap or Secret delivered in ``namespace`` (rendered outputs first, then the
        files; a file's object without a namespace counts for any)."""
        got = self.delivered.get((kind, namespace, name))
        if got is not None:
            return got
        docs = self.index.named(self.repo, kind, name)
        for want_ns in (True, False):
            for d in docs:
                meta = as_dict(d.obj.get("metadata"))
                ns = meta.get("namespace")
                if (ns == namespace) if want_ns else not ns:
                    return d
        return None

    def flux_matcher(self) -> Matcher:
        """The ``flux-system`` artifact's ignore patterns."""
        if self._matcher is None:
            self._matcher = self.matcher_for(self.index.sources.get(
                ("GitRepository", FLUX_NAMESPACE, FLUX_NAMESPACE)))
        return self._matcher

    def matcher_for(self, source: Optional[Doc], repo: Optional[Repository] = None) -> Matcher:
        from kzgit.gitops.sourceignore import repository_matcher   # start-up
        spec = as_dict(source.obj.get("spec")) if source else {}
        ignore = spec.get("ignore") if isinstance(spec.get("ignore"), str) else None
        tree = repo or self.repo
        return repository_matcher(tree.files, tree.read, ignore)

    def tree_at(self, kind: str, value: str) -> "Optional[Repository | str]":
        """This repository at what a GitRepository follows: None for the checked-out tree (no
        git, or the branch checked out), another :class:`Repository` (an export of that ref's
        tree) when the clone has it, else why not (a string)."""
        git_top = self.repo.git_top
        if kind == "semver":
            if not git_top:
                return "a semver range, and no git repository to read tags from"
            from kzgit import gitio   # start-up: only a GitRepository on a semver range
            from kzgit.gitops.semver import SemverError, newest_tag   # start-up: as gitio
            try:
                # the newest tag in the range, as source-controller checks it out
                kind, value = "tag", newest_tag(value, gitio.tags_with_dates(git_top))
            except SemverError as e:
                return str(e)
        if not git_top:
            return None
        if kind == "revision" and value not in ("HEAD", "") and not _is_sha(value):
            from kzgit.gitops.semver import argo_max_version, is_range   # start-up: as below
            if is_range(value):
                # an Argo CD targetRevision may be a version range: the newest tag in it
                from kzgit import gitio   # start-up: only an Application on a range
                tag = argo_max_version(value, [t for t, _ in gitio.tags_with_dates(git_top)])
                if tag is not None:
                    kind, value = "tag", tag
        if kind in ("branch", "revision"):
            if value in ("HEAD", "") or value in self._working_branches():
                # the branch checked out, or the default branch a pull request targets: the
                # working tree is what it will hold (argocd-diff-preview renders a pull request
                # so, pointing such Applications at its branch)
                return None
            candidates = ([f"refs/heads/{value}", f"refs/remotes/origin/{value}"]
                          if kind == "branch" else [value])
        elif kind == "tag":
            candidates = [f"refs/tags/{value}"]
        else:
            candidates = [value]
        from kzgit import gitio   # start-up: only a GitRepository on another ref
        for rev in candidates:
            try:
                commit = gitio.resolve_commit(git_top, rev)
            except KzgitError:
                continue
            return self._export(commit, value)
        return "this clone does not have it"

    def _working_branches(self) -> Set[str]:
        """``HEAD``, the branch checked out, and the default branch (``origin/HEAD``, else
        ``main`` and ``master``)."""
        if self._branches is not None:
            return self._branches
        out = {"HEAD", ""}
        read = _symref_reader(self.repo.git_top)
        for ref in ("HEAD", "refs/remotes/origin/HEAD"):
            if read is not None:
                name = read(ref)
            else:
                from kzgit import gitio   # start-up: only where git must answer
                try:
                    name = gitio.git(["symbolic-ref", "--quiet", "--short", ref],
                                     self.repo.git_top).decode("utf-8", "replace").strip()
                except KzgitError:
                    name = None
            if name:
                out.add(name.split("/", 1)[1] if name.startswith("origin/") else name)
        if len(out) < 4:
            out |= {"main", "master"}
        self._branches = out
        return out

    def _export(self, commit: str, label: str) -> Repository:
        got = self._trees.get(commit)
        if got is not None:
            return got
        import atexit   # start-up: only a GitRepository on another ref
        import os   # start-up: as atexit
        import shutil   # start-up: as atexit
        import tempfile   # start-up: as atexit
        from kzgit import gitio   # start-up: as tree_at
        top = os.path.realpath(tempfile.mkdtemp(prefix=f"kzgit-gitops-{commit[:12]}-"))
        atexit.register(shutil.rmtree, top, True)
        gitio.export_rev(self.repo.git_top, commit, top)
        files = gitio.rev_files(self.repo.git_top, commit)
        tree = self.repo.replace(top=top, files=files, read=file_reader(top), fs=None, label=label,
                                 _dirs=None, _files=None)
        self._trees[commit] = tree
        return tree

    def argo_settings(self) -> Optional[argocd.KustomizeSettings]:
        if not self._argo_read:
            self._argo_read = True
            doc = self.argocd_cm[0] if self.argocd_cm is not None else self.index.argocd_cm
            if doc is not None and isinstance(doc.obj.get("data"), dict):
                self._argo = argocd.KustomizeSettings(doc.obj["data"], f"{doc.file}:{doc.line}")
        return self._argo


# -- resolution: where an application renders from, or why it does not -------------------


def _symref_reader(git_top: str) -> "Optional[Callable[[str], Optional[str]]]":
    """What ``git symbolic-ref --quiet --short REF`` prints (None: not a symbolic ref), read
    from the files of a plain repository's loose refs, which is where git keeps a symbolic
    ref (refs/files-backend.c: symrefs are never packed); None (ask git) for anything else:
    a linked work tree, a configuration that may steer git, the reftable backend."""
    import os   # start-up: only a GitRepository on a branch
    from kzgit.paths import discover   # start-up: as os
    found = discover(git_top)
    gitdir = os.path.join(git_top, ".git")
    if found is None or found[0] != os.path.realpath(git_top) or not os.path.isdir(gitdir) \
            or os.path.exists(os.path.join(gitdir, "reftable")):
        return None
    try:
        with open(os.path.join(gitdir, "config"), "rb") as f:
            if b"refstorage" in f.read().lower():
                return None
    except OSError:
        return None

    def read(ref: str) -> Optional[str]:
        try:
            with open(os.path.join(gitdir, *ref.split("/")), "rb") as f:
                text = f.read(4096).decode("utf-8", "replace")
        except OSError:
            return None   # no such ref: symbolic-ref --quiet fails
        if not text.startswith("ref: "):
            return None   # a detached HEAD, a plain ref: not symbolic
        target = text[len("ref: "):].strip()
        # --short: the shortest unambiguous name (refs/heads/X -> X, refs/remotes/o/X -> o/X)
        for prefix in ("refs/heads/", "refs/remotes/", "refs/tags/", "refs/"):
            if target.startswith(prefix):
                return target[len(prefix):]
        return target
    return read


def _is_sha(value: str) -> bool:
    """A commit id (argo-cd util/git ``IsCommitSHA``: 40 hex digits), resolved as it is."""
    return len(value) == 40 and all(c in "0123456789abcdefABCDEF" for c in value)
