"""PrefixTransformer and SuffixTransformer (api/filters/prefix, api/filters/suffix) against
kubectl kustomize: each case of ``tests/data/builtins/prefix_suffix/`` runs the transformer its
``config.yaml`` names on ``input.yaml`` and must give kubectl's output."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import pytest
from helpers import DATA, check_builtin_case, table_cases

from kzgit.builtins import prefix_suffix
from kzgit.resource import ResMap

TABLE = DATA / "builtins" / "prefix_suffix"


def _apply(rm: ResMap, config: Dict[str, Any], kust: Dict[str, Any]) -> None:
    if config["kind"] == "PrefixTransformer":
        prefix_suffix.prefix(rm, config)
    else:
        prefix_suffix.suffix(rm, config)


@pytest.mark.parametrize("case_dir", table_cases(TABLE))
def test_prefix_suffix(case_dir: Path) -> None:
    check_builtin_case(case_dir, _apply)
