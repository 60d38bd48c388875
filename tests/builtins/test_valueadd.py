"""ValueAddTransformer (api/filters/valueadd) against kubectl kustomize: each case of
``tests/data/builtins/valueadd/`` applies its ``config.yaml`` to ``input.yaml``."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import pytest
from helpers import DATA, check_builtin_case, table_cases

from kzgit.builtins import valueadd
from kzgit.loader import Loader
from kzgit.resource import ResMap

TABLE = DATA / "builtins" / "valueadd"


def _apply(rm: ResMap, config: Dict[str, Any], kust: Dict[str, Any]) -> None:
    valueadd.transform(rm, config, Loader(str(TABLE)), "ValueAddTransformer")


@pytest.mark.parametrize("case_dir", table_cases(TABLE))
def test_valueadd(case_dir: Path) -> None:
    check_builtin_case(case_dir, _apply)
