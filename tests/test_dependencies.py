"""The runtime dependencies are exactly what kzgit imports, and the README says what each is for.

A hook environment (pre-commit) or the GitHub Action installs every runtime dependency on
every run: one that no code imports costs every user time for nothing.
"""
from __future__ import annotations

import ast
import re
import sys
from typing import Dict, Set

from helpers import PROJECT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# distribution name -> the top-level module it provides
MODULE_OF = {"pyyaml": "yaml", "ruamel.yaml": "ruamel", "tomli": "tomli", "cel-expr-python": "cel_expr_python",
             "google-re2": "re2"}
# The test extra's distributions that tests import (the linters and stubs are not imported).
TEST_MODULE_OF = {"pytest": "pytest", "pre-commit": "pre_commit", "jsonpatch": "jsonpatch",
                  "jsonschema": "jsonschema", "kubernetes-validate": "kubernetes_validate"}
# Distributions kzgit would use for their data only (found with importlib.util.find_spec, never
# imported). None since kzgit ships the Kubernetes schemas it reads (kzgit/validate/k8s).
DATA_OF: Dict[str, str] = {}


def _project() -> Dict[str, object]:
    with open(PROJECT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]  # type: ignore[no-any-return]


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower()


def _imported(tree: str = "kzgit") -> Set[str]:
    """Top-level third-party modules imported by the Python files under ``tree``."""
    # the running Python's standard library, plus the newer Pythons' modules the code imports
    # behind a version check (tomllib is 3.11's; on 3.10 tomli stands in for it)
    stdlib = set(sys.stdlib_module_names) | {"tomllib"}
    out: Set[str] = set()
    for path in (PROJECT / tree).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            out |= {n.split(".")[0] for n in names} - stdlib - {"kzgit", "__future__"}
    return out


def test_runtime_dependencies_are_the_imported_ones() -> None:
    deps = {_name(r) for r in _project()["dependencies"]} - set(DATA_OF)  # type: ignore[attr-defined]
    assert deps <= set(MODULE_OF), f"add the module of {deps - set(MODULE_OF)} to MODULE_OF"
    assert {MODULE_OF[d] for d in deps} == _imported()


def test_data_dependencies_are_found_not_imported() -> None:
    deps = {_name(r) for r in _project()["dependencies"]}  # type: ignore[attr-defined]
    assert set(DATA_OF) <= deps
    source = "".join(p.read_text(encoding="utf-8") for p in (PROJECT / "kzgit").rglob("*.py"))
    for module in DATA_OF.values():
        assert f'find_spec("{module}")' in source and module not in _imported()


def test_pre_commit_is_only_a_test_dependency() -> None:
    project = _project()
    assert "pre-commit" not in {_name(r) for r in project["dependencies"]}  # type: ignore[attr-defined]
    test = project["optional-dependencies"]["test"]  # type: ignore[index]
    assert "pre-commit" in {_name(r) for r in test}


def test_readme_says_what_each_runtime_dependency_is_for() -> None:
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Dependencies\n", 1)[1].split("\n## ", 1)[0]
    for req in _project()["dependencies"]:  # type: ignore[attr-defined]
        name = _name(req)
        line = next((ln for ln in section.splitlines() if ln.lower().startswith(f"- `{name}`")), None)
        assert line is not None and len(line) > len(name) + 20, f"README: what is {name} for?"


def test_tests_import_only_declared_distributions() -> None:
    """A clean clone's ``pip install -e '.[test]'`` has every module the tests import: runtime
    dependencies, the test extra, data dependencies, or the suite's own modules."""
    project = _project()
    declared = {MODULE_OF.get(_name(r), DATA_OF.get(_name(r), "")) for r in project["dependencies"]}  # type: ignore[attr-defined]
    declared |= {TEST_MODULE_OF.get(_name(r), "") for r in project["optional-dependencies"]["test"]}  # type: ignore[index]
    own = {p.stem for p in (PROJECT / "tests").rglob("*.py")} | {"tests", "mutation"}
    missing = _imported("tests") - declared - own
    assert not missing, f"tests import {sorted(missing)}: declare them in the test extra"
