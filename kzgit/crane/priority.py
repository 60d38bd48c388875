"""Choosing one operation per JSON-pointer path among several plugins' patches.

The rules of crane-lib ``transform/runner.go`` (``sanitizePatches``) and of the
"transform plugin priority" enhancement (konveyor/enhancements
``enhancements/crane-2.0-archived/transform-plugin-priority/README.md``):

* operations conflict when they have the same ``path`` (crane keys its patch map on the path
  alone, so even two operations of one plugin on the same path conflict: the first one wins);
* with no priorities the operation from the plugin that comes first in plugin order wins;
* ``--plugin-priorities a,b`` gives ``a`` priority 0 and ``b`` priority 1: a lower number wins,
  and any named plugin wins over an unnamed one; two unnamed plugins (or one named twice)
  fall back to plugin order;
* identical operations (same op, path, ``from`` and value) are applied once and are not reported
  as ignored;
* whiteouts are decided before this step: a whited-out resource gets no patch at all.

Unlike crane, whose output order comes from iterating a Go map (random), the kept operations are
returned in plugin order, then operation order, so output files are deterministic.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Sequence, Tuple

__all__ = ["PluginOperation", "IgnoredOperation", "priority_map", "resolve", "same_operation"]


@dataclasses.dataclass(frozen=True)
class PluginOperation:
    """crane-lib ``transform.PluginOperation``: one operation and the plugin that proposed it."""

    plugin: str
    operation: Dict[str, Any]
    order: Tuple[int, int]  # (plugin index, operation index): plugin order, then op order


@dataclasses.dataclass(frozen=True)
class IgnoredOperation:
    """An operation that lost a conflict, and the plugin whose operation was applied instead."""

    plugin: str
    operation: Dict[str, Any]
    won_by: str


def priority_map(names: Sequence[str]) -> Dict[str, int]:
    """``a,b,c`` -> ``{a: 0, b: 1, c: 2}`` (crane getPluginPrioritiesMap; empty names skipped).

    A name listed twice keeps its first (highest) priority.
    """
    out: Dict[str, int] = {}
    for i, n in enumerate(names):
        if n and n not in out:
            out[n] = i
    return out


def same_operation(a: Dict[str, Any], b: Dict[str, Any]) -> bool:
    """crane-lib internal/jsonpatch EqualOperation: same op and path, ``from`` for move/copy, value."""
    if a.get("op") != b.get("op") or a.get("path") != b.get("path"):
        return False
    if a.get("op") in ("move", "copy") and a.get("from") != b.get("from"):
        return False
    return ("value" in a) == ("value" in b) and a.get("value") == b.get("value")


def _wins(current: PluginOperation, previous: PluginOperation, prio: Dict[str, int]) -> bool:
    """runner.go: ``replaceVal := currentOk && (!previousOk || currentPrio < previousPrio)``."""
    cur: Optional[int] = prio.get(current.plugin)
    prev: Optional[int] = prio.get(previous.plugin)
    return cur is not None and (prev is None or cur < prev)


def resolve(ops: List[PluginOperation], priorities: Dict[str, int]
            ) -> Tuple[List[PluginOperation], List[IgnoredOperation]]:
    """Keep one operation per path; return (kept operations in order, ignored operations).

    ``ops`` must be in plugin order, then operation order.  An ignored operation names the
    plugin whose operation was finally applied on its path.
    """
    by_path: Dict[str, PluginOperation] = {}
    losers: List[PluginOperation] = []
    for o in ops:
        key = o.operation["path"]
        found = by_path.get(key)
        if found is None:
            by_path[key] = o
            continue
        replace = _wins(o, found, priorities)
        if replace:
            by_path[key] = o
        if not same_operation(found.operation, o.operation):
            losers.append(found if replace else o)
    kept = sorted(by_path.values(), key=lambda p: p.order)
    ignored = [IgnoredOperation(p.plugin, p.operation, by_path[p.operation["path"]].plugin)
               for p in losers]
    return kept, ignored
