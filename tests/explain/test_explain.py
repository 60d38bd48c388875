"""``kzgit explain``: every step of a layered build named with its file and line, values that are
kubectl's, the rendering unchanged (``--annotate``), the JSON form, and errors.

The tree is built so that the expected chain of each field is known by construction: a base, a
component and an overlay, with a patch file, a JSON 6902 patch, an inline patch, images,
replicas, a replacement, a name prefix, labels, a generator merged by the overlay and the hash
suffix its references follow."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest
import yaml

from helpers import oracle, write_tree
from kzgit.cli.main import main
from kzgit.explain import explain
from kzgit.trace import TRACER

TREE: Dict[str, str] = {
    "base/kustomization.yaml": (
        "resources:\n"                                   # 1
        "- deploy.yaml\n"                                # 2
        "configMapGenerator:\n"                          # 3
        "- name: app\n"                                  # 4
        "  literals:\n"                                  # 5
        "  - LOG=info\n"                                 # 6
        "  - MODE=base\n"),                              # 7
    "base/deploy.yaml": (
        "apiVersion: apps/v1\n"                          # 1
        "kind: Deployment\n"                             # 2
        "metadata:\n"                                    # 3
        "  name: web\n"                                  # 4
        "spec:\n"                                        # 5
        "  replicas: 1\n"                                # 6
        "  template:\n"                                  # 7
        "    spec:\n"                                    # 8
        "      containers:\n"                            # 9
        "      - name: web\n"                            # 10
        "        image: nginx:1.25\n"                    # 11
        "        envFrom:\n"                             # 12
        "        - configMapRef:\n"                      # 13
        "            name: app\n"                        # 14
        "      - name: side\n"                           # 15
        "        image: busybox\n"                       # 16
        "        args: [base]\n"),                       # 17
    "comp/kustomization.yaml": (
        "apiVersion: kustomize.config.k8s.io/v1alpha1\n" # 1
        "kind: Component\n"                              # 2
        "patches:\n"                                     # 3
        "- patch: |-\n"                                  # 4
        "    apiVersion: apps/v1\n"                      # 5
        "    kind: Deployment\n"                         # 6
        "    metadata:\n"                                # 7
        "      name: web\n"                              # 8
        "    spec:\n"                                    # 9
        "      revisionHistoryLimit: 3\n"),              # 10
    "prod/kustomization.yaml": (
        "resources:\n"                                   # 1
        "- ../base\n"                                    # 2
        "components:\n"                                  # 3
        "- ../comp\n"                                    # 4
        "namePrefix: prod-\n"                            # 5
        "labels:\n"                                      # 6
        "- pairs: {tier: web}\n"                         # 7
        "configMapGenerator:\n"                          # 8
        "- name: app\n"                                  # 9
        "  behavior: merge\n"                            # 10
        "  literals:\n"                                  # 11
        "  - MODE=prod\n"                                # 12
        "patches:\n"                                     # 13
        "- path: replicas.yaml\n"                        # 14
        "- path: ops.yaml\n"                             # 15
        "  target: {kind: Deployment}\n"                 # 16
        "images:\n"                                      # 17
        "- name: nginx\n"                                # 18
        "  newTag: '1.27'\n"                             # 19
        "replacements:\n"                                # 20
        "- source: {kind: ConfigMap, name: app, fieldPath: data.MODE}\n"   # 21
        "  targets:\n"                                   # 22
        "  - select: {kind: Deployment}\n"               # 23
        "    fieldPaths:\n"                               # 24
        "    - spec.template.spec.containers.[name=side].args.0\n"),   # 25
    "prod/replicas.yaml": (
        "apiVersion: apps/v1\n"                          # 1
        "kind: Deployment\n"                             # 2
        "metadata:\n"                                    # 3
        "  name: web\n"                                  # 4
        "spec:\n"                                        # 5
        "  replicas: 5\n"),                              # 6
    "prod/ops.yaml": (
        "- op: add\n"                                    # 1
        "  path: /spec/paused\n"                         # 2
        "  value: true\n"),                              # 3
}


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = write_tree(tmp_path / "t", TREE)
    monkeypatch.chdir(root)
    return root


def _record(got: Any, resource: str, path: str) -> Dict[str, Any]:
    for r in got.records:
        if r.resource == resource and r.path == path:
            return r.to_json()
    raise AssertionError(f"no record {resource} {path}: {[x.path for x in got.records][:50]}")


def _steps(rec: Dict[str, Any]) -> List[tuple]:
    return [(s["kind"], s["file"], s["line"], s["kustomization"]) for s in rec["steps"]]


DEPLOY = "Deployment/prod-web"


def test_each_layer_is_named_with_file_line_and_the_entry_that_brought_it(tree: Path) -> None:
    got = explain("prod")
    k = "prod/kustomization.yaml"
    assert _steps(_record(got, DEPLOY, "spec.replicas")) == [
        ("resource", "base/deploy.yaml", 6, "base/kustomization.yaml:2"),
        ("patch", "prod/replicas.yaml", 6, f"{k}:14")]
    assert _steps(_record(got, DEPLOY, "spec.paused")) == [("patch", "prod/ops.yaml", 2, f"{k}:15")]
    assert _steps(_record(got, DEPLOY, "spec.revisionHistoryLimit")) == [
        ("patch", "comp/kustomization.yaml", 4, "comp/kustomization.yaml:4")]
    image = _record(got, DEPLOY, "spec.template.spec.containers.[name=web].image")
    assert image["value"] == "nginx:1.27"
    assert _steps(image) == [("resource", "base/deploy.yaml", 11, "base/kustomization.yaml:2"),
                             ("images", k, 18, f"{k}:18")]
    name = _record(got, DEPLOY, "metadata.name")
    assert name["value"] == "prod-web" and _steps(name)[-1] == ("namePrefix", k, 5, f"{k}:5")
    assert _steps(_record(got, DEPLOY, "metadata.labels.tier")) == [("labels", k, 7, f"{k}:7")]
    arg = _record(got, DEPLOY, "spec.template.spec.containers.[name=side].args.0")
    assert arg["value"] == "prod"
    assert _steps(arg)[-1] == ("replacements", k, 23, f"{k}:21")
    assert "from ConfigMap/app data.MODE" in arg["steps"][-1]["detail"]


def test_generated_names_merges_and_the_hash_suffix(tree: Path) -> None:
    got = explain("prod")
    cms = [r.resource for r in got.records if r.resource.startswith("ConfigMap/")]
    cm = cms[0]
    assert cm.startswith("ConfigMap/prod-app-")
    mode = _record(got, cm, "data.MODE")
    assert mode["value"] == "prod"
    assert _steps(mode) == [("generator", "base/kustomization.yaml", 7, "base/kustomization.yaml:4"),
                            ("generator", "prod/kustomization.yaml", 12, "prod/kustomization.yaml:9")]
    assert _steps(_record(got, cm, "data.LOG")) == [
        ("generator", "base/kustomization.yaml", 6, "base/kustomization.yaml:4")]
    assert [s[0] for s in _steps(_record(got, cm, "metadata.name"))] == ["generator", "namePrefix", "hashSuffix"]
    ref = _record(got, DEPLOY, "spec.template.spec.containers.[name=web].envFrom.0.configMapRef.name")
    assert ref["value"] == cm.split("/")[-1]
    assert [s[0] for s in _steps(ref)] == ["resource", "nameReference"]


def test_every_value_named_is_the_value_kubectl_renders(tree: Path) -> None:
    kubectl = oracle("KZGIT_ORACLE_KUBECTL_1_36")
    out = subprocess.run([kubectl, "kustomize", "prod"], capture_output=True, text=True, check=True,
                         timeout=120).stdout
    docs = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(out)}
    got = explain("prod")
    assert got.records
    for r in got.records:
        kind, name = r.resource.split("/")[0], r.resource.split("/")[-1]
        node: Any = docs[(kind, name)]
        for part in _parts(r.path):
            if isinstance(node, list):
                if part.startswith("[name="):
                    node = next(x for x in node if x.get("name") == part[6:-1])
                else:
                    node = node[int(part)]
            else:
                node = node[part]
        assert node == r.value, (r.resource, r.path)


def _parts(path: str) -> List[str]:
    """Split a field path at dots outside ``[...]`` (a label key holds dots: app.kubernetes.io/x)."""
    out, cur, depth = [], "", 0
    for c in path:
        if c == "." and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += c == "["
        depth -= c == "]"
        cur += c
    return out + [cur]


def test_annotate_is_the_build_byte_for_byte_with_comments(tree: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "prod"]) == 0
    built = capsys.readouterr().out
    assert main(["explain", "prod", "--annotate"]) == 0
    annotated = capsys.readouterr().out
    lines = annotated.split("\n")
    assert "\n".join(ln.split("  # ")[0] for ln in lines) == built
    assert "  replicas: 5  # prod/replicas.yaml:6" in lines
    assert "    app.kubernetes.io/name" not in annotated   # no label the tree does not set


def test_json_form_and_one_resource_one_field(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "prod", DEPLOY, "spec.replicas", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == {"records": [{"resource": DEPLOY, "path": "spec.replicas", "value": 5, "steps": [
        {"kind": "resource", "file": "base/deploy.yaml", "line": 6, "kustomization": "base/kustomization.yaml:2"},
        {"kind": "patch", "file": "prod/replicas.yaml", "line": 6, "kustomization": "prod/kustomization.yaml:14",
         "detail": "patches[0]"}]}]}
    assert main(["explain", "prod", DEPLOY, "spec.template.spec.containers"]) == 0   # a subtree
    out = capsys.readouterr().out
    assert "[name=web].image: nginx:1.27" in out and "[name=side].args.0: prod" in out


@pytest.mark.parametrize("argv, words", [
    (["Deployment/nope"], "no resource 'Deployment/nope'"),
    ([DEPLOY, "spec.nothing"], "no field 'spec.nothing'"),
])
def test_an_unknown_resource_or_field_is_a_usage_error_naming_what_exists(
        tree: Path, capsys: pytest.CaptureFixture[str], argv: List[str], words: str) -> None:
    assert main(["explain", "prod", *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_a_build_error_is_the_builds(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "prod" / "replicas.yaml").unlink()
    assert main(["explain", "prod"]) == 1
    assert "patches[0].path: 'replicas.yaml' does not exist" in capsys.readouterr().err


def test_a_plugin_made_value_says_it_cannot_be_traced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fn = write_tree(tmp_path / "p", {
        "fn.sh": ("#!/bin/sh\ncat <<'EOF'\napiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"
                  "items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: gen}\n  data: {v: one}\nEOF\n"),
        "gen.yaml": ("apiVersion: example.com/v1\nkind: Gen\nmetadata:\n  name: g\n  annotations:\n"
                     "    config.kubernetes.io/function: |\n      exec:\n        path: ./fn.sh\n"),
        "kustomization.yaml": "generators:\n- gen.yaml\n"})
    os.chmod(fn / "fn.sh", 0o755)
    monkeypatch.chdir(fn)
    from kzgit.options import BuildOptions
    got = explain(".", BuildOptions(enable_alpha_plugins=True, enable_exec=True))
    rec = _record(got, "ConfigMap/gen", "data.v")
    assert rec["steps"][-1]["kind"] == "cannot trace" and "the plugin gen.yaml" in rec["steps"][-1]["detail"]


def test_the_tracer_is_off_after_explain_and_a_plain_build_records_nothing(tree: Path) -> None:
    explain("prod")
    assert TRACER.get() is None
