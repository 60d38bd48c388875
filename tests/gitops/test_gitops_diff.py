"""kzgit diff per application: a section headed by the application's id, each side rendered
with its own specs and its own Kustomize release."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Callable, Dict

import pytest

from gitops_repos import REPO_URL
from kzgit.cli.main import main


def app(name: str, path: str, kustomize: str = "") -> str:
    extra = "".join(f"    {line}\n" for line in kustomize.strip("\n").split("\n")) if kustomize else ""
    return (f"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n"
            f"  namespace: argocd\nspec:\n  destination: {{namespace: {name}}}\n  source:\n"
            f"    repoURL: {REPO_URL}\n    path: {path}\n{extra}")


DEPLOY = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n"
          "    spec:\n      containers:\n      - {name: web, image: nginx:1.25}\n")


def commit(top: Path, files: Dict[str, str], message: str) -> None:
    for rel, text in files.items():
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text(text)
    subprocess.run(["git", "-C", str(top), "add", "-A"], check=True, timeout=60)
    subprocess.run(["git", "-C", str(top), "commit", "-qm", message], check=True, timeout=60)


@pytest.fixture
def argo(repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    top = repo({
        "argocd/web.yaml": app("web", "apps/web", "kustomize:\n  images: [nginx:1.26]\n"),
        "apps/web/kustomization.yaml": "resources: [deploy.yaml]\nbuildMetadata: [managedByLabel]\n",
        "apps/web/deploy.yaml": DEPLOY,
        ".kzgit.toml": 'kustomize-version = "argocd-3.0"\n',
    })
    monkeypatch.chdir(top)
    return top


def test_an_image_override_shows_as_the_rendered_change(argo: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    commit(argo, {"argocd/web.yaml": app("web", "apps/web", "kustomize:\n  images: [nginx:1.27]\n")},
           "bump")
    assert main(["diff", "--base", "HEAD~1", "--head", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 application affected (1 changed); resources: 0 added, 0 removed, "
                          "1 changed\napp argocd:argocd/web: 1 changed\n")
    assert "-      - image: nginx:1.26\n+      - image: nginx:1.27\n" in out
    assert main(["diff", "--base", "HEAD~1", "--head", "HEAD", "--format", "json"]) == 0
    roots = json.loads(capsys.readouterr().out)["roots"]
    assert [(r["root"], r["app"], r["status"], r["file"]) for r in roots] == [
        ("argocd:argocd/web", "argocd:argocd/web", "changed", "argocd/web.yaml")]


def test_a_deployer_upgrade_shows_what_the_new_kustomize_changes(
        argo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Argo CD 3.0 runs Kustomize 5.6.0, 3.3 runs 5.8.1: the managed-by label kustomize writes
    changes (kzgit.versions SUPPORTED), and only an upgrade of the head shows it."""
    commit(argo, {".kzgit.toml": 'kustomize-version = "argocd-3.3"\n'}, "upgrade argo cd")
    assert main(["diff", "--base", "HEAD~1", "--head", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert "app argocd:argocd/web: 1 changed" in out
    assert "-    app.kubernetes.io/managed-by: kustomize-(devel)\n" \
           "+    app.kubernetes.io/managed-by: kustomize-v5.8.1\n" in out


def test_an_application_added_shows_all_its_resources(argo: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    commit(argo, {"argocd/api.yaml": app("api", "apps/api"),
                  "apps/api/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api\n"},
           "add api")
    assert main(["diff", "--base", "HEAD~1", "--head", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert "app argocd:argocd/api: added (1 resource)\nadded ConfigMap/api\n" in out
    assert "argocd:argocd/web" not in out   # not reached by the change


def test_an_applications_kustomize_version_bump(argo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """spec.source.kustomize.version through argocd-cm: each side renders with its own."""
    cm = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\n  namespace: argocd\n"
          "data:\n  kustomize.path.v5.6.0: /opt/kustomize-5.6.0\n"
          "  kustomize.path.v5.8.1: /opt/kustomize-5.8.1\n")
    commit(argo, {"argocd/cm.yaml": cm,
                  "argocd/web.yaml": app("web", "apps/web", "kustomize:\n  version: v5.6.0\n")},
           "pin 5.6.0")
    commit(argo, {"argocd/web.yaml": app("web", "apps/web", "kustomize:\n  version: v5.8.1\n")},
           "bump to 5.8.1")
    assert main(["diff", "--base", "HEAD~1", "--head", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert "app argocd:argocd/web: 1 changed" in out
    assert "+    app.kubernetes.io/managed-by: kustomize-v5.8.1\n" in out


def test_build_options_come_from_the_base(argo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A head whose argocd-cm loosens the load restrictor renders with the base's options."""
    commit(argo, {"apps/shared/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\n",
                  "apps/web/kustomization.yaml": "resources: [deploy.yaml, ../shared/cm.yaml]\n"},
           "reach outside the root")
    commit(argo, {"argocd/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\n"
                                    "  namespace: argocd\ndata:\n  kustomize.buildOptions: "
                                    "--load-restrictor LoadRestrictionsNone\n"}, "loosen")
    assert main(["diff", "--base", "HEAD~1", "--head", "HEAD"]) == 4
    out = capsys.readouterr().out
    assert "app argocd:argocd/web: does not render at HEAD:" in out
    assert "is not in or below" in out


def test_an_application_deploying_a_root_as_it_is_is_one_section(
        repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The root's change is the application's: one section, headed by the application, with
    what the root's render shows; a root deployed with overrides keeps its own section."""
    top = repo({
        "argocd/web.yaml": app("web", "apps/web"),
        "argocd/api.yaml": app("api", "apps/api", "kustomize:\n  namePrefix: prod-\n"),
        "apps/web/kustomization.yaml": "resources: [deploy.yaml]\n",
        "apps/web/deploy.yaml": DEPLOY,
        "apps/api/kustomization.yaml": "resources: [deploy.yaml]\n",
        "apps/api/deploy.yaml": DEPLOY,
    })
    monkeypatch.chdir(top)
    commit(top, {"apps/web/deploy.yaml": DEPLOY.replace("1.25", "1.26"),
                 "apps/api/deploy.yaml": DEPLOY.replace("1.25", "1.27")}, "bump")
    assert main(["diff", "--base", "HEAD~1", "--head", "HEAD", "--format", "json"]) == 0
    roots = json.loads(capsys.readouterr().out)["roots"]
    got = {r["root"]: (r["app"], r["status"], r["file"]) for r in roots}
    assert got == {
        "apps/api": (None, "changed", "apps/api/kustomization.yaml"),
        "argocd:argocd/api": ("argocd:argocd/api", "changed", "argocd/api.yaml"),
        "argocd:argocd/web": ("argocd:argocd/web", "changed", "argocd/web.yaml")}, got
    web = next(r for r in roots if r["root"] == "argocd:argocd/web")
    assert "+      - image: nginx:1.26" in web["resources"][0]["diff"]
    # the application's manifest gains an override: no longer the root as it is at the head
    commit(top, {"argocd/web.yaml": app("web", "apps/web", "kustomize:\n  namePrefix: x-\n"),
                 "apps/web/deploy.yaml": DEPLOY.replace("1.25", "1.28")}, "prefix")
    assert main(["diff", "--base", "HEAD~1", "--head", "HEAD", "--format", "json"]) == 0
    roots = json.loads(capsys.readouterr().out)["roots"]
    assert {r["root"] for r in roots} >= {"apps/web", "argocd:argocd/web"}, roots


def test_a_parents_patch_of_its_children_shows_as_their_change(
        repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """An app of apps whose kustomization patches the Applications it lists: a pull request
    changing only that patch changes what each child deploys, and each child's section says so."""
    patch = ("resources: [one.yaml]\npatches:\n- target: {kind: Application}\n  patch: |-\n"
             "    - {op: add, path: /spec/source/kustomize, value: {namePrefix: %s}}\n")
    top = repo({
        "bootstrap/root.yaml": app("root", "root"),
        "root/kustomization.yaml": patch % "a-",
        "root/one.yaml": app("one", "apps/one"),
        "apps/one/kustomization.yaml": "resources: [cm.yaml]\n",
        "apps/one/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
    })
    monkeypatch.chdir(top)
    commit(top, {"root/kustomization.yaml": patch % "b-"}, "rename")
    assert main(["diff", "--base", "HEAD~1", "--head", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert "app argocd:argocd/one: 1 added, 1 removed\n" in out
    assert "removed ConfigMap/a-cm\n" in out and "added ConfigMap/b-cm\n" in out
