"""Name-reference fix-up (api/internal/accumulator/namereferencetransformer.go, api/filters/nameref).

After prefixes, suffixes and hashes renamed resources, every field that refers
to a resource by name (the nameReference table) is pointed at the new name.
kustomize sieves *all* candidates for every reference; kzgit indexes the
candidates by previous name, so the cost is linear in the references.
"""
from __future__ import annotations

from collections import defaultdict

from kzgit.errors import BuildError
from kzgit.resource import TOTALLY_NOT_A_NAMESPACE, Gvk, ResMap, Resource
from kzgit.resource.fieldspec import FieldSpec, apply_fieldspec
from kzgit.yamlio.tree import spelled

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, List, Optional, Set, Tuple


def _same_ending(a: List[str], b: List[str]) -> bool:
    """utils.SameEndingSubSlice."""
    if len(a) > len(b):
        a, b = b, a
    diff = len(b) - len(a)
    if not a:
        return diff == 0
    return all(b[i + diff] == a[i] for i in range(len(a)))


def _affixes_equal(r: Resource, o: Resource, allow_empty: bool) -> bool:
    """Resource.PrefixesSuffixesEquals."""
    if allow_empty:
        pe = not r.prefixes or not o.prefixes
        se = not r.suffixes or not o.suffixes
        return (pe or _same_ending(r.prefixes, o.prefixes)) and (se or _same_ending(r.suffixes, o.suffixes))
    return _same_ending(r.prefixes, o.prefixes) and _same_ending(r.suffixes, o.suffixes)


class _Index:
    """Candidates by previous name and original namespace, plus each resource's current id
    (names do not change while references are fixed, so ids are computed once)."""

    def __init__(self, resmap: ResMap) -> None:
        self.cur: Dict[int, Any] = {id(r): r.cur_id() for r in resmap.resources()}
        self.by_prev_name: Dict[str, List[Resource]] = defaultdict(list)
        self.by_org_ns: Dict[str, List[Resource]] = defaultdict(list)
        for r in resmap.resources():
            self.by_org_ns[r.org_id().effective_namespace()].append(r)
            for n in {i.name for i in r.prev_ids}:
                self.by_prev_name[n].append(r)


def _role_binding_namespaces(r: Resource) -> Set[str]:
    out: Set[str] = set()
    if r.kind != "RoleBinding":
        return out
    for s in r.obj.get("subjects") or []:
        if isinstance(s, dict) and "namespace" in s and s.get("kind") == "ServiceAccount":
            ns = s["namespace"]
            if not isinstance(ns, str):
                raise BuildError(f'Invalid Input: namespace is blank for resource "{r.cur_id()}"')
            out.add(ns)
    return out


def _null_text(d: Any, key: str) -> str:
    """kyaml's node ``Value`` of ``d[key]`` when the field holds a YAML null, else "": ``~``,
    ``null`` or ``Null`` as written (the loader records a spelling that does not print back),
    nothing for ``key:`` with no value."""
    if not isinstance(d, dict) or key not in d or d[key] is not None:
        return ""
    text = spelled(d, key)
    return "null" if text is None else text


def _confirm_matches_referrer(r: Resource) -> None:
    """nameref.Filter.confirmNodeMatchesReferrer (api/filters/nameref/nameref.go, unchanged
    from v5.5.0 to v5.8.1): the referrer's ``GetMeta`` (Go decoding: a null is "") against its
    id (kyaml's node text: ``~`` is "~"). They differ for an ``apiVersion`` that is a null
    written as text, and kustomize then fails the build: ``apiVersion: ~`` on a Deployment is
    "node-referrerOriginal 'APIVersion' mismatch '' != '~'" with every release. (A null kind
    or name fails earlier, at load; kubectl 1.32 and 1.36 render a ``namespace: Null``.)"""
    text = _null_text(r.obj, "apiVersion")
    if text:
        raise BuildError(f"node-referrerOriginal 'APIVersion' mismatch '' != '{text}'")


class _Referrer:
    """One referrer resource with its candidate test (SubsetThatCouldBeReferencedByResource)."""

    def __init__(self, r: Resource) -> None:
        _confirm_matches_referrer(r)
        self.r = r
        self.cur = r.cur_id()
        self.cluster = self.cur.is_cluster_scoped()
        self.rb_ns = set() if self.cluster else _role_binding_namespaces(r)

    def could_reference(self, t: Resource) -> bool:
        if self.cluster:
            return True
        tid = t.cur_id()
        if tid.is_cluster_scoped() or tid.effective_namespace() == self.cur.effective_namespace():
            return True
        return t.namespace in self.rb_ns


