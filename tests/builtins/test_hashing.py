"""Name hash suffixes (api/hasher) against kubectl kustomize: each case of
``tests/data/builtins/hashing/`` generates a ConfigMap or Secret; the object kubectl printed,
given back its generator name, must get the same ``-<hash>`` suffix from kzgit."""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any, Dict, List

import pytest
from helpers import DATA, check_builtin_case, expected_documents, kzgit_documents, table_cases

from kzgit.builtins.hashing import add_hashes
from kzgit.resource import ResMap, Resource

TABLE = DATA / "builtins" / "hashing"


def _apply(case_dir: Path, rm: ResMap, config: Dict[str, Any], kust: Dict[str, Any]) -> List[Any]:
    generators = (kust.get("configMapGenerator") or []) + (kust.get("secretGenerator") or [])
    names = [g["name"] for g in generators]
    for doc in expected_documents(case_dir, kzgit_documents):
        base = next(n for n in names if doc["metadata"]["name"].startswith(n + "-"))
        r = Resource(dict(doc, metadata=dict(doc["metadata"], name=base)))
        r.needs_hash = True
        rm.append(r)
    add_hashes(rm)
    return rm.resources()


@pytest.mark.parametrize("case_dir", table_cases(TABLE))
def test_hashing(case_dir: Path) -> None:
    check_builtin_case(case_dir, partial(_apply, case_dir))
