"""kzgit-render and kzgit-validate check applications as their controllers deploy them."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Callable

import pytest
import yaml

from kzgit.cli.main import main

SYNC = """
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-system
  namespace: flux-system
spec:
  url: ssh://git@github.com/acme/fleet
  ref: {branch: main}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: flux-system
  namespace: flux-system
spec:
  path: ./clusters/prod
  sourceRef: {kind: GitRepository, name: flux-system}
  decryption: {provider: sops}
"""


def ks(name: str, path: str, extra: str = "") -> str:
    return (f"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n"
            f"  name: {name}\n  namespace: flux-system\nspec:\n  path: {path}\n"
            f"  sourceRef: {{kind: GitRepository, name: flux-system}}\n{extra}")


DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: ${REPLICAS:=2}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - {name: web, image: nginx}
"""


@pytest.fixture
def fleet(repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    top = repo({
        "clusters/prod/flux-system/gotk-sync.yaml": SYNC,
        "clusters/prod/web.yaml": ks("web", "./apps/web",
                                     "  postBuild:\n    substitute: {REPLICAS: '3'}\n"),
        "clusters/prod/plain.yaml": ks("plain", "./apps/plain"),
        "apps/web/kustomization.yaml": "resources: [deploy.yaml]\n",
        "apps/web/deploy.yaml": DEPLOY,
        "apps/plain/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n",
        ".kzgit.toml": "[validate]\nstrict = true\nmissing-schemas = \"skip\"\n",
    })
    monkeypatch.chdir(top)
    return top


def test_validate_what_the_cluster_receives(fleet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The root apps/web alone fails `${REPLICAS:=2}` (a string); deployed by a Flux
    Kustomization with postBuild it is 3: no false alarm."""
    assert main(["hook", "validate", "--all"]) == 0, capsys.readouterr().out
    assert main(["validate", "apps/web"]) == 0, capsys.readouterr().out
    # without a variable Flux substitutes nothing (kustomize_varsub.go): the text stays
    (fleet / "clusters/prod/web.yaml").write_text(ks("web", "./apps/web"))
    assert main(["hook", "validate", "clusters/prod/web.yaml"]) == 1
    assert 'expected integer, got string "${REPLICAS:=2}"' in capsys.readouterr().out
    (fleet / "clusters/prod/web.yaml").write_text(
        ks("web", "./apps/web", "  postBuild:\n    substitute: {REPLICAS: three}\n"))
    assert main(["hook", "validate", "clusters/prod/web.yaml"]) == 1
    out = capsys.readouterr().out
    assert 'flux:flux-system/web: Deployment/web: /spec/replicas: expected integer, got string ' \
           '"three" (apps/web/deploy.yaml:6)' in out


def test_render_checks_a_directory_only_flux_deploys(fleet: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hook", "render", "--all"]) == 0
    (fleet / "apps/plain/broken.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n"
                                                  "metadata: {name: [\n")
    assert main(["hook", "render", "apps/plain/broken.yaml"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("clusters/prod/plain.yaml:1: flux:flux-system/plain: does not render: "
                          "failed to decode Kubernetes YAML from ")
    # the count names what it counted
    assert out.splitlines()[-1].startswith("1 of ") and " applications does not render; " in out
    # a change no application reaches renders none of them
    (fleet / "README.md").write_text("hello\n")
    assert main(["hook", "render", "README.md"]) == 0


def test_a_malformed_application_is_one_finding(fleet: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    (fleet / "clusters/prod/bad.yaml").write_text(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n"
        "  name: bad\n  namespace: flux-system\nspec:\n  path: ./apps/plain\n")
    (fleet / "clusters/prod/gone.yaml").write_text(ks("gone", "./apps/gone"))
    subprocess.run(["git", "-C", str(fleet), "add", "-A"], check=True, timeout=60)   # staged
    assert main(["hook", "render", "--all"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert "clusters/prod/bad.yaml:6: flux:flux-system/bad: malformed: spec.sourceRef needs a " \
           "kind and a name" in lines
    assert "clusters/prod/gone.yaml:7: flux:flux-system/gone: kustomization path not found: stat " \
           "apps/gone: no such file or directory" in lines
    assert not any("flux:flux-system/web" in line for line in lines)   # the others render
    # the count line counts both (each is one finding above it)
    assert lines[-1].startswith("2 of ") and " applications do not render; " in lines[-1], lines


def test_a_value_only_an_encrypted_secret_gives_is_unknown_not_wrong(
        fleet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """substituteFrom a SOPS-encrypted Secret: kzgit says which variable it cannot know, and
    validation does not fail the field holding it."""
    (fleet / "clusters/prod/secrets.yaml").write_text(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-secrets\n  namespace: flux-system\n"
        "stringData:\n  REPLICAS: ENC[AES256_GCM,data:abc,type:str]\n"
        "sops:\n  mac: ENC[AES256_GCM,data:bWFj,type:str]\n  version: 3.8.1\n")
    (fleet / "clusters/prod/web.yaml").write_text(ks("web", "./apps/web", (
        "  postBuild:\n    substituteFrom:\n    - {kind: Secret, name: cluster-secrets}\n")))
    subprocess.run(["git", "-C", str(fleet), "add", "-A"], check=True, timeout=60)
    assert main(["hook", "validate", "--all"]) == 0, capsys.readouterr().out
    assert main(["build", "--app", "web"]) == 0
    err = capsys.readouterr().err
    assert main(["build", "--app", "flux-system"]) == 0
    out, err2 = capsys.readouterr()
    secret = next(d for d in yaml.safe_load_all(out) if d["kind"] == "Secret")
    assert "sops" not in secret and secret["stringData"] == {"REPLICAS": ""}
    assert "Secret flux-system/cluster-secrets is SOPS-encrypted: the controller decrypts it" in err2
    assert "${REPLICAS} comes from Secret flux-system/cluster-secrets (clusters/prod/secrets.yaml, " \
           "SOPS-encrypted): its value is unknown offline" in err


def test_an_application_that_does_not_parse_is_one_finding(
        fleet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = ("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n"
              "  name: [broken\n")
    (fleet / "other/ks.yaml").parent.mkdir()
    (fleet / "other/ks.yaml").write_text(broken)   # delivered by nothing: listed with its error
    subprocess.run(["git", "-C", str(fleet), "add", "-A"], check=True, timeout=60)
    assert main(["hook", "render", "--all"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("other/ks.yaml:1: flux:flux-system/other/ks.yaml:1: malformed: ")
    assert "flux:flux-system/web" not in out   # the others are checked and render
    # in a directory Flux builds, the parent that delivers it does not render (Flux fails to
    # decode it while generating the kustomization): one finding, naming the file
    (fleet / "clusters/prod/broken.yaml").write_text(broken)
    subprocess.run(["git", "-C", str(fleet), "add", "-A"], check=True, timeout=60)
    assert main(["hook", "render", "--all"]) == 1
    out = capsys.readouterr().out
    assert "clusters/prod/flux-system/gotk-sync.yaml:10: flux:flux-system/flux-system: does not " \
           "render: failed to decode Kubernetes YAML from " in out
    assert "clusters/prod/broken.yaml" in out


TENANT = """apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: {name}
  namespace: apps
spec:
  path: ./apps/{name}
  sourceRef: {{kind: GitRepository, name: flux-system, namespace: flux-system}}
"""


@pytest.fixture
def tenants(repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    """fluxcd/flux2-multi-tenancy's shape: a Flux Kustomization renders a kustomization that
    lists tenants' Kustomizations from a base and patches them with a file of its own."""
    top = repo({
        "clusters/prod/tenants.yaml": ks("tenants", "./tenants/prod"),
        "tenants/base/kustomization.yaml": "resources: [team.yaml, other.yaml]\n",
        "tenants/base/team.yaml": TENANT.format(name="team"),
        "tenants/base/other.yaml": TENANT.format(name="other"),
        "tenants/prod/kustomization.yaml": "resources: [../base]\npatches:\n- path: patch.yaml\n",
        "tenants/prod/patch.yaml": "apiVersion: kustomize.toolkit.fluxcd.io/v1\n"
                                   "kind: Kustomization\nmetadata:\n  name: team\n"
                                   "  namespace: apps\nspec:\n  path: ./apps/team-prod\n",
        "apps/team-prod/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: team\n",
        "apps/other/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n",
    })
    monkeypatch.chdir(top)
    return top


def test_a_change_to_what_patches_a_delivered_application_checks_it(
        tenants: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A patch of the parent's kustomization changes the child as the cluster receives it: a
    commit changing only that patch renders the child (and one breaking it fails), as a
    commit changing the child's own manifest does."""
    assert main(["hook", "render", "--all"]) == 0, capsys.readouterr().out
    capsys.readouterr()
    (tenants / "tenants/prod/patch.yaml").write_text(
        (tenants / "tenants/prod/patch.yaml").read_text().replace("team-prod", "team-gone"))
    assert main(["hook", "render", "tenants/prod/patch.yaml"]) == 1
    out = capsys.readouterr().out
    assert "flux:apps/team: kustomization path not found: stat apps/team-gone: no such file or " \
           "directory" in out
    assert "flux:apps/other" not in out
    # the kustomization that lists and patches them reaches both; a sibling's manifest only itself
    (tenants / "tenants/prod/patch.yaml").write_text(
        (tenants / "tenants/prod/patch.yaml").read_text().replace("team-gone", "team-prod"))
    assert main(["hook", "render", "-v", "tenants/prod/kustomization.yaml"]) == 0
    err = capsys.readouterr().err
    assert "flux:apps/team" in err and "flux:apps/other" in err
    assert main(["hook", "render", "-v", "tenants/base/other.yaml"]) == 0
    err = capsys.readouterr().err
    assert "flux:apps/other" in err and "flux:apps/team" not in err


def test_a_change_to_a_generated_substitute_from_config_map_checks_its_users(
        repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The ConfigMap a Kustomization's substituteFrom names, made by a configMapGenerator of
    the kustomization that delivers it (flux2 docs' cluster-settings): a change of the
    generator's env file or of the kustomization changes what the user renders."""
    top = repo({
        "clusters/prod/flux-system/gotk-sync.yaml": SYNC,
        "clusters/prod/flux-system/kustomization.yaml": "resources: [gotk-sync.yaml]\n",
        "clusters/prod/kustomization.yaml": (
            "resources: [flux-system, web.yaml]\nconfigMapGenerator:\n- name: cluster-settings\n"
            "  namespace: flux-system\n  envs: [settings.env]\n"
            "generatorOptions: {disableNameSuffixHash: true}\n"),
        "clusters/prod/settings.env": "REPLICAS=2\n",
        "clusters/prod/web.yaml": ks("web", "./apps/web", (
            "  postBuild:\n    substituteFrom:\n    - {kind: ConfigMap, name: cluster-settings}\n")),
        "apps/web/kustomization.yaml": "resources: [deploy.yaml]\n",
        "apps/web/deploy.yaml": DEPLOY,
        ".kzgit.toml": "[validate]\nstrict = true\nmissing-schemas = \"skip\"\n",
    })
    monkeypatch.chdir(top)
    assert main(["hook", "validate", "--all"]) == 0, capsys.readouterr().out
    capsys.readouterr()
    (top / "clusters/prod/settings.env").write_text("REPLICAS=two\n")
    assert main(["hook", "validate", "clusters/prod/settings.env"]) == 1
    assert 'flux:flux-system/web: Deployment/web: /spec/replicas: expected integer, got string ' \
           '"two"' in capsys.readouterr().out
    (top / "clusters/prod/settings.env").write_text("REPLICAS=3\n")
    (top / "clusters/prod/kustomization.yaml").write_text(
        (top / "clusters/prod/kustomization.yaml").read_text().replace(
            "envs: [settings.env]", "literals: [REPLICAS=four]"))
    assert main(["hook", "validate", "clusters/prod/kustomization.yaml"]) == 1
    assert '"four"' in capsys.readouterr().out
    # a file no generator of it reads reaches no user
    (top / "clusters/prod/other.env").write_text("X=1\n")
    assert main(["hook", "render", "-v", "clusters/prod/other.env"]) == 0
    assert "flux:flux-system/web" not in capsys.readouterr().err
