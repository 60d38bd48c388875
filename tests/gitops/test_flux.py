"""Flux Kustomizations rendered as the kustomize-controller renders them.

The build part is compared byte for byte with ``kubectl kustomize`` (kubectl 1.36, Kustomize
5.8.1) of the kustomization Flux generates (fluxcd/pkg ``kustomize/kustomize_generator.go``)
written into a copy of the artifact; substitution and ``commonMetadata`` follow
``kustomize_varsub.go`` and ``ssa/utils`` (expectations written from those sources)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest
import yaml

from gitops_repos import as_flux_builds, catalog_of, kubectl, kubectl_build, render_yaml
from kzgit.errors import BuildError
from kzgit.gitops import flux
from kzgit.gitops.render import AppError, render_app
from kzgit.loader import DiskFS
from kzgit.versions import parse

SYNC = """
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
    ---
    apiVersion: kustomize.toolkit.fluxcd.io/v1
    kind: Kustomization
    metadata:
      name: flux-system
      namespace: flux-system
    spec:
      interval: 10m
      path: ./clusters/prod
      prune: true
      sourceRef:
        kind: GitRepository
        name: flux-system
    """

DEPLOY = """
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: podinfo
    spec:
      replicas: ${REPLICAS:=2}
      selector:
        matchLabels: {app: podinfo}
      template:
        metadata:
          labels: {app: podinfo}
        spec:
          containers:
          - name: podinfo
            image: ghcr.io/stefanprodan/podinfo:6.0.0
    """


def ks(name: str, path: str, extra: str = "") -> str:
    return f"""
    apiVersion: kustomize.toolkit.fluxcd.io/v1
    kind: Kustomization
    metadata:
      name: {name}
      namespace: flux-system
    spec:
      interval: 10m
      path: {path}
      prune: true
      sourceRef:
        kind: GitRepository
        name: flux-system
    """.rstrip(" ") + "".join("      " + line + "\n" for line in extra.strip("\n").split("\n") if extra)


def test_generated_kustomization_is_what_kubectl_builds(repo: Callable[..., Path]) -> None:
    """A directory without a kustomization file: Flux lists its manifests (walk order, a
    subdirectory holding a kustomization as one entry, non-YAML and ignored files left out)."""
    top = repo({
        "clusters/prod/flux-system/gotk-sync.yaml": SYNC,
        "clusters/prod/apps.yaml": ks("apps", "./apps/web"),
        "apps/web/b-svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n",
        "apps/web/a-deploy.yml": DEPLOY.replace("${REPLICAS:=2}", "1"),
        "apps/web/README.md": "not a manifest\n",
        "apps/web/sub/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sub\n",
        "apps/web/kz/kustomization.yaml": "resources: [cm.yaml]\nnamePrefix: kz-\n",
        "apps/web/kz/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
        "apps/web/draft/.sourceignore": "*.yaml\n",
        "apps/web/draft/broken.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [\n",
    })
    fs = DiskFS()
    # without the artifact's ignore rules the broken file is scanned, and refused as Flux does
    with pytest.raises(BuildError, match="failed to decode Kubernetes YAML from .*broken.yaml"):
        flux.generate(fs, str(top / "apps/web"), {}, parse("5.8.1"))
    got = render_yaml(top, "apps")   # through the artifact: draft/broken.yaml is left out
    catalog = catalog_of(top)
    app = catalog.find("apps")
    from kzgit.gitops.sourceignore import IgnoreFS
    artifact = IgnoreFS(fs, str(top), app.extra["matcher"])
    kfile, text, created = flux.generate(artifact, str(top / "apps/web"), {}, parse("5.8.1"))
    assert created and kfile == str(top / "apps/web/kustomization.yaml")
    assert yaml.safe_load(text)["resources"] == [
        "./a-deploy.yml", "./b-svc.yaml", "./kz", "./sub/cm.yaml"]
    want = kubectl_build(kubectl(), top, "apps/web",
                         {"apps/web/kustomization.yaml": as_flux_builds(text)},
                         hidden=("apps/web/draft/broken.yaml",))
    assert got == want


def test_spec_fields_over_an_existing_kustomization(repo: Callable[..., Path]) -> None:
    """targetNamespace, namePrefix, patches appended, images merged into the file's entry,
    components (a missing one skipped with ignoreMissingComponents)."""
    top = repo({
        "clusters/prod/flux-system/gotk-sync.yaml": SYNC,
        "clusters/prod/apps.yaml": ks("apps", "./apps/web", """
