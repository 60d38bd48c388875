"""External plugins compared with ``kubectl kustomize --enable-alpha-plugins`` (the oracle).

* Container KRM functions through a fake ``docker`` on PATH: the docker argv and the
  ResourceList on stdin must equal what kubectl sends, and the transformed resources must match.
* End-to-end ``kzgit build`` of trees with legacy exec plugins must equal kubectl's output byte
  for byte; these need the build pipeline to run external plugins
  (``kzgit.plugins.builtin.PluginRunner``) and are skipped with that reason until it does.

kubectl silently skips exec KRM functions (it has no --enable-exec), so those are checked
against kustomize's own expectations in test_plugins.py instead.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, Tuple

import pytest

from helpers import CONTAINER_FN_CONFIG, deployment, write_tree
from kzgit.options import BuildOptions
from kzgit.errors import KzgitError
from kzgit.loader import Loader
from kzgit.plugins import external
from kzgit.resource import Resource, ResMap
from kzgit.yamlio import load_documents

PY = sys.executable
KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl not on PATH: no oracle")


FAKE_DOCKER = f"""\
#!{PY}
# Records argv and stdin, then acts as a KRM function: annotates every item, adds a ConfigMap.
import os, sys, yaml
rec = os.environ["REC"]
data = sys.stdin.read()
with open(rec + ".argv", "w") as f:
    f.write("\\n".join(sys.argv[1:]) + "\\n")
with open(rec + ".stdin", "w") as f:
    f.write(data)
rl = yaml.safe_load(data)
for item in rl["items"]:
    item["metadata"].setdefault("annotations", {{}})["touched"] = "yes"
rl["items"].append({{"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {{"name": "made-by-fn", "annotations": {{
                         "kustomize.config.k8s.io/needs-hash": "true"}}}},
                     "data": {{"from": rl["functionConfig"]["spec"]["from"]}}}})
rl["results"] = [{{"message": "fine", "severity": "info"}}]
yaml.safe_dump(rl, sys.stdout)
"""

FN_CONFIG = CONTAINER_FN_CONFIG + """\
        envs: [FOO=bar, EXPORTED]
        mounts:
        - {type: bind, src: data, dst: /data}
spec:
  from: fn
"""

RESOURCES = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: one
  annotations: {a: b}
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: two
  namespace: ns
"""


@pytest.fixture()
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Dict[str, str]:
    """PATH with the fake docker first; HOME and the plugin home in tmp."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "docker").write_text(FAKE_DOCKER)
    (bindir / "docker").chmod(0o755)
    home = tmp_path / "home"
    (home / "plugin").mkdir(parents=True)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("KUSTOMIZE_PLUGIN_HOME", str(home / "plugin"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    # the spec's "envs: [EXPORTED]" hands docker the user's EXPORTED: the user grants it
    (home / ".config" / "kzgit").mkdir(parents=True)
    (home / ".config" / "kzgit" / "config.toml").write_text('[sandbox]\nallow-env = ["EXPORTED"]\n')
    return dict(os.environ)


def kubectl(path: Path, env: Dict[str, str], rec: Path, alpha: bool = True,
            extra: Tuple[str, ...] = ()) -> Tuple[int, str, str]:
    args = ([str(KUBECTL), "kustomize"] + (["--enable-alpha-plugins"] if alpha else []) + list(extra)
            + [str(path)])
    res = subprocess.run(args, capture_output=True, env={**env, "REC": str(rec)}, timeout=120)
    return res.returncode, res.stdout.decode(), res.stderr.decode()


def tree(root: Path, files: Dict[str, str]) -> Path:
    return write_tree(root, files, dedent=True)


def _key(o: Dict[str, Any]) -> tuple:
    md = o.get("metadata") or {}
    return (o.get("kind"), md.get("namespace", ""), md.get("name"))


# ------------------------------------------------------------ container functions vs kubectl

def _fn_transformer_tree(tmp_path: Path, env: Dict[str, str],
                         monkeypatch: pytest.MonkeyPatch) -> Tuple[Path, str]:
    """A tree running the container function as a transformer, and kubectl's output for it;
    the fake docker then records kzgit's run under ``tmp_path/kzgit``."""
    k = tree(tmp_path / "k", {"kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- fn.yaml\n",
                              "cm.yaml": RESOURCES, "fn.yaml": FN_CONFIG})
    rc, out, err = kubectl(k, env, tmp_path / "kubectl")
    assert rc == 0, err
    monkeypatch.setenv("REC", str(tmp_path / "kzgit"))
    return k, out


