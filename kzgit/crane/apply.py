"""Make crane's operations mean in a kustomize overlay what they mean to ``crane apply``.

crane applies a transform with ``EnsurePathExistsOnAdd`` and ``AllowMissingPathOnRemove``
(crane-lib ``apply/applier.go``, evanphx json-patch v5): removing something absent does
nothing, and adding below missing objects creates them.  kustomize applies JSON 6902 patches
without those options (json-patch v4; see :mod:`kzgit.patch.json6902`), so such operations
would make the overlay fail to build.  Crane's own plugins rely on this: the builtin
``KubernetesPlugin`` removes ``/spec/nodeName`` of every Pod and adds annotations to objects
that may have none.

:func:`for_kustomize` walks the kept operations over the resource as crane would and returns
operations kustomize applies to the same result: a ``remove`` of an absent path is dropped, and
an ``add`` whose parent objects are missing is preceded by ``add`` operations creating them as
``{}``.  When crane would create a missing *array* (padded with nulls) the operation is refused
with an error rather than written in a form kustomize rejects.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Tuple

from kzgit.errors import BuildError, PluginError
from kzgit.patch import json6902
from kzgit.crane.priority import PluginOperation

__all__ = ["for_kustomize"]

_ABSENT: Any = object()


def _key(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~")


def _child(con: Any, part: str) -> Any:
    """The member ``part`` of ``con`` (JSON-pointer token), or _ABSENT."""
    if isinstance(con, dict):
        return con.get(_key(part), _ABSENT)
    if isinstance(con, list):
        try:
            idx = int(part)
        except ValueError:
            return _ABSENT
        if -len(con) <= idx < len(con):
            return con[idx]
    return _ABSENT


def _is_index(part: str) -> bool:
    return part == "-" or part.lstrip("+-").isdigit()


def _absent(doc: Any, path: str) -> bool:
    """crane's remove is a no-op: a parent or the target is missing (findObject, remove)."""
    parts = path.split("/")[1:]
    cur = doc
    for i, part in enumerate(parts):
        if i < len(parts) - 1 and not isinstance(cur, (dict, list)):
            return True
        cur = _child(cur, part)
        if cur is _ABSENT:
            return True
    return False


def _missing_parents(doc: Any, path: str, what: str) -> List[str]:
    """The parent pointers crane's ensurePathExists creates (as objects) before ``path``."""
    parts = path.split("/")
    created: List[str] = []
    cur = doc
    for i in range(1, len(parts) - 1):
        nxt = _child(cur, parts[i]) if isinstance(cur, (dict, list)) else _ABSENT
        if nxt is not _ABSENT:
            cur = nxt
            continue
        if not isinstance(cur, dict) or _is_index(parts[i + 1]):
            raise PluginError(
                f"{what}: crane would create the missing array or list item "
                f"'{'/'.join(parts[:i + 2])}' (EnsurePathExistsOnAdd); kzgit cannot write that "
                f"as a kustomize patch")
        created.append("/".join(parts[:i + 1]))
        cur = {}
    return created


def for_kustomize(obj: Dict[str, Any], ops: List[PluginOperation], resource: str = ""
                  ) -> Tuple[List[PluginOperation], List[PluginOperation]]:
    """(the operations to write, the removes dropped because crane would do nothing)."""
    doc: Any = obj
    out: List[PluginOperation] = []
    dropped: List[PluginOperation] = []
    for o in ops:
        kind, path = o.operation.get("op"), o.operation.get("path", "")
        if kind == "remove" and _absent(doc, path):
            dropped.append(o)
            continue
        todo = [o]
        if kind == "add":
            what = f"plugin '{o.plugin}' on {resource}" if resource else f"plugin '{o.plugin}'"
            todo = [dataclasses.replace(o, operation={"op": "add", "path": p, "value": {}})
                    for p in _missing_parents(doc, path, what)] + todo
        for t in todo:
            out.append(t)
            try:
                doc = json6902.apply(doc, [t.operation], "")
            except BuildError:
                pass  # kustomize reports it when the overlay is built, naming the patch file
    return out, dropped
