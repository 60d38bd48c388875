"""helmCharts / HelmChartInflationGenerator compared with ``kubectl kustomize --enable-helm``.

There is no real helm here: a fake helm (``FAKE_HELM`` below) logs its argv, the HELM_*_HOME
variables and the content of every ``-f`` values file to a JSON-lines file, answers
``version``, creates a chart directory on ``pull``, and on ``template`` prints the chart's
templates (RELEASE/NAMESPACE substituted) plus a ConfigMap holding the values files it was given
and its flags.  Each scenario is run by kubectl (the oracle) and by ``kzgit build`` on separate
copies of the same tree; stdout bytes, success vs failure, the helm calls (temp paths
normalised) and any file written into the tree (``helm pull``) must be the same.
"""
from __future__ import annotations

import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from helpers import grant_sandbox
from kzgit.options import BuildOptions
from kzgit.config import SandboxSettings
from kzgit.errors import KzgitError
from kzgit.loader import DiskFS, Loader
from kzgit.plugins import helm

PY = sys.executable
KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl not on PATH: no oracle to "
                                                           "compare helm behaviour with")
pytestmark = pytest.mark.usefixtures("isolated_home", "as_kubectl_on_path")


@pytest.fixture
def as_kubectl_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """kzgit renders as the oracle these tests compare with, kubectl on PATH (1.32, Kustomize
    5.5.0); tests/plugins/test_helm_versions.py covers the later releases with real helm."""
    monkeypatch.setenv("KZGIT_KUSTOMIZE_VERSION", "5.5.0")

FAKE_HELM = f"""\
#!{PY}
import glob, json, os, sys, time
argv = sys.argv[1:]
vals = []
for i, a in enumerate(argv):
    if a == "-f" and i + 1 < len(argv):
        try:
            vals.append(open(argv[i + 1]).read())
        except OSError as e:
            vals.append("ERR " + e.strerror)
rec = {{"argv": argv, "values": vals,
        "env": {{k: os.environ.get(k) for k in ("HELM_CONFIG_HOME", "HELM_CACHE_HOME", "HELM_DATA_HOME")}}}}
with open(os.environ["FAKE_HELM_LOG"], "a") as f:
    f.write(json.dumps(rec) + "\\n")
cmd = argv[0]
if cmd in os.environ.get("FAKE_HELM_FAIL", "").split(","):
    sys.stderr.write("Error: fake helm failed on purpose\\n")
    sys.exit(3)
if cmd in os.environ.get("FAKE_HELM_SLEEP_ON", "").split(","):
    with open(os.environ["FAKE_HELM_LOG"] + ".pid", "w") as f:
        f.write(str(os.getpid()))
    time.sleep(30)
if cmd == "version":
    print(os.environ.get("FAKE_HELM_VERSION", "v3.16.2+g13654a5"))
elif cmd == "pull":
    untar = argv[argv.index("--untardir") + 1]
    skip = {{untar}}
    for flag in ("--repo", "--version"):
        if flag in argv:
            skip.add(argv[argv.index(flag) + 1])
    ref = [a for a in argv[1:] if not a.startswith("-") and a not in skip][0]
    name = ref.rsplit("/", 1)[-1]
    d = os.path.join(untar, name)
    os.makedirs(os.path.join(d, "templates"))
    open(os.path.join(d, "Chart.yaml"), "w").write("apiVersion: v2\\nname: %s\\nversion: 1.0.0\\n" % name)
    open(os.path.join(d, "values.yaml"), "w").write("pulled: true\\n")
    open(os.path.join(d, "templates", "cm.yaml"), "w").write(
        "apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: RELEASE-pulled\\n")
elif cmd == "template":
    out = os.environ.get("FAKE_HELM_OUT")
    if out:
        sys.stdout.write(open(out).read())
        sys.exit(0)
    release = "generated" if argv[1].startswith("-") else argv[1]
    chart = argv[2]
    ns = argv[argv.index("--namespace") + 1] if "--namespace" in argv else "default"
    parts = []
    if "--include-crds" in argv:
        parts += [open(p).read() for p in sorted(glob.glob(os.path.join(chart, "crds", "*.yaml")))]
    for p in sorted(glob.glob(os.path.join(chart, "templates", "*.yaml"))):
        parts.append(open(p).read().replace("RELEASE", release).replace("NAMESPACE", ns))
    cm = {{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {{"name": release + "-values"}},
           "data": {{"v%d" % i: v for i, v in enumerate(vals)}}}}
    cm["data"]["flags"] = " ".join(a for a in argv[3:] if not a.startswith("/"))
    parts.append(json.dumps(cm))
    sys.stdout.write("".join("---\\n# Source: x\\n" + p.rstrip("\\n") + "\\n" for p in parts))
else:
    sys.exit(2)
"""

