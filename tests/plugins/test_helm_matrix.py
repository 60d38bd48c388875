"""helmCharts with real helm, against each release's kubectl (``--enable-helm --helm-command H``).

The oracles are those ``../shared/tools/oracles --env`` exports: kubectl 1.32, 1.33, 1.35 and
1.36 (Kustomize 5.5.0, 5.6.0, 5.7.1, 5.8.1) and helm 3.17 and 4.1.  A chart repository made with
the real helm (``helm package``, ``helm repo index``) is served on 127.0.0.1; each case renders a
fresh copy of its tree with kubectl and with kzgit (kubectl writes pulled charts into
``chartHome``, kzgit never does) and the outputs must be the same bytes, or both fail.
Each combination is skipped, with the reason, when its oracle is absent.
"""
from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest
from helpers import oracle

RELEASES = {"5.5.0": "KZGIT_ORACLE_KUBECTL_1_32", "5.6.0": "KZGIT_ORACLE_KUBECTL_1_33",
            "5.7.1": "KZGIT_ORACLE_KUBECTL_1_35", "5.8.1": "KZGIT_ORACLE_KUBECTL_1_36"}
HELMS = {"3": "KZGIT_ORACLE_HELM_3", "4": "KZGIT_ORACLE_HELM_4"}
# helm 4 only from 5.8.1 ("requires helm V3 or V4", kustomize 54848c104)
COMBINATIONS = [("5.5.0", "3"), ("5.6.0", "3"), ("5.7.1", "3"), ("5.8.1", "3"), ("5.8.1", "4")]




CHART = {
    "Chart.yaml": "apiVersion: v2\nname: web\nversion: {version}\n",
    "values.yaml": "greeting: hello\nreplicas: 1\nextra: {{}}\n",
    "crds/crd.yaml": ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
                      "metadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n"
                      "  names: {{kind: Widget, plural: widgets}}\n  scope: Namespaced\n"
                      "  versions: [{{name: v1, served: true, storage: true}}]\n"),
    "templates/cm.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{{{ .Release.Name }}}}-cm\n"
        "  namespace: {{{{ .Release.Namespace }}}}\ndata:\n"
        "  greeting: {{{{ .Values.greeting | quote }}}}\n"
        "  replicas: {{{{ .Values.replicas | quote }}}}\n"
        "  extra: {{{{ toJson .Values.extra | quote }}}}\n"
        "  chart: {{{{ .Chart.Version | quote }}}}\n"
        "  kube: {{{{ .Capabilities.KubeVersion.Version | quote }}}}\n"
        "  widgets: {{{{ .Capabilities.APIVersions.Has \"foo.example.com/v1\" | quote }}}}\n"),
}