targetNamespace: web
namePrefix: prod-
ignoreMissingComponents: true
components: [../comp, ../missing]
images:
- name: ghcr.io/stefanprodan/podinfo
  digest: sha256:0000000000000000000000000000000000000000000000000000000000000000
patches:
- target: {kind: Deployment}
  patch: |
    - op: replace
      path: /spec/replicas
      value: 5
"""),
        "apps/web/kustomization.yaml": """
            resources: [deploy.yaml]
            images:
            - name: ghcr.io/stefanprodan/podinfo
              newName: registry.example.com/podinfo
              newTag: 6.1.0
            """,
        "apps/web/deploy.yaml": DEPLOY.replace("${REPLICAS:=2}", "1"),
        "apps/comp/kustomization.yaml": """
            apiVersion: kustomize.config.k8s.io/v1alpha1
            kind: Component
            commonAnnotations: {component: "yes"}
            """,
    })
    got = render_yaml(top, "flux:flux-system/apps")
    doc = yaml.safe_load(got)
    assert doc["metadata"] == {"annotations": {"component": "yes"}, "name": "prod-podinfo",
                               "namespace": "web"}
    assert doc["spec"]["replicas"] == 5
    # the name is kept from the file; the digest replaces the tag (kustomize_generator.go)
    assert doc["spec"]["template"]["spec"]["containers"][0]["image"] == (
        "registry.example.com/podinfo@sha256:" + "0" * 64)
    catalog = catalog_of(top)
    app = catalog.find("apps")
    _, text, created = flux.generate(DiskFS(), str(top / "apps/web"), app.obj["spec"],
                                     parse("5.8.1"))
    assert not created
    assert yaml.safe_load(text)["components"] == ["../comp"]
    want = kubectl_build(kubectl(), top, "apps/web",
                         {"apps/web/kustomization.yaml": as_flux_builds(text)})
    assert got == want


def test_post_build_substitution(repo: Callable[..., Path]) -> None:
    top = repo({
        "clusters/prod/flux-system/gotk-sync.yaml": SYNC,
        "clusters/prod/vars.yaml": """
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: cluster-vars
              namespace: flux-system
            data:
              DOMAIN: example.com
              FLAG: "on"
            ---
            apiVersion: v1
            kind: Secret
            metadata:
              name: cluster-secrets
              namespace: flux-system
            data:
              TOKEN: czNjcjN0   # s3cr3t
            """,
        "clusters/prod/apps.yaml": ks("apps", "./apps/web", """
postBuild:
  substitute:
    REPLICAS: "3"
  substituteFrom:
  - kind: ConfigMap
    name: cluster-vars
  - kind: Secret
    name: cluster-secrets
  - kind: ConfigMap
    name: absent
    optional: true
commonMetadata:
  labels: {team: web}
  annotations: {owner: ops}
