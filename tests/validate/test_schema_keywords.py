"""The later JSON Schema drafts' keywords in user schemas (schema-locations, CRDs): each is
checked, or the schema is refused naming it; none is silently skipped."""
from __future__ import annotations

import re
from typing import Any, Dict, List, Tuple

import pytest

from kzgit.validate.schema import SchemaError, compile_schema


def _problems(schema: Dict[str, Any], inst: Any) -> List[Tuple[str, str]]:
    out: List[Any] = []
    compile_schema(schema)(inst, None, out)
    return [(p.code, p.pointer()) for p in out]


@pytest.mark.parametrize("schema, good, bad, problem", [
    ({"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": {"type": "boolean"}},
     ["a", 1, True], ["a", "b", 3], [("type", "/1"), ("type", "/2")]),
    ({"contains": {"const": "x"}}, ["a", "x"], ["a", "b"], [("contains", "")]),
    ({"contains": {"const": "x"}, "minContains": 2, "maxContains": 2}, ["x", "x"], ["x", "x", "x"],
     [("contains", "")]),
    ({"propertyNames": {"pattern": "^[a-z]+$"}}, {"ab": 1}, {"aB": 1}, [("propertyNames", "/aB")]),
    ({"dependentRequired": {"tls": ["secretName"]}}, {"tls": 1, "secretName": "s"}, {"tls": 1},
     [("required", "")]),
    ({"dependencies": {"tls": ["secretName"]}}, {"secretName": "s"}, {"tls": 1}, [("required", "")]),
    ({"dependentSchemas": {"tls": {"required": ["port"]}}}, {"tls": 1, "port": 443}, {"tls": 1},
     [("required", "/port")]),
    ({"if": {"properties": {"kind": {"const": "A"}}}, "then": {"required": ["a"]},
      "else": {"required": ["b"]}}, {"kind": "A", "a": 1}, {"kind": "B", "a": 1}, [("required", "/b")]),
])
def test_each_keyword_is_checked(schema: Dict[str, Any], good: Any, bad: Any,
                                 problem: List[Tuple[str, str]]) -> None:
    assert _problems(schema, good) == []
    got = _problems(schema, bad)
    assert [c for c, _ in got] == [c for c, _ in problem], got


@pytest.mark.parametrize("keyword, value", [("unevaluatedProperties", False), ("unevaluatedItems", False),
                                            ("additionalItems", False), ("$dynamicRef", "#meta"),
                                            ("$recursiveRef", "#")])
def test_an_unimplemented_keyword_is_refused_by_name(keyword: str, value: Any) -> None:
    with pytest.raises(SchemaError, match=re.escape(f"uses {keyword}, which kzgit does not implement")):
        compile_schema({"type": "object", "properties": {"a": {keyword: value}}})


def test_annotations_and_vendor_extensions_are_not_keywords() -> None:
    schema = {"title": "t", "examples": [1], "readOnly": True, "x-whatever": {"if": 1}, "$comment": "c",
              "type": "integer"}
    assert _problems(schema, 1) == [] and _problems(schema, "a") == [("type", "")]
