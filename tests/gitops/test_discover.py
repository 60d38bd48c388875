"""Discovery: the applications of small real-shaped repositories, as the cluster receives them."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Callable, Dict

import pytest

from gitops_repos import REPO_URL, catalog_of
from kzgit.cli.main import main
from kzgit.errors import UsageError
from kzgit.gitops.render import render_app
from kzgit.gitops.urls import normalise

GIT_SYNC = """
    apiVersion: source.toolkit.fluxcd.io/v1
    kind: GitRepository
    metadata:
      name: flux-system
      namespace: flux-system
    spec:
      interval: 1m
      ref:
        branch: main
      url: ssh://git@github.com/acme/fleet
      ignore: |
        /.archive/
    ---
    apiVersion: kustomize.toolkit.fluxcd.io/v1
    kind: Kustomization
    metadata:
      name: flux-system
      namespace: flux-system
    spec:
      interval: 10m
      path: ./clusters/{cluster}
      sourceRef:
        kind: GitRepository
        name: flux-system
    """


def ks(name: str, path: str, extra: str = "", namespace: str = "flux-system",
       source: str = "kind: GitRepository\n    name: flux-system") -> str:
    body = (f"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n"
            f"  name: {name}\n  namespace: {namespace}\nspec:\n  interval: 10m\n  path: {path}\n"
            f"  sourceRef:\n    {source}\n")
    return body + "".join(f"  {line}\n" for line in extra.strip("\n").split("\n") if extra)


CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"


def test_a_parent_patches_its_children(repo: Callable[..., Path]) -> None:
    """onedr0p/home-ops's shape: the cluster Kustomization patches every child's spec; a
    partial Kustomization used as a patch file is no application."""
    top = repo({
        "clusters/prod/flux-system/gotk-sync.yaml": GIT_SYNC.replace("{cluster}", "prod"),
        "clusters/prod/cluster-apps.yaml": ks("cluster-apps", "./apps", """
patches:
- target: {group: kustomize.toolkit.fluxcd.io, kind: Kustomization}
  patch: |-
    apiVersion: kustomize.toolkit.fluxcd.io/v1
    kind: Kustomization
    metadata:
      name: _
    spec:
      decryption:
        provider: sops
