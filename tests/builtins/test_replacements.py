"""Table tests for ``replacements:`` against outputs recorded with kubectl kustomize, each case
run as the release that recorded it (``"kustomize"`` in its case.json)."""
from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, Dict, Tuple

import pytest

from test_replacements_support import cases, expected, finish, load_level
from kzgit.errors import BuildError
from kzgit.resource import ResMap
from kzgit.builtins.replacements import apply_replacements
from helpers import DATA, canon, case_version

ROOT = str(DATA / "replacements")


def _level(rm: ResMap, kust: Dict[str, Any], path: str, version: Tuple[int, int, int]) -> None:
    if kust.get("replacements"):
        apply_replacements(rm, kust["replacements"], os.path.join(path, "kustomization.yaml"), version)


@pytest.mark.parametrize("case", cases(ROOT))
def test_replacement_case(case: str) -> None:
    path = os.path.join(ROOT, case)
    level = functools.partial(_level, version=case_version(Path(path)))
    want, err = expected(path)
    if err is not None:
        with pytest.raises(BuildError) as ei:
            finish(load_level(path, level))
        assert str(ei.value).endswith(err)
        return
    got = finish(load_level(path, level))
    assert canon(got) == canon(want)  # type: ignore[arg-type]


@pytest.mark.parametrize("selector, labels, want", [
    ("", {"app": "web"}, True),
    ("app=web", {"app": "web"}, True),
    ("app==web,tier", {"app": "web"}, False),
    ("app in(web, api)", {"app": "api"}, True),     # labels.Parse needs no space before '('
    ("app in (web)", {}, False),
    ("app notin (web)", {}, True),                  # a missing key is not in any set
    ("app!=web", {}, True),
    ("!app", {"app": "web"}, False),
    ("on=true", {"on": True}, True),                # compared as the YAML text, as kyaml does
])
def test_label_selector_matches(selector: str, labels: Dict[str, Any], want: bool) -> None:
    from kzgit.builtins.replacements import label_selector_matches
    assert label_selector_matches(selector, labels) is want


def test_label_selector_syntax_error_names_the_selector() -> None:
    from kzgit.builtins.replacements import label_selector_matches
    with pytest.raises(BuildError, match=r"unable to parse requirement: .* in selector 'app in web'"):
        label_selector_matches("app in web", {"app": "web"})
