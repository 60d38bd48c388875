"""The schema compiler: one table row per keyword, with the JSON path and the words of each problem."""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import pytest

from kzgit.validate.schema import Compiler, SchemaError, compile_schema


def problems(schema: Dict[str, Any], inst: Any, dialect: str = "json", strict: bool = False,
             root: Any = None) -> List[Tuple[str, str]]:
    out: List[Any] = []
    Compiler(schema if root is None else root, dialect, strict).compile(schema)(inst, None, out)
    return [(p.pointer(), p.message) for p in out]


INT_OR_STRING = {"oneOf": [{"type": ["string", "null"]}, {"type": ["integer", "null"]}]}


@pytest.mark.parametrize("schema,inst,expected", [
    ({"type": "integer"}, 3, []),
    ({"type": "integer"}, 3.0, []),                      # jsonschema: an integral float is an integer
    ({"type": "integer"}, 3.5, [("", "expected integer, got number 3.5")]),
    ({"type": "integer"}, True, [("", "expected integer, got boolean true")]),
    ({"type": "number"}, False, [("", "expected number, got boolean false")]),
    ({"type": ["string", "null"]}, None, []),
    ({"type": "string"}, {"a": 1}, [("", "expected string, got object")]),
    ({"type": "object", "properties": {"a": {"type": "integer"}}}, {"a": "1"},
     [("/a", 'expected integer, got string "1"')]),
    ({"type": "array", "items": {"type": "string"}}, ["a", 2], [("/1", "expected string, got integer 2")]),
    ({"enum": ["A", "B"]}, "C", [("", 'must be one of "A", "B"; got "C"')]),
    ({"enum": [1]}, True, [("", "must be one of 1; got true")]),
    ({"required": ["containers"], "type": "object"}, {},
     [("/containers", 'required field "containers" is missing')]),
    ({"properties": {"replicas": {}}, "additionalProperties": False}, {"replica": 3},
     [("/replica", 'unknown field "replica" (did you mean "replicas"?)')]),
    ({"additionalProperties": {"type": "string"}}, {"a/b": 1}, [("/a~1b", "expected string, got integer 1")]),
    (INT_OR_STRING, 8080, []),
    (INT_OR_STRING, "http", []),
    (INT_OR_STRING, 1.5, [("", "expected string or integer, got number 1.5")]),
    (INT_OR_STRING, None, [("", "null matches more than one of the allowed forms (oneOf)")]),
    ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, [], [("", "expected string or integer, got array")]),
    ({"not": {"type": "string"}}, "x", [("", '"x" is not allowed here')]),
    ({"type": "string", "pattern": "^[a-z]+$"}, "A", [("", "\"A\" does not match '^[a-z]+$'")]),
    # the pattern as the CRD writes it (not Python's repr, which doubled each backslash)
    ({"type": "string", "pattern": "^[a-z]+\\.example\\.com$"}, "A.example.com",
     [("", "\"A.example.com\" does not match '^[a-z]+\\.example\\.com$'")]),
    ({"type": "string", "maxLength": 2}, "abc", [("", "must be at most 2 characters long, is 3")]),
    ({"type": "integer", "minimum": 1}, 0, [("", "must be at least 1, got 0")]),
    ({"type": "integer", "exclusiveMaximum": 5}, 5, [("", "must be less than 5, got 5")]),
    ({"type": "array", "minItems": 1}, [], [("", "must have at least 1 item, has 0")]),
    ({"type": "array", "uniqueItems": True}, [1, 1.0], [("", "items must be unique; 1.0 repeats")]),
    ({"type": "integer", "multipleOf": 2}, 3, [("", "3 is not a multiple of 2")]),
    ({"const": "x"}, "y", [("", 'must be "x", got "y"')]),
])
def test_keywords(schema: Dict[str, Any], inst: Any, expected: List[Tuple[str, str]]) -> None:
    assert problems(schema, inst) == expected


def test_type_failure_stops_the_keywords_of_that_value() -> None:
    schema = {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}
    assert problems(schema, "x") == [("", 'expected object, got string "x"')]


def test_every_problem_is_reported_not_only_the_first() -> None:
    schema = {"type": "object", "additionalProperties": False,
              "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}
    assert problems(schema, {"a": "1", "b": 2, "c": 3}) == [
        ("/a", 'expected integer, got string "1"'), ("/b", "expected string, got integer 2"),
        ("/c", 'unknown field "c"')]


def test_refs_into_defs_recursive_and_compiled_once() -> None:
    root = {"$defs": {"Node": {"type": "object", "additionalProperties": False,
                               "properties": {"v": {"type": "integer"},
                                              "next": {"$ref": "#/$defs/Node"}}}}}
    comp = Compiler(root)
    check = comp.compile({"$ref": "#/$defs/Node"})
    assert comp.compile({"$ref": "#/$defs/Node"}) is check
    out: List[Any] = []
    check({"v": 1, "next": {"v": 2, "next": {"v": "3", "x": 1}}}, None, out)
    assert [(p.pointer(), p.message) for p in out] == [
        ("/next/next/v", 'expected integer, got string "3"'), ("/next/next/x", 'unknown field "x"')]


def test_a_dangling_ref_and_a_bad_type_are_schema_errors() -> None:
    with pytest.raises(SchemaError, match="points at nothing"):
        compile_schema({"$ref": "#/$defs/Nope"}, {"$defs": {}})
    with pytest.raises(SchemaError, match="bad type"):
        compile_schema({"type": "float"})
    with pytest.raises(SchemaError, match="only references inside"):
        compile_schema({"$ref": "other.json#/definitions/x"})


# -- the openapi dialect (CRD openAPIV3Schema) -----------------------------------------------

SPEC = {"type": "object", "properties": {"size": {"type": "integer"}}}


@pytest.mark.parametrize("schema,inst,strict,expected", [
    (SPEC, {"size": 1, "colour": "red"}, True, [("/colour", 'unknown field "colour"')]),
    (SPEC, {"size": 1, "colour": "red"}, False, []),                   # pruned, not refused
    ({**SPEC, "x-kubernetes-preserve-unknown-fields": True}, {"colour": "red"}, True, []),
    ({"type": "object", "additionalProperties": {"type": "string"}}, {"a": "b"}, True, []),
    ({"type": "string", "nullable": True}, None, True, []),
    ({"type": "string"}, None, True, [("", "expected string, got null")]),
    ({"x-kubernetes-int-or-string": True}, 8080, True, []),
    ({"x-kubernetes-int-or-string": True}, True, True, [("", "expected integer or string, got boolean true")]),
    ({"type": "integer", "minimum": 1, "exclusiveMinimum": True}, 1, True, [("", "must be greater than 1, got 1")]),
    ({"type": "object", "x-kubernetes-embedded-resource": True, "properties": {"spec": {}}},
     {"apiVersion": "v1", "kind": "X", "metadata": {}, "spec": {}}, True, []),
])
def test_openapi_dialect(schema: Dict[str, Any], inst: Any, strict: bool, expected: List[Tuple[str, str]]) -> None:
    assert problems(schema, inst, "openapi", strict) == expected


def test_embedded_resource_allows_its_type_meta_only() -> None:
    schema = {"type": "object", "x-kubernetes-embedded-resource": True, "properties": {"spec": {}}}
    assert problems(schema, {"apiVersion": "v1", "kind": "X", "metadata": {}, "bogus": 1}, "openapi", True) == [
        ("/bogus", 'unknown field "bogus"')]