"""),
        "flux/ks-patch.yaml": """
            apiVersion: kustomize.toolkit.fluxcd.io/v1
            kind: Kustomization
            metadata:
              name: _
            spec:
              postBuild:
                substitute:
                  COLOR: blue
            """,
        "apps/kustomization.yaml": """
            resources: [web/ks.yaml]
            patches:
            - path: ../flux/ks-patch.yaml
              target: {kind: Kustomization}
            """,
        "apps/web/ks.yaml": ks("web", "./apps/web/app", "targetNamespace: web"),
        "apps/web/app/cm.yaml": CM.format(name="web") + "data:\n  color: ${COLOR:=red}\n",
        ".archive/old/ks.yaml": ks("old", "./.archive/old/app"),
    })
    catalog = catalog_of(top)
    ids = [a.id for a in catalog.apps]
    assert ids == ["flux:flux-system/flux-system", "flux:flux-system/cluster-apps",
                   "flux:flux-system/web"]
    web = catalog.find("web")
    assert (web.file, web.line, web.parent) == ("apps/web/ks.yaml", 1,
                                                "flux:flux-system/cluster-apps")
    assert web.obj["spec"]["postBuild"] == {"substitute": {"COLOR": "blue"}}
    assert web.obj["spec"]["decryption"] == {"provider": "sops"}
    assert "color: blue" in render_app(catalog, web).to_yaml()


def test_a_field_a_parent_changed_fails_where_the_parent_is(repo: Callable[..., Path]) -> None:
    """A child whose path the parent's patch sets to a directory that does not exist: the
    finding is at the parent (whose rendering set it), not at the child file's own line,
    which holds another value."""
    top = repo({
        "clusters/prod/flux-system/gotk-sync.yaml": GIT_SYNC.replace("{cluster}", "prod"),
        "clusters/prod/tenants.yaml": ks("tenants", "./tenants"),
        "tenants/kustomization.yaml": """
            resources: [team.yaml]
            patches:
            - target: {kind: Kustomization, name: team}
              patch: |-
                - {op: replace, path: /spec/path, value: ./apps/gone}
            """,
        "tenants/team.yaml": ks("team", "./apps/team"),
        "apps/team/cm.yaml": CM.format(name="team"),
    })
    team = catalog_of(top).find("team")
    assert team.error == (
        "clusters/prod/tenants.yaml:1: kustomization path not found: stat apps/gone: no such "
        "file or directory (spec.path as flux:flux-system/tenants renders it; "
        "tenants/team.yaml:8 holds another value)")


def test_ids_of_a_multi_cluster_repository(repo: Callable[..., Path]) -> None:
    files = {}
    for cluster in ("prod", "staging"):
        files[f"clusters/{cluster}/flux-system/gotk-sync.yaml"] = \
            GIT_SYNC.replace("{cluster}", cluster)
        files[f"clusters/{cluster}/infra.yaml"] = ks("infra", "./infra")
    files["infra/ks.yaml"] = ks("cert-manager", "./infra/cert-manager")
    files["infra/kustomization.yaml"] = "resources: [ks.yaml]\n"
    files["infra/cert-manager/cm.yaml"] = CM.format(name="cm")
    top = repo(files)
    catalog = catalog_of(top)
    ids = sorted(a.id for a in catalog.apps)
    assert ids == [
        "flux:flux-system/cert-manager@flux:flux-system/infra@clusters/prod",
        "flux:flux-system/cert-manager@flux:flux-system/infra@clusters/staging",
        "flux:flux-system/flux-system@clusters/prod/flux-system",
        "flux:flux-system/flux-system@clusters/staging/flux-system",
        "flux:flux-system/infra@clusters/prod",
        "flux:flux-system/infra@clusters/staging",
    ]
    with pytest.raises(UsageError, match="'infra' names 2 applications"):
        catalog.find("infra")
    assert catalog.find("flux:flux-system/infra@clusters/prod").path == "infra"


def test_sources_that_are_not_this_repository(repo: Callable[..., Path]) -> None:
    top = repo({
        "clusters/prod/flux-system/gotk-sync.yaml": GIT_SYNC.replace("{cluster}", "prod"),
        "clusters/prod/sources.yaml": """
            apiVersion: source.toolkit.fluxcd.io/v1
            kind: GitRepository
            metadata:
              name: moved
              namespace: flux-system
            spec:
              url: https://github.com/acme/old-fleet.git
              ref: {branch: main}
            ---
            apiVersion: source.toolkit.fluxcd.io/v1
            kind: GitRepository
            metadata:
              name: pinned
              namespace: flux-system
            spec:
              url: https://github.com/acme/fleet
              ref: {tag: v1.2.0}
            """,
        "clusters/prod/apps.yaml": "\n---\n".join([
            ks("oci", "./", source="kind: OCIRepository\n    name: podinfo"),
            ks("moved", "./apps", source="kind: GitRepository\n    name: moved"),
            ks("pinned", "./apps", source="kind: GitRepository\n    name: pinned"),
        ]),
        "apps/cm.yaml": CM.format(name="a"),
    })
    catalog = catalog_of(top)
    assert "OCIRepository flux-system/podinfo" in (catalog.find("oci").reason or "")
    assert "not this repository" in (catalog.find("moved").reason or "")
    assert catalog.find("pinned").reason == ("GitRepository flux-system/pinned follows tag v1.2.0: "
                                             "this clone does not have it")
    (top / ".kzgit.toml").write_text('[gitops]\nrepo-urls = ["git@github.com:acme/old-fleet"]\n')
    assert catalog_of(top).find("moved").rendered


def test_argo_app_of_apps_and_applicationsets(repo: Callable[..., Path]) -> None:
    def app(name: str, path: str) -> str:
        return (f"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n"
                f"  namespace: argocd\nspec:\n  destination: {{namespace: {name}}}\n  source:\n"
                f"    repoURL: {REPO_URL}\n    path: {path}\n")
    top = repo({
        "bootstrap/root.yaml": app("root", "argocd/apps"),
        "argocd/apps/web.yaml": app("web", "apps/web"),
        "argocd/apps/sets.yaml": f"""
            apiVersion: argoproj.io/v1alpha1
            kind: ApplicationSet
            metadata:
              name: by-dir
              namespace: argocd
            spec:
              generators:
              - git:
                  repoURL: {REPO_URL}.git
                  revision: HEAD
                  directories:
                  - path: apps/*
                  - path: apps/web
                    exclude: true
              template:
                metadata:
                  name: '{{{{path.basename}}}}-{{{{path[0]}}}}'
                spec:
                  destination: {{namespace: '{{{{path.basename}}}}'}}
                  source:
                    repoURL: {REPO_URL}
                    path: '{{{{path}}}}'
            ---
            apiVersion: argoproj.io/v1alpha1
            kind: ApplicationSet
            metadata:
              name: listed
              namespace: argocd
            spec:
              goTemplate: true
              generators:
              - list:
                  elements:
                  - {{cluster: east, dir: apps/api}}
              template:
                metadata:
                  name: 'api-{{{{.cluster}}}}'
                spec:
                  destination: {{namespace: api}}
                  source:
                    repoURL: {REPO_URL}
                    path: '{{{{.dir}}}}'
            ---
            apiVersion: argoproj.io/v1alpha1
            kind: ApplicationSet
            metadata:
              name: clusters
              namespace: argocd
            spec:
              generators:
              - clusters: {{}}
              template:
                metadata: {{name: 'x-{{{{name}}}}'}}
                spec: {{}}
            """,
        "apps/web/cm.yaml": CM.format(name="web"),
        "apps/api/cm.yaml": CM.format(name="api"),
    })
    catalog = catalog_of(top)
    ids = [a.id for a in catalog.apps]
    # breadth first, each parent's output in its order (the directory app reads sets.yaml
    # before web.yaml)
    assert ids == ["argocd:argocd/root", "argocd:argocd/by-dir", "argocd:argocd/listed",
                   "argocd:argocd/clusters", "argocd:argocd/web", "argocd:argocd/api-apps",
                   "argocd:argocd/api-east"]
    assert catalog.find("api-apps").path == "apps/api"
    assert catalog.find("api-apps").appset == "argocd:argocd/by-dir"
    assert catalog.find("api-east").renderer == "directory"
    clusters = catalog.find("clusters")
    assert clusters.expanded is False and "needs the cluster" in (clusters.reason or "")
    assert "name: api" in render_app(catalog, catalog.find("api-east")).to_yaml()


def test_applicationset_git_directories_as_the_repo_server_walks_them(
        repo: Callable[..., Path]) -> None:
    """repository.go GetGitDirectories: filepath.WalkDir of the checkout, hidden directories
    (and all below them) skipped (the repo-server's default, no --include-hidden-directories),
    in the walk's order (a directory's subtree before its next sibling: ``apps/one`` before
    ``apps-x``)."""
    top = repo({
        "set.yaml": f"""
            apiVersion: argoproj.io/v1alpha1
            kind: ApplicationSet
            metadata:
              name: dirs
              namespace: argocd
            spec:
              generators:
              - git:
                  repoURL: {REPO_URL}
                  revision: HEAD
                  directories:
                  - path: '*'
                  - path: 'apps/*'
                  - path: '.hidden/*'
              template:
                metadata:
                  name: 'x-{{{{path.basenameNormalized}}}}'
                spec:
                  destination: {{namespace: x}}
                  source:
                    repoURL: {REPO_URL}
                    path: '{{{{path}}}}'
            """,
        **{f"{d}/cm.yaml": CM.format(name="cm") for d in (
            ".hidden/x", "apps/one/base", "apps/.two", "apps/three", "apps-x")},
    })
    catalog = catalog_of(top)
    assert [a.path for a in catalog.apps if a.appset] == ["apps", "apps/one", "apps/three",
                                                          "apps-x"]


def test_kzgit_apps_json(repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    top = repo({
        "clusters/prod/flux-system/gotk-sync.yaml": GIT_SYNC.replace("{cluster}", "prod"),
        "clusters/prod/apps.yaml": ks("apps", "./apps"),
        "apps/cm.yaml": CM.format(name="a"),
    })
    assert main(["apps", "--format", "json", str(top)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["apps"][1] == {"id": "flux:flux-system/apps", "kind": "Kustomization",
                              "path": "apps", "renderer": "kustomize 5.8.1",
                              "file": "clusters/prod/apps.yaml", "line": 1,
                              "parent": "flux:flux-system/flux-system"}
    assert main(["build", "--app", "apps", str(top)]) == 0
    assert capsys.readouterr().out == "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
    assert main(["build", "--app", "nope", str(top)]) == 2


@pytest.mark.parametrize("url,want", [
    ("https://github.com/Acme/Fleet.git", "github.com/Acme/Fleet"),
    ("https://GitHub.com/Acme/Fleet/", "github.com/Acme/Fleet"),
    ("ssh://git@github.com:22/Acme/Fleet.git", "github.com/Acme/Fleet"),
    ("git@github.com:Acme/Fleet.git", "github.com/Acme/Fleet"),
    ("http://user@gitea.local/acme/fleet", "gitea.local/acme/fleet"),
    ("oci://ghcr.io/acme/manifests", None),
    ("./local/path", None),
])
def test_normalise(url: str, want: str) -> None:
    assert normalise(url) == want


def test_applications_a_helm_chart_makes_are_listed_not_rendered(repo: Callable[..., Path]) -> None:
    top = repo({
        "bootstrap/root.yaml": f"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n"
                               f"  name: root\n  namespace: argocd\nspec:\n  source:\n"
                               f"    repoURL: {REPO_URL}\n    path: charts/apps\n",
        "charts/apps/Chart.yaml": "apiVersion: v2\nname: apps\nversion: 0.1.0\n",
        "charts/apps/templates/web.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: Application\n"
                                          "metadata:\n  name: web\n  namespace: argocd\nspec:\n"
                                          "  source:\n    repoURL: '{{ .Values.repo }}'\n"
                                          "    path: apps/web\n",
    })
    catalog = catalog_of(top)
    assert catalog.find("root").renderer == "helm: not rendered"
    web = catalog.find("argocd:argocd/charts/apps/templates/web.yaml")
    assert web.renderer == "helm: not rendered" and not web.rendered
    assert "made by the Helm chart charts/apps" in (web.reason or "")


def test_a_helm_template_of_applications_is_listed(repo: Callable[..., Path]) -> None:
    """argoproj/argocd-example-apps's app-of-apps: a chart whose template ranges over values."""
    top = repo({
        "apps/Chart.yaml": "apiVersion: v2\nname: apps\nversion: 0.1.0\n",
        "apps/templates/applications.yaml": "{{- range .Values.applications }}\n"
                                            "apiVersion: argoproj.io/v1alpha1\nkind: Application\n"
                                            "metadata:\n  name: {{ .name | quote }}\n---\n{{ end -}}\n",
        "rollouts/templates/rollout.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\n"
                                           "metadata:\n  name: {{ .Values.name }}\n",
        "rollouts/Chart.yaml": "apiVersion: v2\nname: rollouts\nversion: 0.1.0\n",
    })
    catalog = catalog_of(top)
    assert [(a.id, a.renderer) for a in catalog.apps] == [
        ("argocd:argocd/apps/templates/applications.yaml", "helm: not rendered")]
    assert "made by the Helm chart apps" in (catalog.apps[0].reason or "")


def test_a_git_repository_on_another_ref_renders_that_ref(repo: Callable[..., Path]) -> None:
    """A GitRepository of this repository pinned to a tag renders the tag's tree."""
    top = repo({
        "clusters/prod/flux-system/gotk-sync.yaml": GIT_SYNC.replace("{cluster}", "prod"),
        "clusters/prod/sources.yaml": """
            apiVersion: source.toolkit.fluxcd.io/v1
            kind: GitRepository
            metadata:
              name: pinned
              namespace: flux-system
            spec:
              url: https://github.com/acme/fleet
              ref: {tag: v1.0.0}
            """,
        "clusters/prod/apps.yaml": ks("pinned", "./apps", source="kind: GitRepository\n    name: pinned"),
        "apps/cm.yaml": CM.format(name="v1"),
    })
    subprocess.run(["git", "-C", str(top), "tag", "v1.0.0"], check=True, timeout=60)
    (top / "apps/cm.yaml").write_text(CM.format(name="v2"))   # the work tree moved on
    catalog = catalog_of(top)
    app = catalog.find("pinned")
    assert app.rendered
    assert "name: v1\n" in render_app(catalog, app).to_yaml()


def test_a_tenant_on_another_branch_at_the_top_delivers_nothing_of_this_tree(
        repo: Callable[..., Path]) -> None:
    """fluxcd/flux2-multi-tenancy's shape: a tenant's Kustomization (no spec.path: the top)
    follows a GitRepository of this repository on another branch.  It renders that branch's
    tree, not the work tree: the applications of the work tree are still found from their
    own entry points, and the tenant as its parent delivers it (patched)."""
    top = repo({
        "clusters/prod/tenants.yaml": ks("tenants", "./tenants/prod"),
        "tenants/base/kustomization.yaml": "resources: [sync.yaml]\n",
        "tenants/base/sync.yaml": """
            apiVersion: source.toolkit.fluxcd.io/v1
            kind: GitRepository
            metadata:
              name: team
              namespace: apps
            spec:
              url: https://github.com/acme/fleet
              ref: {branch: team}
            ---
            apiVersion: kustomize.toolkit.fluxcd.io/v1
            kind: Kustomization
            metadata:
              name: team
              namespace: apps
            spec:
              sourceRef: {kind: GitRepository, name: team}
            """,
        "tenants/prod/kustomization.yaml": "resources: [../base]\npatches:\n- path: patch.yaml\n",
        "tenants/prod/patch.yaml": "apiVersion: kustomize.toolkit.fluxcd.io/v1\n"
                                   "kind: Kustomization\nmetadata:\n  name: team\n"
                                   "  namespace: apps\nspec:\n  path: ./prod\n",
        "prod/cm.yaml": CM.format(name="team"),
    })
    subprocess.run(["git", "-C", str(top), "branch", "team"], check=True, timeout=60)
    catalog = catalog_of(top)
    assert [(a.id, a.path, a.parent) for a in catalog.apps] == [
        ("flux:flux-system/tenants", "tenants/prod", None),
        ("flux:apps/team", "prod", "flux:flux-system/tenants")]
    assert "name: team\n" in render_app(catalog, catalog.find("team")).to_yaml()


def test_an_entry_point_delivered_through_a_base_is_its_parents_child(
        repo: Callable[..., Path]) -> None:
    """A Kustomization in a base that a deeper application's kustomization lists (and patches)
    is no entry point of its own, whatever order the walk meets them in."""
    top = repo({
        "clusters/prod/flux-system/gotk-sync.yaml": GIT_SYNC.replace("{cluster}", "prod"),
        "clusters/prod/tenants.yaml": ks("tenants", "./tenants/prod"),
        "tenants/base/kustomization.yaml": "resources: [team.yaml]\n",
        "tenants/base/team.yaml": ks("team", "./apps/team", namespace="apps", source=(
            "kind: GitRepository\n    name: flux-system\n    namespace: flux-system")),
        "tenants/prod/kustomization.yaml": "resources: [../base]\npatches:\n- path: patch.yaml\n",
        "tenants/prod/patch.yaml": "apiVersion: kustomize.toolkit.fluxcd.io/v1\n"
                                   "kind: Kustomization\nmetadata:\n  name: team\n"
                                   "  namespace: apps\nspec:\n  path: ./apps/team-prod\n",
        "apps/team-prod/cm.yaml": CM.format(name="team"),
    })
    catalog = catalog_of(top)
    assert [(a.id, a.path, a.error) for a in catalog.apps] == [
        ("flux:flux-system/flux-system", "clusters/prod", None),
        ("flux:flux-system/tenants", "tenants/prod", None),
        ("flux:apps/team", "apps/team-prod", None)]


def test_applicationset_git_files_generator(repo: Callable[..., Path]) -> None:
    """The git files generator: one Application per parameter set of each matching file."""
    top = repo({
        "argocd/set.yaml": f"""
            apiVersion: argoproj.io/v1alpha1
            kind: ApplicationSet
            metadata:
              name: envs
              namespace: argocd
            spec:
              generators:
              - git:
                  repoURL: {REPO_URL}
                  revision: HEAD
                  files:
                  - path: "envs/*/config.json"
                  - path: "envs/old/config.json"
                    exclude: true
              template:
                metadata:
                  name: 'web-{{{{cluster.name}}}}-{{{{path.basename}}}}'
                spec:
                  destination: {{namespace: '{{{{cluster.namespace}}}}'}}
                  source:
                    repoURL: {REPO_URL}
                    path: 'apps/{{{{path[1]}}}}'
            """,
        "envs/dev/config.json": '{"cluster": {"name": "east", "namespace": "web-dev"}}',
        "envs/prod/config.json": '{"cluster": {"name": "west", "namespace": "web-prod"}}',
        "envs/old/config.json": '{"cluster": {"name": "gone", "namespace": "x"}}',
        "apps/dev/cm.yaml": CM.format(name="dev"),
        "apps/prod/cm.yaml": CM.format(name="prod"),
    })
    catalog = catalog_of(top)
    assert [a.id for a in catalog.apps] == ["argocd:argocd/envs", "argocd:argocd/web-east-dev",
                                            "argocd:argocd/web-west-prod"]
    dev = catalog.find("web-east-dev")
    assert dev.path == "apps/dev" and dev.obj["spec"]["destination"]["namespace"] == "web-dev"
    assert "name: dev" in render_app(catalog, dev).to_yaml()


def test_applicationset_matrix_of_git_and_list(repo: Callable[..., Path]) -> None:
    top = repo({
        "argocd/set.yaml": f"""
            apiVersion: argoproj.io/v1alpha1
            kind: ApplicationSet
            metadata:
              name: grid
              namespace: argocd
            spec:
              goTemplate: true
              generators:
              - matrix:
                  generators:
                  - git:
                      repoURL: {REPO_URL}
                      revision: HEAD
                      directories:
                      - path: apps/*
                  - list:
                      elements:
                      - {{env: dev}}
                      - {{env: prod}}
              template:
                metadata:
                  name: '{{{{.path.basename}}}}-{{{{.env}}}}'
                spec:
                  destination: {{namespace: '{{{{.env}}}}'}}
                  source:
                    repoURL: {REPO_URL}
                    path: '{{{{.path.path}}}}'
            ---
            apiVersion: argoproj.io/v1alpha1
            kind: ApplicationSet
            metadata:
              name: clusters-grid
              namespace: argocd
            spec:
              generators:
              - matrix:
                  generators:
                  - clusters: {{}}
                  - list: {{elements: [{{a: b}}]}}
              template: {{metadata: {{name: x}}, spec: {{}}}}
            """,
        "apps/web/cm.yaml": CM.format(name="web"),
        "apps/api/cm.yaml": CM.format(name="api"),
    })
    catalog = catalog_of(top)
    assert [a.id for a in catalog.apps] == [
        "argocd:argocd/grid", "argocd:argocd/clusters-grid", "argocd:argocd/api-dev",
        "argocd:argocd/api-prod", "argocd:argocd/web-dev", "argocd:argocd/web-prod"]
    assert catalog.find("web-prod").obj["spec"]["destination"] == {"namespace": "prod"}
    grid = catalog.find("clusters-grid")
    assert grid.expanded is False and "needs the cluster's state" in (grid.reason or "")


def bootstrap_files() -> Dict[str, str]:
    root = (f"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: root\n"
            f"spec:\n  destination: {{namespace: argocd}}\n  source:\n"
            f"    repoURL: {REPO_URL}\n    path: apps/staging\n")
    child = (f"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\n"
             f"  namespace: argocd\nspec:\n  destination: {{namespace: web}}\n  source:\n"
             f"    repoURL: {REPO_URL}\n    path: web\n")
    return {
        "bootstrap/kustomization.yaml": """
            namespace: argocd
            resources: [root.yaml]
            patches:
            - target: {kind: Application, name: root}
              patch: |-
                - {op: replace, path: /spec/source/path, value: apps/prod}
            """,
        "bootstrap/root.yaml": root,
        "apps/prod/web.yaml": child,
        "apps/staging/web.yaml": child.replace("name: web", "name: web-staging"),
        "web/cm.yaml": CM.format(name="web"),
    }


def test_a_bootstrap_kustomization_delivers_its_applications_patched(
        repo: Callable[..., Path]) -> None:
    """A kustomization no application renders (applied with kubectl apply -k) that patches
    the root Application it lists: discovery starts from the Application it applies."""
    top = repo(bootstrap_files())
    catalog = catalog_of(top)
    by_id = {a.id: a for a in catalog.apps}
    # (the staging child is delivered by nothing now: an entry point of its own, as written)
    assert sorted(by_id) == ["argocd:argocd/root", "argocd:argocd/web",
                             "argocd:argocd/web-staging"], sorted(by_id)
    root_app = by_id["argocd:argocd/root"]
    assert (root_app.file, root_app.line, root_app.path) == ("bootstrap/root.yaml", 1, "apps/prod")
    assert by_id["argocd:argocd/web"].parent == "argocd:argocd/root"
    # a kustomization that does not build leaves the file's object as written
    (top / "bootstrap/kustomization.yaml").write_text(
        "resources: [root.yaml, missing.yaml]\npatches:\n- path: nope.yaml\n")
    catalog = catalog_of(top)
    assert catalog.find("root").path == "apps/staging"


def test_a_change_of_the_bootstrap_reaches_what_it_applies(
        repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    top = repo(bootstrap_files())
    monkeypatch.chdir(top)
    assert main(["hook", "render", "-v", "--no-cache", "bootstrap/kustomization.yaml"]) == 0
    err = capsys.readouterr().err
    assert "argocd:argocd/root" in err and "argocd:argocd/web " in err, err
    assert main(["hook", "render", "-v", "--no-cache", "web/cm.yaml"]) == 0
    err = capsys.readouterr().err
    assert "argocd:argocd/root" not in err and "argocd:argocd/web " in err, err
