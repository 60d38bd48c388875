"""CEL rules (``x-kubernetes-validations``) evaluated on custom resources, as the API server does:
real CRDs refuse crafted invalid resources with the rule's message, at the rule's place."""
from __future__ import annotations

import copy
import sys
from typing import Any, Dict, List, Tuple

import pytest

if sys.version_info < (3, 11):
    # pyproject.toml installs the runtime from Python 3.11 (it has no wheel for 3.10); from
    # 3.11 a missing runtime is a broken install, and these tests fail on the import below
    pytest.skip("the CEL runtime (cel-expr-python) is not available on Python 3.10",
                allow_module_level=True)

from kzgit.config import ValidatePolicy  # noqa: E402
from kzgit.validate import Validator, cel_k8s  # noqa: E402
from tests.validate.realcrds import errors, examples, validator  # noqa: E402


@pytest.fixture(scope="module")
def v() -> Validator:
    return validator()


def _example(project: str, suffix: str, kind: str) -> Dict[str, Any]:
    return copy.deepcopy(next(obj for where, obj in examples(project)
                              if where.endswith(suffix) and obj.get("kind") == kind))


def _cel(v: Validator, obj: Dict[str, Any]) -> List[Tuple[str, str]]:
    return [(i.path, i.message) for i in errors(v, obj) if i.code == "cel"]


def test_gateway_listener_names_unique(v: Validator) -> None:
    gw = _example("gateway-api", "gateway-addresses.yaml", "Gateway")
    assert _cel(v, gw) == []
    gw["spec"]["listeners"].append(dict(gw["spec"]["listeners"][0], port=8080))
    assert _cel(v, gw) == [("/spec/listeners", "Listener name must be unique within the Gateway")]


def test_gateway_http_listener_without_tls(v: Validator) -> None:
    gw = _example("gateway-api", "gateway-addresses.yaml", "Gateway")
    gw["spec"]["listeners"][0]["tls"] = {"mode": "Terminate", "certificateRefs": [{"name": "c"}]}
    assert ("/spec/listeners", "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']") in _cel(v, gw)


def test_gateway_hostname_address(v: Validator) -> None:
    gw = _example("gateway-api", "gateway-addresses.yaml", "Gateway")
    gw["spec"]["addresses"] = [{"type": "Hostname", "value": "Not_A_Host"}]
    got = _cel(v, gw)
    assert len(got) == 1 and got[0][0] == "/spec/addresses/0"
    assert got[0][1].startswith("Hostname value must be empty or contain only valid characters")


def test_cert_manager_venafi_exactly_one(v: Validator) -> None:
    issuer = {"apiVersion": "cert-manager.io/v1", "kind": "Issuer", "metadata": {"name": "i", "namespace": "n"},
              "spec": {"venafi": {"zone": "z", "tpp": {"url": "https://tpp", "credentialsRef": {"name": "s"}},
                                  "cloud": {"apiTokenSecretRef": {"name": "t", "key": "k"}}}}}
    assert _cel(v, issuer) == [("/spec/venafi", "exactly one of tpp, cloud, or ngts must be configured")]
    del issuer["spec"]["venafi"]["cloud"]
    assert _cel(v, issuer) == []


def test_kueue_resource_flavor_and_its_transition_rule(v: Validator) -> None:
    rf = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "f"},
          "spec": {"topologyName": "t", "nodeLabels": {}}}
    got = v.check(rf) or []
    assert [(i.path, i.message) for i in got if i.code == "cel"] == [
        ("/spec", "at least one nodeLabel is required when topology is set")]
    skipped = [i for i in got if i.code == "cel-skipped"]
    assert len(skipped) == 1 and skipped[0].severity == "warning"
    assert "transition rule (oldSelf: git holds no old object)" in skipped[0].message
    rf["spec"]["nodeLabels"] = {"zone": "a"}
    assert _cel(v, rf) == []
    del rf["spec"]["nodeLabels"]   # the API server cannot evaluate the rule either
    assert _cel(v, rf) == [("/spec", "no such key: nodeLabels evaluating rule: "
                                     "at least one nodeLabel is required when topology is set")]


def test_kueue_toleration_rules(v: Validator) -> None:
    rf = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "f"},
          "spec": {"tolerations": [{"operator": "Equal", "value": "x"}]}}
    assert _cel(v, rf) == [("/spec/tolerations",
                            "operator must be Exists when 'key' is empty, which means 'match all values and all keys'")]


