"""The dependency graph of the kustomizations in a repository.

Every kustomization is parsed once; for each, the graph records what it names:
kustomization directories it builds on (resources, bases, components, and
generator/transformer/validator entries that are directories) and the files
and file trees it reads (resource files, patches, generator files and env
files, replacements, configurations, crds, openapi, plugin configs and KRM
exec paths, helm chart homes and values files).  A *root* is a kustomization
no other kustomization references (or one matching the configured ``roots``
globs).  A component (``kind: Component``) is never a root by itself: it is
built, and so checked, through the roots that include it, unless a ``roots``
glob names its own directory (a glob matching a directory above it is not
enough); :meth:`Graph.unincluded_components` lists those no root includes.
:meth:`Graph.affected_roots` maps changed files to the roots that
reach them, which is what the render hook and ``kzgit diff`` build.

The graph never opens a file itself: it takes the list of repo-relative
paths and a ``read`` function, so it works on the disk, the git index or any
git tree.  A kustomization that does not parse is kept with its ``error`` and
reaches its own file, so the render hook still builds (and reports) it.
Remote references are collected with their line for the pinned-refs policy.
"""
from __future__ import annotations

import os
import posixpath
import stat

from kzgit.loader import KUSTOMIZATION_FILE_NAMES
from kzgit.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple
    ReadFn = Callable[[str], Optional[bytes]]
    """Repo-relative '/'-separated path -> the file's bytes, or None when it cannot be read."""
    ResolveFn = Callable[[str], Optional[str]]
    """Repo-relative path -> the repo-relative path it leads to through symbolic links, or None
    when it holds no link (or leads out of the repository)."""
else:
    ReadFn = ResolveFn = None   # types for checkers (modules import the names)

ROOT_DIR = "."

# Fields whose string entries may name a kustomization directory or a remote target.
_TARGET_FIELDS = ("resources", "bases", "components")
# Plugin fields: entries are paths/URLs (strings) or inline plugin configs (maps).
_PLUGIN_FIELDS = ("generators", "transformers", "validators")
# Fields whose string entries are plain files.
_FILE_LIST_FIELDS = ("crds", "configurations")
_GENERATOR_FIELDS = ("configMapGenerator", "secretGenerator")
# Fields of builtin plugin configs (generators/transformers entries) that name files the
# plugin reads: PatchTransformer and PatchJson6902Transformer ``path``, ValueAddTransformer
# ``targetFilePath``, HelmChartInflationGenerator ``valuesFile``, the generators' ``env``
# (api/plugins/builtinhelpers and the plugin structs of api/internal/builtins).
_PLUGIN_FILE_KEYS = ("path", "targetFilePath", "valuesFile", "env")
# ... and lists of them: PatchStrategicMergeTransformer ``paths``, the generators' ``files``
# and ``envs``, helm's ``additionalValuesFiles``, ReplacementTransformer ``replacements``.
_PLUGIN_FILE_LIST_KEYS = ("paths", "files", "envs", "additionalValuesFiles", "replacements")


# Records, not dataclasses: a warm hook loads its graph from the render cache, and importing
# ``dataclasses`` (with ``inspect``) would cost it more than that (kzgit.record).
class RemoteRef(Record):
    """A remote reference as written in a kustomization (or a plugin config)."""

    __slots__ = ("file", "field", "value", "line", "kind")

    def __init__(self, file: str, field: str, value: str, line: Optional[int], kind: str = "git") -> None:
        self.file = file      # repo-relative file it is written in
        self.field = field    # e.g. "resources", "transformers", "helmCharts"
        self.value = value    # the URL or image as written
        self.line = line      # 1-based, when it could be found
        self.kind = kind      # "git" (kustomize remote target), "image", "helm"


