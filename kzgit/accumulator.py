"""ResAccumulator (kustomize api/internal/accumulator/resaccumulator.go): the resources, the
transformer config and the vars one kustomization level accumulates."""
from __future__ import annotations


from kzgit.builtins.config import TransformerConfig, default_config
from kzgit.errors import BuildError
from kzgit.resource import ResId, Resource, ResMap
from kzgit.resource.selector import metadata_texts

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List, Optional, Tuple

__all__ = ["Accumulator"]


class Accumulator:
    """ResAccumulator: resources, the transformer config and the vars of a level."""

    def __init__(self, version: Optional[Tuple[int, int, int]]) -> None:
        self.resmap = ResMap()
        # the default field specs of the Kustomize release built as (None: the caller sets it)
        self.config: TransformerConfig = (default_config(version) if version is not None
                                          else TransformerConfig())
        self.vars: List[Dict[str, Any]] = []
        self.varset: Any = None

    def merge_config(self, other: TransformerConfig) -> None:
        self.config.merge(other)

    def absorb(self, res: Resource, where: str) -> None:
        """resWrangler.appendReplaceOrMerge for generated resources."""
        rid = res.cur_id()
        matches = self.resmap.lookup_any_id(rid)   # indexed: linear in generators + resources
        if not matches:
            if res.behavior in ("merge", "replace"):
                raise BuildError(f"merging from generator {where}: id {_go_id(rid)} does not exist; cannot merge or replace")
            self.resmap.append(res)
            return
        if len(matches) > 1:
            raise BuildError(f"merging from generator {where}: found multiple objects {[str(m.cur_id()) for m in matches]} that could accept merge of {rid}")
        old = matches[0]
        if res.behavior not in ("merge", "replace"):
            raise BuildError(f"merging from generator {where}: id {_go_id(rid)} exists; behavior must be merge or replace")
        _copy_merge_metadata(res, old)
        if res.behavior == "merge":
            for field in ("data", "binaryData"):
                # resource.go mergeDataMapFrom: GetDataMap reads each value's text, and
                # SetDataMap writes them all back as strings (1.50 stays "1.50", true "true").
                base = old.obj.get(field)
                merged = metadata_texts(base) if isinstance(base, dict) else {}
                merged.update(res.obj.get(field) or {})
                if merged:
                    res.obj[field] = merged
            if old.origin is not None:
                res.origin = old.origin
        items = self.resmap.resources()
        items[items.index(old)] = res
        self.resmap.replace_items(items)
        from kzgit.trace import TRACER   # kzgit explain sets it
        tracer = TRACER.get()
        if tracer is not None:
            tracer.replaced(old, res)


def _go_id(rid: ResId) -> str:
    return str(rid)


def _copy_merge_metadata(res: Resource, old: Resource) -> None:
    """Resource.CopyMergeMetaDataFieldsFrom: labels/annotations merged (new wins), old name/namespace,
    and the old resource's build state (previous ids, affixes); the hash only if both want it."""
    labels = dict(old.labels())
    labels.update(res.labels())
    ann = dict(old.annotations())
    ann.update(res.annotations())
    md = res.metadata
    if labels:
        md["labels"] = labels
    else:
        md.pop("labels", None)
    if ann:
        md["annotations"] = ann
    else:
        md.pop("annotations", None)
    md["name"] = old.name
    if old.namespace:
        md["namespace"] = old.namespace
    else:
        md.pop("namespace", None)
    res.needs_hash = res.needs_hash and old.needs_hash
    res.prev_ids = list(old.prev_ids)
    res.prefixes = list(old.prefixes)
    res.suffixes = list(old.suffixes)
    res.refby = list(old.refby)
    # kustomize keeps build metadata as annotations, merged like the others (new wins): a
    # generated resource carries no transformations yet, so the old one's survive a merge or
    # replace (api/resource/resource.go CopyMergeMetaDataFieldsFrom)
    if not res.transformations:
        res.transformations = list(old.transformations)
    if res.origin is None:
        res.origin = old.origin
