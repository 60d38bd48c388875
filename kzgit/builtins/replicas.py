"""replicas: ReplicaCountTransformer (api/internal/builtins/ReplicaCountTransformer.go).

Sets the count on resources whose current *or any previous* name equals the
entry's name, at the field specs' paths; an entry that matches nothing is an error.
"""
from __future__ import annotations


from kzgit.errors import BuildError
from kzgit.resource import Gvk, ResMap
from kzgit.resource.fieldspec import SCALAR, apply_fieldspec
from kzgit.builtins.common import fieldspecs_from_config
from kzgit.yamlio import plain_scalar_is_string

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict


def _count_like(old: Any, count: Any) -> Any:
    """The count as the node it replaces reads: filtersutil.SetScalar keeps that node's style,
    so a count written where a quoted scalar was (``replicas: "3"``) stays a string.  kzgit
    knows a string was quoted (or a block scalar) when its text would not read as a string if
    plain, or has blanks around it or a line break; a quoted word (``"abc"``) is taken for a
    plain one."""
    if isinstance(old, str) and isinstance(count, int) and (
            not plain_scalar_is_string(old) or old != old.strip()):
        return str(count)
    return count


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
            apply_fieldspec(r.obj, fs, lambda old: _count_like(old, count), SCALAR, r.cur_id,
                            texts=False)
    if not found:
        from kzgit.builtins.sorting import gvk_order_key   # start-up: only the builds that need it pay for it
        # ReplicaCountTransformer.go: the kinds of its (sorted) field specs, Go's %v of a slice
        listed = sorted((Gvk(fs.group, fs.version, fs.kind) for fs in specs), key=gvk_order_key)
        gvks = " ".join(str(g) for g in listed)
        raise BuildError(f"resource with name {name} does not match a config with the following GVK [{gvks}]")