def _select(ref: _Referrer, old: str, cands: List[Resource], target: Gvk, spec: FieldSpec,
            identical: Callable[[List[Resource]], bool]) -> Optional[Resource]:
    c = [r for r in cands if any(i.name == old for i in r.prev_ids)]
    c = [r for r in c if any(i.gvk.is_selected(target) for i in r.prev_ids)]
    if spec.path.endswith("roleRef/name"):
        rr = ref.r.obj.get("roleRef")
        if isinstance(rr, dict) and rr.get("apiGroup") is not None and rr.get("kind") is not None:
            g = Gvk(str(rr["apiGroup"]), "", str(rr["kind"]))
            c = [r for r in c if any(i.gvk.is_selected(g) for i in r.prev_ids)]
    if not ref.cluster:
        c = [r for r in c if r.cur_id().is_cluster_scoped() or r.kind == "ServiceAccount"
             or r.cur_id().effective_namespace() == ref.cur.effective_namespace()]
    if len(c) == 1:
        return c[0]
    c = [r for r in c if _affixes_equal(r, ref.r, True)]
    if len(c) > 1:
        c = [r for r in c if _affixes_equal(r, ref.r, False)]
    if len(c) == 1:
        return c[0]
    if not c:
        return None
    if identical(c):
        return c[0]
    ids = ", ".join(str(r.cur_id()) for r in c)
    raise BuildError(f"found multiple possible referrals: {ids}")


def _names_same(rs: List[Resource]) -> bool:
    return all(r.name == rs[0].name for r in rs)


def _names_ns_same(rs: List[Resource]) -> bool:
    return all(r.name == rs[0].name and r.namespace == rs[0].namespace for r in rs)


def fix_back_references(resmap: ResMap, backrefs: List[Tuple[Gvk, List[FieldSpec]]]) -> None:
    """Run the name-reference transformer over the whole map once."""
    index = _Index(resmap)
    referrers: Dict[int, _Referrer] = {}
    # original gvk of every resource, grouped by kind: each spec only visits its kind
    every = [(r, r.org_id().gvk) for r in resmap.resources()]
    by_kind: Dict[str, List[Tuple[Resource, Gvk]]] = defaultdict(list)
    for r, g in every:
        by_kind[g.kind].append((r, g))
    for target, specs in backrefs:
        for spec in specs:
            sel = Gvk(spec.group, spec.version, spec.kind)
            for r, g in (by_kind.get(spec.kind, ()) if spec.kind else every):
                if not g.is_selected(sel):
                    continue
                ref = referrers.get(id(r))
                if ref is None:
                    ref = referrers[id(r)] = _Referrer(r)
                _apply(ref, spec, target, index)


def _apply(ref: _Referrer, spec: FieldSpec, target: Gvk, index: _Index) -> None:
    r = ref.r
    cur_gvk = r.gvk

    def candidates(name: Any) -> List[Resource]:
        if not isinstance(name, str):
            name = "" if name is None else str(name)
        return [t for t in index.by_prev_name.get(name, ()) if ref.could_reference(t)]

    def set_scalar(v: Any) -> Any:
        old = v if isinstance(v, str) else str(v)
        referral = _select(ref, old, candidates(v), target, spec, _names_same)
        if referral is None:
            return v
        referral.refby.append(ref.cur)
        return referral.name if referral.name != old else v

    def set_mapping(m: Dict[str, Any]) -> Dict[str, Any]:
        if "name" not in m:
            raise BuildError("path config error; no 'name' field in node")
        old = m["name"]
        cands = candidates(old)
        if "namespace" in m:
            ns = m["namespace"]
            # reswrangler.go GroupedByOriginalNamespace / GroupedByCurrentNamespace
            # (keyed by effective namespace; cluster-scoped resources excluded)
            if ns != TOTALLY_NOT_A_NAMESPACE and any(ref.could_reference(t) for t in index.by_org_ns.get(ns, ())):
                cands = [t for t in cands if t.org_id().effective_namespace() == ns]
            else:
                cands = [t for t in cands if t.cur_id().effective_namespace() == ns
                         and ns != TOTALLY_NOT_A_NAMESPACE]
        referral = _select(ref, old if isinstance(old, str) else str(old), cands, target, spec, _names_ns_same)
        if referral is None:
            return m
        referral.refby.append(ref.cur)
        if referral.name == old and referral.namespace == "":
            return m
        m["name"] = referral.name
        if referral.namespace:
            m["namespace"] = referral.namespace
        return m

    def setter(v: Any) -> Any:
        if v is None:
            return v
        if isinstance(v, dict):
            return set_mapping(v)
        if isinstance(v, list):
            return [set_mapping(x) if isinstance(x, dict) else (set_scalar(x) if x is not None else x) for x in v]
        return set_scalar(v)

    fs = FieldSpec(cur_gvk.group, cur_gvk.version, cur_gvk.kind, spec.path, spec.create)
    try:
        apply_fieldspec(r.obj, fs, setter, None, r.cur_id)
    except BuildError as e:
        raise BuildError(f"updating name reference in '{spec.path}' field of '{r.cur_id()}': {e}") from None
