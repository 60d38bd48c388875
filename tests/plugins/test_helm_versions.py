"""helmCharts as each Kustomize release renders them, against that release's kubectl and a real
helm (the oracles ``../shared/tools/oracles --env`` exports; skipped, with the reason, when
absent).

5.8.1 renders a chart without a namespace into the kustomization's namespace, else the nearest
ancestor's (``helm template --namespace``), and its NamespaceTransformer leaves what helm
rendered alone (kustomize 4e75138d2, PR #6044); it also accepts helm 4 (54848c104, PR #6016).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest
from helpers import oracle

KUBECTL = {"5.7.1": "KZGIT_ORACLE_KUBECTL_1_35", "5.8.1": "KZGIT_ORACLE_KUBECTL_1_36"}
HELM = {"3": "KZGIT_ORACLE_HELM_3", "4": "KZGIT_ORACLE_HELM_4"}

TREE: Dict[str, str] = {
    "base/charts/c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    "base/charts/c/values.yaml": "",
    "base/charts/c/templates/cm.yaml": ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-chart\n"
                                        "data:\n  ns: {{ .Release.Namespace }}\n"),
    "base/kustomization.yaml": "helmCharts:\n- name: c\n  releaseName: r\nresources: [cm.yaml]\n",
    "base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n",
    "mid/kustomization.yaml": "resources: [../base]\n",
    "overlay/kustomization.yaml": "namespace: prod\nresources: [../mid]\n",
}




@pytest.mark.parametrize("helm_major", ["3", "4"])
@pytest.mark.parametrize("release", ["5.7.1", "5.8.1"])
def test_helm_chart_namespace_as_the_release_renders_it(tmp_path: Path, release: str,
                                                        helm_major: str) -> None:
    kubectl, helm = oracle(KUBECTL[release]), oracle(HELM[helm_major])
    for rel, text in TREE.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    target = str(tmp_path / "overlay")
    want = subprocess.run([kubectl, "kustomize", "--enable-helm", "--helm-command", helm, target],
                          capture_output=True, text=True, timeout=300)
    got = subprocess.run([sys.executable, "-m", "kzgit", "build", "--no-cache", "--enable-helm",
                          "--helm-command", helm, "--kustomize-version", release, target],
                         capture_output=True, text=True, timeout=300)
    assert (got.returncode == 0) == (want.returncode == 0), (want.stderr, got.stderr)
    assert got.stdout == want.stdout
    if release == "5.8.1":   # the witness of the change: the nearest ancestor's namespace
        assert "ns: prod" in got.stdout