"""),
        "apps/web/deploy.yaml": DEPLOY,
        "apps/web/cm.yaml": """
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: settings
            data:
              host: web.${DOMAIN}
              token: ${TOKEN}
              shout: ${DOMAIN^^}
              escaped: $${DOMAIN}
            ---
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: verbatim
              annotations:
                kustomize.toolkit.fluxcd.io/substitute: disabled
            data:
              host: web.${DOMAIN}
            ---
            apiVersion: example.com/v1
            kind: Toggle
            metadata:
              name: t
            spec:
              enabled: ${FLAG}
            """,
    })
    docs = {d["metadata"]["name"]: d for d in yaml.safe_load_all(render_yaml(top, "apps"))}
    assert docs["podinfo"]["spec"]["replicas"] == 3
    assert docs["settings"]["data"] == {"host": "web.example.com", "token": "s3cr3t",
                                        "shout": "EXAMPLE.COM", "escaped": "${DOMAIN}"}
    assert docs["verbatim"]["data"] == {"host": "web.${DOMAIN}"}
    # the substituted text is read back as sigs.k8s.io/yaml reads it (YAML 1.1): "on" is true
    assert docs["t"]["spec"]["enabled"] is True
    for d in docs.values():   # commonMetadata on every object's own metadata
        assert d["metadata"]["labels"]["team"] == "web"
        assert d["metadata"]["annotations"]["owner"] == "ops"


def test_no_variable_no_substitution_unless_always(repo: Callable[..., Path]) -> None:
    """SubstituteVariables runs only when a variable is defined or substituteStrategy: Always."""
    files = {
        "clusters/prod/flux-system/gotk-sync.yaml": SYNC,
        "clusters/prod/apps.yaml": ks("apps", "./apps/web", "postBuild:\n  substitute: {}\n"),
        "apps/web/deploy.yaml": DEPLOY,
    }
    top = repo(files)
    assert "replicas: ${REPLICAS:=2}" in render_yaml(top, "apps")
    (top / "clusters/prod/apps.yaml").write_text(
        (top / "clusters/prod/apps.yaml").read_text().replace(
            "  substitute: {}", "  substituteStrategy: Always"))
    assert "replicas: 2\n" in render_yaml(top, "apps")


def test_strict_substitution_and_missing_source(repo: Callable[..., Path]) -> None:
    top = repo({
        "clusters/prod/flux-system/gotk-sync.yaml": SYNC,
        "clusters/prod/apps.yaml": ks("apps", "./apps/web", """
postBuild:
  substitute:
    OTHER: x
"""),
        "clusters/prod/other.yaml": ks("other", "./apps/web", """
postBuild:
  substituteFrom:
  - kind: ConfigMap
    name: nowhere
