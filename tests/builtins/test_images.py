"""ImageTagTransformer (api/filters/imagetag) against kubectl kustomize: each case of
``tests/data/builtins/images/`` applies its ``config.yaml`` to ``input.yaml`` (containers and
init containers anywhere, plus the config's field specs)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import pytest
from helpers import DATA, check_builtin_case, table_cases

from kzgit.builtins import images
from kzgit.resource import ResMap

TABLE = DATA / "builtins" / "images"


def _apply(rm: ResMap, config: Dict[str, Any], kust: Dict[str, Any]) -> None:
    images.transform(rm, config)


@pytest.mark.parametrize("case_dir", table_cases(TABLE))
def test_images(case_dir: Path) -> None:
    check_builtin_case(case_dir, _apply)
