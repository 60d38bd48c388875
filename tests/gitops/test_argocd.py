"""Argo CD Applications rendered as the repo-server renders them.

Overrides: argo-cd ``util/kustomize/kustomize.go`` runs ``kustomize edit`` in its order before
``kustomize build``; each case compares kzgit's render with ``kubectl kustomize`` of the
kustomization those edits leave (kustomize ``kustomize/v5.8.1`` ``commands/edit``), and pins
the edit semantics themselves.  Directory applications: ``reposerver/repository/repository.go``
``findManifests``."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest
import yaml

from gitops_repos import REPO_URL, catalog_of, kubectl, kubectl_build, render_yaml
from kzgit.gitops import argocd
from kzgit.gitops.render import AppError, render_app
from kzgit.loader import DiskFS


def application(name: str, path: str, source_extra: str = "", spec_extra: str = "",
                repo_url: str = REPO_URL) -> str:
    src = "".join(f"    {line}\n" for line in source_extra.strip("\n").split("\n")) \
        if source_extra else ""
    spec = "".join(f"  {line}\n" for line in spec_extra.strip("\n").split("\n")) \
        if spec_extra else ""
    return (f"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n"
            f"  namespace: argocd\nspec:\n  project: default\n  destination:\n"
            f"    server: https://kubernetes.default.svc\n    namespace: {name}\n  source:\n"
            f"    repoURL: {repo_url}\n    targetRevision: HEAD\n    path: {path}\n{src}{spec}")


BASE_KUST = """
    resources: [deploy.yaml]
    commonLabels:
      app: web
    images:
    - name: nginx
      newName: registry.example.com/nginx
      newTag: "1.25"
    """
DEPLOY = """
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
    spec:
      replicas: 1
      selector:
        matchLabels: {run: web}
      template:
        metadata:
          labels: {run: web}
        spec:
          containers:
          - name: web
            image: nginx:1.0
          - name: side
            image: busybox
    """


def test_overrides_in_argo_cd_order(repo: Callable[..., Path]) -> None:
    top = repo({
        "argocd/web.yaml": application("web", "apps/web", """
kustomize:
  namePrefix: prod-
  nameSuffix: -v1
  namespace: web-prod
  images:
  - nginx:1.27
  - busybox=ghcr.io/acme/busybox:${ARGOCD_APP_NAME}
  replicas:
  - name: web
    count: 3
  commonLabels:
    tier: front
  commonAnnotations:
    owner: team-a
  patches:
  - target: {kind: Deployment}
    patch: |-
      - op: add
        path: /metadata/annotations/patched
        value: "true"
  components: [../comp]