def test_cluster_api_drain_rule_unique_entries(v: Validator) -> None:
    rule = {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDrainRule",
            "metadata": {"name": "r", "namespace": "n"},
            "spec": {"drain": {"behavior": "Skip"}, "machines": [{"selector": {}}, {"selector": {}}]}}
    assert _cel(v, rule) == [("/spec/machines", "entries in machines must be unique")]
    rule["spec"]["machines"].pop()
    assert _cel(v, rule) == []


def test_type_errors_stop_cel(v: Validator) -> None:
    gw = _example("gateway-api", "gateway-addresses.yaml", "Gateway")
    gw["spec"]["listeners"].append(dict(gw["spec"]["listeners"][0]))
    gw["spec"]["listeners"][0]["port"] = "eighty"
    codes = {i.code for i in errors(v, gw)}
    assert "type" in codes and "cel" not in codes


# -- the rule's fields, on a small CRD ----------------------------------------------------------
def _crd(rules: List[Dict[str, Any]], props: Any = None) -> Dict[str, Any]:
    schema = {"type": "object", "properties": {"spec": {
        "type": "object", "x-kubernetes-validations": rules,
        "properties": props or {"min": {"type": "integer"}, "max": {"type": "integer"},
                                "namespace": {"type": "string"}, "x-y": {"type": "string"},
                                "items": {"type": "array", "items": {"type": "string"}}}}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"}, "scope": "Namespaced",
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema}}]}}


def _run(rules: List[Dict[str, Any]], spec: Dict[str, Any], props: Any = None) -> List[Tuple[str, str, str]]:
    val = Validator(ValidatePolicy(kubernetes_version="1.33"))
    val.add_crd(_crd(rules, props), "crd.yaml")
    got = val.check({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec})
    return [(i.code, i.path, i.message) for i in got or []]


def test_message_field_path_and_reason() -> None:
    rules = [{"rule": "self.min <= self.max", "message": "min must not exceed max", "fieldPath": ".min",
              "reason": "FieldValueForbidden"}]
    assert _run(rules, {"min": 1, "max": 2}) == []
    assert _run(rules, {"min": 3, "max": 2}) == [("cel", "/spec/min", "Forbidden: min must not exceed max")]


def test_message_expression_and_fallbacks() -> None:
    rule = {"rule": "self.min <= self.max", "messageExpression": "'min ' + string(self.min) + ' > max'"}
    assert _run([rule], {"min": 3, "max": 2}) == [("cel", "/spec", "min 3 > max")]
    bad_expr = dict(rule, messageExpression="string(self.min / 0)", message="plain")   # fails when run
    assert _run([bad_expr], {"min": 3, "max": 2}) == [("cel", "/spec", "plain")]
    assert _run([{"rule": "self.min <= self.max"}], {"min": 3, "max": 2}) == [
        ("cel", "/spec", "failed rule: self.min <= self.max")]


def test_field_path_with_brackets() -> None:
    props = {"labels": {"type": "object", "maxProperties": 8,
                        "additionalProperties": {"type": "string", "maxLength": 63}}}
    rules = [{"rule": "self.labels.all(k, self.labels[k] != '')", "message": "empty",
              "fieldPath": ".labels['a.b']"}]
    assert _run(rules, {"labels": {"a.b": "", "c": "d"}}, props) == [("cel", "/spec/labels/a.b", "empty")]


def test_the_fields_of_a_rule_the_api_server_refuses() -> None:
    # validation.go, before it compiles a rule: its message, messageExpression, reason and
    # fieldPath (ValidFieldPath: properties or a map's keys, no list index)
    from kzgit.validate.cel import crd_rule_errors
    crd = _crd([{"rule": " "}, {"rule": "self.min > 0", "message": "  "},
                {"rule": "self.min > 0", "message": "two\nlines"}, {"rule": "self.min >\n 0"},
                {"rule": "self.min > 0", "messageExpression": " "}, {"rule": "self.min > 0", "reason": "Nope"},
                {"rule": "self.min > 0", "fieldPath": ".items[1]"}, {"rule": "self.min > 0", "fieldPath": ".nope"},
                {"rule": "self.min > 0", "fieldPath": ".min"}])
    where = "/spec/versions/0/schema/openAPIV3Schema/properties/spec/x-kubernetes-validations"
    got = [(f.pointer[len(where):], f.message) for f in crd_rule_errors(crd) if f.compiles]
    assert got == [
        ("/0/rule", "Required value: rule is not specified"),
        ("/1/message", 'Invalid value: "  ": must be non-empty if specified'),
        ("/2/message", 'Invalid value: "two\\nlines": must not contain line breaks'),
        ("/3/message", "Required value: message must be specified if rule contains line breaks"),
        ("/4/messageExpression", "Required value: messageExpression must be non-empty if specified"),
        ("/5/reason", 'Unsupported value: "Nope": supported values: "FieldValueDuplicate", '
                      '"FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"'),
        ("/6/fieldPath", 'Invalid value: ".items[1]": must be a valid path'),
        ("/7/fieldPath", 'Invalid value: ".nope": must be a valid path')]


