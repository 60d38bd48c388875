"""What kustomize makes of a plugin's output (api/internal/plugins/utils/utils.go: ids in and
out, ``UpdateResourceOptions``, ``UpdateResMapValues``; kyaml's ByteReader for the documents)."""
from __future__ import annotations

import copy
from typing import Any, Dict, List, Tuple

from kzgit.errors import PluginError, YamlError
from kzgit.konfig.general import BEHAVIOR_ANNOTATION, HASH_ANNOTATION, ID_ANNOTATION
from kzgit.plugins.common import ann_str, annotations_of, set_annotations
from kzgit.resource import Resource, ResMap
from kzgit.yamlio import load_documents

__all__ = ["resources_from_output", "with_id_annotations", "update_resource_options",
           "update_resmap_values"]


def resources_from_output(data: bytes, label: str) -> Tuple[List[Dict[str, Any]], List[Any]]:
    """Objects (and ResourceList results) from a plugin's stdout.

    Like kyaml's ByteReader (a ResourceList or List with ``items`` is unwrapped, its ``results``
    kept) followed by kustomize's resource factory (``dropBadNodes``: empty documents skipped,
    ``kind`` and ``metadata.name`` required; ``inlineAnyEmbeddedLists``: ``*List`` kinds inlined).
    """
    try:
        docs = load_documents(data, f"output of {label}")
    except YamlError as e:
        raise PluginError(f"{label} printed invalid YAML: {e}") from None
    objs: List[Dict[str, Any]] = []
    results: List[Any] = []
    queue = list(docs)
    while queue:
        d = queue.pop(0)
        if d is None or d == {}:
            continue
        if not isinstance(d, dict):
            raise PluginError(f"{label} printed a document that is not a mapping: {str(d)[:80]!r}")
        kind = d.get("kind")
        if kind in ("ResourceList", "List") and ("items" in d or "functionConfig" in d):
            items = d.get("items") or []
            if not isinstance(items, list):
                raise PluginError(f"{label}: the items of its {kind} are not a list")
            if kind == "ResourceList" and isinstance(d.get("results"), list):
                results.extend(d["results"])
            queue[0:0] = items
            continue
        if isinstance(kind, str) and kind.endswith("List") and isinstance(d.get("items"), list):
            queue[0:0] = d["items"]
            continue
        if not kind:
            raise PluginError(f"{label} printed an object without kind: {str(d)[:120]}")
        md = d.get("metadata")
        if not isinstance(md, dict) or not md.get("name"):
            raise PluginError(f"{label} printed a {kind} without metadata.name")
        objs.append(d)
    return objs, results


def _resource_id_yaml(r: Resource) -> str:
    """``yaml.Marshal(r.CurId())`` (sigs.k8s.io/yaml: JSON field order = sorted, omitempty)."""
    rid = r.cur_id()
    fields = {"group": rid.group, "kind": rid.kind, "name": rid.name,
              "namespace": rid.namespace, "version": rid.version}
    return "".join(f"{k}: {v}\n" for k, v in fields.items() if v)


def with_id_annotations(resmap: ResMap) -> List[Dict[str, Any]]:
    """utils.GetResMapWithIDAnnotation: deep copies annotated with their current id."""
    out = []
    for r in resmap:
        obj = copy.deepcopy(r.obj)
        ann = dict(annotations_of(obj))
        ann[ID_ANNOTATION] = _resource_id_yaml(r)
        set_annotations(obj, ann)
        out.append(obj)
    return out


# --------------------------------------------------------------------------- reconciliation

def update_resource_options(objs: List[Dict[str, Any]], label: str) -> List[Resource]:
    """utils.UpdateResourceOptions: needs-hash / behavior annotations become resource state."""
    out = []
    for obj in objs:
        ann = dict(annotations_of(obj))
        needs_hash = False
        if HASH_ANNOTATION in ann:
            val = ann_str(ann[HASH_ANNOTATION])
            # strconv.ParseBool
            if val in ("1", "t", "T", "TRUE", "true", "True"):
                needs_hash = True
            elif val in ("0", "f", "F", "FALSE", "false", "False"):
                needs_hash = False
            else:
                raise PluginError(f"{label}: the annotation \"{HASH_ANNOTATION}\" contains an "
                                  f"invalid value (\"{val}\")")
        behavior = ann_str(ann.pop(BEHAVIOR_ANNOTATION, ""))
        ann.pop(HASH_ANNOTATION, None)
        set_annotations(obj, ann)
        r = Resource(obj, source=label)
        r.needs_hash = needs_hash
        # types.NewGenerationBehavior: anything else is "unspecified"
        r.behavior = behavior if behavior in ("create", "merge", "replace") else ""
        out.append(r)
    return out


def update_resmap_values(label: str, objs: List[Dict[str, Any]], resmap: ResMap) -> None:
    """utils.UpdateResMapValues: match the output to the map by *current* id.

    A resource whose id is already in the map is updated in place (its build state, e.g. rename
    history, is kept, as ``ResetRNode``); a new id is appended; ids the plugin did not print are
    removed.  Note that kustomize matches by the id of the *output* resource, so a plugin that
    renames a resource produces a new resource and drops the old one.
    """
    new_keys = set()
    for obj in objs:
        ann = annotations_of(obj)
        if ID_ANNOTATION in ann:
            set_annotations(obj, {k: v for k, v in ann.items() if k != ID_ANNOTATION})
        else:
            set_annotations(obj, dict(ann))  # SetAnnotations is always called: sorted/cleared
        r = Resource(obj, source=label)
        key = r.cur_id().key()
        if key in new_keys:
            raise PluginError(f"plugin {label} generated duplicate resource: {r.cur_id()}")
        new_keys.add(key)
        old = resmap.get_by_current_id(r.cur_id())
        if old is not None:
            old.obj = obj
        else:
            resmap.append(r)
    for r in list(resmap):
        if r.cur_id().key() not in new_keys:
            resmap.remove(r)

