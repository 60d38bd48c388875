"""AnnotationsTransformer (api/filters/annotations) against kubectl kustomize: each case of
``tests/data/builtins/annotations/`` applies its ``config.yaml`` to ``input.yaml``."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import pytest
from helpers import DATA, check_builtin_case, table_cases

from kzgit.builtins import metadata
from kzgit.resource import ResMap

TABLE = DATA / "builtins" / "annotations"


def _apply(rm: ResMap, config: Dict[str, Any], kust: Dict[str, Any]) -> None:
    metadata.annotations(rm, config)


@pytest.mark.parametrize("case_dir", table_cases(TABLE))
def test_annotations(case_dir: Path) -> None:
    check_builtin_case(case_dir, _apply)
