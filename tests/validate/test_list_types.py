"""``x-kubernetes-list-type`` ``set`` and ``map``: duplicates the API server (or server-side
apply) refuses, on Kubernetes' own schemas and on a CRD's."""
from __future__ import annotations

from typing import Any, Dict, List

import pytest

from kzgit.config import ValidatePolicy
from kzgit.validate import Issue, Validator
from kzgit.validate.schema import SchemaError, compile_schema


def _issues(obj: Dict[str, Any]) -> List[Issue]:
    got = Validator(ValidatePolicy(kubernetes_version="1.30")).check(obj)
    assert got is not None
    return got


def _service(*ports: Dict[str, Any]) -> Dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
            "spec": {"ports": list(ports)}}


def _deployment(containers: List[Dict[str, Any]]) -> Dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"selector": {"matchLabels": {"a": "b"}},
                     "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": containers}}}}


def test_duplicate_service_ports_are_refused_naming_both_items() -> None:
    (issue,) = _issues(_service({"port": 80}, {"port": 443}, {"port": 80}))
    assert (issue.code, issue.path) == ("duplicate", "/spec/ports/2")
    assert issue.message == 'duplicate entries for key [port=80, protocol="TCP"]: item 2 repeats item 0'


def test_service_ports_differ_by_protocol_and_an_omitted_protocol_is_tcp() -> None:
    assert _issues(_service({"port": 53, "protocol": "UDP"}, {"port": 53})) == []
    (issue,) = _issues(_service({"port": 53, "protocol": "TCP"}, {"port": 53}))
    assert issue.code == "duplicate" and issue.path == "/spec/ports/1"


def test_duplicate_container_and_env_names() -> None:
    env = [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]
    got = _issues(_deployment([{"name": "app", "image": "x", "env": env}, {"name": "app", "image": "y"}]))
    assert sorted((i.code, i.path) for i in got) == [
        ("duplicate", "/spec/template/spec/containers/0/env/1"),
        ("duplicate", "/spec/template/spec/containers/1")]
    assert any('key [name="app"]' in i.message for i in got)
    assert _issues(_deployment([{"name": "app", "image": "x"}, {"name": "side", "image": "y"}])) == []


def test_a_crd_set_and_map() -> None:
    schema = {"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
        "rules": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}}
    check = compile_schema(schema, dialect="openapi")
    out: List[Any] = []
    check({"tags": ["a", "b", "a"], "rules": [{"name": "x"}, {"name": "y"}, {"name": "x"}]}, None, out)
    assert sorted((p.code, p.pointer(), p.message) for p in out) == [
        ("duplicate", "/rules/2", 'duplicate entries for key [name="x"]: item 2 repeats item 0'),
        ("duplicate", "/tags/2", 'duplicate value "a": item 2 repeats item 0 of a set')]


@pytest.mark.parametrize("bad", [{"x-kubernetes-list-type": "bag"},
                                 {"x-kubernetes-list-type": "map"},
                                 {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": "name"}])
def test_a_malformed_list_type_is_a_schema_error(bad: Dict[str, Any]) -> None:
    with pytest.raises(SchemaError):
        compile_schema({"type": "array", **bad}, dialect="openapi")
