"""The resource model: ids, resources with their rename history, and the resource map.

kustomize keeps a resource's rename history in build annotations
(``internal.config.kubernetes.io/previousNames`` ...) and re-parses them on
every lookup, which is one source of its quadratic time in the number of resources.  kzgit keeps
that history as Python attributes and indexes the map by id.
"""
from __future__ import annotations

from kzgit.errors import BuildError
from kzgit.konfig import is_cluster_scoped
from kzgit.resource._tuples import GvkFields, ResIdFields
from kzgit.yamlio.tree import canonical_text, copy_tree, spelled

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

# kyaml/resid/resid.go, gvk.go
NO_GROUP, NO_VERSION, NO_KIND, NO_NAME, NO_NAMESPACE = "[noGrp]", "[noVer]", "[noKind]", "[noName]", "[noNs]"
TOTALLY_NOT_A_NAMESPACE = "_non_namespaceable_"
DEFAULT_NAMESPACE = "default"


def split_api_version(api_version: str) -> Tuple[str, str]:
    """kyaml ParseGroupVersion: ``apps/v1`` -> (apps, v1); ``v1`` -> ("", v1)."""
    i = api_version.find("/")
    if i >= 0:
        return api_version[:i], api_version[i + 1:]
    return "", api_version


class Gvk(GvkFields):
    __slots__ = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return ".".join([self.kind or NO_KIND, self.version or NO_VERSION, self.group or NO_GROUP])

    def is_selected(self, sel: "Gvk") -> bool:
        """kyaml Gvk.IsSelected: empty selector fields match anything."""
        return ((not sel.group or sel.group == self.group)
                and (not sel.version or sel.version == self.version)
                and (not sel.kind or sel.kind == self.kind))

    def is_cluster_scoped(self) -> bool:
        return is_cluster_scoped(self.api_version, self.kind)


class ResId(ResIdFields):
    __slots__ = ()

    @property
    def gvk(self) -> Gvk:
        return Gvk(self.group, self.version, self.kind)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def is_cluster_scoped(self) -> bool:
        return is_cluster_scoped(self.api_version, self.kind)

    def effective_namespace(self) -> str:
        if self.is_cluster_scoped():
            return TOTALLY_NOT_A_NAMESPACE
        if self.namespace in ("", DEFAULT_NAMESPACE):
            return DEFAULT_NAMESPACE
        return self.namespace

    def key(self) -> Tuple[str, str, str, str, str]:
        """Hashable identity with kustomize's equality (effective namespace)."""
        return (self.group, self.version, self.kind, self.name, self.effective_namespace())

    def __str__(self) -> str:
        return f"{self.gvk}/{self.name or NO_NAME}.{self.namespace or NO_NAMESPACE}"

    def is_selected_by(self, sel: "ResId") -> bool:
        return ((not sel.name or sel.name == self.name)
                and (not sel.namespace or sel.effective_namespace() == self.effective_namespace())
                and self.gvk.is_selected(sel.gvk))


def _meta_text(obj: Dict[str, Any], key: str) -> str:
    """metadata.name / metadata.namespace as kyaml's GetName reads them: the node's text.

    ``name: 0123`` or ``name: 2021-01-01`` load as a number or a date; ids, prefixes and
    sorting use the text as written (``p-0123``), though the output prints the value.
    """
    md = obj.get("metadata")
    if md.__class__ is dict:  # the common case, on the hot path of every id
        v = md.get(key)
        if v.__class__ is str:
            return v
    elif not isinstance(md, dict):
        return ""
    return scalar_text(md, key)


def scalar_text(d: Dict[str, Any], key: str) -> str:
    """A field as kyaml reads a scalar node's ``Value``: its text as written.

    ``apiVersion: 017`` loads as 15 and prints as 15, but kyaml's GetApiVersion, GetKind and
    GetName read the node text (kyaml/yaml/rnode.go getMapFieldValue → YNode().Value), so
    ids and the legacy sort see "017"; a mapping or sequence has no Value: "" (so a
    ``name: [a]`` is a missing name, as in kustomize).
    """
    v = d.get(key)
    if v is None or isinstance(v, (dict, list)):
        return ""
    text = spelled(d, key)
    if text is not None:
        return text
    return v if isinstance(v, str) else canonical_text(v)