class Node(Record):
    """One kustomization file and what it names directly."""

    __slots__ = ("dir", "file", "children", "files", "trees", "remotes", "error", "component")

    def __init__(self, dir: str, file: str, children: Optional[Set[str]] = None,
                 files: Optional[Set[str]] = None, trees: Optional[Set[str]] = None,
                 remotes: Optional[List[RemoteRef]] = None, error: Optional[str] = None,
                 component: bool = False) -> None:
        self.dir = dir
        self.file = file
        self.children: Set[str] = set() if children is None else children   # kustomization dirs
        self.files: Set[str] = set() if files is None else files      # files (may be missing)
        self.trees: Set[str] = set() if trees is None else trees      # dirs read as a whole
        self.remotes: List[RemoteRef] = [] if remotes is None else remotes
        self.error = error
        self.component = component   # kind: Component


class Reach(Record):
    """Everything a kustomization reaches, transitively."""

    __slots__ = ("files", "trees", "kustomization_dirs")

    def __init__(self, files: Set[str], trees: Set[str], kustomization_dirs: Set[str]) -> None:
        self.files = files
        self.trees = trees
        self.kustomization_dirs = kustomization_dirs

    def touches(self, path: str) -> bool:
        """Whether a change of ``path`` can change the rendering."""
        if path in self.files:
            return True
        if any(path == t or path.startswith(t + "/") or t == ROOT_DIR for t in self.trees):
            return True
        d, base = posixpath.split(path)
        return base in KUSTOMIZATION_FILE_NAMES and (d or ROOT_DIR) in self.kustomization_dirs


def default_looks_remote(ref: str) -> bool:
    """Whether a resources entry is a remote target: kustomize's rule (:func:`kzgit.remote.looks_remote`)."""
    from kzgit.remote import looks_remote   # start-up: only the builds that need it pay for it
    return looks_remote(ref)


class Graph:
    """Kustomizations by directory, their roots, and what each reaches."""

    def __init__(self, nodes: Dict[str, Node], roots: List[str],
                 unmatched: Optional[List[Tuple[str, str]]] = None) -> None:
        self.nodes = nodes
        self.roots = roots
        # (key, glob) of the configuration's roots/exclude globs that select nothing
        self.unmatched: List[Tuple[str, str]] = [] if unmatched is None else unmatched
        self._reach: Dict[str, Reach] = {}

    def reach(self, kdir: str) -> Reach:
        """Files, trees and kustomization dirs ``kdir`` reaches (cycles are cut)."""
        if kdir in self._reach:
            return self._reach[kdir]
        out = Reach(set(), set(), set())
        stack, seen = [kdir], set()
        while stack:
            d = stack.pop()
            if d in seen:
                continue
            seen.add(d)
            out.kustomization_dirs.add(d)
            node = self.nodes.get(d)
            if node is None:
                continue
            out.files.add(node.file)
            out.files |= node.files
            out.trees |= node.trees
            stack.extend(node.children)
        self._reach[kdir] = out
        return out

    def directory_reach(self, d: str) -> Reach:
        """What a build of directory ``d`` reaches where it may hold no kustomization of its
        own (a Flux Kustomization's ``spec.path`` gets one generated, listing every manifest
        below it and each kustomization directory there): its whole tree, and what each
        kustomization at or below it reaches."""
        top = d or ROOT_DIR
        out = Reach(set(), {top}, set())
        prefix = "" if top == ROOT_DIR else top + "/"
        for k in self.nodes:
            if k == top or (k.startswith(prefix) if prefix else True):
                r = self.reach(k)
                out.files |= r.files
                out.trees |= r.trees
                out.kustomization_dirs |= r.kustomization_dirs
        return out

    def affected_roots(self, changed: Iterable[str]) -> List[str]:
        """Roots (sorted) whose rendering a change of any of ``changed`` can alter."""
        paths = [n for n in (_norm(p) for p in changed) if n is not None]
        return [r for r in self.roots if any(self.reach(r).touches(p) for p in paths)]

    def unincluded_components(self, changed: Optional[Iterable[str]] = None) -> List[str]:
        """Components (sorted) that no root reaches, so nothing checks them; with ``changed``,
        only those a change of any of ``changed`` touches."""
        included: Set[str] = set()
        for r in self.roots:
            included |= self.reach(r).kustomization_dirs
        out = [d for d, n in sorted(self.nodes.items()) if n.component and d not in included]
        if changed is None:
            return out
        paths = [n for n in (_norm(p) for p in changed) if n is not None]
        return [d for d in out if any(self.reach(d).touches(p) for p in paths)]


