"""Structural-schema semantics of CRDs (the ``openapi`` dialect): defaults applied before
validation, combinators as value constraints, the formats CRD validation enforces, Go patterns."""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import pytest

from kzgit.errors import UsageError
from kzgit.validate.schema import Compiler, SchemaError, defaulter
from kzgit.validate.sources import CrdSchemas


def problems(schema: Dict[str, Any], inst: Any, strict: bool = True) -> List[Tuple[str, str]]:
    out: List[Any] = []
    Compiler(schema, "openapi", strict).compile(schema)(inst, None, out)
    return [(p.pointer(), p.message) for p in out]


BRANCHED = {"type": "object",
            "properties": {"kind": {"type": "string"}, "a": {"type": "string"}, "b": {"type": "string"}},
            "oneOf": [{"required": ["a"], "properties": {"kind": {"enum": ["A"]}}},
                      {"required": ["b"], "properties": {"kind": {"not": {"enum": ["A"]}}}}]}


@pytest.mark.parametrize("inst,expected", [
    ({"kind": "A", "a": "x"}, []),                       # a branch listing properties is not closed
    ({"kind": "B", "b": "x"}, []),
    ({"kind": "A", "b": "x"}, [("", "an object matches none of the allowed forms (oneOf)")]),
    ({"kind": "A", "a": "x", "c": 1}, [("/c", 'unknown field "c"')]),   # the structural part is
])
def test_oneof_branches_are_value_constraints(inst: Dict[str, Any], expected: Any) -> None:
    assert problems(BRANCHED, inst) == expected


def test_defaulting_follows_the_api_server() -> None:
    schema = {"type": "object", "properties": {
        "t": {"type": "string", "default": "IP"},
        "n": {"type": "string", "default": "x"},             # null, not nullable: defaulted
        "z": {"type": "string", "nullable": True, "default": "y"},   # null kept
        "obj": {"type": "object", "default": {}, "properties": {"p": {"type": "integer", "default": 1}}},
        "list": {"type": "array", "items": {"type": "object", "properties": {"q": {"type": "integer", "default": 2}}}},
        "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"r": {"default": 3}}}},
    }}
    d = defaulter(schema)
    assert d is not None
    inst = {"n": None, "z": None, "list": [{}, {"q": 5}], "m": {"k": {}}}
    got = d(inst)
    assert got == {"t": "IP", "n": "x", "z": None, "obj": {"p": 1}, "list": [{"q": 2}, {"q": 5}],
                   "m": {"k": {"r": 3}}}
    assert inst == {"n": None, "z": None, "list": [{}, {"q": 5}], "m": {"k": {}}}   # a copy
    full = {"t": "a", "n": "b", "z": None, "obj": {"p": 0}, "list": [], "m": {}}
    assert d(full) is full          # nothing to default: no copy
    assert defaulter({"type": "object", "properties": {"a": {"type": "string"}}}) is None


@pytest.mark.parametrize("fmt,value,ok", [
    ("ipv4", "1.2.3.4", True), ("ipv4", "010.1.1.1", True), ("ipv4", "1.2.3.256", False),
    ("ipv4", "::1", False), ("ipv6", "2001:db8::", True), ("ipv6", "1.2.3.4", False),
    ("ipv6", "fe80::1%eth0", False), ("cidr", "10.0.0.0/8", True), ("cidr", "::/0", True),
    ("cidr", "10.0.0.0/33", False), ("cidr", "10.0.0.0", False),
    ("uuid", "123e4567-e89b-12d3-a456-426614174000", True), ("uuid", "123e4567", False),
    ("hostname", "not a hostname", True),    # an annotation here, as documented
])
def test_crd_formats(fmt: str, value: str, ok: bool) -> None:
    got = problems({"type": "string", "format": fmt}, value)
    assert (got == []) is ok, got


def test_formats_of_crds_only() -> None:
    out: List[Any] = []
    Compiler({}, "json").compile({"type": "string", "format": "ipv4"})("x", None, out)
    assert out == []


def test_a_pattern_go_refuses_names_the_crd_and_pattern() -> None:
    crds = CrdSchemas(True, None)
    crds.add({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
              "metadata": {"name": "xs.example.com"},
              "spec": {"group": "example.com", "names": {"kind": "X"}, "versions": [
                  {"name": "v1", "served": True, "schema": {"openAPIV3Schema": {
                      "type": "object", "properties": {"a": {"type": "string", "pattern": "(a)\\1"}}}}}]}},
             "crds/x.yaml")
    with pytest.raises(UsageError, match=r"crds/x.yaml: .*X example.com/v1.*pattern '\(a\)\\\\1': "
                                         r"error parsing regexp: invalid escape sequence: `\\1`"):
        crds.check_for("example.com/v1", "X")


def test_pattern_errors_are_schema_errors() -> None:
    with pytest.raises(SchemaError, match="invalid or unsupported Perl syntax: `\\(\\?=`"):
        Compiler({}, "json").compile({"pattern": "a(?=b)"})
