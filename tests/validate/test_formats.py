"""``format`` where the API server enforces it: int32/int64 ranges, base64 ``byte`` (a
Secret's data), RFC 3339 ``date-time`` (metav1.Time), and ``date`` in a CRD."""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import pytest

from kzgit.config import ValidatePolicy
from kzgit.validate import Validator
from kzgit.validate.schema import compile_schema


def _found(obj: Dict[str, Any]) -> List[Tuple[str, str, str]]:
    got = Validator(ValidatePolicy(kubernetes_version="1.30")).check(obj)
    assert got is not None
    return [(i.code, i.path, i.message) for i in got]


def _secret(**data: str) -> Dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": data}


def test_secret_data_must_be_base64_and_the_value_is_not_quoted() -> None:
    assert _found(_secret(password="c2VjcmV0")) == []
    assert _found(_secret(pem="YWJj\nZGVm")) == []       # line breaks are ignored, as Go does
    ((code, path, message),) = _found(_secret(password="hunter2!"))
    assert (code, path) == ("format", "/data/password") and "not base64" in message
    assert "hunter2" not in message


@pytest.mark.parametrize("replicas, ok", [(2**31 - 1, True), (2**31, False), (-(2**31) - 1, False)])
def test_int32_fields_hold_int32(replicas: int, ok: bool) -> None:
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
           "spec": {"replicas": replicas, "selector": {"matchLabels": {"a": "b"}},
                    "template": {"metadata": {"labels": {"a": "b"}},
                                 "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    found = _found(dep)
    assert (found == []) is ok
    if not ok:
        assert found == [("format", "/spec/replicas", f"{replicas} does not fit in an int32")]


@pytest.mark.parametrize("stamp, ok", [("2024-05-01T10:00:00Z", True), ("2024-05-01T10:00:00.5+02:00", True),
                                       ("yesterday", False), ("2024-05-01", False)])
def test_metav1_time_is_rfc3339(stamp: str, ok: bool) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "creationTimestamp": stamp}}
    found = _found(cm)
    assert (found == []) is ok, found
    if not ok:
        assert found[0][:2] == ("format", "/metadata/creationTimestamp")


def test_a_crd_date_and_an_unchecked_format() -> None:
    check = compile_schema({"type": "object", "properties": {"day": {"type": "string", "format": "date"},
                                                             "id": {"type": "string", "format": "email"}}},
                           dialect="openapi")
    out: List[Any] = []
    check({"day": "2024-13", "id": "not-checked"}, None, out)
    assert [(p.code, p.pointer()) for p in out] == [("format", "/day")]
