"""replicas: ReplicaCountTransformer (api/internal/builtins/ReplicaCountTransformer.go).

Sets the count on resources whose current *or any previous* name equals the
entry's name, at the field specs' paths; an entry that matches nothing is an error.
"""
from __future__ import annotations


from kzgit.errors import BuildError
from kzgit.resource import Gvk, ResMap
from kzgit.resource.fieldspec import SCALAR, apply_fieldspec
from kzgit.builtins.common import fieldspecs_from_config

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict


def transform(resmap: ResMap, config: Dict[str, Any], where: str = "ReplicaCountTransformer") -> None:
    rep = config.get("replica") or {}
    name = rep.get("name") or ""
    count = rep.get("count", 0)
    specs = fieldspecs_from_config(config, where=where)
    found = False
    for fs in specs:
        sel = Gvk(fs.group, fs.version, fs.kind)
        for r in resmap.resources():
            if not any(i.name == name and i.gvk.is_selected(sel) for i in r.all_ids()):
                continue
            found = True
            apply_fieldspec(r.obj, fs, lambda _old: count, SCALAR, r.cur_id)
    if not found:
        from kzgit.builtins.sorting import gvk_order_key   # start-up: only the builds that need it pay for it
        # ReplicaCountTransformer.go: the kinds of its (sorted) field specs, Go's %v of a slice
        listed = sorted((Gvk(fs.group, fs.version, fs.kind) for fs in specs), key=gvk_order_key)
        gvks = " ".join(str(g) for g in listed)
        raise BuildError(f"resource with name {name} does not match a config with the following GVK [{gvks}]")