def _norm(path: str) -> Optional[str]:
    p = posixpath.normpath(path.replace("\\", "/"))
    if p.startswith("../") or p == ".." or p.startswith("/"):
        return None
    return p


def _join(kdir: str, ref: str) -> Optional[str]:
    if posixpath.isabs(ref):
        return None
    return _norm(posixpath.join("" if kdir == ROOT_DIR else kdir, ref))


def _line_of(text: str, needle: str) -> Optional[int]:
    for i, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return i
    return None


def _no_links(path: str) -> Optional[str]:
    return None


def scan(paths: Iterable[str], read: ReadFn, *, roots: Sequence[str] = (),
         exclude: Sequence[str] = (), resolve: ResolveFn = _no_links,
         looks_remote: Callable[[str], bool] = default_looks_remote) -> Graph:
    """Parse every kustomization among ``paths`` (repo-relative) into a :class:`Graph`.

    ``resolve`` follows symbolic links as the build does (:func:`disk_resolver`).
    ``roots``/``exclude`` are the configuration's globs (see :mod:`kzgit.config`).  ``exclude``
    keeps kustomizations from being roots, and from being parsed at all unless a kustomization
    outside it reaches them: what a checked root reaches is always followed.
    """
    from kzgit.config import glob_match   # start-up: only the builds that need it pay for it

    all_files: Set[str] = set()
    for p in paths:
        norm = _norm(p)
        if norm is not None:
            all_files.add(norm)
    dirs: Set[str] = {ROOT_DIR}
    for f in all_files:
        d = posixpath.dirname(f)
        while d and d not in dirs:
            dirs.add(d)
            d = posixpath.dirname(d)
    kfiles: Dict[str, str] = {}
    for f in sorted(all_files):
        d, base = posixpath.split(f)
        d = d or ROOT_DIR
        if base in KUSTOMIZATION_FILE_NAMES:
            # With several names in one dir the build fails ("Found multiple kustomization
            # files"); the graph keeps the first in kustomize's order and render reports it.
            prev = kfiles.get(d)
            if prev is None or (KUSTOMIZATION_FILE_NAMES.index(base)
                                < KUSTOMIZATION_FILE_NAMES.index(posixpath.basename(prev))):
                kfiles[d] = f

    ctx = _Ctx(all_files, dirs, set(kfiles), read, resolve, looks_remote)
    excluded = {d for d in kfiles if exclude and glob_match(d, exclude)}
    nodes = {d: ctx.parse(d, f) for d, f in kfiles.items() if d not in excluded}
    # the excluded kustomizations the others reach, and what those reach in turn
    todo = sorted({c for n in nodes.values() for c in n.children if c not in nodes})
    while todo:
        d = todo.pop()
        if d not in nodes and d in kfiles:
            nodes[d] = ctx.parse(d, kfiles[d])
            todo.extend(sorted(c for c in nodes[d].children if c not in nodes))
    candidates = {d: n for d, n in nodes.items() if d not in excluded}
    from kzgit.config import glob_names   # start-up: only the builds that need it pay for it
    if roots:
        root_dirs = sorted(d for d, n in candidates.items()
                           if (glob_names(d, roots) if n.component else glob_match(d, roots))
                           or (d == ROOT_DIR and "." in roots))
    else:
        referenced: Set[str] = set()
        for n in nodes.values():
            referenced |= {c for c in n.children if c != n.dir}
        root_dirs = sorted(d for d, n in candidates.items() if d not in referenced and not n.component)
    unmatched = [("roots", p) for p in roots
                 if not any((glob_names(d, [p]) if nodes[d].component else glob_match(d, [p]))
                            or (d == ROOT_DIR and p == ".") for d in root_dirs)]
    if exclude:
        from kzgit.config import unmatched_globs   # start-up: only the builds that need it pay for it
        unmatched += [("exclude", p) for p in unmatched_globs(exclude, sorted(all_files | dirs))]
    return Graph(nodes, root_dirs, unmatched)