def test_evaluation_error_names_the_rule() -> None:
    assert _run([{"rule": "self.min > 0", "message": "m"}], {"max": 1}) == [
        ("cel", "/spec", "no such key: min evaluating rule: m")]


def test_property_names_are_escaped_as_kubernetes_escapes_them() -> None:
    rules = [{"rule": "self.__namespace__ == 'a' && self.x__dash__y == 'b'", "message": "m"}]
    assert _run(rules, {"namespace": "a", "x-y": "b"}) == []
    assert _run(rules, {"namespace": "z", "x-y": "b"}) == [("cel", "/spec", "m")]


def test_transition_rules_are_counted_not_run() -> None:
    rules = [{"rule": "self.min == oldSelf.min", "message": "immutable"}, {"rule": "self.min > 0"}]
    got = _run(rules, {"min": 1})
    assert got == [("cel-skipped", "", "1 of 2 CEL rules not evaluated: "
                                             "1 transition rule (oldSelf: git holds no old object)")]


def test_a_rule_that_does_not_compile_is_a_finding_on_the_crd() -> None:
    """A rule that is not CEL (a syntax error, a function or identifier no Kubernetes library
    declares, operands no overload takes) is an error on the CRD, which the API server refuses;
    a rule using what kzgit's CEL lacks (docs/cel.md) stays a warning (issue 33 item 5)."""
    crd = _crd([{"rule": "self.min <", "message": "m"}, {"rule": "self.min.nosuchfunction()"},
                {"rule": "self.min == maximum"}, {"rule": "self.min + 'a' == 1"},
                {"rule": "self.min > 0"},
                {"rule": "self.items.all(i, v, v > string(i))"}, {"rule": "self.items.indexOf('a') >= 0"},
                {"rule": "format.dns1123Label().validate(self.__namespace__).hasValue()"},
                {"rule": "self.items.sortBy(e, e) == self.items"}, {"rule": "self.items.existsOne(x, x == 'a')"},
                {"rule": "[net.IP, net.CIDR].size() == 2"}, {"rule": "self.items.all(i, i, i > 0)"},
                {"rule": "self.items.all(i, v, v.size() > self.mni)"}],
               # bounded: over unbounded strings the indexOf rule would be refused for its cost
               {"min": {"type": "integer"}, "namespace": {"type": "string", "maxLength": 63},
                "items": {"type": "array", "maxItems": 16, "items": {"type": "string", "maxLength": 63}}})
    val = Validator(ValidatePolicy(kubernetes_version="1.33"))
    got = [(i.code, i.severity, i.path) for i in val.check(crd) or []]
    where = "/spec/versions/0/schema/openAPIV3Schema/properties/spec/x-kubernetes-validations"
    # rules 5-9 use what kzgit.validate.celrewrite brings: they compile
    assert got == [*(("cel", "error", f"{where}/{n}/rule") for n in range(4)),
                   ("cel-skipped", "warning", f"{where}/10/rule"), ("cel", "error", f"{where}/11/rule"),
                   ("cel", "error", f"{where}/12/rule")]
    msgs = [i.message for i in val.check(crd) or []]
    assert all(m.startswith("the CEL rule does not compile: ") for m in msgs[:4])
    assert "undeclared reference to 'nosuchfunction'" in msgs[1]
    assert "undeclared reference to 'maximum'" in msgs[2]
    assert "found no matching overload for '" in msgs[3]
    assert msgs[4].startswith("kzgit cannot evaluate this CEL rule: ")
    assert msgs[5] == "the CEL rule does not compile: duplicate variable name: i"   # cel-go's words
    # the type check over the schema (kzgit.validate.celcheck), as the API server compiles it
    assert msgs[6] == "the CEL rule does not compile: undefined field 'mni'"


