"""``kzgit build -o DIR`` writes one file per resource with kustomize's file names."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kzgit.cli.main import main
from helpers import PROJECT

EXAMPLE = PROJECT / "examples" / "overlays" / "production"


def test_output_dir_names_and_content(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    assert main(["build", str(EXAMPLE), "-o", str(out)]) == 0
    names = sorted(os.listdir(out))
    assert names == ["apps_v1_deployment_prod-guestbook.yaml",
                     "v1_configmap_prod-guestbook-config-fc5fhh5b8k.yaml",
                     "v1_service_prod-guestbook.yaml"]
    expected = (PROJECT / "tests/fixtures/examples/production/expected.yaml").read_text()
    joined = "---\n".join((out / n).read_text() for n in
                          ["v1_configmap_prod-guestbook-config-fc5fhh5b8k.yaml",
                           "v1_service_prod-guestbook.yaml", "apps_v1_deployment_prod-guestbook.yaml"])
    assert joined == expected


def _same_files_as_kubectl(src: Path, tmp_path: Path) -> None:
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    mine.mkdir()
    theirs.mkdir()
    assert main(["build", str(src), "-o", str(mine)]) == 0
    subprocess.run(["kubectl", "kustomize", str(src), "-o", str(theirs)], check=True, timeout=120)
    assert sorted(os.listdir(mine)) == sorted(os.listdir(theirs))
    for n in os.listdir(mine):
        assert (mine / n).read_bytes() == (theirs / n).read_bytes()


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not on PATH: no differential check")
def test_output_dir_matches_kubectl(tmp_path: Path) -> None:
    _same_files_as_kubectl(EXAMPLE, tmp_path)


def test_output_file_is_atomic_and_complete(tmp_path: Path) -> None:
    target = tmp_path / "out.yaml"
    assert main(["build", str(EXAMPLE), "-o", str(target)]) == 0
    assert target.read_text() == (PROJECT / "tests/fixtures/examples/production/expected.yaml").read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["out.yaml"]


MIXED = {
    "kustomization.yaml": "resources:\n- r.yaml\n",
    "r.yaml": """kind: Namespace
apiVersion: v1
metadata:
  name: ns1
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: Cm
  namespace: ns1
data:
  z: "1"
  a: |
    multi
    line
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm2
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: cr
rules: []
""",
}


def _mixed_tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    for name, text in MIXED.items():
        (src / name).write_text(text)
    return src


def test_output_dir_names_with_cluster_scoped_and_namespaced(tmp_path: Path) -> None:
    # Recorded with kubectl v1.32.3 (Kustomize v5.5.0), the same with 1.33, 1.35 and 1.36:
    # only namespaced resources are prefixed, by their effective namespace ("default" when
    # none), and cluster-scoped ones count as no namespace (writer.go WriteIndividualFiles).
    out = tmp_path / "out"
    out.mkdir()
    assert main(["build", str(_mixed_tree(tmp_path)), "-o", str(out)]) == 0
    assert sorted(os.listdir(out)) == ["default_v1_configmap_cm2.yaml", "ns1_v1_configmap_cm.yaml",
                                       "rbac.authorization.k8s.io_v1_clusterrole_cr.yaml",
                                       "v1_namespace_ns1.yaml"]
    assert (out / "ns1_v1_configmap_cm.yaml").read_text() == (
        "apiVersion: v1\ndata:\n  a: |\n    multi\n    line\n  z: \"1\"\nkind: ConfigMap\n"
        "metadata:\n  name: Cm\n  namespace: ns1\n")


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not on PATH: no differential check")
def test_output_dir_mixed_scopes_matches_kubectl(tmp_path: Path) -> None:
    _same_files_as_kubectl(_mixed_tree(tmp_path), tmp_path)