GRAPH_FORMAT = 4


def scan_cached(paths: Iterable[str], read: ReadFn, store: Any, *, roots: Sequence[str] = (),
                exclude: Sequence[str] = (), resolve: ResolveFn = _no_links,
                blob_of: Optional[Callable[[str], Optional[str]]] = None) -> Graph:
    """:func:`scan` through the render cache ``store`` (:class:`kzgit.rendercache.Store`).

    A scan depends on the list of files, the configuration's ``roots``/``exclude``, kzgit's
    code, and the bytes of every file it reads (kustomizations, plugin configs): the first
    three key the entry, the files read (by git blob id) are checked again before it is used.
    A warm hook then parses no YAML before it knows what to build.  ``blob_of`` gives a
    file's blob id without reading it (None where ``read`` gives None), when the caller knows
    it (a commit's tree lists them).  Where each path the scan resolved leads (``resolve``)
    is checked again too: a link made or moved changes what a root reaches.
    """
    import json   # start-up: only the builds that need it pay for it

    from kzgit.rendercache import code_fingerprint   # start-up: only the builds that need it pay for it
    from kzgit.rendercache.reads import blob_id   # start-up: only the builds that need it pay for it
    from kzgit.sha import sha256   # start-up: only the builds that need it pay for it

    listed = sorted({n for n in (_norm(p) for p in paths) if n is not None})
    key = sha256(json.dumps(["graph", GRAPH_FORMAT, code_fingerprint(), listed, list(roots),
                                     list(exclude)]).encode("utf-8")).hexdigest()

    def blob(path: str) -> Optional[str]:
        if blob_of is not None:
            return blob_of(path)
        data = read(path)
        return blob_id(data) if data is not None else None

    for entry in store.variants(key):
        got = store.read(entry, key, payload=False)
        if got is None:
            continue
        trace, links, saved = got[0].get("trace"), got[0].get("links"), got[0].get("graph")
        if not all(isinstance(t, list) and all(isinstance(r, list) and len(r) == 2 for r in t)
                   for t in (trace, links)):
            continue
        if all(blob(p) == b for p, b in trace) and all(resolve(p) == r for p, r in links):
            graph = _graph_from_json(saved)
            if graph is not None:
                store.touch(entry)
                return graph
    reads: Dict[str, Optional[str]] = {}

    def recording(path: str) -> Optional[bytes]:
        data = read(path)
        reads[path] = blob_id(data) if data is not None else None
        return data
    resolved: Dict[str, Optional[str]] = {}

    def resolving(path: str) -> Optional[str]:
        resolved[path] = got = resolve(path)
        return got
    graph = scan(listed, recording, roots=roots, exclude=exclude, resolve=resolving)
    store.write(key, {"trace": sorted([p, b] for p, b in reads.items()),
                      "links": sorted([p, r] for p, r in resolved.items()),
                      "graph": _graph_json(graph)}, b"")
    return graph


def _graph_json(g: Graph) -> Dict[str, Any]:
    return {"roots": list(g.roots), "unmatched": [list(u) for u in g.unmatched], "nodes": [
        [n.dir, n.file, sorted(n.children), sorted(n.files), sorted(n.trees),
         [[r.file, r.field, r.value, r.line, r.kind] for r in n.remotes], n.error, n.component]
        for n in g.nodes.values()]}


