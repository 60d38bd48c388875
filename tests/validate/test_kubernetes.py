"""The bundled Kubernetes schemas: releases, version pinning, kinds a release does not serve."""
from __future__ import annotations

from typing import Any, List

import pytest

from kzgit.errors import UsageError
from kzgit.validate import kubernetes


def test_releases_and_default() -> None:
    vs = kubernetes.versions()
    assert vs[0] == "1.25" and "1.29" in vs and kubernetes.newest() == vs[-1]


@pytest.mark.parametrize("given,expected", [("1.29", "1.29"), ("v1.29", "1.29"), ("1.29.7", "1.29")])
def test_version_spellings(given: str, expected: str) -> None:
    assert kubernetes.normalize_version(given, "kubernetes-version") == expected


@pytest.mark.parametrize("given", ["1.24", "2.0", "latest", "1"])
def test_unknown_version_names_the_setting(given: str) -> None:
    with pytest.raises(UsageError, match=f"^here: unknown Kubernetes version '{given}'") as e:
        kubernetes.normalize_version(given, "here")
    assert "the bundled schemas cover 1.25 to" in str(e.value)


@pytest.mark.parametrize("version,api,kind,expected", [
    ("1.29", "flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema",
     "FlowSchema flowcontrol.apiserver.k8s.io/v1beta2 is not served by Kubernetes 1.29 "
     "(served up to 1.28; use flowcontrol.apiserver.k8s.io/v1)"),
    ("1.25", "flowcontrol.apiserver.k8s.io/v1", "FlowSchema",
     "FlowSchema flowcontrol.apiserver.k8s.io/v1 is not served by Kubernetes 1.25 "
     "(served from 1.29; use flowcontrol.apiserver.k8s.io/v1beta2)"),
    ("1.29", "batch/v1", "CronJob", None),           # served: not this function's business
    ("1.29", "example.com/v1", "Widget", None),      # no release serves it: a missing schema
])
def test_not_served(version: str, api: str, kind: str, expected: Any) -> None:
    assert kubernetes.KubernetesSchemas(version, True).not_served(api, kind) == expected


def test_strict_and_plain_schemas_differ_only_on_undeclared_fields() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}, "extra": 1}
    for strict, n in ((True, 1), (False, 0)):
        out: List[Any] = []
        check = kubernetes.KubernetesSchemas("1.29", strict).check_for("v1", "ConfigMap")
        assert check is not None
        check(obj, None, out)
        assert len(out) == n


def test_each_schema_is_compiled_once_per_run() -> None:
    ks = kubernetes.KubernetesSchemas("1.29", True)
    assert ks.check_for("apps/v1", "Deployment") is ks.check_for("apps/v1", "Deployment")
