"""``kzgit validate``: findings placed in files, formats, configuration and flags, exit codes."""
from __future__ import annotations

import io
import shutil
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from helpers import WEB_DEPLOYMENT, git_tree
from kzgit.cli.main import main

DEPLOY = WEB_DEPLOYMENT + """        ports:
        - containerPort: 80
"""
TREE: Dict[str, str] = {
    "base/kustomization.yaml": "resources:\n- deploy.yaml\n",
    "base/deploy.yaml": DEPLOY,
    "overlays/prod/kustomization.yaml": "resources:\n- ../../base\nnamePrefix: prod-\nnamespace: shop\n",
}




def kzgit(root: Path, *argv: str, monkeypatch: pytest.MonkeyPatch,
          capsys: pytest.CaptureFixture[str]) -> Tuple[int, str, str]:
    monkeypatch.chdir(root)
    rc = main(["validate", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    def go(root: Path, *argv: str) -> Tuple[int, str, str]:
        return kzgit(root, *argv, monkeypatch=monkeypatch, capsys=capsys)
    return go


def test_valid_tree_exits_0_silently(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    assert run(git_tree(tmp_path, TREE), "--all") == (0, "", "")


def test_type_error_names_root_resource_path_and_line(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    git_tree(tmp_path, {**TREE, "base/deploy.yaml": DEPLOY.replace("containerPort: 80", 'containerPort: "80"')})
    rc, out, _ = run(tmp_path / "overlays/prod")
    assert rc == 1
    assert out == ("overlays/prod: Deployment/shop/prod-web: /spec/template/spec/containers/0/ports/0/"
                   'containerPort: expected integer, got string "80" (base/deploy.yaml:17)\n')


def test_field_set_by_a_json6902_patch_names_the_patch(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    git_tree(tmp_path, {**TREE, "overlays/prod/kustomization.yaml": TREE["overlays/prod/kustomization.yaml"] +
                    "patches:\n- path: ops.yaml\n  target: {kind: Deployment}\n",
                    "overlays/prod/ops.yaml": "- op: add\n  path: /spec/paused\n  value: maybe\n"})
    rc, out, _ = run(tmp_path, "overlays/prod")
    assert rc == 1
    assert 'overlays/prod: Deployment/shop/prod-web: /spec/paused: expected boolean, got string "maybe" ' \
           "(overlays/prod/ops.yaml:2)" in out


def test_inline_patch_names_the_kustomization(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    git_tree(tmp_path, {**TREE, "overlays/prod/kustomization.yaml": TREE["overlays/prod/kustomization.yaml"] +
                    "patches:\n- patch: |-\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata:\n"
                    "      name: web\n    spec:\n      minReadySecond: 5\n"})
    rc, out, _ = run(tmp_path, "overlays/prod")
    assert rc == 1
    assert '/spec/minReadySecond: unknown field "minReadySecond" (did you mean "minReadySeconds"?) ' \
           "(overlays/prod/kustomization.yaml:12)" in out


def test_strict_from_config_and_flag_wins(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    git_tree(tmp_path, {**TREE, "base/deploy.yaml": DEPLOY.replace("  replicas: 1", "  replica: 1"),
                    ".kzgit.toml": "[validate]\nstrict = false\n"})
    assert run(tmp_path, "--all")[0] == 0
    rc, out, _ = run(tmp_path, "--all", "--strict")
    assert rc == 1 and '/spec/replica: unknown field "replica"' in out
    (tmp_path / ".kzgit.toml").unlink()
    (tmp_path / "pyproject.toml").write_text("[tool.kzgit.validate]\nstrict = true\n")
    assert run(tmp_path, "--all")[0] == 1
    assert run(tmp_path, "--all", "--no-strict")[0] == 0


def test_skip_kinds_and_the_opt_out_annotation(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    bad = DEPLOY.replace("  replicas: 1", "  replicas: many")
    git_tree(tmp_path, {**TREE, "base/deploy.yaml": bad})
    assert run(tmp_path, "--all")[0] == 1
    assert run(tmp_path, "--all", "--skip-kinds", "Service,Deployment")[0] == 0
    assert run(tmp_path, "--all", "--skip-kinds", "apps/v1/Deployment")[0] == 0
    git_tree(tmp_path, {"base/deploy.yaml": bad.replace("  name: web\n", "  name: web\n  annotations:\n"
                                                    "    kzgit.io/validate: \"false\"\n")})
    assert run(tmp_path, "--all") == (0, "", "")


def test_missing_schemas_modes(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    thing = "apiVersion: other.io/v1\nkind: Thing\nmetadata:\n  name: t{}\n"
    git_tree(tmp_path, {"app/kustomization.yaml": "resources:\n- a.yaml\n- b.yaml\n",
                    "app/a.yaml": thing.format(1), "app/b.yaml": thing.format(2)})
    rc, out, _ = run(tmp_path, "--all")
    assert (rc, out) == (0, "app: Thing/t1: warning: no schema for Thing other.io/v1 (app/a.yaml:1)\n")  # once per kind
    rc, out, _ = run(tmp_path, "--all", "--missing-schemas", "error")
    assert rc == 1 and out.count("no schema for Thing") == 2
    assert run(tmp_path, "--all", "--missing-schemas", "skip") == (0, "", "")


def test_crd_file_and_schema_location(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    crd = ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gadgets.x.io\n"
           "spec:\n  group: x.io\n  names: {kind: Gadget, plural: gadgets}\n  scope: Namespaced\n  versions:\n"
           "  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n"
           "        type: object\n        properties:\n          spec:\n            type: object\n"
           "            properties:\n              n: {type: integer}\n")
    git_tree(tmp_path, {"app/kustomization.yaml": "resources:\n- g.yaml\n- s.yaml\n",
                    "app/g.yaml": "apiVersion: x.io/v1\nkind: Gadget\nmetadata:\n  name: g\nspec:\n  n: two\n",
                    "app/s.yaml": "apiVersion: y.io/v2\nkind: Sprocket\nmetadata:\n  name: s\nteeth: many\n",
                    "defs/gadget.yaml": crd,
                    "schemas/y.io/sprocket_v2.json": json.dumps(
                        {"type": "object", "properties": {"teeth": {"type": "integer"}}})})
    rc, out, _ = run(tmp_path, "--all", "--crd", "defs", "--schema-location",
                     "schemas/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json")
    assert rc == 1
    assert out.splitlines() == [
        'app: Gadget/g: /spec/n: expected integer, got string "two" (app/g.yaml:6)',
        'app: Sprocket/s: /teeth: expected integer, got string "many" (app/s.yaml:5)']


@pytest.mark.parametrize("argv,files,message", [
    (["--kubernetes-version", "1.12"], {}, "--kubernetes-version: unknown Kubernetes version '1.12'"),
    ([], {".kzgit.toml": '[validate]\nkubernetes-version = "2.0"\n'},
     ".kzgit.toml: validate.kubernetes-version: unknown Kubernetes version '2.0'"),
    ([], {".kzgit.toml": '[validate]\nmissing-schemas = "maybe"\n'}, "bad value for 'validate.missing-schemas'"),
    (["--schema-location", "schemas/{{.Nope}}.json"], {"schemas/x": ""}, "unknown template name {{.Nope}}"),
    (["--schema-location", "schemas"], {"schemas/x": ""}, "'schemas' names no schema file"),
    (["--schema-location", "nowhere/{{.ResourceKind}}.json"], {}, "directory 'nowhere' does not exist"),
    (["--crd", "crd.yaml"], {"crd.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
                             "metadata:\n  name: a.b\nspec:\n  group: b\n  names: {kind: A}\n"
                             "  versions:\n  - name: v1\n    served: true\n"},
     "crd.yaml: CustomResourceDefinition a.b: version v1 has no schema.openAPIV3Schema"),
    (["--crd", "missing.yaml"], {}, "crds: missing.yaml: no such file or directory"),
])
def test_bad_configuration_exits_2_naming_it(tmp_path: Path, run, argv: List[str],  # type: ignore[no-untyped-def]
                                             files: Dict[str, str], message: str) -> None:
    git_tree(tmp_path, {**TREE, **files})
    rc, out, err = run(tmp_path, "--all", *argv)
    assert rc == 2, (out, err)
    assert message in err and "Traceback" not in err


def test_bad_schema_file_exits_2(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    git_tree(tmp_path, {"app/kustomization.yaml": "resources:\n- s.yaml\n",
                    "app/s.yaml": "apiVersion: y.io/v2\nkind: Sprocket\nmetadata:\n  name: s\n",
                    "schemas/sprocket.json": "{not json"})
    rc, _, err = run(tmp_path, "--all", "--schema-location", "schemas/{{.ResourceKind}}.json")
    assert rc == 2 and "schemas/sprocket.json: not a JSON or YAML schema" in err


def test_not_rendering_root_is_a_finding(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    git_tree(tmp_path, {"app/kustomization.yaml": "resources:\n- gone.yaml\n"})
    rc, out, _ = run(tmp_path, "--all")
    assert rc == 1 and out.startswith("app: does not render: ")


def test_formats(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    git_tree(tmp_path, {**TREE, "base/deploy.yaml": DEPLOY.replace("  replicas: 1", "  replica: 1")})
    rc, out, _ = run(tmp_path, "--all", "--format", "json")
    doc = json.loads(out)
    assert rc == 1 and doc["version"] == 1 and doc["valid"] is False and doc["strict"] is True
    assert doc["summary"] == {"roots": 1, "resources": 1, "errors": 1, "warnings": 0, "silenced": 0}
    assert doc["findings"] == [{
        "root": "overlays/prod", "severity": "error", "code": "unknown-field",
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "prod-web"},
        "path": "/spec/replica", "message": 'unknown field "replica" (did you mean "replicas"?)',
        "file": "base/deploy.yaml", "line": 6}]
    rc, out, _ = run(tmp_path, "--all", "--format", "github")
    assert out == ("::error file=base/deploy.yaml,line=6,title=kzgit validate%3A overlays/prod::"
                   'Deployment/shop/prod-web: /spec/replica: unknown field "replica" (did you mean "replicas"?)\n')
    rc, _, _ = run(tmp_path, "--all", "--format", "junit", "--output", str(tmp_path / "report.xml"))
    suites = ET.parse(tmp_path / "report.xml").getroot()
    assert rc == 1 and suites.get("failures") == "1"
    case = suites.find("testsuite/testcase")
    assert case is not None and case.get("name") == "Deployment/shop/prod-web"
    assert case.find("failure") is not None


def test_manifests_file_and_stdin(tmp_path: Path, run, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "all.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: 1\n")
    rc, out, _ = run(tmp_path, "--manifests", "all.yaml")
    assert (rc, out) == (1, "all.yaml: ConfigMap/a: /data/k: expected string, got integer 1 (all.yaml:6)\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"apiVersion: v1\nkind: ConfigMap\n"
                                                                   b"metadata:\n  name: a\n")))
    assert run(tmp_path, "--manifests", "-") == (0, "", "")


def test_roots_of_the_current_directory(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    git_tree(tmp_path, {**TREE, "other/kustomization.yaml": "resources:\n- cm.yaml\n",
                    "other/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: 1\n"})
    assert run(tmp_path / "overlays")[0] == 0
    assert run(tmp_path)[0] == 1
    rc, _, err = run(tmp_path / "base" / ".." / "overlays" / "prod" / "..", "nowhere")
    assert rc == 2


def test_help_names_the_default_release() -> None:
    from kzgit.validate.kubernetes import newest
    out = subprocess.run([sys.executable, "-m", "kzgit", "validate", "--help"], capture_output=True, text=True,
                         timeout=60).stdout
    assert f"(default: {newest()};" in " ".join(out.split())


def test_the_parser_does_not_look_up_the_release() -> None:
    """Every ``kzgit hook`` run builds the parser that holds ``--kubernetes-version``: the
    bundled schemas are listed for ``--help`` only."""
    probe = ("import sys\nfrom kzgit.cli.main import make_parser\nmake_parser()\n"
             "print('kzgit.validate.kubernetes' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stdout.strip()) == (0, "False"), out.stderr


def test_parallel_renders_find_the_same(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    bad = DEPLOY.replace("  replicas: 1", "  replicas: many")
    git_tree(tmp_path, {**TREE, "base/deploy.yaml": bad,
                    "overlays/dev/kustomization.yaml": "resources:\n- ../../base\nnamePrefix: dev-\n"})
    one = run(tmp_path, "--all", "-j", "1")
    two = run(tmp_path, "--all", "-j", "2")
    assert one[0] == two[0] == 1 and sorted(one[1].splitlines()) == sorted(two[1].splitlines())
    assert len(one[1].splitlines()) == 2 and "(base/deploy.yaml:6)" in one[1]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_external_engine_output_is_validated(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    git_tree(tmp_path, {**TREE, "base/deploy.yaml": DEPLOY.replace("  replicas: 1", "  replicas: many")})
    rc, out, _ = run(tmp_path, "overlays/prod", "--engine", "kubectl")
    assert rc == 1
    assert out == 'overlays/prod: Deployment/shop/prod-web: /spec/replicas: expected integer, got string "many"\n'


def test_a_rendered_crd_without_schema_is_no_error(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    # a root elsewhere in the repository (a test fixture, say) renders a CRD that gives no
    # schema: the other roots still validate, and its own custom resource has no schema
    no_schema = ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
                 "metadata:\n  name: as.b\nspec:\n  group: b\n  names: {kind: A}\n"
                 "  versions:\n  - name: v1\n    served: true\n")
    git_tree(tmp_path, {**TREE, "fixture/kustomization.yaml": "resources:\n- crd.yaml\n- a.yaml\n",
                    "fixture/crd.yaml": no_schema,
                    "fixture/a.yaml": "apiVersion: b/v1\nkind: A\nmetadata:\n  name: a\n"})
    assert run(tmp_path, "overlays/prod")[0] == 0
    rc, _, err = run(tmp_path, "fixture", "--missing-schemas", "error")
    assert rc == 1 and "Traceback" not in err


def test_a_root_naming_a_nul_path_is_no_crash(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    # every root's files are read to find the CRDs; one naming an impossible path is skipped
    git_tree(tmp_path, {**TREE, "odd/kustomization.yaml": 'resources:\n- "x\\0y.yaml"\n'})
    rc, _, err = run(tmp_path, "overlays/prod")
    assert rc == 0 and "Traceback" not in err, err


@pytest.mark.parametrize("comment, silenced", [
    ("# kzgit: ignore[validate]", True), ("# kzgit: ignore[other, type]", True),
    ("# kzgit: ignore[pattern]", False), ("# a comment", False),
])
def test_an_ignore_comment_on_the_findings_line_silences_it(tmp_path: Path, run, comment: str,  # type: ignore[no-untyped-def]
                                                            silenced: bool) -> None:
    """Per finding, as lint's ``# kzgit: ignore[rule]`` (issue 33 item 6): ``validate`` or the
    finding's code; the run says how many it silenced."""
    git_tree(tmp_path, {**TREE, "base/deploy.yaml": DEPLOY.replace(
        "containerPort: 80", f'containerPort: "80"  {comment}')})
    rc, out, _ = run(tmp_path, "--all")
    if silenced:
        assert (rc, out) == (0, "1 finding silenced by ignore comments\n")
        rc, out, _ = run(tmp_path, "--all", "--format", "json")
        assert json.loads(out)["summary"]["silenced"] == 1
    else:
        assert rc == 1 and "containerPort" in out and "silenced" not in out