def _graph_from_json(doc: Any) -> Optional[Graph]:
    try:
        nodes = {}
        for d, f, children, files, trees, remotes, error, component in doc["nodes"]:
            nodes[d] = Node(d, f, set(children), set(files), set(trees),
                                     [RemoteRef(*r) for r in remotes], error, bool(component))
        return Graph(nodes, list(doc["roots"]), [(k, p) for k, p in doc["unmatched"]])
    except (KeyError, TypeError, ValueError):
        return None


class _Ctx:
    def __init__(self, files: Set[str], dirs: Set[str], kdirs: Set[str], read: ReadFn,
                 resolve: ResolveFn, looks_remote: Callable[[str], bool]) -> None:
        self.files, self.dirs, self.kdirs = files, dirs, kdirs
        self.read = read
        self.resolve = resolve
        self.looks_remote = looks_remote

    def parse(self, kdir: str, kfile: str) -> Node:
        node = Node(kdir, kfile)
        data = self.read(kfile)
        if data is None:
            node.error = "cannot be read"
            return node
        real = self.resolve(kfile)
        if real is not None:
            node.files.add(real)   # a linked kustomization file: the build reads its target
        text = data.decode("utf-8", "replace")
        # The build's reader and decoder (kzgit.kustomization.parse_kustomization): YAML 1.1,
        # the first document only, field names matched case-insensitively as encoding/json
        # does (``Resources:`` is ``resources``).  Unknown fields are left to the build to
        # report: the graph follows every field it knows.
        from kzgit.errors import KzgitError   # start-up: a warm hook parses nothing
        from kzgit.kustomization import COMPONENT_KIND, KUSTOMIZATION   # start-up: as above
        from kzgit.yamlio import load_yaml11   # start-up: as above
        from kzgit.yamlio.gostruct import GoDecodeError, decode_json   # start-up: as above
        try:
            raw = load_yaml11(data, kfile, keep=True)   # the build reads it again
        except KzgitError as e:
            node.error = f"not valid YAML: {e}"
            return node
        if raw is None:
            return node
        if not isinstance(raw, dict):
            node.error = "not a YAML map"
            return node
        try:
            doc = decode_json(raw, KUSTOMIZATION)
        except GoDecodeError as e:
            node.error = f"invalid Kustomization: {e}"
            return node
        node.component = doc.get("kind") == COMPONENT_KIND
        _Fields(self, node, text).walk(doc)
        return node


