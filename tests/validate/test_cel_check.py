"""The API server's type check of a CRD's rules over the schema's types (kzgit.validate.celcheck):
crafted from k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel/compilation_test.go and
k8s.io/apiserver pkg/cel/common/schemas.go; the real CRDs of the tests pass it, as the API
server accepts them."""
from __future__ import annotations

import gzip
import sys
from typing import Any, Dict, List, Optional

import pytest

from kzgit.validate import celcheck
from kzgit.validate.celcheck import check_rule, decl_type
from kzgit.yamlio import load_documents
from tests.validate.realcrds import DATA, PROJECTS

SPEC = {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string", "maxLength": 10},
    "replicas": {"type": "integer"},
    "ratio": {"type": "number"},
    "enabled": {"type": "boolean"},
    "when": {"type": "string", "format": "date-time"},
    "timeout": {"type": "string", "format": "duration"},
    "data": {"type": "string", "format": "byte"},
    "port": {"x-kubernetes-int-or-string": True},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    "items": {"type": "array", "maxItems": 4, "items": {"type": "object", "properties": {
        "key": {"type": "string"}, "weight": {"type": "integer"}}}},
    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
              "properties": {"known": {"type": "string"}}},
    "anything": {"x-kubernetes-preserve-unknown-fields": True},
    "namespace": {"type": "string"},
}}
ROOT = {"type": "object", "properties": {"spec": SPEC}}


def _check(rule: str, schema: Any = SPEC, root: bool = False, message_expression: str = "") -> Optional[str]:
    return check_rule(rule, decl_type(schema, root), message_expression)


@pytest.mark.parametrize("rule", [
    "self.name.size() <= 10 && self.replicas > 0 && self.ratio < 1.5 && self.enabled",
    "self.replicas < 2.5 && self.ratio >= 1",    # cel.CrossTypeNumericComparisons
    "self.when < timestamp('2020-01-01T00:00:00Z') && self.timeout > duration('1s')",
    "self.port == 80 || self.port == 'http'",   # int-or-string is dyn
    "self.labels.all(k, self.labels[k] != '') && self.labels.exists(k, v, k == v)",
    "self.items.all(i, i.key != '' && i.weight >= 0) && self.items.exists(i, v, i < 2 && v.key == 'a')",
    "self.items.map(i, i.weight).sum() > 0 || self.items.filter(i, has(i.key)).size() > 0",
    "has(self.extra.known) && self.extra.known != ''", "self.anything.whatever == 1",
    "self.__namespace__ == 'x'", "self.items.exists_one(i, i.key == self.name)", "self.?nope.orValue('') == ''",
    "self.items[0].key == 'a'", "self.labels.x == 'y'", "self.replicas + 1 > self.replicas * 2 % 3",
    "self.name + 'x' != 'y'", "self.name.matches('^a') ? true : false",
    "self.name.matches(r'^\\d+$') && self.timeout < duration('1h30m') && self.when > timestamp('2020-01-01T00:00:00Z')",
    "['a', self.name].size() == 2 && [1, self.replicas].size() == 2 && {'a': 1, 'b': 2}.size() == 2",
    "'%s=%d'.format(['a', 1]) != ''",   # format's argument may mix types
    "self.name.substring(1, 2) == 'a' && self.name.indexOf('a', self.replicas) >= 0 && "
    "self.name.split('-', 2).size() <= 2 && self.name.find('[0-9]+') != '' && self.name.trim() != ''",
    "[self.port, 1].size() == 2",        # int-or-string: dyn, which this check does not compare
])
def test_rules_the_api_server_accepts(rule: str) -> None:
    assert _check(rule) is None


@pytest.mark.parametrize("rule,error", [
    ("self.nme == 'x'", "undefined field 'nme'"),
    ("has(self.nope)", "undefined field 'nope'"),
    ("self.items.all(i, i.kye != '')", "undefined field 'kye'"),
    ("self.items.exists(i, v, v.wieght > 0)", "undefined field 'wieght'"),
    ("self.items.filter(x, x.weight > 0).all(x, x.nope == 1)", "undefined field 'nope'"),
    # preserve-unknown-fields: the object's declaration does not expose unknown fields
    ("self.extra.unknown == 'x'", "undefined field 'unknown'"),
    ("self.replicas + 'x' == 'y'", "found no matching overload for '_+_' applied to '(int, string)'"),
    ("self.name < 3", "found no matching overload for '_<_' applied to '(string, int)'"),
    ("self.ratio % 2.0 == 0.0", "found no matching overload for '_%_' applied to '(double, double)'"),
    ("self.when + self.when > self.when", "found no matching overload for '_+_' applied to "
     "'(google.protobuf.Timestamp, google.protobuf.Timestamp)'"),
    ("self.name == 1", "found no matching overload for '_==_' applied to '(string, int)'"),
    ("self == 10", "found no matching overload for '_==_' applied to '(object, int)'"),
    # the literal validators base.go enables from Kubernetes 1.29 (cel-go cel/validator.go)
    ("self.name.matches('[a-z')", "invalid matches argument"),
    ("self.name.matches('(?=x)')", "invalid matches argument"),   # Go's RE2 has no lookahead
    ("self.timeout > duration('1x')", "invalid duration argument"),
    ("self.when < timestamp('2020-13-01T00:00:00Z')", "invalid timestamp argument"),
    ("['a', 1].size() == 2", "expected type 'string' but found 'int'"),
    ("[self.replicas, 1.5].size() == 2", "expected type 'int' but found 'double'"),
    ("{'a': 1, 'b': 'x'}.size() == 2", "expected type 'int' but found 'string'"),
    ("[null, 'a'].size() == 2", "expected type 'null_type' but found 'string'"),
    # a string's member functions (the standard ones, strings v2, the regex library)
    ("self.name.startsWith(1)", "found no matching overload for 'startsWith' applied to 'string.(int)'"),
    ("self.name.replace('a', 1) == ''", "found no matching overload for 'replace' applied to 'string.(string, int)'"),
    ("self.name.split(',')[0] == 1", "found no matching overload for '_==_' applied to '(string, int)'"),
    ("self.name.lowerAscii() + 1 == ''", "found no matching overload for '_+_' applied to '(string, int)'"),
    ("42", "cel expression must evaluate to a bool"),
    ("self.name", "cel expression must evaluate to a bool"),
    ("self.items", "cel expression must evaluate to a bool"),
])
def test_rules_the_api_server_refuses(rule: str, error: str) -> None:
    assert _check(rule) == error


