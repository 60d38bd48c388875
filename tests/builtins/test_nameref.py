"""The name-reference fix-up (api/filters/nameref) against kubectl kustomize: each case of
``tests/data/builtins/nameref/`` renames ``input.yaml`` with the kustomization's namePrefix and
nameSuffix (default field specs), then the default name-reference table must update every
reference as kubectl did."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import pytest
from helpers import DATA, check_builtin_case, table_cases

from kzgit.builtins import prefix_suffix
from kzgit.builtins.config import default_config
from kzgit.builtins.nameref import fix_back_references
from kzgit.resource import ResMap

TABLE = DATA / "builtins" / "nameref"


def _apply(rm: ResMap, config: Dict[str, Any], kust: Dict[str, Any]) -> None:
    cfg = default_config()
    if kust.get("namePrefix"):
        prefix_suffix.prefix(rm, {"prefix": kust["namePrefix"], "fieldSpecs": cfg.tables["namePrefix"]})
    if kust.get("nameSuffix"):
        prefix_suffix.suffix(rm, {"suffix": kust["nameSuffix"], "fieldSpecs": cfg.tables["nameSuffix"]})
    fix_back_references(rm, cfg.name_reference)


@pytest.mark.parametrize("case_dir", table_cases(TABLE))
def test_nameref(case_dir: Path) -> None:
    check_builtin_case(case_dir, _apply)
