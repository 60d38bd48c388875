"""LabelTransformer (api/filters/labels) against kubectl kustomize: each case of
``tests/data/builtins/labels/`` applies its ``config.yaml`` to ``input.yaml``."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import pytest
from helpers import DATA, check_builtin_case, table_cases

from kzgit.builtins import metadata
from kzgit.resource import ResMap

TABLE = DATA / "builtins" / "labels"


def _apply(rm: ResMap, config: Dict[str, Any], kust: Dict[str, Any]) -> None:
    metadata.labels(rm, config)


@pytest.mark.parametrize("case_dir", table_cases(TABLE))
def test_labels(case_dir: Path) -> None:
    check_builtin_case(case_dir, _apply)
