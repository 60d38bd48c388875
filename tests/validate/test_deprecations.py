"""Removed and deprecated Kubernetes APIs since 1.16 (kzgit/validate/removed_apis.json): every row
is refused once removed, warned about while deprecated, and agrees with the bundled schemas."""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import pytest

from kzgit.config import ValidatePolicy
from kzgit.validate import Issue, Validator, deprecations, kubernetes
from kzgit.validate.deprecations import release_key

ROWS = sorted(deprecations.table().values(), key=lambda r: (release_key(r.removed), r.api_version, r.kind))
IDS = [f"{r.api_version}/{r.kind}" for r in ROWS]


def _obj(api: str, kind: str, **spec: Any) -> Dict[str, Any]:
    return {"apiVersion": api, "kind": kind, "metadata": {"name": "x"}, **spec}


def _issues(version: str, obj: Dict[str, Any]) -> List[Issue]:
    got = Validator(ValidatePolicy(kubernetes_version=version)).check(obj)
    assert got is not None
    return got


def _minor(v: str, delta: int) -> str:
    major, minor = release_key(v)
    return f"{major}.{minor + delta}"


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_every_row_is_refused_from_its_removal_on(row: deprecations.ApiRow) -> None:
    msg = deprecations.removal(row.api_version, row.kind, row.removed)
    assert msg is not None and f"removed in {row.removed}" in msg
    assert (f"use {row.use}" in msg) if row.use else (row.note is not None and row.note in msg)
    assert deprecations.removal(row.api_version, row.kind, _minor(row.removed, 5)) is not None
    assert deprecations.removal(row.api_version, row.kind, _minor(row.removed, -1)) is None
    # through the validator, at the newest bundled release: an error, whatever schemas exist
    (issue,) = _issues(kubernetes.versions()[-1], _obj(row.api_version, row.kind))
    assert (issue.code, issue.path, issue.severity) == ("not-served", "/apiVersion", "error")
    assert f"removed in {row.removed}" in issue.message


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_every_row_is_a_warning_while_deprecated_and_served(row: deprecations.ApiRow) -> None:
    assert deprecations.deprecation(row.api_version, row.kind, _minor(row.deprecated, -1)) is None
    msg = deprecations.deprecation(row.api_version, row.kind, row.deprecated)
    assert msg is not None and f"deprecated since Kubernetes {row.deprecated} and removed in {row.removed}" in msg
    assert deprecations.deprecation(row.api_version, row.kind, row.removed) is None


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_rows_agree_with_the_bundled_schemas(row: deprecations.ApiRow) -> None:
    assert release_key(row.deprecated) < release_key(row.removed)
    for v in kubernetes.versions():
        served = (row.api_version, row.kind) in kubernetes.kinds(v)
        if release_key(v) >= release_key(row.removed):
            assert not served, f"Kubernetes {v} serves {row.api_version} {row.kind}"
        if served and release_key(v) >= release_key(row.deprecated):
            # still served while deprecated: schema-checked, plus the warning
            issues = _issues(v, _obj(row.api_version, row.kind))
            assert [i.code for i in issues if i.severity == "warning"] == ["deprecated"], issues


@pytest.mark.parametrize("api, kind, expected", [
    ("apps/v1", "Deploymnet", ("unknown-kind", "/kind", "has no kind Deploymnet in apps (apps/v1); "
                                                        "did you mean Deployment?")),
    ("v1", "ConfigMapp", ("unknown-kind", "/kind", "has no kind ConfigMapp in the core group (v1); "
                                                   "did you mean ConfigMap?")),
    ("networking.k8s.io/v1", "Gateway", ("unknown-kind", "/kind", "has no kind Gateway in networking.k8s.io")),
    ("apps/v2", "Deployment", ("not-served", "/apiVersion", "no release serves version v2 of it; use apps/v1")),
])
def test_a_kind_kubernetes_groups_do_not_have_is_an_error(api: str, kind: str,
                                                          expected: Tuple[str, str, str]) -> None:
    (issue,) = _issues("1.30", _obj(api, kind))
    assert (issue.code, issue.path, issue.severity) == expected[:2] + ("error",)
    assert expected[2] in issue.message


@pytest.mark.parametrize("api", ["example.com/v1", "gateway.networking.k8s.io/v1", "cert-manager.io/v1"])
def test_other_groups_keep_the_missing_schema_policy(api: str) -> None:
    (issue,) = _issues("1.30", _obj(api, "Widget"))
    assert (issue.code, issue.severity) == ("missing-schema", "warning")


def test_a_served_current_kind_has_no_deprecation() -> None:
    issues = _issues("1.30", _obj("apps/v1", "Deployment"))
    assert "deprecated" not in {i.code for i in issues}
    assert deprecations.deprecation("apps/v1", "Deployment", "1.30") is None
