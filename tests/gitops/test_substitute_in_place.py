"""Post-build substitution without the text round trip (flux._substituted_in_place) gives what
the round trip gives (the resource's YAML written, substituted as text, read back as YAML 1.1),
types and key order included, or declines: compared over tables of awkward values and a few
thousand generated resources."""
from __future__ import annotations

import random
from typing import Any, Dict, List, Optional, Tuple

import pytest

from kzgit.errors import KzgitError
from kzgit.gitops import envsubst, flux
from kzgit.yamlio import dump, load_yaml11

VARIABLES = {"A": "2", "B": "1.5", "C": "yes", "D": "x:", "E": "a b", "F": "", "G": "~",
             "H": "0x10", "I": "2024-01-01", "J": "v1.2.3", "K": "-5", "L": "--", "M": "=",
             "N": "null", "O": "0o17", "P": "1_000", "Q": "1e3", "R": ".5", "S": "+1",
             "T": "#x", "U": "-", "V": "ghcr.io/acme/app:1.2", "W": "true", "X": "1:20",
             "Y": "'q'", "Z": "a,b", "AA": "[1]", "AB": "{a: 1}", "AC": "!x", "AD": "*a",
             "AE": "&a", "AF": "%x", "AG": "@x", "AH": "`x", "AI": "x\ty", "AJ": "é",
             "AK": "0", "AL": "-0", "AM": "007", "AN": "1.0.0", "AO": "<<", "AP": "off"}

STRINGS = ["yes", "8080", "1.0", "10Mi", "-1", "0x1F", "1:20", "2024-01-01", "a: b", " lead",
           "trail ", "", "~", "null", "=", "<<", "web", "/data", "http://h:80/x", "a #b",
           "multi\nline", "tab\there", "ünï", "v1.2.3", "-", "--x", ".5", "+1", "On", "Y",
           "${A}", "${A:=1}", "x${A}y", "${B:-}", "$A", "${A", "$$A", "a$", "http://${V}/x",
           "${C}", "${D}", "${E}", "${F}", "${G}", "${H}", "${I}", "${J}", "${K}", "${L}",
           "${M}", "${N}", "${O}", "${P}", "${Q}", "${R}", "${S}", "${T}", "${U}", "${V}",
           "${W}", "${X}", "${Y}", "${Z}", "${AA}", "${AB}", "${AC}", "${AD}", "${AE}",
           "${AF}", "${AG}", "${AH}", "${AI}", "${AJ}", "${AK}", "${AL}", "${AM}", "${AN}",
           "${AO}", "${AP}", "${UNSET}", "${UNSET:-d}", "${UNSET:=7}", "pre-${A}-${K}",
           "${A}${K}", "${J}:${A}", "$", "a $A", "${A} b", "${A^^}", "${J#v}", "${V/:/_}"]
KEYS = ["a", "b", "replicas", "app.kubernetes.io/name", "8080", "x$y", "", "yes", "z"]
SCALARS: List[Any] = [0, 7, -3, 1 << 40, True, False, None, 1.5]


def lookup(name: str) -> Tuple[str, bool]:
    if name in VARIABLES:
        return VARIABLES[name], True
    return "", True   # not strict: an unset variable is empty


def round_trip(obj: Dict[str, Any]) -> Optional[Any]:
    """What flux.substitute's text path gives (None where it fails)."""
    text = dump(obj)
    try:
        out = envsubst.evaluate(text, lookup)
    except envsubst.SubstitutionError:
        return None
    if out == text:
        return obj
    try:
        return load_yaml11(out, "x")
    except KzgitError:
        return None


def same(a: Any, b: Any) -> bool:
    """Equal, with the same types and the same key order all the way down."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def check(obj: Dict[str, Any]) -> Optional[Any]:
    try:
        text = dump(obj)
    except KzgitError:
        return None   # not a resource a build gives
    assert text
    fast = flux._substituted_in_place(obj, lookup, "x")
    if fast is not None:
        want = round_trip(obj)
        assert want is not None and same(fast, want), (obj, fast, want)
    return fast


@pytest.mark.parametrize("value", STRINGS + SCALARS)
def test_each_value_alone(value: Any) -> None:
    for obj in ({"spec": {"v": value, "keep": "web", "n": 3}},
                {"spec": {"list": [value, "8080", "${A}"]}}):
        check(obj)


def test_what_it_does_in_place_on_the_common_shape() -> None:
    obj = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
           "spec": {"replicas": "${A:=1}", "template": {"spec": {"containers": [
               {"image": "${V}", "name": "app", "ports": [{"containerPort": 8080}],
                "resources": {"limits": {"memory": "128Mi", "cpu": "500m"}}}]}}}}
    got = check(obj)
    assert got is not None, "the common shape goes without the round trip"
    assert got["spec"]["replicas"] == 2 and type(got["spec"]["replicas"]) is int
    assert got["spec"]["template"]["spec"]["containers"][0]["image"] == "ghcr.io/acme/app:1.2"
    assert obj["spec"]["replicas"] == "${A:=1}", "the resource given is not changed"


def test_a_shared_label_value_comes_back_a_string_of_its_own() -> None:
    from kzgit.yamlio.tree import SharedStr
    shared = SharedStr("web")
    obj = {"metadata": {"labels": {"tier": shared}}, "spec": {"replicas": "${A}",
                                                               "selector": {"tier": shared}}}
    got = check(obj)
    assert got is not None and got["spec"]["replicas"] == 2
    assert type(got["metadata"]["labels"]["tier"]) is str
    assert got["metadata"]["labels"]["tier"] is not shared


@pytest.mark.parametrize("value", ["${A", "a$", "$", "multi\n${A}", "a ${A}", "${D}", "${E}",
                                   "${T}", "${Y}", "${AA}", "${AI}", "${AJ}"])
def test_what_it_leaves_to_the_round_trip(value: str) -> None:
    assert flux._substituted_in_place({"v": value}, lookup, "x") is None


def test_generated_resources() -> None:
    rng = random.Random(35)
    went = 0

    def value(depth: int) -> Any:
        roll = rng.random()
        if depth < 3 and roll < 0.15:
            return {rng.choice(KEYS): value(depth + 1) for _ in range(rng.randint(0, 3))}
        if depth < 3 and roll < 0.25:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        if roll < 0.4:
            return rng.choice(SCALARS)
        return rng.choice(STRINGS)
    for _ in range(3000):
        obj = {rng.choice(KEYS): value(0) for _ in range(rng.randint(1, 4))}
        if check(obj) is not None:
            went += 1
    assert went > 300, "the in-place way covers a good share of them"


@pytest.mark.parametrize("node,want", [
    ({"a": "x"}, False), ({"a": "${X}"}, True), ({"$a": 1}, True), ({1: "b", False: None}, False),
    ({"a": [1, 2.5, None, {"b": "c$"}]}, True), ([], False), ("$", True), (3, False),
    ({("t",): "x$"}, True),   # a key JSON cannot write: walked instead
    ({"a": b"$"}, False),     # bytes are no string of the object: neither way reads them
])
def test_has_dollar_reads_the_json_text_as_the_walk_reads_the_object(node: Any, want: bool) -> None:
    assert flux._has_dollar(node) is want
    assert flux._walk_has_dollar(node) is want
