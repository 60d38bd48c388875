"""Table tests for ``vars:`` against outputs recorded with kubectl kustomize v5.5.0,
plus unit tests of the ``$(VAR)`` expansion (api/filters/refvar/expand_test.go)."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Tuple

import pytest
import yaml

from kzgit.errors import BuildError
from kzgit.konfig import default_fieldspec_rows
from kzgit.resource import ResMap, Resource
from kzgit.builtins.vars import VarSet, do_replacements, resolve_vars
from test_replacements_support import cases, expected, finish, rename
from helpers import DATA, canon

ROOT = str(DATA / "vars")


def _accumulate(path: str) -> Tuple[ResMap, VarSet, List[list]]:
    """One level: resources (files, sub-levels), namePrefix, then MergeVars."""
    with open(os.path.join(path, "kustomization.yaml"), encoding="utf-8") as f:
        kust: Dict[str, Any] = yaml.safe_load(f) or {}
    rm, vs, rows = ResMap(), VarSet(), []
    for entry in kust.get("resources") or []:
        p = os.path.join(path, entry)
        if os.path.isdir(p):
            sub_rm, sub_vs, sub_rows = _accumulate(p)
            rm.append_all(sub_rm.resources())
            vs.merge_set(sub_vs)
            rows.extend(sub_rows)
            continue
        with open(p, encoding="utf-8") as f:
            for doc in yaml.safe_load_all(f):
                if doc:
                    rm.append(Resource(doc, p))
    for conf in kust.get("configurations") or []:
        with open(os.path.join(path, conf), encoding="utf-8") as f:
            for fs in (yaml.safe_load(f) or {}).get("varReference") or []:
                rows.append([fs.get("group", ""), fs.get("version", ""), fs.get("kind", ""),
                             fs["path"], bool(fs.get("create"))])
    rename(rm, kust)
    vs.merge_vars(rm, kust.get("vars") or [], os.path.join(path, "kustomization.yaml"))
    return rm, vs, rows


def _build(path: str) -> Tuple[List[Any], List[str]]:
    rm, vs, rows = _accumulate(path)
    warnings = resolve_vars(rm, vs, [*default_fieldspec_rows("varReference"), *rows])
    return finish(rm), warnings


@pytest.mark.parametrize("case", cases(ROOT))
def test_vars_case(case: str) -> None:
    path = os.path.join(ROOT, case)
    want, err = expected(path)
    if err is not None:
        with pytest.raises(BuildError) as ei:
            _build(path)
        assert str(ei.value).endswith(err)
        return
    got, _ = _build(path)
    assert canon(got) == canon(want)  # type: ignore[arg-type]


def test_unused_var_warning() -> None:
    _, warnings = _build(os.path.join(ROOT, "unused_var_is_only_a_warning"))
    assert warnings == ["well-defined vars that were never replaced: NEVER_USED"]


VALUES = {"A": "alpha", "N": 8, "B": True, "F": 1.5, "M": {"k": "v"}}


def _mapping(key: str) -> Any:
    v = VALUES.get(key)
    if isinstance(v, (str, int, float, bool)):
        return v
    return f"$({key})"


@pytest.mark.parametrize("text,want", [
    ("$(A)", "alpha"),
    ("$(N)", 8),                      # whole string: the value keeps its type
    ("$(B)", True),
    ("x$(N)y", "x8y"),
    ("$(B)-$(F)", "true-1.5"),
    ("$$(A)", "$(A)"),                # $$ escapes
    ("$$$(A)", "$alpha"),
    ("$(UNKNOWN)", "$(UNKNOWN)"),
    ("$(M)", "$(M)"),                 # non-primitive values are not substituted
    ("$(A", "$(A"),                   # unclosed reference stays literal
    ("a$", "a$"),
    ("$", "$"),
    ("$x", "$x"),
    ("$()", "$()"),
    ("", ""),
    ("$(A)$(A)", "alphaalpha"),
])
def test_do_replacements(text: str, want: Any) -> None:
    assert do_replacements(text, _mapping) == want