"""),
        "apps/web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
                            "data:\n  v: ${UNSET}\n",
        ".kzgit.toml": "[gitops]\nflux-strict-substitution = true\n",
    })
    catalog = catalog_of(top)
    with pytest.raises(AppError, match=r'flux:flux-system/apps \(clusters/prod/apps.yaml:\d+\): '
                                       r"post build failed for '~G_v1_ConfigMap/c'.*variable not "
                                       r'set \(strict mode\): "UNSET"'):
        render_app(catalog, catalog.find("apps"))
    with pytest.raises(AppError, match=r"clusters/prod/other.yaml:1[0-9]\): substitute from "
                                       r"'ConfigMap/nowhere' error"):
        render_app(catalog, catalog.find("other"))


def test_path_not_found_is_one_finding(repo: Callable[..., Path]) -> None:
    top = repo({
        "clusters/prod/flux-system/gotk-sync.yaml": SYNC,
        "clusters/prod/gone.yaml": ks("gone", "./apps/gone"),
        "clusters/prod/apps.yaml": ks("apps", "./apps/web"),
        "apps/web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
    })
    catalog = catalog_of(top)
    gone = catalog.find("gone")
    assert gone.error is not None and gone.error.startswith("clusters/prod/gone.yaml:")
    assert "kustomization path not found" in gone.error
    assert "name: c" in render_app(catalog, catalog.find("apps")).to_yaml()   # others render


@pytest.mark.parametrize("extra,error", [
    ("commonMetadata:\n  labels: [a]",
     'spec.commonMetadata.labels in body must be of type object: "array"'),
    ("commonMetadata:\n  annotations: {a: 1}",
     'spec.commonMetadata.annotations.a in body must be of type string: "integer"'),
    ("targetNamespace: 3", 'spec.targetNamespace in body must be of type string: "integer"'),
    ("namePrefix: [a]", 'spec.namePrefix in body must be of type string: "array"'),
    ("nameSuffix: true", 'spec.nameSuffix in body must be of type string: "boolean"'),
])
def test_a_spec_field_of_the_wrong_shape_is_a_finding(repo: Callable[..., Path], extra: str,
                                                      error: str) -> None:
    """The Kustomization CRD's schema types these fields: the API server refuses the object in
    its words (so the controller never renders it); kzgit neither drops nor converts them."""
    top = repo({
        "clusters/prod/apps.yaml": ks("apps", "./apps/web", extra),
        "apps/web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
    })
    catalog = catalog_of(top)
    with pytest.raises(AppError) as e:
        render_app(catalog, catalog.find("apps"))
    assert error in str(e.value)


def test_a_path_that_is_no_string_is_a_finding(repo: Callable[..., Path]) -> None:
    """A ``spec.path`` of another type is refused by the API server; it is not the top."""
    top = repo({
        "clusters/prod/apps.yaml": ks("apps", "3"),
        "apps/web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
    })
    app = catalog_of(top).find("apps")
    assert app.error == 'clusters/prod/apps.yaml:8: malformed: spec.path in body must be of ' \
                        'type string: "integer"'


def test_the_output_keeps_the_resources_order_as_flux_builds_it(repo: Callable[..., Path]) -> None:
    """fluxcd/pkg kustomize Build: krusty with a zero Reorder sorts nothing the kustomization
    does not ask to sort (api/krusty/kustomizer.go applySortOrder), where kubectl's default
    puts a Namespace first and a Service before a Deployment."""
    top = repo({
        "clusters/prod/flux-system/gotk-sync.yaml": SYNC,
        "clusters/prod/apps.yaml": ks("apps", "./apps/web", ""),
        "apps/web/kustomization.yaml": "resources: [deploy.yaml, svc.yaml, ns.yaml]\n",
        "apps/web/deploy.yaml": DEPLOY.replace("${REPLICAS:=2}", "1"),
        "apps/web/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n",
        "apps/web/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: web\n",
        "apps/sorted/kustomization.yaml": "resources: [../web]\nsortOptions: {order: legacy}\n",
        "clusters/prod/sorted.yaml": ks("sorted", "./apps/sorted", ""),
    })
    got = render_yaml(top, "flux:flux-system/apps")
    kinds = [d["kind"] for d in yaml.safe_load_all(got)]
    assert kinds == ["Deployment", "Service", "Namespace"]
    assert got == kubectl_build(kubectl(), top, "apps/web", {"apps/web/kustomization.yaml": (
        b"resources: [deploy.yaml, svc.yaml, ns.yaml]\nsortOptions: {order: fifo}\n")})
    # the kustomization's own sortOptions still sort
    kinds = [d["kind"] for d in yaml.safe_load_all(render_yaml(top, "flux:flux-system/sorted"))]
    assert kinds == ["Namespace", "Service", "Deployment"]


SOPS_ENV = ("USER=ENC[AES256_GCM,data:dXNlcg==,iv:aXY=,tag:dGFn,type:str]\n"
            "PASSWORD=ENC[AES256_GCM,data:cGFzcw==,iv:aXY=,tag:dGFn,type:str]\n"
            "sops_version=3.9.0\nsops_mac=ENC[AES256_GCM,data:bWFj,iv:aXY=,tag:dGFn,type:str]\n"
            "sops_lastmodified=2026-11-01T00:00:00Z\n")
SOPS_PATCH = """apiVersion: v1
kind: Secret
metadata:
  name: creds
stringData:
  token: ENC[AES256_GCM,data:dG9rZW4=,iv:aXY=,tag:dGFn,type:str]
sops:
  mac: ENC[AES256_GCM,data:bWFj,iv:aXY=,tag:dGFn,type:str]
  version: 3.9.0