class _Fields:
    """Collects what one kustomization names."""

    def __init__(self, ctx: _Ctx, node: Node, text: str) -> None:
        self.ctx, self.node, self.text = ctx, node, text

    # -- helpers -------------------------------------------------------------------------
    def remote(self, field: str, value: str, kind: str = "git",
               where: Optional[Tuple[str, str]] = None) -> None:
        """Record a remote reference written in the kustomization (or ``where`` = (file, text))."""
        file, text = where or (self.node.file, self.text)
        self.node.remotes.append(RemoteRef(file, field, value, _line_of(text, value), kind))

    def _path(self, ref: str) -> Optional[str]:
        """The repo-relative path ``ref`` names, through symbolic links as the build's loader
        follows them; the link itself is recorded as read (a change of it counts)."""
        p = _join(self.node.dir, ref)
        if p is None:
            return None
        if p in self.ctx.dirs:
            return p   # a directory git lists files under holds no link on the way to it
        real = self.ctx.resolve(p)
        if real is None:
            return p
        self.node.files.add(p)
        return real

    def file(self, ref: Any) -> None:
        if isinstance(ref, str) and ref:
            p = self._path(ref)
            if p is not None:
                if p in self.ctx.dirs:
                    self.node.trees.add(p)
                else:
                    self.node.files.add(p)

    def tree(self, ref: Any) -> None:
        if isinstance(ref, str) and ref:
            p = self._path(ref)
            if p is not None:
                self.node.trees.add(p)

    def target(self, field: str, ref: Any) -> None:
        """A resources/bases/components entry: a kustomization dir, a file, or remote."""
        if not isinstance(ref, str) or not ref:
            return
        p = self._path(ref)
        if p is not None and p in self.ctx.kdirs:
            self.node.children.add(p)
        elif p is not None and (p in self.ctx.files or p in self.ctx.dirs):
            (self.node.trees if p in self.ctx.dirs else self.node.files).add(p)
        elif self.ctx.looks_remote(ref):
            self.remote(field, ref)
        elif p is not None:
            # missing: a change that creates it affects this root, as a file or as a directory
            # (a base renamed away was a directory: its old files are what the commit deletes)
            self.node.files.add(p)
            self.node.trees.add(p)

    def plugin_config(self, field: str, obj: Any, where: Optional[Tuple[str, str]] = None) -> None:
        """An inline or file plugin config: the files a builtin plugin's config names (read
        through the kustomization's loader, relative to its directory), KRM exec paths and
        container images."""
        if not isinstance(obj, dict):
            return
        for key in _PLUGIN_FILE_KEYS:
            self.file(obj.get(key))
        for key in _PLUGIN_FILE_LIST_KEYS:
            for f in _as_list(obj.get(key)):
                if isinstance(f, str):
                    self.file(f.split("=", 1)[1] if key == "files" and "=" in f else f)
                elif isinstance(f, dict):   # replacements: [{path: FILE}]
                    self.file(f.get("path"))
        if isinstance(obj.get("chartHome"), str):
            self.tree(obj["chartHome"])
        from kzgit.konfig.general import FUNCTION_ANNOTATIONS   # start-up: a warm hook parses nothing
        meta = obj.get("metadata") or {}
        ann = meta.get("annotations") if isinstance(meta, dict) else None
        spec: Any = None
        text = next((ann[k] for k in FUNCTION_ANNOTATIONS if isinstance(ann, dict)
                     and isinstance(ann.get(k), str)), None)   # runtimeutil.GetFunctionSpec
        if text is not None:
            import yaml   # start-up: only the builds that need it pay for it
            try:
                spec = yaml.safe_load(text)
            except yaml.YAMLError:
                spec = None   # the build reports the bad annotation; the graph only needs paths
        if isinstance(spec, dict):
            ex = spec.get("exec")
            if isinstance(ex, dict) and isinstance(ex.get("path"), str):
                path = ex["path"]
                if self.ctx.looks_remote(path):
                    self.remote(field, path, where=where)
                else:
                    self.file(path)
            ct = spec.get("container")
            if isinstance(ct, dict) and isinstance(ct.get("image"), str):
                self.remote(field, ct["image"], kind="image", where=where)

    # -- the walk ------------------------------------------------------------------------
    def walk(self, k: Dict[str, Any]) -> None:
        for field in _TARGET_FIELDS:
            for ref in _as_list(k.get(field)):
                self.target(field, ref)
        for field in _PLUGIN_FIELDS:
            for ref in _as_list(k.get(field)):
                if isinstance(ref, str):
                    self.target(field, ref)
                    self._plugin_file(field, ref)
                else:
                    self.plugin_config(field, ref)
        for field in _FILE_LIST_FIELDS:
            for ref in _as_list(k.get(field)):
                self.file(ref)
        for ref in _as_list(k.get("patchesStrategicMerge")):
            if isinstance(ref, str) and "\n" not in ref and not ref.lstrip().startswith(("{", "apiVersion")):
                self.file(ref)
        for field in ("patches", "patchesJson6902", "replacements"):
            for entry in _as_list(k.get(field)):
                if isinstance(entry, dict):
                    self.file(entry.get("path"))
        for field in _GENERATOR_FIELDS:
            for gen in _as_list(k.get(field)):
                if not isinstance(gen, dict):
                    continue
                for f in _as_list(gen.get("files")):
                    if isinstance(f, str):
                        self.file(f.split("=", 1)[1] if "=" in f else f)
                for f in _as_list(gen.get("envs")):
                    self.file(f)
                self.file(gen.get("env"))
        openapi = k.get("openapi")
        if isinstance(openapi, dict):
            self.file(openapi.get("path"))
        self._helm(k)

    def _plugin_file(self, field: str, ref: str) -> None:
        if "\n" in ref:   # an inline plugin config (kusttarget_configplugin.go loads it as YAML)
            data: Optional[bytes] = ref.encode("utf-8")
            where = None
        else:
            p = self._path(ref)
            if p is None or p not in self.ctx.files:
                return
            data = self.ctx.read(p)
            where = (p, data.decode("utf-8", "replace")) if data is not None else None
        if data is None:
            return
        try:
            import yaml   # start-up: only the builds that need it pay for it
            docs = list(yaml.load_all(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
        except Exception:  # noqa: BLE001
            return
        for doc in docs:
            self.plugin_config(field, doc, where)

    def _helm(self, k: Dict[str, Any]) -> None:
        from kzgit.konfig.general import HELM_DEFAULT_HOME   # start-up: a warm hook parses nothing
        charts = _as_list(k.get("helmCharts"))
        g = k.get("helmGlobals")
        globals_: Dict[str, Any] = g if isinstance(g, dict) else {}
        if charts or globals_:
            self.tree(globals_.get("chartHome") or HELM_DEFAULT_HOME)
            if globals_.get("configHome"):
                self.tree(globals_["configHome"])
        for chart in charts:
            if not isinstance(chart, dict):
                continue
            self.file(chart.get("valuesFile"))
            for f in _as_list(chart.get("additionalValuesFiles")):
                self.file(f)
            if isinstance(chart.get("repo"), str):
                name = chart.get("name", "")
                value = f"{chart['repo']} {name}@{chart.get('version', '')}".strip()
                self.node.remotes.append(RemoteRef(self.node.file, "helmCharts", value,
                                                   _line_of(self.text, chart["repo"]), "helm"))


def _as_list(v: Any) -> List[Any]:
    return v if isinstance(v, list) else []


def disk_reader(repo_root: str) -> ReadFn:
    """A :data:`ReadFn` over the working tree at ``repo_root`` (regular files only)."""

    top = os.path.realpath(repo_root)
    # a directory's real path, resolved once for all the files in it (realpath walks every
    # component of the path: per file, that was most of a hook's reading)
    real_dirs: Dict[str, str] = {}

    def read(path: str) -> Optional[bytes]:
        parent, _, name = path.rpartition("/")
        try:
            real_dir = real_dirs.get(parent)
            if real_dir is None:
                real_dir = real_dirs[parent] = os.path.realpath(
                    os.path.join(repo_root, *parent.split("/")) if parent else repo_root)
            real = os.path.join(real_dir, name)
            if stat.S_ISLNK(os.lstat(real).st_mode):
                real = os.path.realpath(real)
            if real != top and not real.startswith(top + os.sep):
                return None  # a symlink out of the repository is not followed
            st = os.stat(real)
            if not stat.S_ISREG(st.st_mode) or st.st_size > 64 * 1024 * 1024:
                return None
            with open(real, "rb") as f:
                return f.read()
        except (OSError, ValueError):   # ValueError: a path holding a NUL byte
            return None
    return read


def fs_resolver(fs: Any, repo_root: str) -> ResolveFn:
    """A :data:`ResolveFn` over a build file system mounted at ``repo_root`` (a commit read from
    git objects, :class:`kzgit.diff.gittree.GitTreeFS`), through its ``realpath``: the same
    answers :func:`disk_resolver` gives for a working tree."""
    from kzgit.errors import KzgitError   # start-up: loaded with a diff only
    top = repo_root.rstrip("/") or "/"

    def resolve(path: str) -> Optional[str]:
        if path == ROOT_DIR:
            return None
        try:
            real = fs.realpath(posixpath.join(top, path))
        except (OSError, ValueError, KzgitError):   # missing, a loop, a NUL byte
            return None
        rel = posixpath.relpath(real, top)
        if rel == path or rel == ".." or rel.startswith("../"):
            return None
        return rel
    return resolve


def disk_resolver(repo_root: str) -> ResolveFn:
    """A :data:`ResolveFn` over the working tree at ``repo_root``: where a path leads through
    symbolic links, as the build's loader resolves it (``os.path.realpath``; kustomize's
    ``filepath.EvalSymlinks``).  A directory's real path is looked up once."""
    top = os.path.realpath(repo_root)
    real_dirs: Dict[str, str] = {}

    def resolve(path: str) -> Optional[str]:
        if path == ROOT_DIR:
            return None
        d, base = posixpath.split(path)
        try:
            real_d = real_dirs.get(d)
            if real_d is None:
                real_d = real_dirs[d] = os.path.realpath(os.path.join(top, *d.split("/")) if d else top)
            full = os.path.join(real_d, base)
            real = os.path.realpath(full) if os.path.islink(full) else full
        except (OSError, ValueError):   # ValueError: a path holding a NUL byte
            return None
        rel = os.path.relpath(real, top).replace(os.sep, "/")
        if rel == path or rel == ".." or rel.startswith("../"):
            return None
        return rel
    return resolve


def helm_ref_parts(ref: RemoteRef) -> Tuple[str, str]:
    """(repo, version) of a helm chart reference recorded by the graph."""
    repo, _, rest = ref.value.partition(" ")
    return repo, rest.rpartition("@")[2]


# -- sharding across CI jobs ------------------------------------------------------------------

def parse_shard(text: str) -> Tuple[int, int]:
    """``"I/N"`` (1-based, 1 <= I <= N) as (I, N); ValueError with the reason otherwise."""
    i, sep, n = text.partition("/")
    if not sep or not i.strip().isdigit() or not n.strip().isdigit():
        raise ValueError(f"'{text}' is not I/N (for example 2/4)")
    index, count = int(i), int(n)
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"'{text}': I must be between 1 and N, and N at least 1")
    return index, count


def root_weights(graph: Graph, files: Iterable[str], size: Callable[[str], int]) -> Dict[str, int]:
    """Each root's weight for sharding: the bytes of every file it reaches (trees included)."""
    all_files = sorted(set(files))
    present = set(all_files)
    out: Dict[str, int] = {}
    for r in graph.roots:
        reach = graph.reach(r)
        mine = set(reach.files) | {graph.nodes[d].file for d in reach.kustomization_dirs
                                   if d in graph.nodes}
        for t in reach.trees:
            if t == ROOT_DIR:
                mine.update(all_files)
            else:
                mine.update(f for f in all_files if f.startswith(t + "/"))
        out[r] = sum(size(f) for f in sorted(mine) if f in present)
    return out


def shard(roots: Sequence[str], weights: Mapping[str, int], index: int, count: int) -> List[str]:
    """The roots of shard ``index`` (1-based) of ``count``, sorted.

    Every root is in exactly one shard, and every machine computes the same
    assignment from the same roots and weights: roots are taken heaviest first
    (ties by name) and each goes to the lightest shard so far (ties: the lowest
    number), so the shards' total input sizes stay close.
    """
    loads = [0] * count
    mine: List[str] = []
    for r in sorted(set(roots), key=lambda r: (-weights.get(r, 0), r)):
        k = min(range(count), key=lambda j: (loads[j], j))
        loads[k] += max(1, weights.get(r, 0))
        if k == index - 1:
            mine.append(r)
    return sorted(mine)