CHART = {
    "charts/mychart/Chart.yaml": "apiVersion: v2\nname: mychart\nversion: 0.1.0\n",
    "charts/mychart/values.yaml": ("replicas: 1\nimage:\n  tag: v1\n  pull: Always\n"
                                   "list: [a, b]\nflag: yes\nwhen: 2001-12-14\n"),
    "charts/mychart/templates/dep.yaml": ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n"
                                          "  name: RELEASE-dep\n  namespace: NAMESPACE\n"
                                          "spec:\n  replicas: 1\n"),
    "charts/mychart/crds/crd.yaml": ("apiVersion: apiextensions.k8s.io/v1\n"
                                     "kind: CustomResourceDefinition\nmetadata:\n"
                                     "  name: things.example.com\n"),
}

_TMP_RE = re.compile(r"kustomize-helm-[A-Za-z0-9_]+")


@pytest.fixture(scope="module")
def fake_helm(tmp_path_factory: pytest.TempPathFactory) -> str:
    p = tmp_path_factory.mktemp("fakehelm") / "helm"
    p.write_text(FAKE_HELM)
    p.chmod(0o755)
    return str(p)


def _log_dir(base: Path) -> Path:
    """Where the fake helm logs its calls: the user's configuration (in this test's home)
    lets the (sandboxed) fake helm write there, as a user would allow a plugin."""
    log = base / "log"
    log.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(base)], check=True)
    grant_sandbox(os.environ["XDG_CONFIG_HOME"], allow_write=[str(log)],
                  allow_env=["FAKE_HELM_LOG", "FAKE_HELM_FAIL", "FAKE_HELM_SLEEP_ON",
                             "FAKE_HELM_VERSION", "FAKE_HELM_OUT"])
    return log


def _write(root: Path, files: Dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text) if rel.endswith("kustomization.yaml") else text)


def _tree_files(root: Path) -> Dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


class Run:
    def __init__(self, rc: int, out: str, err: str, calls: List[Dict[str, Any]], tree: Dict[str, str]) -> None:
        self.rc, self.out, self.err, self.calls, self.tree = rc, out, err, calls, tree


def _run(tool: str, tmp: Path, files: Dict[str, str], fake: str, flags: List[str],
         env: Optional[Dict[str, str]], sub: str) -> Run:
    base = tmp / tool
    root = base / "tree"
    _write(root, files)
    tdir = tmp / "tmpdir"   # the same TMPDIR for both tools: temp paths differ only by the suffix
    tdir.mkdir(exist_ok=True)
    log = _log_dir(base) / "helm.log"
    e = {**os.environ, "FAKE_HELM_LOG": str(log), "TMPDIR": str(tdir), **(env or {})}
    target = root / sub
    if tool == "kubectl":
        argv = [KUBECTL or "kubectl", "kustomize", "--enable-helm", f"--helm-command={fake}", *flags, str(target)]
    else:
        argv = [PY, "-m", "kzgit", "build", "--enable-helm", f"--helm-command={fake}", *flags, str(target)]
    if "--no-enable-helm" in flags:
        argv = [a for a in argv if a not in ("--enable-helm", "--no-enable-helm")]
    res = subprocess.run(argv, capture_output=True, text=True, env=e, timeout=120, cwd=str(base))
    calls = []
    if log.exists():
        for line in log.read_text().splitlines():
            rec = json.loads(line)
            calls.append(json.loads(_TMP_RE.sub("kustomize-helm-X",
                                                json.dumps(rec).replace(str(base), "<BASE>"))))
    return Run(res.returncode, res.stdout.replace(str(base), "<BASE>"), res.stderr, calls, _tree_files(root))