"""),
        "apps/web/kustomization.yaml": BASE_KUST,
        "apps/web/deploy.yaml": DEPLOY,
        "apps/comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\n"
                                        "kind: Component\nnameSuffix: -c\n",
    })
    got = render_yaml(top, "web")
    doc = yaml.safe_load(got)
    assert doc["metadata"]["name"] == "prod-web-c-v1"   # the component first, as kustomize
    assert doc["metadata"]["namespace"] == "web-prod"
    assert doc["spec"]["replicas"] == 3
    images = [c["image"] for c in doc["spec"]["template"]["spec"]["containers"]]
    # `kustomize edit set image nginx:1.27` replaces the file's entry whole: its newName goes
    assert images == ["nginx:1.27", "ghcr.io/acme/busybox:web"]
    catalog = catalog_of(top)
    app = catalog.find("web")
    source = app.extra["sources"][0]
    kfile, text = argocd.edited_kustomization(DiskFS(), str(top / "apps/web"),
                                              source["kustomize"],
                                              argocd.app_env(app, source), str(top))
    assert kfile == str(top / "apps/web/kustomization.yaml")
    edited = yaml.safe_load(text)
    assert [i["name"] for i in edited["images"]] == ["busybox", "nginx"]   # sorted by name
    want = kubectl_build(kubectl(), top, "apps/web", {"apps/web/kustomization.yaml": text},
                         restrictor="LoadRestrictionsRootOnly")
    assert got == want


def test_set_image_keeps_the_other_entries_whole(repo: Callable[..., Path]) -> None:
    """``kustomize edit set image`` keeps an entry it is not given as the file has it, every
    field included (setimage.go RunSetImage: ``o.imageMap[im.Name] = im``), so a ``tagSuffix``
    (types.Image, every supported release) survives an override of another image."""
    top = repo({
        "argocd/web.yaml": application("web", "apps/web", "kustomize:\n  images: [busybox:1.37]\n"),
        "apps/web/kustomization.yaml": "resources: [deploy.yaml]\nimages:\n- name: nginx\n"
                                       "  newName: mirror/nginx\n  tagSuffix: -alpine\n",
        "apps/web/deploy.yaml": DEPLOY,
    })
    catalog = catalog_of(top)
    app = catalog.find("web")
    source = app.extra["sources"][0]
    _, text = argocd.edited_kustomization(DiskFS(), str(top / "apps/web"), source["kustomize"],
                                          argocd.app_env(app, source), str(top))
    assert yaml.safe_load(text)["images"] == [
        {"name": "busybox", "newTag": "1.37"},
        {"name": "nginx", "newName": "mirror/nginx", "tagSuffix": "-alpine"}]
    got = render_yaml(top, "web")
    images = [c["image"] for c in yaml.safe_load(got)["spec"]["template"]["spec"]["containers"]]
    assert images == ["mirror/nginx:1.0-alpine", "busybox:1.37"]
    want = kubectl_build(kubectl(), top, "apps/web", {"apps/web/kustomization.yaml": (
        b"resources: [deploy.yaml]\nimages:\n- name: busybox\n  newTag: '1.37'\n"
        b"- name: nginx\n  newName: mirror/nginx\n  tagSuffix: -alpine\n")},
        restrictor="LoadRestrictionsRootOnly")
    assert got == want


def test_set_image_reads_the_deprecated_image_tags_as_images() -> None:
    """kustfile.Read runs FixKustomization before ``set image``: ``imageTags`` entries join
    ``images`` (api/types/kustomization.go), where an argument of the same name replaces one."""
    kus = {"images": [{"name": "redis", "newTag": "7"}],
           "imageTags": [{"name": "nginx", "newTag": "1.0"}, {"name": "pg", "newTag": "16"}]}
    argocd._set_images(kus, ["nginx:1.27"])
    assert kus == {"images": [{"name": "nginx", "newTag": "1.27"}, {"name": "pg", "newTag": "16"},
                              {"name": "redis", "newTag": "7"}]}


def test_the_build_environment_names_the_instance(repo: Callable[..., Path]) -> None:
    """repository.go newEnv: ARGOCD_APP_NAME is the request's AppName, the Application's
    InstanceName (types.go: ``<namespace>_<name>`` outside the control plane's namespace), and
    ARGOCD_APP_REVISION_SHORT_8 is there beside ARGOCD_APP_REVISION_SHORT."""
    images = "kustomize:\n  images: ['busybox=b:${ARGOCD_APP_NAME}-${ARGOCD_APP_REVISION_SHORT_8}']\n"
    top = repo({
        "argocd/web.yaml": application("web", "apps/web", images),
        "teams/web.yaml": application("web", "apps/web", images).replace(
            "namespace: argocd", "namespace: team-a", 1),
        "apps/web/kustomization.yaml": "resources: [deploy.yaml]\n",
        "apps/web/deploy.yaml": DEPLOY,
    })
    catalog = catalog_of(top)

    def image(app_id: str) -> str:
        doc = yaml.safe_load(render_app(catalog, catalog.find(app_id)).to_yaml())
        return str(doc["spec"]["template"]["spec"]["containers"][1]["image"])
    assert image("argocd:argocd/web") == "b:web-HEAD"
    assert image("argocd:team-a/web") == "b:team-a_web-HEAD"


@pytest.mark.parametrize("kustomize,error", [
    ("replicas: 3", 'spec.source.kustomize.replicas in body must be of type array: "integer"'),
    ("images:\n- {name: nginx, newTag: '1.2'}",
     'spec.source.kustomize.images[0] in body must be of type string: "object"'),
    ("commonLabels: [a, b]",
     'spec.source.kustomize.commonLabels in body must be of type object: "array"'),
    ("commonAnnotations: {tier: 1}",
     'spec.source.kustomize.commonAnnotations.tier in body must be of type string: "integer"'),
    ("namePrefix: [p]", 'spec.source.kustomize.namePrefix in body must be of type string: "array"'),
    ("forceCommonLabels: 'yes'",
     'spec.source.kustomize.forceCommonLabels in body must be of type boolean: "string"'),
    ("patches: [patch]", 'spec.source.kustomize.patches[0] in body must be of type object: "string"'),
    ("components: {a: b}",
     'spec.source.kustomize.components in body must be of type array: "object"'),
])
def test_a_kustomize_block_of_the_wrong_shape_is_a_finding(
        repo: Callable[..., Path], kustomize: str, error: str) -> None:
    """The Application CRD's schema types spec.source.kustomize: the API server refuses an
    Application whose fields have another type (in its words), so Argo CD never renders it;
    kzgit says so, naming the field's line, instead of failing on it."""
    top = repo({
        "argocd/web.yaml": application("web", "apps/web", "kustomize:\n" + "".join(
            f"  {line}\n" for line in kustomize.split("\n"))),
        "apps/web/kustomization.yaml": BASE_KUST,
        "apps/web/deploy.yaml": DEPLOY,
    })
    catalog = catalog_of(top)
    with pytest.raises(AppError) as e:
        render_app(catalog, catalog.find("web"))
    assert error in str(e.value)
    assert e.value.line is not None and e.value.line >= 14   # the field's line, not the app's


def test_parameter_overrides_at_the_path(repo: Callable[..., Path]) -> None:
    """repository.go mergeSourceParameters: ``.argocd-source.yaml`` then
    ``.argocd-source-<app>.yaml`` (what Argo CD Image Updater writes back) are merged into the
    source before its type is chosen; the path, repoURL, chart and revision stay the
    Application's.  A ``kustomize`` block there makes a directory of manifests Kustomize."""
    top = repo({
        "argocd/web.yaml": application("web", "apps/web", "kustomize:\n  namePrefix: a-\n"),
        "argocd/other.yaml": application("other", "apps/web"),
        "apps/web/kustomization.yaml": "resources: [deploy.yaml]\n",
        "apps/web/deploy.yaml": DEPLOY,
        "apps/web/.argocd-source.yaml": "kustomize:\n  nameSuffix: -all\npath: elsewhere\n",
        "apps/web/.argocd-source-web.yaml": "kustomize:\n  images: [busybox:1.37]\n"
                                            "  namePrefix: null\n",
    })
    catalog = catalog_of(top)
    web = yaml.safe_load(render_app(catalog, catalog.find("web")).to_yaml())
    assert web["metadata"]["name"] == "web-all"
    assert web["spec"]["template"]["spec"]["containers"][1]["image"] == "busybox:1.37"
    other = yaml.safe_load(render_app(catalog, catalog.find("other")).to_yaml())
    assert other["metadata"]["name"] == "web-all"
    assert other["spec"]["template"]["spec"]["containers"][1]["image"] == "busybox"
    assert catalog.find("other").path == "apps/web"


def test_merge_patch() -> None:
    assert argocd.merge_patch({"a": {"b": 1, "c": [1]}, "d": 1},
                              {"a": {"b": None, "c": [2]}, "e": {"f": None}}) == \
        {"a": {"c": [2]}, "d": 1, "e": {}}


def test_label_already_present_needs_force(repo: Callable[..., Path]) -> None:
    top = repo({
        "argocd/web.yaml": application("web", "apps/web", "kustomize:\n  commonLabels:\n"
                                                          "    app: other\n"),
        "argocd/forced.yaml": application("forced", "apps/web", "kustomize:\n  commonLabels:\n"
                                                                "    app: other\n"
                                                                "  forceCommonLabels: true\n"),
        "apps/web/kustomization.yaml": BASE_KUST,
        "apps/web/deploy.yaml": DEPLOY,
    })
    catalog = catalog_of(top)
    with pytest.raises(AppError, match=r"argocd:argocd/web \(argocd/web.yaml:\d+\): label app "
                                       r"already in kustomization file\. Use --force"):
        render_app(catalog, catalog.find("web"))
    doc = yaml.safe_load(render_app(catalog, catalog.find("forced")).to_yaml())
    assert doc["spec"]["selector"]["matchLabels"]["app"] == "other"


def test_without_selector_writes_a_labels_entry(repo: Callable[..., Path]) -> None:
    top = repo({
        "argocd/web.yaml": application("web", "apps/web", """
kustomize:
  commonLabels: {env: prod}
  labelWithoutSelector: true
  labelIncludeTemplates: true
"""),
        "apps/web/kustomization.yaml": BASE_KUST,
        "apps/web/deploy.yaml": DEPLOY,
    })
    doc = yaml.safe_load(render_yaml(top, "web"))
    assert doc["metadata"]["labels"] == {"app": "web", "env": "prod"}
    assert "env" not in doc["spec"]["selector"]["matchLabels"]
    assert doc["spec"]["template"]["metadata"]["labels"]["env"] == "prod"


def test_kustomize_version_through_argocd_cm(repo: Callable[..., Path]) -> None:
    top = repo({
        "argocd/cm.yaml": """
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: argocd-cm
              namespace: argocd
            data:
              kustomize.path.v5.6.0: /custom-tools/kustomize_5_6_0
            """,
        "argocd/old.yaml": application("old", "apps/web", "kustomize:\n  version: v5.6.0\n"),
        "argocd/bad.yaml": application("bad", "apps/web", "kustomize:\n  version: v4.5.7\n"),
        "apps/web/kustomization.yaml": BASE_KUST,
        "apps/web/deploy.yaml": DEPLOY,
    })
    catalog = catalog_of(top)
    old = catalog.find("old")
    assert old.renderer == "kustomize 5.6.0" and old.version == (5, 6, 0)
    bad = catalog.find("bad")
    assert bad.error is not None and "kustomize version v4.5.7 is not registered" in bad.error
    assert bad.error.startswith("argocd/bad.yaml:")
    assert "kind: Deployment" in render_app(catalog, old).to_yaml()


def test_build_options_from_argocd_cm(repo: Callable[..., Path]) -> None:
    files = {
        "argocd/web.yaml": application("web", "apps/web"),
        "apps/web/kustomization.yaml": "resources: [../shared/cm.yaml]\n",
        "apps/shared/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n",
    }
    top = repo(files)
    catalog = catalog_of(top)
    with pytest.raises(AppError, match="is not in or below"):
        render_app(catalog, catalog.find("web"))
    (top / "argocd/cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\n  namespace: argocd\n"
        "data:\n  kustomize.buildOptions: --load-restrictor LoadRestrictionsNone\n")
    catalog = catalog_of(top)
    assert "name: shared" in render_app(catalog, catalog.find("web")).to_yaml()


def test_directory_application(repo: Callable[..., Path]) -> None:
    top = repo({
        "argocd/plain.yaml": application("plain", "manifests", """
directory:
  recurse: true
  exclude: '{skip/*,*.tmp.yaml}'
"""),
        "manifests/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
        "manifests/b.json": '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}}',
        "manifests/notes.yaml": "just: some config\n",
        "manifests/sub/c.yml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
        "manifests/skip/d.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\n",
        "manifests/x.tmp.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
        "manifests/marked.yaml": "# +argocd:skip-file-rendering\napiVersion: v1\n"
                                 "kind: ConfigMap\nmetadata:\n  name: m\n",
    })
    catalog = catalog_of(top)
    app = catalog.find("plain")
    assert app.renderer == "directory"
    names = [r.obj["metadata"]["name"] for r in render_app(catalog, app).resources]
    # notes.yaml is no manifest (no kind, no metadata): ignored; skip/ and *.tmp.yaml excluded
    assert names == ["a", "b", "c"]


@pytest.mark.parametrize("text,error", [
    ('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}}\n'
     '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}',
     'Found multiple objects in "b.json". Only single objects are allowed in JSON files.'),
    ('[{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}}]',
     'Failed to unmarshal "b.json": '),
    ('{"apiVersion": "v1", "kind": ', 'Failed to unmarshal "b.json": '),
])
def test_a_json_file_of_a_directory_application_holds_one_object(
        repo: Callable[..., Path], text: str, error: str) -> None:
    """repository.go getObjsFromYAMLOrJSON: a ``.json`` file is one JSON object read with Go's
    json.Decoder (not kustomize's reader, which keeps the first object of several): a second
    one (``decoder.More()``) or a value that decodes neither as an object nor as an OCI image
    manifest fails the application."""
    top = repo({
        "argocd/plain.yaml": application("plain", "manifests"),
        "manifests/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
        "manifests/b.json": text,
    })
    catalog = catalog_of(top)
    with pytest.raises(AppError) as e:
        render_app(catalog, catalog.find("plain"))
    assert error in str(e.value)


def test_source_type_as_argo_cd_discovers_it(repo: Callable[..., Path]) -> None:
    top = repo({
        "argocd/chart.yaml": application("chart", "charts/web"),
        "argocd/both.yaml": application("both", "apps/both"),
        "argocd/elsewhere.yaml": application("elsewhere", "apps/both",
                                             repo_url="https://github.com/other/repo"),
        "charts/web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n",
        "apps/both/Chart.yaml": "apiVersion: v2\nname: both\nversion: 0.1.0\n",
        "apps/both/kustomization.yaml": "resources: [cm.yaml]\n",
        "apps/both/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: both\n",
    })
    catalog = catalog_of(top)
    assert catalog.find("chart").renderer == "helm: not rendered"
    assert catalog.find("both").renderer.startswith("kustomize ")   # a kustomization file wins
    other = catalog.find("elsewhere")
    assert not other.rendered and "not this repository" in (other.reason or "")


@pytest.mark.parametrize("arg,want", [
    ("nginx:1.27", {"name": "nginx", "newName": "", "newTag": "1.27", "digest": ""}),
    ("nginx=ghcr.io/x/nginx", {"name": "nginx", "newName": "ghcr.io/x/nginx", "newTag": "",
                               "digest": ""}),
    ("localhost:5000/a@sha256:ab", {"name": "localhost:5000/a", "newName": "", "newTag": "",
                                    "digest": "sha256:ab"}),
])
def test_parse_image(arg: str, want: dict) -> None:
    assert argocd.parse_image(arg) == want


def test_parse_image_refuses_a_bare_name() -> None:
    with pytest.raises(argocd.ArgoError, match="invalid format of image"):
        argocd.parse_image("nginx")


@pytest.mark.parametrize("text,want", [
    ("v-$ARGOCD_APP_NAME-${ARGOCD_APP_NAMESPACE}", "v-web-prod"),
    ("cost $$5", "cost $5"), ("$UNKNOWN.", "."), ("${", ""),
])
def test_env_expand(text: str, want: str) -> None:
    assert argocd.expand(text, {"ARGOCD_APP_NAME": "web", "ARGOCD_APP_NAMESPACE": "prod"}) == want


def test_target_revision(repo: Callable[..., Path]) -> None:
    """HEAD and the default branch render the working tree (what a pull request proposes); a
    tag renders the tag's tree; a ref the clone lacks is listed, not rendered."""
    import subprocess
    top = repo({
        "argocd/head.yaml": application("head", "apps/web").replace(
            "targetRevision: HEAD", "targetRevision: main"),
        "argocd/tagged.yaml": application("tagged", "apps/web").replace(
            "targetRevision: HEAD", "targetRevision: v1.0.0"),
        "argocd/gone.yaml": application("gone", "apps/web").replace(
            "targetRevision: HEAD", "targetRevision: release-9"),
        "apps/web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: v1\n",
    })
    subprocess.run(["git", "-C", str(top), "tag", "v1.0.0"], check=True, timeout=60)
    (top / "apps/web/cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: v2\n")
    catalog = catalog_of(top)
    assert "name: v2\n" in render_app(catalog, catalog.find("head")).to_yaml()
    assert "name: v1\n" in render_app(catalog, catalog.find("tagged")).to_yaml()
    assert catalog.find("gone").reason == "targetRevision release-9: this clone does not have it"


def test_a_directory_application_with_jsonnet_is_listed_not_rendered(
        repo: Callable[..., Path]) -> None:
    """Argo CD evaluates the ``.jsonnet`` files of a directory application (findManifests);
    kzgit does not: the application is listed with why, and not checked (docs/gitops.md),
    unless its include/exclude globs leave the jsonnet out."""
    top = repo({
        "argocd/js.yaml": application("js", "manifests"),
        "argocd/plain.yaml": application("plain", "manifests", "directory:\n  exclude: '*.jsonnet'\n"),
        "manifests/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
        "manifests/b.jsonnet": '{apiVersion: "v1", kind: "ConfigMap", metadata: {name: "b"}}\n',
    })
    catalog = catalog_of(top)
    js = catalog.find("js")
    assert js.renderer == "jsonnet: not rendered" and not js.rendered
    assert js.reason == "manifests/b.jsonnet: a jsonnet file of a directory application (kzgit " \
                        "does not evaluate jsonnet)"
    plain = catalog.find("plain")
    assert [r.obj["metadata"]["name"] for r in render_app(catalog, plain).resources] == ["a"]


def test_an_error_of_a_multi_source_application_points_at_its_sources(
        repo: Callable[..., Path]) -> None:
    """An error of ``spec.source`` in an Application with ``spec.sources`` is at the line of
    that list (not of ``spec:``, nor 1)."""
    top = repo({
        "argocd/multi.yaml": (
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: multi\n"
            "  namespace: argocd\nspec:\n  destination: {namespace: web}\n  sources:\n"
            f"  - repoURL: {REPO_URL}\n    path: apps/gone\n"),
        "apps/web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
    })
    app = catalog_of(top).find("multi")
    assert app.error == "argocd/multi.yaml:8: apps/gone: app path does not exist"
