"""The API server's estimated cost limits on a CRD's rules (kzgit.validate.celcost), on the cases
of k8s.io/apiextensions-apiserver pkg/apis/apiextensions/validation/validation_test.go (test names
below; apiextensions-apiserver at 1aa2717a552ee6ca1e2a18f1f8ffccde981db923) and the real CRDs of the
tests, which the API server accepts."""
from __future__ import annotations

import sys
from typing import Any, Dict, List, Tuple

import pytest

if sys.version_info < (3, 11):
    pytest.skip("the CEL runtime (cel-expr-python) is not available on Python 3.10",
                allow_module_level=True)

from kzgit.validate import celcost  # noqa: E402
from kzgit.validate.cel import crd_rule_errors  # noqa: E402
from kzgit.validate.celcheck import MAX_REQUEST_SIZE, decl_type  # noqa: E402

ROOT = "/spec/versions/0/schema/openAPIV3Schema"
HINT = ("(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, "
        "and strings are declared)")


def _refusals(schema: Dict[str, Any]) -> List[Tuple[str, str]]:
    crd = {"spec": {"versions": [{"schema": {"openAPIV3Schema": schema}}]}}
    return [(f.pointer[len(ROOT):], f.message) for f in crd_rule_errors(crd) if f.compiles]


def _double_nested(outer: Any, inner: Any, key: Dict[str, Any]) -> Dict[str, Any]:
    maps: Dict[str, Any] = {"type": "object", "additionalProperties": {
        "type": "object", "required": ["key"], "properties": {"key": key}}}
    if inner is not None:
        maps["maxProperties"] = inner
    value: Dict[str, Any] = {"type": "array", "items": maps,
                             "x-kubernetes-validations": [{"rule": "self.all(x, x.all(y, x[y].key == x[y].key))"}]}
    if outer is not None:
        value["maxItems"] = outer
    return {"type": "object", "properties": {"value": value}}


RULE = "/properties/value/x-kubernetes-validations/0/rule"


def test_forbid_double_nested_rule_with_no_limit_set() -> None:
    assert _refusals(_double_nested(None, None, {"type": "string"})) == [
        (RULE, f"estimated rule cost exceeds budget by factor of more than 100x {HINT}"),
        (RULE, "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"),
        ("", "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by "
             f"factor of more than 100x {HINT}")]


def test_forbid_double_nested_rule_with_one_limit_set() -> None:
    got = _refusals(_double_nested(None, None, {"type": "string", "maxLength": 10}))
    assert [w for w, _ in got] == [RULE, RULE, ""]


def test_allow_double_nested_rule_with_three_limits_set() -> None:
    assert _refusals(_double_nested(10, 10, {"type": "string", "maxLength": 10})) == []


def test_allow_double_nested_rule_with_one_limit_set_on_outermost_array() -> None:
    # 8,650,730: under 10,000,000 only because the key is a number (its equality costs nothing)
    schema = _double_nested(4, None, {"type": "number"})
    assert _refusals(schema) == []
    value = schema["properties"]["value"]
    assert celcost.estimate(value["x-kubernetes-validations"][0]["rule"], decl_type(value)) == 8_650_730


def test_check_for_cardinality_of_1_under_root_object() -> None:
    assert _refusals({"type": "object", "properties": {"value": {
        "type": "integer", "x-kubernetes-validations": [{"rule": "self < 1024"}]}}}) == []