@needs_kubectl
def test_container_transformer_matches_kubectl(tmp_path: Path, env: Dict[str, str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    k, out = _fn_transformer_tree(tmp_path, env, monkeypatch)
    rm = ResMap(Resource(o) for o in load_documents(RESOURCES.encode()))
    config = load_documents(FN_CONFIG.encode())[0]
    external.transform(config, "fn.yaml", Loader(str(k)), rm, BuildOptions(enable_alpha_plugins=True))
    for ext in ("argv", "stdin"):
        want = (tmp_path / f"kubectl.{ext}").read_text()
        got = (tmp_path / f"kzgit.{ext}").read_text()
        if ext == "argv":
            assert got.splitlines()[0] == "run" and got.splitlines()[1:] == want.splitlines()[1:]
        else:
            assert load_documents(got.encode()) == load_documents(want.encode())
    assert sorted((r.obj for r in rm), key=_key) == sorted(load_documents(out.encode()), key=_key)


@needs_kubectl
def test_as_current_user_and_network_name_like_kubectl(tmp_path: Path, env: Dict[str, str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    k = tree(tmp_path / "k", {"kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- fn.yaml\n",
                              "cm.yaml": RESOURCES, "fn.yaml": FN_CONFIG})
    flags = ("--as-current-user", "--network-name=other")
    rc, out, err = kubectl(k, env, tmp_path / "kubectl", extra=flags)
    assert rc == 0, err
    res = subprocess.run([PY, "-m", "kzgit", "build", "--enable-alpha-plugins", *flags, str(k)],
                         capture_output=True, text=True, timeout=120,
                         env={**env, "REC": str(tmp_path / "kzgit")})
    assert res.returncode == 0, res.stderr
    assert res.stdout == out
    want = (tmp_path / "kubectl.argv").read_text().splitlines()
    got = (tmp_path / "kzgit.argv").read_text().splitlines()
    assert got == want
    assert got[got.index("--user") + 1] == f"{os.getuid()}:{os.getgid()}"


@needs_kubectl
def test_container_generator_sends_what_kubectl_sends(tmp_path: Path, env: Dict[str, str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    k = tree(tmp_path / "k", {"kustomization.yaml": "generators:\n- fn.yaml\n", "fn.yaml": FN_CONFIG})
    rc, out, err = kubectl(k, env, tmp_path / "kubectl")
    assert rc == 0, err
    monkeypatch.setenv("REC", str(tmp_path / "kzgit"))
    config = load_documents(FN_CONFIG.encode())[0]
    got = external.generate(config, "fn.yaml", Loader(str(k)), BuildOptions(enable_alpha_plugins=True))
    assert load_documents((tmp_path / "kzgit.stdin").read_bytes()) == load_documents(
        (tmp_path / "kubectl.stdin").read_bytes())
    # kubectl drops the echoed (local-config) function config at the end of the build and
    # hashes the generated ConfigMap; the generator output carries both facts.
    [made] = load_documents(out.encode())
    assert [r.kind for r in got] == ["Fn", "ConfigMap"]
    assert got[0].obj["metadata"]["annotations"]["config.kubernetes.io/local-config"] == "true"
    assert got[1].needs_hash and made["metadata"]["name"].startswith("made-by-fn-")
    assert got[1].obj["data"] == made["data"]


@needs_kubectl
def test_disabled_plugins_fail_like_kubectl(tmp_path: Path, env: Dict[str, str]) -> None:
    k = tree(tmp_path / "k", {"kustomization.yaml": "generators:\n- fn.yaml\n", "fn.yaml": FN_CONFIG})
    rc, _, err = kubectl(k, env, tmp_path / "kubectl", alpha=False)
    assert rc != 0
    config = load_documents(FN_CONFIG.encode())[0]
    with pytest.raises(KzgitError) as e:
        external.generate(config, "fn.yaml", Loader(str(k)), BuildOptions())
    theirs = "external plugins disabled; unable to load external plugin 'Fn'"
    assert theirs in err and theirs in str(e.value)


# ------------------------------------------------------------ end-to-end kzgit build vs kubectl

LEGACY_GEN = """\
#!/bin/sh
cat <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  annotations:
    kustomize.config.k8s.io/behavior: merge
    kustomize.config.k8s.io/needs-hash: "true"
data:
  b: "2"
---
apiVersion: v1
kind: Secret
metadata:
  name: sec
  annotations:
    kustomize.config.k8s.io/needs-hash: "true"
type: Opaque
data:
  x: eA==
YAML
"""

LEGACY_LABELLER = f"""\
#!{PY}
import sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
for d in docs:
    d["metadata"].setdefault("labels", {{}})["team"] = "blue"
yaml.safe_dump_all(docs, sys.stdout)
"""

LEGACY_TREE = {
    "kustomization.yaml": """\
        resources:
        - deploy.yaml
        configMapGenerator:
        - name: cm
          literals: [a=1]
        generators:
        - gen.yaml
        transformers:
        - lab.yaml
        """,
    "gen.yaml": "apiVersion: someteam.example.com/v1\nkind: Gen\nmetadata:\n  name: g\n",
    "lab.yaml": "apiVersion: someteam.example.com/v1\nkind: Lab\nmetadata:\n  name: l\n",
    "deploy.yaml": deployment("web", """\
        - name: c
          image: nginx
          envFrom:
          - configMapRef: {name: cm}
          - secretRef: {name: sec}
        """),
}


def install(env: Dict[str, str], api: str, kind: str, text: str) -> None:
    p = Path(env["KUSTOMIZE_PLUGIN_HOME"]) / api / kind.lower() / kind
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    p.chmod(0o755)


def _legacy_tree(tmp_path: Path, env: Dict[str, str]) -> Path:
    """LEGACY_TREE, with its generator and transformer installed in the plugin home."""
    install(env, "someteam.example.com/v1", "Gen", LEGACY_GEN)
    install(env, "someteam.example.com/v1", "Lab", LEGACY_LABELLER)
    return tree(tmp_path / "k", LEGACY_TREE)


def kzgit_build(path: Path, **kw: Any) -> str:
    from kzgit.builder import build
    return build(str(path), BuildOptions(**kw)).to_yaml()


@needs_kubectl
def test_build_with_legacy_plugins_equals_kubectl(tmp_path: Path, env: Dict[str, str]) -> None:
    k = _legacy_tree(tmp_path, env)
    rc, out, err = kubectl(k, env, tmp_path / "rec")
    assert rc == 0, err
    assert kzgit_build(k, enable_alpha_plugins=True, plugin_timeout=30) == out


@needs_kubectl
def test_build_with_container_function_equals_kubectl(tmp_path: Path, env: Dict[str, str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    k, out = _fn_transformer_tree(tmp_path, env, monkeypatch)
    assert kzgit_build(k, enable_alpha_plugins=True) == out
    # as a generator too: the echoed function config is dropped, the ConfigMap hashed
    g = tree(tmp_path / "g", {"kustomization.yaml": "resources:\n- cm.yaml\ngenerators:\n- fn.yaml\n",
                              "cm.yaml": RESOURCES, "fn.yaml": FN_CONFIG})
    rc, out, err = kubectl(g, env, tmp_path / "kubectl")
    assert rc == 0, err
    assert kzgit_build(g, enable_alpha_plugins=True) == out


@needs_kubectl
def test_build_duplicate_from_function_fails_like_kubectl(tmp_path: Path, env: Dict[str, str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The function adds made-by-fn as generator and again as transformer: a duplicate id."""
    k = tree(tmp_path / "k", {"kustomization.yaml": "resources:\n- cm.yaml\ngenerators:\n- fn.yaml\n"
                                                    "transformers:\n- fn.yaml\n",
                              "cm.yaml": RESOURCES, "fn.yaml": FN_CONFIG})
    rc, out, err = kubectl(k, env, tmp_path / "kubectl")
    assert rc != 0 and "generated duplicate resource" in err
    monkeypatch.setenv("REC", str(tmp_path / "kzgit"))
    with pytest.raises(KzgitError, match="plugin api: example.com/v1, kind: Fn, name: f generated "
                                         "duplicate resource"):
        kzgit_build(k, enable_alpha_plugins=True)


@needs_kubectl
def test_build_without_flag_fails_naming_config(tmp_path: Path, env: Dict[str, str]) -> None:
    k = _legacy_tree(tmp_path, env)
    rc, _, err = kubectl(k, env, tmp_path / "rec", alpha=False)
    assert rc != 0 and "unable to load external plugin 'Gen'" in err
    with pytest.raises(KzgitError) as e:
        kzgit_build(k)
    assert "unable to load external plugin 'Gen'" in str(e.value)
    assert "--enable-alpha-plugins" in str(e.value)


KRM_EXEC_GENERATOR = """\
#!/bin/sh
cat <<EOF
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  labels: {app: nginx}
  annotations:
    tshirt-size: small # this injects the resource reservations
spec:
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec:
      containers:
      - {name: nginx, image: nginx}
EOF
"""


def test_build_exec_function_generator_like_kustomize(tmp_path: Path) -> None:
    """api/krusty/fnplugin_test.go TestFnExecGeneratorInBase (kubectl skips exec functions)."""
    k = tree(tmp_path / "k", {
        "kustomization.yaml": "resources:\n- short_secret.yaml\ngenerators:\n- gener.yaml\n",
        "short_secret.yaml": """\
            apiVersion: v1
            kind: Secret
            metadata:
              labels: {airshipit.org/ephemeral-user-data: "true"}
              name: node1-bmc-secret
            type: Opaque
            stringData:
              userData: |
                bootcmd:
                - mkdir /mnt/vda
            """,
        "generateDeployment.sh": KRM_EXEC_GENERATOR,
        "gener.yaml": """\
            kind: executable
            metadata:
              name: demo
              annotations:
                config.kubernetes.io/function: |
                  exec:
                    path: ./generateDeployment.sh
            spec:
            """})
    (k / "generateDeployment.sh").chmod(0o755)
    assert kzgit_build(k, enable_alpha_plugins=True) == textwrap.dedent("""\
        apiVersion: v1
        kind: Secret
        metadata:
          labels:
            airshipit.org/ephemeral-user-data: "true"
          name: node1-bmc-secret
        stringData:
          userData: |
            bootcmd:
            - mkdir /mnt/vda
        type: Opaque
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          annotations:
            tshirt-size: small
          labels:
            app: nginx
          name: nginx
        spec:
          selector:
            matchLabels:
              app: nginx
          template:
            metadata:
              labels:
                app: nginx
            spec:
              containers:
              - image: nginx
                name: nginx
        """)


VALIDATOR = f"""\
#!{PY}
import sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
for d in docs:
    d["metadata"].setdefault("labels", {{}})["validated-by"] = "checker"
    if "MUTATE" == "yes":
        d["metadata"]["labels"]["sneaky"] = "change"
yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)
"""


BLOCK_RESOURCES = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: one
  annotations:
    a: b
data:
  k: v
"""


@needs_kubectl
@pytest.mark.parametrize("mutate", [False, True])
def test_build_validators_like_kubectl(tmp_path: Path, env: Dict[str, str], mutate: bool) -> None:
    """kusttarget.go runValidators.

    kustomize compares the resources with ``reflect.DeepEqual`` on their YAML nodes
    (reswrangler.go ErrorIfNotEqualSets), line and column included, so any validator that prints
    a resource back (with a ``validated-by`` label or not) "modifies" it for kubectl.  kzgit
    compares the data and lets such validators pass: a deliberate difference, pinned here so a
    kubectl that fixes it is noticed.
    """
    install(env, "someteam.example.com/v1", "Check",
            VALIDATOR.replace('"MUTATE"', '"yes"' if mutate else '"no"'))
    k = tree(tmp_path / "k", {
        "kustomization.yaml": "resources:\n- cm.yaml\nvalidators:\n- check.yaml\n",
        "cm.yaml": BLOCK_RESOURCES,
        "check.yaml": "apiVersion: someteam.example.com/v1\nkind: Check\nmetadata:\n  name: c\n"})
    rc, out, err = kubectl(k, env, tmp_path / "rec")
    if not mutate:
        assert rc != 0 and "validator shouldn't modify the resource map: nodes unequal" in err
        out = kzgit_build(k, enable_alpha_plugins=True)
        assert "validated-by: checker" in out and "sneaky" not in out
    else:
        assert rc != 0 and "validator shouldn't modify the resource map" in err
        with pytest.raises(KzgitError, match="validator Check 'c'.* shouldn't modify the resource map"):
            kzgit_build(k, enable_alpha_plugins=True)
