"""Real CRDs validate as the API server validates them: their own examples pass (structural
schemas: defaults first, oneOf/anyOf as value constraints, RE2 patterns), and values the API
server refuses are refused."""
from __future__ import annotations

import copy
from typing import Any, Dict

import pytest

from tests.validate.realcrds import PROJECTS, errors, examples, validator


@pytest.fixture(scope="module")
def v_strict() -> Any:
    return validator()


@pytest.fixture(scope="module")
def v_loose() -> Any:
    return validator(strict=False)


@pytest.mark.parametrize("project", PROJECTS)
def test_examples_of_each_project_are_valid(project: str, v_strict: Any, v_loose: Any) -> None:
    seen = 0
    for where, obj in examples(project):
        for v in (v_strict, v_loose):
            assert [(i.path, i.message) for i in errors(v, obj)] == [], (where, obj.get("kind"))
        seen += 1
    assert seen >= 4   # the data is there: a project whose examples vanished fails here


def _gateway_addresses() -> Dict[str, Any]:
    return next(obj for where, obj in examples("gateway-api")
                if where.endswith("gateway-addresses.yaml"))


def test_gateway_addresses_example_passes_with_and_without_strict(v_strict: Any, v_loose: Any) -> None:
    # Before: strict read each oneOf branch as a closed object ("matches none"), --no-strict
    # skipped the type default ("matches more than one").
    gw = _gateway_addresses()
    assert len(gw["spec"]["addresses"]) == 11
    assert errors(v_strict, gw) == [] and errors(v_loose, gw) == []


@pytest.mark.parametrize("address,expected", [
    # type defaults to IPAddress, so the first oneOf branch applies and the value is not an IP
    ({"value": "example.com"}, "matches none of the allowed forms (oneOf)"),
    ({"type": "IPAddress", "value": "1.2.3.256"}, "matches none of the allowed forms (oneOf)"),
    ({"type": "Hostname", "value": "example.com", "extra": 1}, 'unknown field "extra"'),
])
def test_gateway_address_refused(address: Dict[str, Any], expected: str, v_strict: Any) -> None:
    gw = copy.deepcopy(_gateway_addresses())
    gw["spec"]["addresses"] = [address]
    got = [i for i in errors(v_strict, gw) if i.path.startswith("/spec/addresses/0")]
    assert got and expected in got[0].message, got


def test_defaults_do_not_touch_the_resource(v_strict: Any) -> None:
    gw = _gateway_addresses()
    before = copy.deepcopy(gw)
    errors(v_strict, gw)
    assert gw == before


def _admission_check(controller: str, name: str) -> Dict[str, Any]:
    return {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "AdmissionCheck", "metadata": {"name": "ac"},
            "spec": {"controllerName": controller,
                     "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": name, "name": "p"}}}


def test_kueue_admission_check_go_case_insensitive_pattern(v_strict: Any) -> None:
    # the CRD's kind pattern is "^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$", which Python's re refuses
    assert errors(v_strict, _admission_check("c", "ProvisioningRequestConfig")) == []
    bad = errors(v_strict, _admission_check("c", "9Config"))
    assert [(i.path, i.code) for i in bad] == [("/spec/parameters/kind", "pattern")]
    assert "^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$" in bad[0].message