def compare(tmp: Path, fake: str, files: Dict[str, str], flags: Tuple[str, ...] = (),
            env: Optional[Dict[str, str]] = None, sub: str = ".") -> Tuple[Run, Run]:
    """Run both tools; assert same outcome, stdout, helm calls and tree; return (kubectl, kzgit)."""
    (tmp / "tmpdir").mkdir(parents=True, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:   # separate trees and logs
        fw = pool.submit(_run, "kubectl", tmp, files, fake, list(flags), env, sub)
        fg = pool.submit(_run, "kzgit", tmp, files, fake, list(flags), env, sub)
        want, got = fw.result(), fg.result()
    assert (got.rc == 0) == (want.rc == 0), (want.err, got.err)
    assert got.out == want.out
    # kustomize pulls a missing chart into chartHome, in the tree; kzgit into its temp dir
    # (a build never writes into the source tree): same calls once each side's pull
    # directory is named <PULLED>, and kubectl's tree without what it pulled is kzgit's tree
    want_pulled, got_pulled = _untardirs(want.calls), _untardirs(got.calls)
    assert not any(d.startswith("<BASE>") for d in got_pulled), got_pulled
    assert _mask(got.calls, got_pulled) == _mask(want.calls, want_pulled)
    assert got.tree == {rel: want.tree.get(rel) for rel in got.tree}
    pulled_by_kubectl = set(want.tree) - set(got.tree)
    assert all(any(f"<BASE>/tree/{rel}".startswith(d + "/") for d in want_pulled)
               for rel in pulled_by_kubectl), pulled_by_kubectl
    if got.rc != 0:
        assert "Traceback" not in got.err
        assert got.rc == 1, got.err
    return want, got


def _untardirs(calls: List[Dict[str, Any]]) -> List[str]:
    """The ``--untardir`` of every ``helm pull``, longest first."""
    dirs = {c["argv"][c["argv"].index("--untardir") + 1] for c in calls if c["argv"][0] == "pull"}
    return sorted(dirs, key=len, reverse=True)


def _mask(calls: List[Dict[str, Any]], dirs: List[str]) -> List[Dict[str, Any]]:
    text = json.dumps(calls)
    for d in dirs:
        text = text.replace(json.dumps(d)[1:-1], "<PULLED>")
    masked: List[Dict[str, Any]] = json.loads(text)
    return masked


K = "kustomization.yaml"


# --------------------------------------------------------------------------- differential

@needs_kubectl
def test_local_chart_values_file_release_namespace(tmp_path: Path, fake_helm: str) -> None:
    w, g = compare(tmp_path, fake_helm, {**CHART, "my-values.yaml": "mine: 1\nflag: on\n", K: """\
        helmCharts:
        - name: mychart
          releaseName: rel
          namespace: ns1
          valuesFile: my-values.yaml
        """})
    assert g.rc == 0 and "name: rel-dep" in g.out and "namespace: ns1" in g.out
    assert g.calls[1]["argv"][:4] == ["template", "rel", "<BASE>/tree/charts/mychart", "--namespace"]
    assert g.calls[1]["values"] == ["mine: 1\nflag: on\n"]   # copied as is


@needs_kubectl
@pytest.mark.parametrize("merge", [None, "override", "merge", "replace"])
def test_values_inline_with_chart_values(tmp_path: Path, fake_helm: str, merge: Optional[str]) -> None:
    extra = f"  valuesMerge: {merge}\n" if merge else ""
    _w, g = compare(tmp_path, fake_helm, {**CHART, K: f"""\
helmCharts:
- name: mychart
{extra}  valuesInline:
    image:
      tag: v2
    list: [c]
    extra: 1.0
    big: 1000000
    s: "on"
    t: yes
    gone: null
    nested: {{a: {{b: [1, {{c: d}}]}}}}
"""})
    assert g.rc == 0
    values = g.calls[1]["values"][0]
    if merge == "replace":
        assert "replicas" not in values
    else:
        assert "replicas: 1" in values   # the chart's values.yaml was read and merged


@needs_kubectl
def test_all_template_flags_and_additional_values(tmp_path: Path, fake_helm: str) -> None:
    _w, g = compare(tmp_path, fake_helm, {**CHART, "extra.yaml": "a: b\n", K: """\
        helmCharts:
        - name: mychart
          releaseName: r
          includeCRDs: true
          skipHooks: true
          skipTests: true
          apiVersions: [foo/v1, bar/v2]
          kubeVersion: "1.27"
          nameTemplate: nt
          additionalValuesFiles: [extra.yaml]
        """})
    assert "--include-crds" in g.calls[1]["argv"] and "kind: CustomResourceDefinition" in g.out


@needs_kubectl
def test_include_crds_off(tmp_path: Path, fake_helm: str) -> None:
    _w, g = compare(tmp_path, fake_helm, {**CHART, K: "helmCharts:\n- name: mychart\n"})
    assert "CustomResourceDefinition" not in g.out and "--generate-name" in g.calls[1]["argv"]


@needs_kubectl
def test_multiple_charts_globals_and_overlay(tmp_path: Path, fake_helm: str) -> None:
    files = {f"base/{k.replace('charts/', 'mycharts/')}": v for k, v in CHART.items()}
    files.update({
        "base/mycharts/other/Chart.yaml": "apiVersion: v2\nname: other\n",
        "base/mycharts/other/values.yaml": "x: 1\n",
        "base/mycharts/other/templates/s.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: RELEASE-svc\n",
        f"base/{K}": """\
            helmGlobals:
              chartHome: mycharts
            helmCharts:
            - name: mychart
              releaseName: one
            - name: other
              releaseName: two
              namespace: elsewhere
            configMapGenerator:
            - name: cm
              literals: [a=b]
            """,
        f"overlay/{K}": """\
            namespace: prod
            namePrefix: p-
            resources: [../base]
            """})
    _w, g = compare(tmp_path, fake_helm, files, sub="overlay")
    assert "name: p-two-svc" in g.out and len(g.calls) == 4


@needs_kubectl
def test_config_home(tmp_path: Path, fake_helm: str) -> None:
    home = tmp_path / "helmhome"
    _w, g = compare(tmp_path, fake_helm, {**CHART, K: f"""\
        helmGlobals:
          configHome: {home}
        helmCharts:
        - name: mychart
        """})
    assert g.calls[0]["env"]["HELM_CACHE_HOME"] == f"{home}/.cache"


@needs_kubectl
def test_generator_config_entries_and_origin(tmp_path: Path, fake_helm: str) -> None:
    _w, g = compare(tmp_path, fake_helm, {**CHART, "my.yaml": "mine: 2\n", "gen.yaml": """\
apiVersion: builtin
kind: HelmChartInflationGenerator
metadata:
  name: fromfile
name: mychart
releaseName: ff
valuesFile: my.yaml
""", K: """\
        buildMetadata: [originAnnotations, transformerAnnotations]
        namePrefix: p-
        helmCharts:
        - name: mychart
          releaseName: kust
        generators:
        - gen.yaml
        - |
          apiVersion: builtin
          kind: HelmChartInflationGenerator
          metadata:
            name: inline
          name: mychart
          releaseName: inl
          valuesMerge: merge
          valuesInline:
            replicas: 5
        """})
    assert "name: fromfile" in g.out and "kind: HelmChartInflationGenerator" in g.out


@needs_kubectl
def test_deprecated_helm_chart_inflation_generator(tmp_path: Path, fake_helm: str) -> None:
    compare(tmp_path, fake_helm, {**CHART, K: """\
        helmChartInflationGenerator:
        - chartName: mychart
          releaseName: old
          releaseNamespace: ignored
          valuesLocal:
            replicas: 3
        """})


@needs_kubectl
def test_pull_into_temp_not_the_tree(tmp_path: Path, fake_helm: str) -> None:
    """kustomize runs ``helm pull`` into the chart home inside the tree; kzgit pulls into its
    temp dir and renders the same bytes, leaving the tree as it was."""
    _w, g = compare(tmp_path, fake_helm, {K: """\
        helmCharts:
        - name: remote
          repo: https://charts.example.com
          version: 1.2.3
          releaseName: r
        - name: other
          repo: oci://registry.example.com/charts/
          releaseName: o
        - name: third
          repo: https://charts.example.com
        """})
    assert "charts/remote-1.2.3/remote/Chart.yaml" in _w.tree
    assert not any(rel.startswith("charts/") for rel in g.tree)
    assert [c["argv"][0] for c in g.calls] == ["version", "pull", "template"] * 3


@needs_kubectl
def test_cli_helm_flags_including_shared_api_versions_quirk(tmp_path: Path, fake_helm: str) -> None:
    compare(tmp_path, fake_helm, {**CHART, "gen.yaml": """\
apiVersion: builtin
kind: HelmChartInflationGenerator
metadata:
  name: g
name: mychart
releaseName: g
""", K: """\
        helmCharts:
        - name: mychart
          releaseName: a
        - name: mychart
          releaseName: b
          apiVersions: [own/v1, own/v2]
          kubeVersion: "1.30"
        generators: [gen.yaml]
        """}, flags=("--helm-api-versions=cli/v1", "--helm-kube-version=1.20", "--helm-debug"))


@needs_kubectl
@pytest.mark.parametrize("output", [
    "apiVersion: v1\nkind: ConfigMapList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    config.kubernetes.io/local-config: 'true'\n",
    "---\n# Source: nothing\n---\n",
    "",
    "WARNING: chatter\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n--- bad separator\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\nx: [1, null]\n",
], ids=["list", "local-config", "empty-docs", "nothing", "chatter", "duplicate", "bad-separator", "null-item"])
def test_template_output_parsing(tmp_path: Path, fake_helm: str, output: str) -> None:
    # in the kustomization (readable by the sandboxed fake helm), relative to the tools' cwd
    compare(tmp_path, fake_helm, {**CHART, "out.yaml": output, K: "helmCharts:\n- name: mychart\n"},
            env={"FAKE_HELM_OUT": "tree/out.yaml"})


@needs_kubectl
def test_generated_resource_conflicting_with_a_resource(tmp_path: Path, fake_helm: str) -> None:
    _w, g = compare(tmp_path, fake_helm, {**CHART, "dep.yaml": (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: r-dep\n  namespace: default\n"), K: """\
        resources: [dep.yaml]
        helmCharts:
        - name: mychart
          releaseName: r
        """})
    assert g.rc == 1


# --------------------------------------------------------------------------- errors

ErrorCase = Tuple[Dict[str, Optional[str]], Tuple[str, ...], Dict[str, str], str]
ERROR_CASES: Dict[str, ErrorCase] = {
    "not-enabled": ({K: "helmCharts:\n- name: mychart\n"}, ("--no-enable-helm",), {}, "--enable-helm"),
    "helm-fails": ({K: "helmCharts:\n- name: mychart\n"}, (), {"FAKE_HELM_FAIL": "template"},
                   "fake helm failed on purpose"),
    "pull-fails": ({K: "helmCharts:\n- name: nope\n  repo: https://x.example.com\n"}, (),
                   {"FAKE_HELM_FAIL": "pull"}, "'nope'"),
    "helm-v2": ({K: "helmCharts:\n- name: mychart\n"}, (), {"FAKE_HELM_VERSION": "v2.17.0"}, "helm V3"),
    "no-version": ({K: "helmCharts:\n- name: mychart\n"}, (), {"FAKE_HELM_VERSION": "oops"},
                   "cannot find version"),
    "empty-values-with-inline": ({"charts/mychart/values.yaml": "# nothing\n",
                                  K: "helmCharts:\n- name: mychart\n  valuesInline: {a: 1}\n"}, (), {}, "EOF"),
    "no-values-file": ({"charts/mychart/values.yaml": None, K: "helmCharts:\n- name: mychart\n"}, (), {},
                       "values.yaml"),
    "no-chart-no-repo": ({K: "helmCharts:\n- name: absent\n"}, (), {}, "no repo specified"),
    "bad-merge": ({K: "helmCharts:\n- name: mychart\n  valuesMerge: bogus\n"}, (), {}, "valuesMerge"),
    "empty-name": ({K: "helmCharts:\n- releaseName: x\n"}, (), {}, "chart name cannot be empty"),
    "inline-not-map": ({K: "helmCharts:\n- name: mychart\n  valuesInline: [1]\n"}, (), {}, "valuesInline"),
    "additional-outside": ({K: "helmCharts:\n- name: mychart\n  additionalValuesFiles: [../x.yaml]\n"},
                           (), {}, "additionalValuesFile"),
    "chart-home-outside-root": ({"sub/" + K: "helmGlobals:\n  chartHome: ../charts\nhelmCharts:\n- name: mychart\n"},
                                (), {}, "is not in or below"),
}
ERROR_SUBDIR = {"chart-home-outside-root": "sub"}


@needs_kubectl
@pytest.mark.parametrize("case", sorted(ERROR_CASES))
def test_errors(tmp_path: Path, fake_helm: str, case: str) -> None:
    extra, flags, env, needle = ERROR_CASES[case]
    files = dict(CHART)
    for k, v in extra.items():
        if v is None:
            files.pop(k)
        else:
            files[k] = v
    w, g = compare(tmp_path, fake_helm, files, flags, env, sub=ERROR_SUBDIR.get(case, "."))
    assert w.rc != 0 and g.rc == 1
    assert needle in g.err
    if case != "not-enabled" and case != "empty-name":
        assert "kustomization.yaml" in g.err


@needs_kubectl
def test_chart_home_outside_root_allowed_without_restrictor(tmp_path: Path, fake_helm: str) -> None:
    compare(tmp_path, fake_helm, {**CHART, "sub/" + K: "helmGlobals:\n  chartHome: ../charts\n"
                                  "helmCharts:\n- name: mychart\n"},
            ("--load-restrictor=LoadRestrictionsNone",), sub="sub")


@needs_kubectl
def test_chart_home_outside_root_replace_skips_values_file(tmp_path: Path, fake_helm: str) -> None:
    """valuesMerge: replace never reads the chart's values.yaml, so the restrictor never sees it."""
    compare(tmp_path, fake_helm, {**CHART, "sub/" + K: """\
        helmGlobals:
          chartHome: ../charts
        helmCharts:
        - name: mychart
          valuesMerge: replace
          valuesInline: {x: 1}
        """}, sub="sub")


# --------------------------------------------------------------------------- kzgit only

def _kzgit(root: Path, fake: str, *flags: str, env: Optional[Dict[str, str]] = None) -> "subprocess.CompletedProcess[str]":
    e = {**os.environ, "FAKE_HELM_LOG": str(_log_dir(root.parent) / "helm.log"), **(env or {})}
    return subprocess.run([PY, "-m", "kzgit", "build", "--enable-helm", f"--helm-command={fake}",
                           *flags, str(root)], capture_output=True, text=True, env=e, timeout=60)


def test_timeout_kills_helm(tmp_path: Path, fake_helm: str) -> None:
    root = tmp_path / "tree"
    _write(root, {**CHART, K: "helmCharts:\n- name: mychart\n"})
    start = time.monotonic()
    res = _kzgit(root, fake_helm, "--plugin-timeout", "1", env={"FAKE_HELM_SLEEP_ON": "template"})
    assert time.monotonic() - start < 20
    assert res.returncode == 1 and "timed out" in res.stderr and "mychart" in res.stderr
    assert "kustomization.yaml" in res.stderr and "Traceback" not in res.stderr
    pid = int((tmp_path / "log" / "helm.log.pid").read_text())
    end = time.monotonic() + 5
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        time.sleep(0.05)
    else:
        pytest.fail("the fake helm survived the timeout")


def test_missing_helm_binary(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    _write(root, {**CHART, K: "helmCharts:\n- name: mychart\n"})
    res = _kzgit(root, str(tmp_path / "no-such-helm"))
    assert res.returncode == 1 and "no-such-helm" in res.stderr and "Traceback" not in res.stderr


def test_no_temp_dirs_left(tmp_path: Path, fake_helm: str) -> None:
    root = tmp_path / "tree"
    _write(root, {**CHART, K: "helmCharts:\n- name: mychart\n  valuesInline: {a: 1}\n"})
    tdir = tmp_path / "tmp"
    tdir.mkdir()
    res = _kzgit(root, fake_helm, env={"TMPDIR": str(tdir)})
    assert res.returncode == 0, res.stderr
    assert list(tdir.iterdir()) == []


def test_chart_name_with_slash_refused(tmp_path: Path, fake_helm: str) -> None:
    root = tmp_path / "tree"
    _write(root, {**CHART, K: "helmCharts:\n- name: ../../etc\n  repo: https://x.example.com\n"})
    res = _kzgit(root, fake_helm)
    assert res.returncode == 1 and "must not contain '/'" in res.stderr
    assert not (tmp_path / "log" / "helm.log").exists()   # helm never ran


def test_remote_root_pulls_into_temp_not_the_clone(tmp_path: Path, fake_helm: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A chart missing from a cloned remote base is pulled into the build's temp dir: kzgit's
    clones are a shared cache, kustomize's are thrown away."""
    clone = tmp_path / "clone"
    clone.mkdir()
    monkeypatch.setenv("FAKE_HELM_LOG", str(tmp_path / "helm.log"))
    loader = Loader(str(clone), DiskFS(), repo_root=str(clone))
    chart = helm.HelmChart(name="remote", repo="https://x.example.com", version="1.0.0",
                           release_name="r", where="kustomization.yaml: helmCharts entry 0")
    opts = BuildOptions(enable_helm=True, helm_command=fake_helm,
                        sandbox=SandboxSettings(allow_write=(str(tmp_path / "helm.log"),),
                                                allow_env=("FAKE_HELM_LOG",)))
    (tmp_path / "helm.log").touch()   # the sandbox allows writing an existing file
    inf = helm.Inflation(chart, loader, opts, [])
    inf.configure()
    resources = inf.generate()
    assert [r.name for r in resources] == ["r-pulled", "r-values"]
    assert list(clone.iterdir()) == []
    calls = [json.loads(x) for x in (tmp_path / "helm.log").read_text().splitlines()]
    assert "/chart-home/remote-1.0.0" in calls[1]["argv"][3]
    assert calls[2]["values"] == ["pulled: true\n"]


def test_helm_argv_table() -> None:
    c = helm.HelmChart(name="c", release_name="r", namespace="n", name_template="t",
                       additional_values_files=["/a.yaml"], api_versions=["x/v1"], kube_version="1.2",
                       include_crds=True, skip_tests=True, skip_hooks=True, debug=True)
    assert helm.helm_argv(c, "/home", "/tmp/v.yaml") == [
        "template", "r", "/home/c", "--namespace", "n", "--name-template", "t", "-f", "/tmp/v.yaml",
        "-f", "/a.yaml", "--api-versions", "x/v1", "--kube-version", "1.2", "--include-crds",
        "--skip-tests", "--no-hooks", "--debug"]
    assert helm.pull_argv(helm.HelmChart(name="c", repo="oci://r/x/", version="1"), "/h") == [
        "pull", "--untar", "--untardir", "/h", "oci://r/x/c", "--version", "1"]
    assert helm.pull_argv(helm.HelmChart(name="c", repo="https://r"), "/h") == [
        "pull", "--untar", "--untardir", "/h", "--repo", "https://r", "c"]


def test_devel_asks_helm_for_pre_releases() -> None:
    """helmCharts[].devel (Kustomize 5.7, kustomize c5f69b002): --devel on template and pull."""
    c = helm.HelmChart(name="c", repo="https://r", version="1.0.0-rc.1", devel=True)
    assert helm.helm_argv(c, "/home", "")[-1] == "--devel"
    assert helm.pull_argv(c, "/h") == ["pull", "--untar", "--untardir", "/h", "--repo", "https://r",
                                       "c", "--version", "1.0.0-rc.1", "--devel"]


def test_bad_plugin_config_type(tmp_path: Path, fake_helm: str) -> None:
    root = tmp_path / "tree"
    _write(root, {**CHART, K: """\
        generators:
        - |
          apiVersion: builtin
          kind: HelmChartInflationGenerator
          metadata:
            name: g
          name: mychart
          includeCRDs: "yes"
        """})
    res = _kzgit(root, fake_helm)
    assert res.returncode == 1 and "includeCRDs" in res.stderr and "Traceback" not in res.stderr


def test_library_error_is_kzgit_error(tmp_path: Path) -> None:
    from kzgit.builder import build
    _write(tmp_path, {**CHART, K: "helmCharts:\n- name: mychart\n"})
    with pytest.raises(KzgitError, match="--enable-helm"):
        build(str(tmp_path), BuildOptions())


ALIASED_VALUES = ("base: &b {x: 1}\nother: *b\nsc: &s 5\nsc2: *s\nm:\n  <<: *b\n  y: 2\n"
                  "l: [*s, 3]\nnn:\n  deep: *b\n  keep: 1\nseq:\n  <<: [*b]\n  z: 3\n")


@needs_kubectl
@pytest.mark.parametrize("merge", ["override", "merge"])
@pytest.mark.parametrize("inline", ["{c: 1}", "{other: {z: 1}}", "{sc2: 7}", "{sc2: null}", "{m: {q: 1}}",
                                    "{nn: {deep: 1}}", "{nn: {deep: null}}",
                                    "{f: 12345678901234567890, g: -9007199254740993}"])
def test_values_merge_sees_nodes_like_kyaml(tmp_path: Path, fake_helm: str, merge: str, inline: str) -> None:
    """kyaml's merge walks YAML nodes: aliased fields and alias merge keys vanish, or clash."""
    compare(tmp_path, fake_helm, {**CHART, "charts/mychart/values.yaml": ALIASED_VALUES,
                                  K: f"helmCharts:\n- name: mychart\n  valuesMerge: {merge}\n"
                                     f"  valuesInline: {inline}\n"})


@needs_kubectl
def test_values_file_over_http(tmp_path: Path, fake_helm: str) -> None:
    """valuesFile may be an http(s) URL: kustomize's loader fetches it (loopback server here)."""
    import http.server
    import threading
    served = tmp_path / "served"
    served.mkdir()
    (served / "v.yaml").write_text("fromhttp: 1\n")

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a: Any, **kw: Any) -> None:
            super().__init__(*a, directory=str(served), **kw)

        def log_message(self, *a: Any) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}/v.yaml"
        for inline in ("", "  valuesInline: {a: 1}\n"):
            _w, g = compare(tmp_path / (inline and "inline" or "plain"), fake_helm, {
                **CHART, K: f"helmCharts:\n- name: mychart\n  valuesFile: {url}\n{inline}"})
            assert "fromhttp: 1" in g.calls[1]["values"][0]
    finally:
        srv.shutdown()
        srv.server_close()


MORE_SCENARIOS: Dict[str, Tuple[Dict[str, str], Tuple[str, ...]]] = {
    "inline-non-string-keys": ({K: "helmCharts:\n- name: mychart\n  valuesInline: {1: a, true: b, n2: {2: c, 1.5: d}}\n"}, ()),
    "inline-non-string-keys-replace": ({K: "helmCharts:\n- name: mychart\n  valuesMerge: replace\n"
                                           "  valuesInline: {1: a, true: b}\n"}, ()),
    "local-chart-with-repo-not-pulled": ({K: "helmCharts:\n- name: mychart\n  repo: https://x.example.com\n"}, ()),
    "local-chart-with-repo-and-version-pulled": ({K: "helmCharts:\n- name: mychart\n  repo: https://x.example.com\n"
                                                     "  version: 0.1.0\n"}, ()),
    "component": ({"comp/" + K: "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
                                "helmCharts:\n- name: mychart\n  releaseName: c\nhelmGlobals:\n  chartHome: ../charts\n",
                   K: "components: [comp]\nnamePrefix: x-\n"}, ("--load-restrictor=LoadRestrictionsNone",)),
    "release-name-not-a-string": ({K: "helmCharts:\n- name: mychart\n  releaseName: 1\n"}, ()),
    "plugin-config-unknown-and-case-folded-fields": (
        {"g.yaml": "apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata:\n  name: g\n"
                   "name: mychart\nbogus: 1\nRELEASENAME: up\n", K: "generators: [g.yaml]\n"}, ()),
    "plugin-config-without-chart-name": (
        {"g.yaml": "apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata:\n  name: g\n",
         K: "generators: [g.yaml]\n"}, ()),
    "deprecated-with-helm-globals": ({K: "helmGlobals:\n  chartHome: charts\nhelmChartInflationGenerator:\n"
                                         "- chartName: mychart\n  chartHome: nowhere\n  helmHome: /nonexistent\n"}, ()),
    "deprecated-last-chart-home-wins": ({K: "helmChartInflationGenerator:\n- chartName: mychart\n  chartHome: nowhere\n"
                                            "- chartName: mychart\n  chartHome: charts\n  releaseName: two\n"}, ()),
    "deprecated-unknown-field": ({K: "helmChartInflationGenerator:\n- chartName: mychart\n  bogus: 1\n"}, ()),
}


@needs_kubectl
@pytest.mark.parametrize("case", sorted(MORE_SCENARIOS))
def test_more_scenarios(tmp_path: Path, fake_helm: str, case: str) -> None:
    files, flags = MORE_SCENARIOS[case]
    compare(tmp_path, fake_helm, {**CHART, **files}, flags)


def test_enable_helm_caches_every_root_that_renders_no_chart(tmp_path: Path, fake_helm: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The render cache with enable-helm (issue 33 item 6: one chart turned it off for every
    root): a root without a chart is cached; one that renders a chart, from a
    HelmChartInflationGenerator config in `generators:` too, is built every time."""
    from kzgit.options import BuildOptions
    from kzgit.rendercache import BUILT, CACHED, open_store, render_yaml
    root = tmp_path / "tree"
    monkeypatch.setenv("FAKE_HELM_LOG", str(_log_dir(tmp_path) / "helm.log"))
    _write(root, {**CHART, "plain/kustomization.yaml": "resources: [cm.yaml]\n",
                  "plain/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
                  "gen.yaml": "apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata:\n"
                              "  name: g\nname: mychart\nreleaseName: r\n",
                  K: "generators:\n- gen.yaml\n"})
    store, _ = open_store(str(tmp_path / "cache"))
    assert store is not None
    opts = BuildOptions(enable_helm=True, helm_command=fake_helm)
    statuses = []
    for _ in range(2):
        for sub in ("plain", "."):
            got = render_yaml(str(root / sub), opts, store)
            assert got.error is None, got.error
            statuses.append((sub, got.status))
    assert statuses == [("plain", BUILT), (".", BUILT), ("plain", CACHED), (".", BUILT)]


def test_helm_not_enabled_names_the_flag_and_the_setting(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A pre-commit user cannot pass a flag (issue 33 item 6): the refusal names the
    .kzgit.toml key and the grant too."""
    from kzgit.cli.main import main
    _write(tmp_path, {**CHART, K: "helmCharts:\n- name: mychart\n"})
    assert main(["build", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "must specify --enable-helm" in err
    assert "enable-helm = true in the repository's .kzgit.toml" in err and "kzgit trust" in err


def test_explain_says_a_chart_value_cannot_be_traced_naming_the_chart(
        tmp_path: Path, fake_helm: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """kzgit explain never guesses inside a chart's output (issue 36 item 5)."""
    from kzgit.explain import explain
    from kzgit.options import BuildOptions
    monkeypatch.setenv("FAKE_HELM_LOG", str(_log_dir(tmp_path) / "helm.log"))
    root = tmp_path / "tree"
    _write(root, {**CHART, K: "helmCharts:\n- name: mychart\n  releaseName: r\n"})
    got = explain(str(root), BuildOptions(enable_helm=True, helm_command=fake_helm))
    steps = [r.steps for r in got.records if r.path == "metadata.name"]
    assert steps and all(s[-1].kind == "cannot trace" and "the helm chart mychart" in s[-1].detail
                         for s in steps)