class Resource:
    """One Kubernetes object plus the build state kustomize keeps beside it."""

    __slots__ = ("obj", "prev_ids", "prefixes", "suffixes", "needs_hash", "behavior",
                 "refby", "origin", "transformations", "source", "helm_generated")

    def __init__(self, obj: Dict[str, Any], source: str = "") -> None:
        self.obj = obj
        self.prev_ids: List[ResId] = []      # oldest first (internal...previousNames etc.)
        self.prefixes: List[str] = []        # name prefixes applied, outermost last
        self.suffixes: List[str] = []
        self.needs_hash = False              # internal...needsHashSuffix
        self.behavior = ""                   # generator behavior: create|merge|replace
        self.refby: List[ResId] = []
        self.origin: Optional[Dict[str, Any]] = None
        self.transformations: List[Dict[str, Any]] = []
        self.source = source                 # file the resource came from, for messages
        # rendered by helm (5.8: config.kubernetes.io/helm-generated, which the
        # NamespaceTransformer skips; kustomize 4e75138d2)
        self.helm_generated = False

    # --- accessors -----------------------------------------------------------------
    @property
    def api_version(self) -> str:
        v = self.obj.get("apiVersion")
        return v if v.__class__ is str else scalar_text(self.obj, "apiVersion")

    @property
    def kind(self) -> str:
        v = self.obj.get("kind")
        return v if v.__class__ is str else scalar_text(self.obj, "kind")

    @property
    def metadata(self) -> Dict[str, Any]:
        md = self.obj.get("metadata")
        if not isinstance(md, dict):
            md = {}
            self.obj["metadata"] = md
        return md

    # name and namespace: one pair of accessors each, in parallel on purpose (kyaml's
    # RNode GetName/SetName and GetNamespace/SetNamespace)
    @property
    def name(self) -> str:
        return _meta_text(self.obj, "name")

    @name.setter
    def name(self, value: str) -> None:
        self.metadata["name"] = value

    @property
    def namespace(self) -> str:
        return _meta_text(self.obj, "namespace")

    @namespace.setter
    def namespace(self, value: str) -> None:
        self.metadata["namespace"] = value

    @property
    def gvk(self) -> Gvk:
        g, v = split_api_version(self.api_version)
        return Gvk(g, v, self.kind)

    def cur_id(self) -> ResId:
        g, v = split_api_version(self.api_version)
        return ResId(g, v, self.kind, self.name, self.namespace)

    def org_id(self) -> ResId:
        return self.prev_ids[0] if self.prev_ids else self.cur_id()

    def all_ids(self) -> List[ResId]:
        """Current id and every previous id (kustomize's PrevIds + CurId)."""
        return [self.cur_id(), *self.prev_ids]

    def store_prev_id(self) -> None:
        self.prev_ids.append(self.cur_id())

    def labels(self) -> Dict[str, Any]:
        v = self.metadata.get("labels")
        return v if isinstance(v, dict) else {}

    def annotations(self) -> Dict[str, Any]:
        v = self.metadata.get("annotations")
        return v if isinstance(v, dict) else {}

    def copy(self) -> "Resource":
        r = Resource(copy_tree(self.obj), self.source)
        for s in self.__slots__:
            if s != "obj":
                v = getattr(self, s)
                setattr(r, s, list(v) if isinstance(v, list) else (dict(v) if isinstance(v, dict) else v))
        return r

    def __repr__(self) -> str:
        return f"Resource({self.cur_id()})"


class ResMap:
    """Ordered resources with an index by current id.

    The index is rebuilt lazily after any change of ids (``invalidate``), so
    appends and lookups stay O(1) amortised instead of kustomize's linear scans.
    """

    def __init__(self, resources: Iterable[Resource] = ()) -> None:
        self._items: List[Resource] = []
        self._index: Optional[Dict[tuple, Resource]] = {}
        # current and previous ids -> resources, built on first use (generator merges)
        self._any_index: Optional[Dict[tuple, List[Resource]]] = None
        for r in resources:
            self.append(r)

    def __iter__(self) -> Iterator[Resource]:
        return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def resources(self) -> List[Resource]:
        return self._items

    def invalidate(self) -> None:
        self._index = None
        self._any_index = None

    def _idx(self) -> Dict[tuple, Resource]:
        if self._index is None:
            self._index = {}
            for r in self._items:
                self._index[r.cur_id().key()] = r
        return self._index

    def get_by_current_id(self, rid: ResId) -> Optional[Resource]:
        return self._idx().get(rid.key())

    def append(self, r: Resource) -> None:
        k = r.cur_id().key()
        idx = self._idx()
        if k in idx:
            raise BuildError(f"may not add resource with an already registered id: {r.cur_id()}")
        idx[k] = r
        self._items.append(r)
        if self._any_index is not None:
            for key in {i.key() for i in r.all_ids()}:
                self._any_index.setdefault(key, []).append(r)

    def append_all(self, other: Iterable[Resource]) -> None:
        for r in other:
            self.append(r)

    def remove(self, r: Resource) -> None:
        self._items = [x for x in self._items if x is not r]
        self.invalidate()

    def replace_items(self, items: List[Resource]) -> None:
        self._items = list(items)
        self.invalidate()

    def get_matching_any_id(self, pred) -> List[Resource]:
        return [r for r in self._items if any(pred(i) for i in r.all_ids())]

    def get_by_id_any(self, rid: ResId) -> List[Resource]:
        """Resources whose current or any previous id equals ``rid`` (kustomize GetMatchingResourcesByAnyId).

        A scan: patches change ids between their lookups.  :meth:`lookup_any_id` is the
        indexed form for a run of lookups and appends (generator merges).
        """
        k = rid.key()
        return [r for r in self._items if any(i.key() == k for i in r.all_ids())]

    def lookup_any_id(self, rid: ResId) -> List[Resource]:
        """As :meth:`get_by_id_any`, through an index kept until ids may have changed
        (:meth:`invalidate`, :meth:`replace_items`, :meth:`remove`)."""
        if self._any_index is None:
            self._any_index = {}
            for r in self._items:
                for key in {i.key() for i in r.all_ids()}:
                    self._any_index.setdefault(key, []).append(r)
        return list(self._any_index.get(rid.key(), ()))
