"""kzgit-render and kzgit-validate check applications as their controllers deploy them."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Callable

import pytest

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
