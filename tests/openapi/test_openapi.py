"""The OpenAPI facts SMP reads: builtin data, custom schemas, crds: field specs."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterator, List

import pytest
import yaml

import kzgit.openapi as oa
from kzgit.openapi._index import Definitions
from kzgit.errors import BuildError
from kzgit.patch.smp import merge
from helpers import TESTS

DATA = TESTS / "data" / "patch"
OPENAPI_DIR = Path(oa.__file__).parent


@pytest.fixture(autouse=True)
def _reset() -> Iterator[None]:
    oa.reset_schema()
    yield
    oa.reset_schema()


def _lookup(av: str, kind: str, *path: str) -> oa.Schema:
    s = oa.schema_for(av, kind)
    assert s is not None
    for p in path:
        s = s.items() if p == "[]" else s.field(p)
        assert s is not None, p
    return s


def test_data_file_checksum_and_provenance() -> None:
    data = (OPENAPI_DIR / "k8s-1.21.json").read_bytes()
    recorded = (OPENAPI_DIR / "k8s-1.21.json.sha256").read_text().split()[0]
    assert hashlib.sha256(data).hexdigest() == recorded
    assert len(data) < 500_000
    prov = json.loads(data)["provenance"]
    assert prov["package"] == "kubernetes-validate" and prov["version"] == "1.21.0"
    assert prov["file"].endswith("v1.21.0-local/_definitions.json")
    assert len(prov["file_sha256"]) == 64


@pytest.mark.parametrize(
    "av, kind, path, expected",
    [
        ("apps/v1", "Deployment", ("spec", "template", "spec", "containers"), ("merge", ["name"])),
        ("apps/v1", "Deployment", ("spec", "template", "spec", "containers", "[]", "ports"),
         ("merge", ["containerPort", "protocol"])),
        ("apps/v1", "Deployment", ("spec", "template", "spec", "volumes"),
         ("merge,retainKeys", ["name"])),
        ("apps/v1", "Deployment", ("spec", "template", "spec", "containers", "[]", "volumeMounts"),
         ("merge", ["mountPath"])),
        ("v1", "Pod", ("metadata", "finalizers"), ("merge", [])),
        ("v1", "Pod", ("spec", "tolerations"), ("", [])),
        ("v1", "Service", ("spec", "ports"), ("merge", ["port", "protocol"])),
        ("batch/v1", "CronJob",
         ("spec", "jobTemplate", "spec", "template", "spec", "initContainers"), ("merge", ["name"])),
        ("kustomize.config.k8s.io/v1beta1", "Kustomization", ("configMapGenerator",),
         ("merge", ["name"])),
    ],
)
def test_builtin_strategies(av: str, kind: str, path: List[str], expected: Any) -> None:
    assert _lookup(av, kind, *path).strategy_and_keys() == expected


def test_merge_list_detection_and_unknowns() -> None:
    assert _lookup("v1", "Pod", "spec", "volumes").is_merge_list()
    assert not _lookup("v1", "Pod", "spec", "tolerations").is_merge_list()
    assert oa.schema_for("example.com/v1", "Widget") is None
    assert _lookup("v1", "Pod", "spec").field("noSuchField") is None
    # items() only for arrays (ResourceSchema.Elements)
    assert _lookup("v1", "Pod", "spec").items() is None


def test_custom_schema_replaces_builtin_recorded_with_kubectl() -> None:
    d = DATA / "custom_openapi"
    oa.set_schema({"path": "schema.json"}, json.loads((d / "schema.json").read_text()),
                  "schema.json", reset=True)
    assert oa.schema_version() == "using custom schema from file provided"
    assert oa.schema_for("apps/v1", "Deployment") is None
    resources = list(yaml.safe_load_all((d / "res.yaml").read_text()))
    patches = list(yaml.safe_load_all((d / "p.yaml").read_text()))
    got = [merge(r, p) for r, p in zip(resources, patches)]
    expected = list(yaml.safe_load_all((d / "expected.yaml").read_text()))
    key = lambda o: (o["kind"], o["metadata"]["name"])  # noqa: E731
    assert sorted(got, key=key) == sorted(expected, key=key)
    oa.reset_schema()
    assert oa.schema_for("apps/v1", "Deployment") is not None


def test_set_schema_rules() -> None:
    oa.set_schema({"version": "v1.21.2"}, None, "k.yaml", reset=True)
    assert oa.schema_version() == "v1.21.2"
    with pytest.raises(BuildError, match="not built in"):
        oa.set_schema({"version": "v1.20.0"}, None, "k.yaml", reset=True)
    oa.reset_schema()
    with pytest.raises(BuildError, match="cannot use both"):
        oa.set_schema({"version": "v1.21.2", "path": "s.json"}, {"definitions": {}}, "k.yaml",
                      reset=True)
    # first set wins below the top kustomization (kusttarget.go accumulateDirectory)
    oa.reset_schema()
    oa.set_schema({"path": "a.json"}, {"definitions": {}}, "a", reset=False)
    oa.set_schema({"version": "v1.20.0"}, None, "b", reset=False)  # ignored, no error
    assert oa.schema_for("apps/v1", "Deployment") is None
    with pytest.raises(BuildError):
        oa.set_custom_schema(["not", "a", "map"], "x.json")
    # set_custom_schema(reset=False) also keeps an earlier choice
    oa.reset_schema()
    oa.set_schema({"version": "v1.21.2"}, None, "top", reset=True)
    oa.set_custom_schema({"definitions": {}}, "sub.json", reset=False)
    assert oa.schema_for("apps/v1", "Deployment") is not None


def test_crd_fieldspecs_recorded_with_kubectl() -> None:
    d = DATA / "crds"
    specs = oa.crd_fieldspecs(json.loads((d / "crds.json").read_text()))
    assert specs["commonLabels"] == [["", "", "MyKind", "spec/selector", False]]
    assert specs["commonAnnotations"] == [["", "", "MyKind", "spec/notes", False]]
    assert specs["namePrefix"] == []
    assert sorted(specs["nameReference"], key=lambda e: e["target"]) == [
        {"target": ["", "v1", "ConfigMap"],
         "referrers": [["", "", "MyKind", "spec/cmRef/cmName", False]]},
        {"target": ["", "v1", "Secret"],
         "referrers": [["", "", "MyKind", "spec/secretRef/name", False]]},
    ]
    # kubectl applied exactly those specs (see expected.yaml)
    out = {o["kind"]: o for o in yaml.safe_load_all((d / "expected.yaml").read_text())}
    spec = out["MyKind"]["spec"]
    assert spec == {"cmRef": {"cmName": "p-cm"}, "notes": {"a": "b"},
                    "secretRef": {"name": "p-sec"}, "selector": {"l": "v"}}


def test_crd_fieldspecs_ignores_non_k8s_types_and_cycles() -> None:
    doc = {
        "a.Loop": {"Schema": {"properties": {
            "kind": {}, "apiVersion": {}, "metadata": {},
            "self": {"$ref": "a.Loop", "x-kubernetes-annotation": ""}}}},
        "a.NotAType": {"schema": {"properties": {"x": {"x-kubernetes-label-selector": ""}}}},
    }
    specs = oa.crd_fieldspecs(doc)
    assert specs["commonLabels"] == []
    assert ["", "", "Loop", "self", False] in specs["commonAnnotations"]


def test_index_is_the_one_make_index_derives_from_the_document() -> None:
    from kzgit.openapi._index import make_index
    text = (OPENAPI_DIR / "k8s-1.21.json").read_text(encoding="utf-8")
    shipped = json.loads((OPENAPI_DIR / "k8s-1.21.index.json").read_text(encoding="utf-8"))
    assert shipped == make_index(text)   # else: python scripts/gen_openapi.py --index


def test_lazy_builtin_store_answers_as_the_whole_document() -> None:
    # each definition parsed from its span is the definition; every GVK finds the same node
    text = (OPENAPI_DIR / "k8s-1.21.json").read_text(encoding="utf-8")
    doc = json.loads(text)
    whole = oa._Store(doc["definitions"])
    indexed = oa._builtin_index()
    assert indexed is not None and indexed[1] == text
    lazy = oa._Store.lazy(*indexed)
    assert list(dict.keys(lazy.definitions)) == []          # nothing parsed yet
    assert isinstance(lazy.definitions, Definitions)
    for key, node in whole.by_type.items():
        assert lazy.by_type.get(key) == node, key
    for name, node in doc["definitions"].items():
        assert name in lazy.definitions and lazy.definitions.get(name) == node == lazy.definitions[name]
    assert lazy.definitions.get("no.such.Definition") is None and "no.such.Definition" not in lazy.definitions
    assert lazy.by_type.get(("no/v1", "Nothing")) is None


def test_added_definitions_win_over_the_lazy_builtin_ones() -> None:
    indexed = oa._builtin_index()
    assert indexed is not None
    lazy = oa._Store.lazy(*indexed)
    mine = {"io.k8s.api.apps.v1.Deployment": {"x-kubernetes-group-version-kind": [
        {"group": "apps", "kind": "Deployment", "version": "v1"}], "properties": {}}}
    lazy.add(mine)
    assert lazy.definitions.get("io.k8s.api.apps.v1.Deployment") == mine["io.k8s.api.apps.v1.Deployment"]
    assert lazy.by_type.get(("apps/v1", "Deployment")) == mine["io.k8s.api.apps.v1.Deployment"]


def test_an_index_of_another_document_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = json.loads((OPENAPI_DIR / "k8s-1.21.index.json").read_text(encoding="utf-8"))
    stale["crc32"] += 1
    (tmp_path / "index.json").write_text(json.dumps(stale), encoding="utf-8")
    monkeypatch.setattr(oa, "_INDEX_FILE", str(tmp_path / "index.json"))
    oa._builtin_index.cache_clear()
    oa._builtin_store.cache_clear()
    try:
        assert oa._builtin_index() is None
        assert not isinstance(oa._builtin_store().definitions, Definitions)
        assert _lookup("apps/v1", "Deployment", "spec", "template", "spec", "containers") is not None
    finally:
        oa._builtin_index.cache_clear()
        oa._builtin_store.cache_clear()
