"""Output order (api/internal/builtins/SortOrderTransformer.go) against kubectl kustomize: each
case of ``tests/data/builtins/sorting/`` sorts ``input.yaml`` with the kustomization's
sortOptions; the order must be kubectl's."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

import pytest
from helpers import DATA, check_builtin_case, table_cases

from kzgit.builtins.sorting import apply_sort
from kzgit.resource import ResMap

TABLE = DATA / "builtins" / "sorting"


def _apply(rm: ResMap, config: Dict[str, Any], kust: Dict[str, Any]) -> List[Any]:
    return apply_sort(rm.resources(), kust.get("sortOptions"), None)


@pytest.mark.parametrize("case_dir", table_cases(TABLE))
def test_sorting(case_dir: Path) -> None:
    check_builtin_case(case_dir, _apply, ordered=True)
