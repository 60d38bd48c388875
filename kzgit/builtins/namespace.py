"""namespace: NamespaceTransformer (api/internal/builtins/NamespaceTransformer.go, api/filters/namespace).

Sets ``metadata.namespace`` on every resource not *certainly* cluster-scoped
(unknown kinds get it, kustomize issue #2498), renames ``v1`` Namespace objects through
the ``metadata/name`` field spec, sets the namespace of (Cluster)RoleBinding
subjects named ``default`` only, and fails when two resources end with one id.
"""
from __future__ import annotations


from kzgit.errors import BuildError
from kzgit.resource import ResMap
from kzgit.resource.fieldspec import SCALAR, FieldSpec, apply_fieldspec
from kzgit.builtins.common import fieldspecs_from_config
from kzgit.yamlio.tree import node_kind

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict

_META_NS = FieldSpec("", "", "", "metadata/namespace", True)
_WRONG_KIND = "wrong node kind: expected ScalarNode but got "


def _set_subjects(subjects: Any, mode: str, setter: Callable[[Any], Any]) -> None:
    """namespace.go roleBindingHack: RNode.VisitElements over ``subjects`` (a sequence of
    mappings, or kyaml's lookups fail), setting the namespace of the chosen subjects."""
    if not isinstance(subjects, list):
        raise BuildError(f"wrong node kind: expected SequenceNode but got {node_kind(subjects)}")
    looked_up = "name" if mode == "defaultOnly" else "kind"
    for s in subjects:
        if not isinstance(s, dict):
            raise BuildError(f"looking up {looked_up} on (cluster)role binding subject: "
                             f"wrong node kind: expected MappingNode but got {node_kind(s)}")
        if (mode == "defaultOnly" and s.get("name") == "default") or \
                (mode == "allServiceAccounts" and s.get("kind") == "ServiceAccount"):
            s["namespace"] = setter(s.get("namespace"))


def transform(resmap: ResMap, config: Dict[str, Any], where: str = "NamespaceTransformer",
              skip_helm: bool = False) -> None:
    """``skip_helm``: leave what helm rendered alone, as 5.8 does (kustomize 4e75138d2: "Helm
    should take care of it")."""
    md = config.get("metadata") or {}
    ns = md.get("namespace") if isinstance(md, dict) else None
    if not ns:
        return
    specs = fieldspecs_from_config(config, where=where)
    mode = config.get("setRoleBindingSubjects") or "defaultOnly"
    if mode not in ("defaultOnly", "none", "allServiceAccounts"):
        raise BuildError(f'{where}: invalid value "{mode}" for setRoleBindingSubjects: must be one of '
                         f'"defaultOnly", "none" or "allServiceAccounts"')
    unset_only = bool(config.get("unsetOnly"))

    def setter(old: Any) -> Any:
        if isinstance(old, (dict, list)):
            # filtersutil.SetEntry sets through yaml.FieldSetter, whose ErrorIfInvalid
            # refuses a mapping or sequence, empty or not (kyaml/yaml/fns.go); with
            # unsetOnly too, as hasExistingValue finds no scalar value there
            raise BuildError(_WRONG_KIND + ("MappingNode" if isinstance(old, dict) else "SequenceNode"))
        if unset_only and old not in (None, ""):
            return old
        return ns

    for r in resmap.resources():
        if not r.obj or (skip_helm and r.helm_generated):
            continue
        r.store_prev_id()
        obj = r.obj
        api_version = r.api_version
        fss = [fs for fs in specs if fs.path != "metadata/namespace"
               and (api_version == "v1" or fs.path != "metadata/name")]
        desc = r.cur_id
        if not r.gvk.is_cluster_scoped():
            apply_fieldspec(obj, _META_NS, setter, SCALAR, desc)
        if r.kind in ("RoleBinding", "ClusterRoleBinding"):
            fss = [fs for fs in fss if not (fs.kind in ("RoleBinding", "ClusterRoleBinding")
                                            and fs.path == "subjects/namespace")]
            subjects = obj.get("subjects")
            if subjects is not None and mode != "none":
                try:
                    _set_subjects(subjects, mode, setter)
                except BuildError as e:
                    raise e.prefixed("setting namespace on (cluster)role binding subjects: ") from None
        for fs in fss:
            try:
                apply_fieldspec(obj, fs, setter, SCALAR, desc)
            except BuildError as e:
                # api/filters/namespace/namespace.go run: an InvalidNodeKindError from the
                # field specs is wrapped so
                if _WRONG_KIND in e.message:
                    raise e.prefixed("namespace field specs must target scalar nodes: ") from None
                raise e.prefixed("namespace transformation failed: ") from None
    resmap.invalidate()
    seen: Dict[tuple, Any] = {}
    for r in resmap.resources():
        k = r.cur_id().key()
        if k in seen:
            raise BuildError(f"namespace transformation produces ID conflict: [{seen[k].cur_id()} {r.cur_id()}]")
        seen[k] = r