def test_a_resource_root_has_apiversion_kind_and_only_name_and_generatename_of_metadata() -> None:
    # schemas.go WithTypeAndObjectMeta, for the CRD's root and an embedded resource
    assert _check("self.metadata.name.startsWith('a') && self.kind == 'K'", ROOT, root=True) is None
    assert _check("self.metadata.labels.size() > 0", ROOT, root=True) == "undefined field 'labels'"
    assert _check("self.metadata.name == ''", ROOT) == "undefined field 'metadata'"   # not a root
    embedded = {"type": "object", "properties": {"template": {
        "type": "object", "x-kubernetes-embedded-resource": True, "properties": {"spec": {"type": "object"}}}}}
    assert _check("self.template.metadata.generateName == 'x'", embedded) is None
    assert _check("self.template.metadata.namespace == 'x'", embedded) == "undefined field 'namespace'"


def test_message_expression_must_be_a_string() -> None:
    assert _check("self.replicas > 0", message_expression="'replicas: ' + string(self.replicas)") is None
    assert _check("self.replicas > 0", message_expression="self.replicas") == (
        "messageExpression must evaluate to a string")
    assert _check("self.replicas > 0", message_expression="self.nope") == "undefined field 'nope'"


def test_what_it_cannot_read_is_left_to_the_runtime() -> None:
    assert _check("self.name ==") is None   # a syntax error: the runtime's compiler words it
    assert _check("self.all(k, v, " + " + ".join(["1"] * 3000) + " > 0)") is None


def test_size_bounds_as_the_api_server_estimates_them() -> None:
    # schemas.go: maxLength x 4 (UTF-8), enum's longest, 3 MiB request for unbounded values
    t = decl_type(SPEC)
    assert t is not None and t.fields is not None
    assert t.fields["name"].max_elements == 40
    assert t.fields["replicas"].kind == "int" and t.fields["when"].kind == "timestamp"
    assert t.fields["items"].max_elements == 4 and t.fields["items"].elem is not None
    assert t.fields["labels"].max_elements == (celcheck.MAX_REQUEST_SIZE - 2) // (2 + 6)
    enum = decl_type({"type": "string", "enum": ["a", "abc"]})
    assert enum is not None and enum.max_elements == 3
    assert decl_type({"type": "array", "items": {"type": "integer"}}).max_elements == (  # type: ignore[union-attr]
        celcheck.MAX_REQUEST_SIZE - 2) // 2
    # a required field without default adds to an object's smallest serialized size
    assert t.min_size == 2 + len("name") + 2 + 4


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the CEL runtime is needed to compile the rules")
def test_real_crds_pass_the_check() -> None:
    # every rule of Gateway API, cert-manager, Kueue and Cluster API compiles: the API server
    # accepts these CRDs
    from kzgit.validate.cel import crd_rule_errors
    checked = 0
    for project in PROJECTS:
        for f in sorted((DATA / project).rglob("*.yaml.gz")):
            for doc in load_documents(gzip.decompress(f.read_bytes()), str(f)):
                if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                    assert crd_rule_errors(doc) == [], f.name
                    checked += _rules(doc)
    assert checked > 300


def _rules(x: Any) -> int:
    if isinstance(x, dict):
        own = x.get("x-kubernetes-validations")
        return (len(own) if isinstance(own, list) else 0) + sum(_rules(v) for v in x.values())
    if isinstance(x, list):
        return sum(_rules(v) for v in x)
    return 0


def test_findings_on_a_crd() -> None:
    pytest.importorskip("cel_expr_python")
    from kzgit.validate.cel import RuleFinding, crd_rule_errors
    crd: Dict[str, Any] = {"spec": {"versions": [{"schema": {"openAPIV3Schema": {
        "type": "object", "properties": {"spec": dict(SPEC, **{"x-kubernetes-validations": [
            {"rule": "self.replicas >= 0"}, {"rule": "self.replicsa >= 0"}]})}}}}]}}
    got: List[Any] = crd_rule_errors(crd)
    assert got == [RuleFinding("/spec/versions/0/schema/openAPIV3Schema/properties/spec/x-kubernetes-validations/1/rule",
                               "undefined field 'replicsa'", False)]


def test_transition_rules_are_checked_though_not_run() -> None:
    pytest.importorskip("cel_expr_python")
    from kzgit.validate.cel import Rules
    schema = {"type": "object", "properties": {"spec": dict(SPEC, **{"x-kubernetes-validations": [
        {"rule": "self.replicas >= oldSelf.replicas"},
        {"rule": "self.replicas >= oldSelf.replicsa", "message": "typo in the old object"},
        {"rule": "!oldSelf.hasValue() || self.name == oldSelf.value().name", "optionalOldSelf": True}]})}}
    rules = Rules(schema)
    assert rules.transition == 2
    assert [(w, str(r.error)) for w, r in rules.invalid] == [
        ("/properties/spec/x-kubernetes-validations/1/rule", "undefined field 'replicsa'")]