"""


@pytest.mark.parametrize("decryption", [True, False])
def test_sops_encrypted_sources_are_decrypted_with_their_values_unknown(
        repo: Callable[..., Path], decryption: bool) -> None:
    """kustomize-controller decryptor.go DecryptSources: with decryption.provider sops, the
    env and files of a secretGenerator and the files of patches that SOPS encrypted are
    decrypted before the build (kzgit, holding no key, renders their values empty and says
    so); without it they are built as they are."""
    top = repo({
        "clusters/prod/flux-system/gotk-sync.yaml": SYNC,
        "clusters/prod/apps.yaml": ks("apps", "./apps/web",
                                      "decryption: {provider: sops}" if decryption else ""),
        "apps/web/kustomization.yaml": (
            "resources: [../base]\npatches:\n- path: creds.sops.yaml\n"),
        "apps/web/creds.sops.yaml": SOPS_PATCH,
        "apps/base/kustomization.yaml": (
            "resources: [creds.yaml]\nsecretGenerator:\n- name: login\n  envs: [login.sops.env]\n"
            "generatorOptions: {disableNameSuffixHash: true}\n"),
        "apps/base/login.sops.env": SOPS_ENV,
        "apps/base/creds.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n",
    })
    catalog = catalog_of(top)
    got = render_app(catalog, catalog.find("apps"))
    if not decryption:   # the controller builds the ciphertext as it is
        docs = {d["metadata"]["name"]: d for d in yaml.safe_load_all(got.to_yaml())}
        assert "sops_mac" in docs["login"]["data"] and "sops" in docs["creds"]
        assert not got.notes
        return
    docs = {d["metadata"]["name"]: d for d in yaml.safe_load_all(got.to_yaml())}
    assert docs["login"]["data"] == {"PASSWORD": "", "USER": ""}
    assert docs["creds"]["stringData"] == {"token": ""} and "sops" not in docs["creds"]
    assert sorted(n.split(" ")[0] for n in got.notes) == [
        "apps/base/login.sops.env", "apps/web/creds.sops.yaml"]


def test_decryption_of_resources_as_decrypt_resource_does_it(repo: Callable[..., Path]) -> None:
    """decryptor.go DecryptResource: any kind with ``sops.mac`` is decrypted (values unknown
    here), a Secret's data entry holding a SOPS-encrypted file too, and what carries
    ``kustomize.toolkit.fluxcd.io/decrypt: disabled`` is left alone (and then applied as it
    is: the apply check skips it)."""
    import base64
    sops_file = base64.b64encode(SOPS_ENV.encode()).decode()
    top = repo({
        "clusters/prod/flux-system/gotk-sync.yaml": SYNC,
        "clusters/prod/apps.yaml": ks("apps", "./apps/web", "decryption: {provider: sops}"),
        "apps/web/cm.yaml": (
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n"
            "  url: ENC[AES256_GCM,data:dXJs,type:str]\n  plain: text\n"
            "sops:\n  mac: ENC[AES256_GCM,data:bWFj,type:str]\n"),
        "apps/web/entry.yaml": (
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: entry\ndata:\n"
            f"  login.env: {sops_file}\n  other: dGV4dA==\n"),
        "apps/web/kept.yaml": (
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: kept\n  annotations:\n"
            "    kustomize.toolkit.fluxcd.io/decrypt: Disabled\nstringData:\n"
            "  k: ENC[AES256_GCM,data:aw==,type:str]\nsops:\n"
            "  mac: ENC[AES256_GCM,data:bWFj,type:str]\n"),
    })
    catalog = catalog_of(top)
    got = render_app(catalog, catalog.find("apps"))
    docs = {d["metadata"]["name"]: d for d in yaml.safe_load_all(got.to_yaml())}
    assert docs["cm"]["data"] == {"url": "", "plain": "text"} and "sops" not in docs["cm"]
    assert docs["entry"]["data"] == {"login.env": "", "other": "dGV4dA=="}
    assert "sops" in docs["kept"] and docs["kept"]["stringData"]["k"].startswith("ENC[")
    assert sorted(n.split(" is ")[0] for n in got.notes) == [
        "ConfigMap -/cm", "Secret -/entry"]


def test_flux_system_decrypting_by_its_own_patch_renders(repo: Callable[..., Path]) -> None:
    """Flux's documented SOPS set-up: flux-system's own kustomization patches the flux-system
    Kustomization with ``decryption``; a SOPS-encrypted Secret beside it renders (kzgit's
    flux-system is the file's, which decrypts nothing: no finding is made of that)."""
    top = repo({
        "clusters/prod/flux-system/gotk-sync.yaml": SYNC,
        "clusters/prod/flux-system/kustomization.yaml": (
            "resources: [gotk-sync.yaml]\npatches:\n- target: {kind: Kustomization, name: "
            "flux-system}\n  patch: |\n    - {op: add, path: /spec/decryption, value: "
            "{provider: sops}}\n"),
        "clusters/prod/secret.yaml": (
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: flux-system\n"
            "stringData:\n  k: ENC[AES256_GCM,data:aw==,type:str]\n"
            "sops:\n  mac: ENC[AES256_GCM,data:bWFj,type:str]\n"),
    })
    catalog = catalog_of(top)
    assert "kind: Secret" in render_app(catalog, catalog.find("flux-system")).to_yaml()