def test_a_crd_given_with_crd_whose_rule_is_not_cel_is_an_error_on_its_resources() -> None:
    """A CRD from --crd is not among the rendered resources, so its refusal is an error on
    each custom resource of it (none can be created), naming the CRD and the rule."""
    val = Validator(ValidatePolicy(kubernetes_version="1.33"))
    val.add_crd(_crd([{"rule": "self.min == maximum"}, {"rule": "self.min > 0"},
                      {"rule": "[net.IP, net.CIDR].size() == 2"}]), "crds/widget.yaml")
    got = val.check({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                     "spec": {"min": 1}}) or []
    assert [(i.code, i.severity, i.path) for i in got] == [("cel", "error", ""),
                                                           ("cel-skipped", "warning", "")]
    assert got[0].message.startswith(
        "the API server refuses its CustomResourceDefinition (Widget example.com/v1, crds/widget.yaml): "
        "the CEL rule at openAPIV3Schema/properties/spec/x-kubernetes-validations/0/rule does not "
        "compile: ")
    assert "undeclared reference to 'maximum'" in got[0].message
    assert got[1].message == ("1 of 3 CEL rules not evaluated: 1 rule using what kzgit's CEL does "
                              "not implement (see the CustomResourceDefinition's findings)")


def test_rules_compile_once_per_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: List[str] = []
    real = cel_k8s.compile_expression

    def counting(src: str) -> Any:
        calls.append(src)
        return real(src)
    monkeypatch.setattr(cel_k8s, "compile_expression", counting)
    val = Validator(ValidatePolicy(kubernetes_version="1.33"))
    val.add_crd(_crd([{"rule": "self.min >= 0"}]), "crd.yaml")
    for n in range(5):
        val.check({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": f"w{n}"},
                   "spec": {"min": n}})
    assert calls == ["self.min >= 0"]


def test_without_the_runtime_every_rule_is_reported_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # Python 3.10 has no cel-expr-python wheel: the rules are counted as not evaluated, loudly
    import sys

    import kzgit.validate
    monkeypatch.setitem(sys.modules, "kzgit.validate.cel_k8s", None)   # import fails
    monkeypatch.delattr(kzgit.validate, "cel_k8s")
    crd = _crd([{"rule": "self.min > 0", "message": "m"}, {"rule": "self.max > 0"}])
    val = Validator(ValidatePolicy(kubernetes_version="1.33"))
    on_crd = [(i.code, i.severity, i.message) for i in val.check(crd) or []]
    assert len(on_crd) == 1 and on_crd[0][:2] == ("cel-skipped", "warning")
    assert on_crd[0][2].startswith("2 CEL rules not evaluated: the CEL runtime is not installed")
    val.add_crd(crd, "crd.yaml")
    got = val.check({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                     "spec": {"min": -1}})
    assert [(i.code, i.severity) for i in got or []] == [("cel-skipped", "warning")]
    assert (got or [])[0].message == ("2 of 2 CEL rules not evaluated: 2 rules: the CEL runtime is not "
                                      "installed (cel-expr-python: no wheel for this Python or platform)")


def test_httproute_path_rules_see_the_defaulted_type(v: Validator) -> None:
    # path.type defaults to PathPrefix: its rules apply to a path written without a type
    route = _example("gateway-api", "basic-http.yaml", "HTTPRoute")
    assert _cel(v, route) == []
    route["spec"]["rules"][0]["matches"] = [{"path": {"value": "foo//bar"}}]
    assert _cel(v, route) == [
        ("/spec/rules/0/matches/0/path", "value must be an absolute path and start with '/' when type one of "
                                         "['Exact', 'PathPrefix']"),
        ("/spec/rules/0/matches/0/path", "must not contain '//' when type one of ['Exact', 'PathPrefix']")]
    route["spec"]["rules"][0]["matches"] = [{"path": {"type": "RegularExpression", "value": "foo//bar"}}]
    assert _cel(v, route) == []


def test_cluster_api_machine_condition_type(v: Validator) -> None:
    cluster = {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": "c", "namespace": "n"},
               "spec": {"topology": {"classRef": {"name": "quick-start"}, "version": "v1.33.0",
                                     "controlPlane": {"healthCheck": {"checks": {"unhealthyMachineConditions": [
                                         {"type": "Ready", "status": "Unknown", "timeoutSeconds": 300}]}}}}}}
    got = _cel(v, cluster)
    assert got == [("/spec/topology/controlPlane/healthCheck/checks/unhealthyMachineConditions/0/type",
                    "type must not be one of: Ready, Available, HealthCheckSucceeded, OwnerRemediated, "
                    "ExternallyRemediated")]
    cluster["spec"]["topology"]["controlPlane"]["healthCheck"]["checks"]["unhealthyMachineConditions"][0]["type"] = "DiskPressure"
    assert _cel(v, cluster) == []


