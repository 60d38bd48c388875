"""Applications in the persistent render cache: a warm ``kzgit hook render`` renders no
application whose inputs (the files its render reads, its spec, what discovery resolved for
it) are unchanged, and renders again every one whose inputs changed."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Callable, Dict

import pytest

from kzgit.cli.main import main

from test_gitops_hooks import DEPLOY, SYNC, ks


@pytest.fixture
def fleet(repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    top = repo({
        "clusters/prod/flux-system/gotk-sync.yaml": SYNC,
        "clusters/prod/web.yaml": ks("web", "./apps/web",
                                     "  targetNamespace: web\n"
                                     "  postBuild:\n    substitute: {REPLICAS: '3'}\n"),
        "clusters/prod/gen.yaml": ks("gen", "./apps/gen", "  targetNamespace: gen\n"),
        "apps/web/kustomization.yaml": "resources: [deploy.yaml]\n",
        "apps/web/deploy.yaml": DEPLOY,
        "apps/gen/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gen\n",
        "argocd/app.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n"
                           "  name: shop\n  namespace: argocd\nspec:\n"
                           "  destination: {namespace: shop}\n  source:\n"
                           "    repoURL: ssh://git@github.com/acme/fleet\n    path: apps/web\n"
                           "    kustomize: {namePrefix: shop-}\n",
    })
    monkeypatch.chdir(top)
    return top


def statuses(capsys: pytest.CaptureFixture[str], *args: str) -> Dict[str, str]:
    """The -v listing of one ``kzgit hook render`` run: what was built, cached or failed."""
    code = main(["hook", "render", "-j", "1", "-v", *args])
    got = capsys.readouterr()
    out: Dict[str, str] = {}
    for line in got.err.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in ("built", "cached", "failed"):
            out[parts[1]] = parts[0]
    out["exit"] = str(code)
    return out


APPS = ("flux:flux-system/web", "flux:flux-system/gen", "argocd:argocd/shop")


def test_a_warm_run_renders_no_unchanged_application(fleet: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    first = statuses(capsys, "--all")
    assert [first[a] for a in APPS] == ["built"] * 3, first
    second = statuses(capsys, "--all")
    assert [second[a] for a in APPS] == ["cached"] * 3, second
    # --no-cache: every application rendered
    again = statuses(capsys, "--all", "--no-cache")
    assert [again[a] for a in APPS] == ["built"] * 3, again


def test_a_changed_input_renders_again(fleet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    statuses(capsys, "--all")
    # a file the render reads: both applications deploying apps/web, not the other
    (fleet / "apps/web/deploy.yaml").write_text(DEPLOY.replace("nginx", "nginx:1.27"))
    got = statuses(capsys, "--all")
    assert (got[APPS[0]], got[APPS[1]], got[APPS[2]]) == ("built", "cached", "built"), got
    # the spec (a post-build variable) and a file a generated kustomization lists
    (fleet / "clusters/prod/web.yaml").write_text(ks(
        "web", "./apps/web", "  targetNamespace: web\n"
        "  postBuild:\n    substitute: {REPLICAS: '4'}\n"))
    (fleet / "apps/gen/more.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: more\n")
    got = statuses(capsys, "--all")
    assert (got[APPS[0]], got[APPS[1]], got[APPS[2]]) == ("built", "built", "cached"), got
    # what the artifact leaves out (.sourceignore) is part of what Flux renders
    (fleet / ".sourceignore").write_text("apps/gen/more.yaml\n")
    subprocess.run(["git", "-C", str(fleet), "add", ".sourceignore"], check=True, timeout=60)
    got = statuses(capsys, "--all")
    assert got[APPS[1]] == "built", got
    assert statuses(capsys, "--all")[APPS[1]] == "cached"


def test_a_failure_is_replayed_with_its_line(fleet: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    (fleet / "apps/gen/broken.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n"
                                                "metadata: {name: [\n")
    assert main(["hook", "render", "--all", "-j", "1"]) == 1
    first = capsys.readouterr().out
    assert "clusters/prod/gen.yaml:" in first and "failed to decode Kubernetes YAML" in first
    got = statuses(capsys, "--all")
    assert got[APPS[1]] == "failed" and got["exit"] == "1", got
    assert main(["hook", "render", "--all", "-j", "1"]) == 1
    findings = [line for line in first.splitlines() if "-v lists them" not in line]
    assert findings and [line for line in capsys.readouterr().out.splitlines()
                         if "-v lists them" not in line] == findings   # from the cache
    (fleet / "apps/gen/broken.yaml").unlink()
    got = statuses(capsys, "--all")
    assert got[APPS[1]] == "built" and got["exit"] == "0", got

