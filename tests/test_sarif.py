"""SARIF 2.1.0 logs of ``kzgit lint`` and ``kzgit validate`` are valid against the OASIS schema
(``tests/data/sarif``: copied with its provenance and checksum) and locate each result on the
repository-relative file and line, as GitHub code scanning needs."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Dict

import jsonschema
import pytest

from helpers import PROJECT, WEB_DEPLOYMENT, git_tree
from kzgit import sarif
from kzgit.cli.main import main

SCHEMA_DIR = PROJECT / "tests" / "data" / "sarif"


@pytest.fixture(scope="module")
def schema() -> Dict[str, Any]:
    data = (SCHEMA_DIR / "sarif-schema-2.1.0.json").read_bytes()
    want = (SCHEMA_DIR / "sarif-schema-2.1.0.json.sha256").read_text().split()[0]
    assert hashlib.sha256(data).hexdigest() == want
    doc: Dict[str, Any] = json.loads(data)
    assert doc["id"] == sarif.SCHEMA
    return doc


def _valid(doc: Dict[str, Any], schema: Dict[str, Any]) -> None:
    jsonschema.Draft4Validator.check_schema(schema)
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]




def test_the_schema_rejects_what_it_should(schema: Dict[str, Any]) -> None:
    """The check has teeth: a result without a message, a bad level, a line 0 are refused."""
    good = sarif.log("t", "1", [sarif.Rule("r", "a rule")], [sarif.Result("r", "error", "m", "a b/c%.yaml", 3)])
    _valid(good, schema)
    loc = good["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert loc == {"artifactLocation": {"uri": "a%20b/c%25.yaml", "uriBaseId": "%SRCROOT%"},
                   "region": {"startLine": 3}}
    for bad in ({"level": "fatal"}, {"message": {}}):
        doc = json.loads(json.dumps(good))
        doc["runs"][0]["results"][0].update(bad)
        assert list(jsonschema.Draft4Validator(schema).iter_errors(doc))
    doc = json.loads(json.dumps(good))
    doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    assert list(jsonschema.Draft4Validator(schema).iter_errors(doc))


def test_lint_sarif_is_valid_and_located(tmp_path: Path, schema: Dict[str, Any],
                                         monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    git_tree(tmp_path, {
        "base/kustomization.yaml": "resources:\n- deploy.yaml\ncommonLabels:\n  app: web\n",
        "base/deploy.yaml": WEB_DEPLOYMENT,
        "app/kustomization.yaml": "resources:\n- ../base\npatches:\n- target:\n    kind: StatefulSet\n"
                                  "  patch: |-\n    - op: add\n      path: /metadata/labels/x\n      value: y\n",
    })
    monkeypatch.chdir(tmp_path)
    assert main(["lint", "--all", "--format", "sarif", "--output", str(tmp_path / "lint.sarif")]) == 1
    doc = json.loads((tmp_path / "lint.sarif").read_text())
    _valid(doc, schema)
    run = doc["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules == ["deprecated-field", "patch-matches-nothing"]
    got = [(r["ruleId"], r["level"], r["ruleIndex"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in run["results"]]
    assert got == [("patch-matches-nothing", "error", 1, "app/kustomization.yaml", 4),
                   ("deprecated-field", "warning", 0, "base/kustomization.yaml", 3)]


def test_validate_sarif_is_valid_and_located(tmp_path: Path, schema: Dict[str, Any],
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    git_tree(tmp_path, {
        "base/kustomization.yaml": "resources:\n- deploy.yaml\n",
        "base/deploy.yaml": WEB_DEPLOYMENT.replace("  replicas: 1", "  replica: 1"),
    })
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "--all", "--format", "sarif"]) == 1
    doc = json.loads(capsys.readouterr().out)
    _valid(doc, schema)
    run = doc["runs"][0]
    assert run["tool"]["driver"]["name"] == "kzgit validate"
    res = [r for r in run["results"] if r["ruleId"] == "unknown-field"]
    assert len(res) == 1 and res[0]["level"] == "error"
    loc = res[0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "base/deploy.yaml" and loc["region"]["startLine"] == 6
    assert 'unknown field "replica"' in res[0]["message"]["text"]


def test_an_empty_run_is_valid(schema: Dict[str, Any]) -> None:
    doc = sarif.log("kzgit lint", "0", [sarif.Rule("r", "x")], [])
    _valid(doc, schema)
    assert doc["runs"][0]["results"] == [] and doc["runs"][0]["tool"]["driver"]["rules"] == []