def test_a_signal_during_an_evaluation_interrupts_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGINT arriving while the runtime is in one of kzgit's functions: the runtime turns any
    exception of a callback into an error value, which was reported as a finding on the
    resource (issue 32); the interrupt reaches the caller (kzgit.cli.main: exit 130)."""
    import os
    import signal
    import time

    def slow_find(s: str, pattern: str) -> str:
        os.kill(os.getpid(), signal.SIGINT)   # a real signal, handled inside the callback
        for _ in range(1000):
            time.sleep(0.001)
        return ""

    monkeypatch.setattr(cel_k8s, "_find", slow_find)
    monkeypatch.setattr(cel_k8s, "_env", None)   # an environment with the slow function
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        program = cel_k8s.compile_expression("self.find('a') == ''")
        with pytest.raises(KeyboardInterrupt):
            cel_k8s.evaluate(program, "abc")
        # the next evaluation is not affected by the one interrupted
        monkeypatch.setattr(cel_k8s, "_find", lambda s, p: "")
        monkeypatch.setattr(cel_k8s, "_env", None)
        assert cel_k8s.evaluate(cel_k8s.compile_expression("self.find('a') == ''"), "abc") == (True, None)
    finally:
        signal.signal(signal.SIGINT, old)


@pytest.mark.parametrize("rule,message", [
    ("self.matches('^(a+)+b$')", None),          # RE2 in the runtime: linear, no verdict stall
    ("self.matches('(?=a)')", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"),
    ("self.find('(?=a)') == ''", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"),
    ("self.findAll('a[').size() == 0", "error parsing regexp: missing closing ]: `[`"),
])
def test_regular_expressions_in_rules_run_as_go_and_fail_in_gos_words(rule: str, message: Any) -> None:
    """matches() runs on the C++ RE2 of the runtime, find/findAll on kzgit.gore: both linear,
    a pattern Go refuses reported in Go's words, as cel-go's would be (issue 32)."""
    got, err = cel_k8s.evaluate(cel_k8s.compile_expression(rule), "a" * 50_000)
    assert err == message
    if message is None:
        assert got is False


def test_rules_using_the_rewritten_pieces_run_on_resources() -> None:
    # two-variable comprehensions, the format library, sortBy and indexOf on lists
    # (kzgit.validate.celrewrite), on a resource as the API server runs them (issue 33 item 5)
    rules = [{"rule": "self.items.all(i, v, i == 0 || v != self.items[i - 1])", "message": "no repeats"},
             {"rule": "!format.dns1123Label().validate(self.__namespace__).hasValue()",
              "messageExpression": "format.dns1123Label().validate(self.__namespace__).value().join(', ')"},
             {"rule": "self.items.sortBy(x, x) == self.items", "message": "sorted"},
             {"rule": "self.items.indexOf('last') < 0 || self.items.indexOf('last') == size(self.items) - 1",
              "message": "last goes last"}]
    # bounded, or the API server refuses the comparison of every item with the one before
    # as too costly (kzgit.validate.celcost)
    props = {"namespace": {"type": "string", "maxLength": 63},
             "items": {"type": "array", "maxItems": 16, "items": {"type": "string", "maxLength": 63}}}
    assert _run(rules, {"namespace": "ns-1", "items": ["a", "b", "last"]}, props) == []
    got = _run(rules, {"namespace": "NS", "items": ["b", "b", "last", "a"]}, props)
    assert [(c, p) for c, p, _ in got] == [("cel", "/spec")] * 4
    assert [m for _, _, m in got] == [
        "no repeats",
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
        "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        "sorted", "last goes last"]


def test_a_rule_reading_a_date_time_is_not_evaluated() -> None:
    # the API server gives CEL a timestamp for a date-time string; the runtime's binding takes
    # none, so such a rule is a warning (kzgit cannot evaluate it), never a false finding
    props = {"when": {"type": "string", "format": "date-time"}, "min": {"type": "integer"}}
    rules = [{"rule": "self.when < timestamp('2030-01-01T00:00:00Z')"}, {"rule": "self.min > 0"}]
    got = _run(rules, {"when": "2031-01-01T00:00:00Z", "min": 0}, props)
    assert got == [("cel", "/spec", "failed rule: self.min > 0"),
                   ("cel-skipped", "", "1 of 2 CEL rules not evaluated: 1 rule using what kzgit's CEL does "
                                       "not implement (see the CustomResourceDefinition's findings)")]


def test_a_field_of_format_byte_is_bytes() -> None:
    # k8s.io/apiserver pkg/cel/common/schemas.go: format byte is CEL's bytes (decoded)
    props = {"data": {"type": "string", "format": "byte"}}
    rules = [{"rule": "self.data == b'hello' && size(self.data) == 5", "message": "m"}]
    assert _run(rules, {"data": "aGVsbG8="}, props) == []
    assert _run(rules, {"data": "aGVsbG8h"}, props) == [("cel", "/spec", "m")]
