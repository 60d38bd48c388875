"""NamespaceTransformer (api/filters/namespace) against kubectl kustomize: each case of
``tests/data/builtins/namespace/`` applies its ``config.yaml`` (unsetOnly, setRoleBindingSubjects)
to ``input.yaml``."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import pytest
from helpers import DATA, check_builtin_case, table_cases

from kzgit.builtins import namespace
from kzgit.resource import ResMap

TABLE = DATA / "builtins" / "namespace"


def _apply(rm: ResMap, config: Dict[str, Any], kust: Dict[str, Any]) -> None:
    namespace.transform(rm, config)


@pytest.mark.parametrize("case_dir", table_cases(TABLE))
def test_namespace(case_dir: Path) -> None:
    check_builtin_case(case_dir, _apply)