def test_forbid_validation_rules_where_cost_total_exceeds_total_limit() -> None:
    contains = [{"rule": "self.contains('keyword')"}]
    schema = {"type": "object", "properties": {
        "list": {"type": "array", "maxItems": 100000,
                 "items": {"type": "string", "maxLength": 5000, "x-kubernetes-validations": contains}},
        "map": {"type": "object", "maxProperties": 1000, "additionalProperties": {
            "type": "string", "maxLength": 5000, "x-kubernetes-validations": contains}},
        "field": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 50 && self < 100"}]}}}
    listed = "/properties/list/items/x-kubernetes-validations/0/rule"
    mapped = "/properties/map/additionalProperties/x-kubernetes-validations/0/rule"
    contributed = "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"
    # 2,001 per string x 100,000 items; x 1,000 properties; 4: 202,101,004 in all
    assert _refusals(schema) == [
        (listed, f"estimated rule cost exceeds budget by factor of 20.0x {HINT}"),
        (listed, contributed), (mapped, contributed),
        ("", f"x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by "
             f"factor of 2.0x {HINT}")]


def test_message_expression_exceeding_per_expression_estimated_cost_limit() -> None:
    schema = {"type": "object", "properties": {"f": {"type": "array", "items": {"type": "string"},
              "x-kubernetes-validations": [{"rule": "true", "messageExpression":
                                            "self[0] + self[1] + self[2] + self[3] + self[4] + self[5] + self[6] + self[7]"}]}}}
    got = _refusals(schema)
    assert [w for w, _ in got] == ["/properties/f/x-kubernetes-validations/0/messageExpression"]
    # eight strings of up to 3 MiB, concatenated: 0.1 x 35 x 3,145,726 (+ 16): a factor of 1.101...
    assert got[0][1].startswith("estimated messageExpression cost exceeds budget by factor of 1.101")


def test_message_expression_exceeding_per_crd_estimated_cost_limit_is_not_estimated() -> None:
    # upstream refuses it: the size of string(x) has no bound in cel-go's estimate, so the
    # concatenation costs the largest value; kzgit does not estimate a cost that depends on an
    # unknown size (docs/cel.md: it would refuse rules on a guess)
    schema = {"type": "object", "properties": {"f": {"type": "array", "items": {"type": "string"},
              "x-kubernetes-validations": [{"rule": "true", "messageExpression":
                                            "string(self[0]) + string(self[1]) + string(self[2])"}]}}}
    assert _refusals(schema) == []
    assert celcost.estimate("string(self[0]) + string(self[1])", decl_type(schema["properties"]["f"])) is None


def test_rule_with_lower_ascii_check_is_within_estimated_cost_limit() -> None:
    assert _refusals({"type": "object", "properties": {"f": {
        "type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 5},
        "x-kubernetes-validations": [{"rule": "self.all(x, self.exists_one(y, x.lowerAscii() == y.lowerAscii()))"}]}}}) == []


def test_metadata_name_and_generate_name_are_253_and_252_characters() -> None:
    schema = {"type": "object", "x-kubernetes-validations": [{"rule": (
        "self.metadata.name.contains(self.metadata.name) && "
        "self.metadata.generateName.contains(self.metadata.generateName)")}]}
    assert _refusals(schema) == []
    # 253 characters of up to 4 bytes: ceil(101.2) x ceil(101.2), ceil(100.8) x ceil(100.8), and
    # the fields read (3 each)
    assert celcost.estimate(schema["x-kubernetes-validations"][0]["rule"], decl_type(schema, True)) == (
        102 * 102 + 101 * 101 + 4 * 3)


@pytest.mark.parametrize("rule,cost", [
    # self.a: an identifier 1 + a field of an object 1; > on ints 1; && adds its sides
    ("self.a == 1", 2 + 0), ("self.a > 1 && self.a < 5", 3 + 3),
    # has() costs its operand only (PresenceTestHasCost(false)); ?: the test + the dearer side
    ("has(self.s) ? self.s.size() > 0 : true", 1 + (2 + 1 + 1)),
    # a string's bound is 4 x maxLength: startsWith ceil(0.1 x 3); matches
    # ceil(0.1 x (40 + 1)) x ceil(0.25 x 8)
    ("self.s.startsWith('abc')", 2 + 1), ("self.s.matches('^[a-z]+$')", 2 + 5 * 2),
    # comprehensions over 8 items: range + init + result + 8 x (step + condition)
    ("self.l.all(x, x != '')", 2 + 0 + 1 + 8 * ((1 + 1) + 2)),
    ("self.l.exists(x, x == 'a')", 2 + 0 + 1 + 8 * ((1 + 2) + 3)),
    ("self.l.exists_one(x, x == 'a')", 2 + 0 + 2 + 8 * ((2 + 2) + 0)),
    ("self.l.map(x, x).size() > 0", (2 + 10 + 1 + 8 * (1 + 12)) + 1 + 1),
    ("self.l.filter(x, x != '').size() == 0", (2 + 10 + 1 + 8 * (1 + 13)) + 1 + 1),
    ("self.m.all(k, self.m[k] != '')", 2 + 0 + 1 + 3 * ((1 + 4) + 2)),
    ("self.l.all(i, v, i < 3 && v != '')", 2 + 0 + 1 + 8 * ((1 + 2 + 1) + 2)),
    # in: the list's bound
    ("'a' in self.l", 2 + 8),
    # k8s.io/apiserver pkg/cel/library/cost.go: join ceil(0.1 x (8 x 20 + 7 x 1)); indexOf of a
    # list 8 x (1 + ceil(0.1 x 20)), of a string ceil(0.1 x 40); quantity() ceil(0.1 x 40),
    # its methods and its equality 1; containsIP ceil(0.1 x 32) + ceil(0.1 x 8) for a string
    ("self.l.join(',') == ''", 2 + 17), ("self.l.indexOf('a') >= 0", 2 + 8 * 3 + 1),
    ("self.s.indexOf('a') > 0", 2 + 4 + 1), ("isQuantity(self.s)", 2 + 4),
    ("quantity(self.s).isInteger()", 2 + 4 + 1), ("quantity(self.s) == quantity('1Gi')", (2 + 4) + 1 + 1),
    ("cidr(self.s).containsIP('10.0.0.1')", (2 + 4) + 4 + 1),
])
def test_costs_of_real_shaped_rules(rule: str, cost: int) -> None:
    # by hand from cel-go checker/cost.go and parser/macro.go's expansions (the table above)
    schema = {"type": "object", "properties": {
        "a": {"type": "integer"}, "s": {"type": "string", "maxLength": 10},
        "l": {"type": "array", "maxItems": 8, "items": {"type": "string", "maxLength": 5}},
        "m": {"type": "object", "maxProperties": 3, "additionalProperties": {"type": "string", "maxLength": 5}}}}
    assert celcost.estimate(rule, decl_type(schema)) == cost


@pytest.mark.parametrize("rule", [
    "self.l.sortBy(x, x) == self.l", "url(self.s).getQuery().size() > 0", "self.s.format([1]) == ''",
    "self.m.transformList(k, v, v).size() > 0",
    "self.x > 1",   # a field of no declared type: an operator on it has no known overload
])
def test_what_is_not_modelled_is_not_estimated(rule: str) -> None:
    schema = {"type": "object", "properties": {
        "s": {"type": "string"}, "l": {"type": "array", "items": {"type": "string"}},
        "m": {"type": "object", "additionalProperties": {"type": "string"}},
        "x": {"x-kubernetes-int-or-string": True}}}
    assert celcost.estimate(rule, decl_type(schema)) is None


def test_cardinality_of_a_rule_with_unbounded_ancestors() -> None:
    # compilation.go maxCardinality: what a 3 MiB request holds of the rule's value
    t = decl_type({"type": "string", "maxLength": 3})
    assert celcost.rule_cost(5, None, t) == 5 * (MAX_REQUEST_SIZE // 3)
    assert celcost.rule_cost(5, 7, t) == 35 and celcost.rule_cost(0, None, t) == 0


def test_factor_wording() -> None:
    assert "by factor of 1.200000x " in celcost.exceeds("estimated rule cost", 12_000_000, 10_000_000)
    assert "by factor of 2.5x " in celcost.exceeds("estimated rule cost", 25_000_000, 10_000_000)
    assert "by factor of more than 100x " in celcost.exceeds("estimated rule cost", 10 ** 10, 10_000_000)


def test_a_crd_from_crd_refused_for_its_cost_is_an_error_on_its_resources() -> None:
    from kzgit.config import ValidatePolicy
    from kzgit.validate import Validator
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "value": _double_nested(None, None, {"type": "string"})["properties"]["value"]}}}}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"}, "scope": "Namespaced",
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": schema}}]}}
    val = Validator(ValidatePolicy(kubernetes_version="1.33"))
    on_crd = [(i.code, i.path, i.message) for i in val.check(crd) or []]
    assert on_crd[0] == ("cel", f"{ROOT}/properties/spec/properties/value/x-kubernetes-validations/0/rule",
                         "the API server refuses this CustomResourceDefinition: estimated rule cost exceeds budget "
                         f"by factor of more than 100x {HINT}")
    val.add_crd(crd, "crds/widget.yaml")
    got = [(i.code, i.message) for i in val.check({"apiVersion": "example.com/v1", "kind": "Widget",
                                                   "metadata": {"name": "w"}, "spec": {}}) or []]
    assert got == [("cel", "the API server refuses its CustomResourceDefinition (Widget example.com/v1, "
                           "crds/widget.yaml): at openAPIV3Schema: x-kubernetes-validations estimated rule cost "
                           f"total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x {HINT}")]


def test_the_real_crds_are_estimated_and_none_is_refused() -> None:
    # every rule of Gateway API, cert-manager, Kueue and Cluster API is estimated; the dearest,
    # an HTTPRoute path rule, at 5,756 x 16 rules x 64 matches (the API server accepts them all)
    import gzip

    from kzgit.validate.cel import Rules
    from kzgit.yamlio import load_documents
    from tests.validate.realcrds import DATA, PROJECTS
    total = estimated = 0
    dearest = 0
    for project in PROJECTS:
        for f in sorted((DATA / project).rglob("*.yaml.gz")):
            for doc in load_documents(gzip.decompress(f.read_bytes()), str(f)):
                for v in doc["spec"]["versions"]:
                    rules = Rules(v["schema"]["openAPIV3Schema"])
                    assert rules.refusals == [], f.name
                    total += rules.total
                    estimated += sum(1 for w, _ in rules.costs if w.endswith("/rule"))
                    dearest = max([dearest] + [c for _, c in rules.costs])
    assert total > 300 and estimated == total
    assert dearest == 5756 * 16 * 64