def _write(root: Path, files: Dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def _helm_env(home: Path) -> Dict[str, str]:
    env = dict(os.environ)
    for k in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"):
        env[k] = str(home / k.lower())
    env["HOME"] = str(home)
    return env


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A chart repository with web 0.1.0 and the pre-release 0.2.0-rc.1, on 127.0.0.1."""
    helm = oracle(HELMS["3"])
    base = tmp_path_factory.mktemp("chart-repo")
    served = base / "served"
    served.mkdir()
    for version in ("0.1.0", "0.2.0-rc.1"):
        src = base / f"src-{version}" / "web"
        _write(src, {k: v.format(version=version) for k, v in CHART.items()})
        subprocess.run([helm, "package", str(src), "-d", str(served)], check=True,
                       capture_output=True, env=_helm_env(base), timeout=120)
    subprocess.run([helm, "repo", "index", str(served)], check=True, capture_output=True,
                   env=_helm_env(base), timeout=120)
    handler = functools.partial(_Quiet, directory=str(served))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


def _cases(repo: str, release: str) -> List[Tuple[str, Dict[str, str]]]:
    values = {"values-a.yaml": "greeting: from-file\nextra: {a: 1}\n",
              "values-b.yaml": "replicas: 3\n"}
    local = {f"charts/web/{k}": v.format(version="0.1.0") for k, v in CHART.items()}
    cases = [
        ("repo pull, values files and inline values, CRDs, capabilities, release and namespace", {
            **values, "kustomization.yaml": (
                "helmCharts:\n"
                f"- name: web\n  repo: {repo}\n  version: 0.1.0\n  releaseName: rel\n"
                "  namespace: ns1\n  includeCRDs: true\n  valuesFile: values-a.yaml\n"
                "  additionalValuesFiles: [values-b.yaml]\n"
                "  valuesInline: {extra: {b: 2}}\n"
                "  apiVersions: [foo.example.com/v1]\n  kubeVersion: '1.29'\n")}),
        ("a local chart in chartHome, no CRDs, valuesMerge replace", {
            **local, "values-a.yaml": values["values-a.yaml"], "kustomization.yaml": (
                "namespace: outer\nhelmCharts:\n- name: web\n  releaseName: local\n"
                "  valuesFile: values-a.yaml\n  valuesInline: {greeting: inline}\n"
                "  valuesMerge: replace\n")}),
        ("two charts and helmGlobals.chartHome", {
            **{f"my-charts/web/{k}": v.format(version="0.1.0") for k, v in CHART.items()},
            "kustomization.yaml": (
                "helmGlobals: {chartHome: my-charts}\nhelmCharts:\n"
                "- {name: web, releaseName: one}\n- {name: web, releaseName: two, namespace: b}\n")}),
    ]
    cases.append(("a HelmChartInflationGenerator config under generators", {
        **local, "values-b.yaml": values["values-b.yaml"], "kustomization.yaml": (
            "generators:\n- |-\n  apiVersion: builtin\n  kind: HelmChartInflationGenerator\n"
            "  metadata: {name: gen}\n  name: web\n  releaseName: gen\n  namespace: g\n"
            "  chartHome: charts\n  includeCRDs: true\n  valuesFile: values-b.yaml\n")}))
    # devel is a field from 5.7 (kustomize c5f69b002): before, the config's key is ignored and
    # helm pulls the newest stable version
    cases.append(("a HelmChartInflationGenerator pulling with devel", {
        "kustomization.yaml": (
            "generators:\n- |-\n  apiVersion: builtin\n  kind: HelmChartInflationGenerator\n"
            f"  metadata: {{name: gen}}\n  name: web\n  repo: {repo}\n  releaseName: gd\n"
            "  devel: true\n")}))
    if release >= "5.7":
        cases.append(("devel: a pre-release when no version is given", {
            "kustomization.yaml": (f"helmCharts:\n- name: web\n  repo: {repo}\n  devel: true\n"
                                   "  releaseName: dev\n")}))
    return cases


@pytest.mark.parametrize("release, helm_major", COMBINATIONS)
def test_helm_charts_render_as_kubectl_with_real_helm(tmp_path: Path, repo: str, release: str,
                                                      helm_major: str) -> None:
    kubectl, helm = oracle(RELEASES[release]), oracle(HELMS[helm_major])
    for i, (what, files) in enumerate(_cases(repo, release)):
        outs = []
        for tool in ("kubectl", "kzgit"):
            root = tmp_path / f"{i}-{tool}"
            _write(root / "k", files)
            env = _helm_env(root / "home")
            if tool == "kubectl":
                argv = [kubectl, "kustomize", "--enable-helm", "--helm-command", helm, str(root / "k")]
            else:
                argv = [sys.executable, "-m", "kzgit", "build", "--no-cache", "--enable-helm",
                        "--helm-command", helm, "--kustomize-version", release,
                        str(root / "k")]
            res = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)
            outs.append(res)
            if tool == "kzgit":
                # kzgit pulls into its own temporary directory, never into the tree
                written = sorted(p.relative_to(root / "k").as_posix()
                                 for p in (root / "k").rglob("*") if p.is_file())
                assert written == sorted(files), what
        want, got = outs
        assert want.returncode == 0, (what, want.stderr)
        assert got.returncode == 0, (what, got.stderr)
        assert got.stdout == want.stdout, what
        assert "kind: ConfigMap" in got.stdout, what
        shutil.rmtree(tmp_path / f"{i}-kubectl", ignore_errors=True)

