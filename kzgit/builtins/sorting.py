"""Output order: sortOptions / --reorder (api/internal/builtins/SortOrderTransformer.go)."""
from __future__ import annotations

import functools

from kzgit.errors import BuildError
from kzgit.konfig import LEGACY_ORDER_FIRST, LEGACY_ORDER_LAST
from kzgit.resource import Gvk, ResId, Resource

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List, Optional


def _gvk_sort_string(g: Gvk) -> str:
    return "_".join([g.group or "~G", g.version or "~V", g.kind or "~K"])


def gvk_order_key(g: Gvk) -> tuple:
    """resid.Gvk.IsLessThan as a sort key: the legacy kind ranks, then the stable string.

    kustomize sorts its field-spec tables with it (builtinconfig sortFields), which decides
    the order of the kinds some error messages list.
    """
    if g.kind in LEGACY_ORDER_FIRST:
        rank = LEGACY_ORDER_FIRST.index(g.kind) - len(LEGACY_ORDER_FIRST)
    elif g.kind in LEGACY_ORDER_LAST:
        rank = 1 + LEGACY_ORDER_LAST.index(g.kind)
    else:
        rank = 0
    return (rank, _gvk_sort_string(g))


def _id_sort_string(i: ResId) -> str:
    return "|".join([str(i.gvk), i.namespace or "~X", i.name or "~N"])


def legacy_sort(resources: List[Resource], first: List[str], last: List[str]) -> List[Resource]:
    ranks: Dict[str, int] = {}
    for i, n in enumerate(first):
        ranks[n] = -len(first) + i
    for i, n in enumerate(last):
        ranks[n] = 1 + i
    ids = {id(r): r.cur_id() for r in resources}

    def cmp(a: Resource, b: Resource) -> int:
        ia, ib = ids[id(a)], ids[id(b)]
        ga, gb = ia.gvk, ib.gvk
        if ga != gb:
            ra, rb = ranks.get(ga.kind, 0), ranks.get(gb.kind, 0)
            if ra != rb:
                return -1 if ra < rb else 1
            sa, sb = _gvk_sort_string(ga), _gvk_sort_string(gb)
            if ga.kind == "Namespace" and gb.kind == "Namespace" and (not ga.group or not gb.group):
                return -1 if sa > sb else (1 if sa < sb else 0)
            return -1 if sa < sb else (1 if sa > sb else 0)
        sa, sb = _id_sort_string(ia), _id_sort_string(ib)
        return -1 if sa < sb else (1 if sa > sb else 0)

    return sorted(resources, key=functools.cmp_to_key(cmp))


def apply_sort(resources: List[Resource], sort_options: Optional[Dict[str, Any]], reorder: Optional[str]) -> List[Resource]:
    """Kustomizer.applySortOrder: the kustomization's sortOptions win over --reorder; default legacy."""
    if sort_options is not None:
        order = sort_options.get("order") or ""
        legacy = sort_options.get("legacySortOptions")
        if order not in ("fifo", "legacy"):
            raise BuildError("the field 'sortOptions.order' must be one of [fifo, legacy]")
        if order == "fifo":
            if legacy is not None:
                raise BuildError("the field 'sortOptions.legacySortOptions' is set but the selected sort order is 'fifo', not 'legacy'")
            return resources
        if legacy is None:
            return legacy_sort(resources, LEGACY_ORDER_FIRST, LEGACY_ORDER_LAST)
        return legacy_sort(resources, list(legacy.get("orderFirst") or []), list(legacy.get("orderLast") or []))
    if reorder == "none":
        return resources
    return legacy_sort(resources, LEGACY_ORDER_FIRST, LEGACY_ORDER_LAST)
