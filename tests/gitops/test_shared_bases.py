"""The applications of a run share the bases they have in common (kzgit.builder.cache through
the controllers' views, kzgit.gitops.render.ConfinedFS), as plain roots do: a base is
accumulated once, and an application's output is the one it has alone."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Dict

from gitops_repos import catalog_of
from kzgit.builder import BuildOptions, build
from kzgit.builder.cache import BuildCache
from kzgit.gitops.render import ConfinedFS, render_app
from kzgit.loader import DiskFS, NO_RESTRICTIONS
from kzgit.loader.overlay import OverlayFS

from test_gitops_hooks import DEPLOY, SYNC, ks

CLUSTERS = "abc"


def fleet(repo: Callable[..., Path]) -> Path:
    files: Dict[str, str] = {
        "clusters/prod/flux-system/gotk-sync.yaml": SYNC,
        "apps/base/kustomization.yaml": "resources: [deploy.yaml]\nlabels:\n- pairs: {tier: web}\n",
        "apps/base/deploy.yaml": DEPLOY,
    }
    for c in CLUSTERS:
        files[f"apps/{c}/kustomization.yaml"] = (
            "resources: [../base]\npatches:\n- target: {kind: Deployment}\n  patch: |\n"
            f"    - op: add\n      path: /metadata/labels/cluster\n      value: {c}\n")
        files[f"clusters/prod/{c}.yaml"] = ks(c, f"./apps/{c}", f"  targetNamespace: ns-{c}\n"
                                              "  postBuild:\n    substitute: {REPLICAS: '3'}\n")
    return repo(files)


def test_applications_share_a_base_and_render_as_alone(repo: Callable[..., Path]) -> None:
    top = fleet(repo)
    alone = {}
    for c in CLUSTERS:   # each in a catalog of its own: nothing shared
        catalog = catalog_of(top)
        alone[c] = render_app(catalog, catalog.find(f"flux:flux-system/{c}")).to_yaml()
    catalog = catalog_of(top)
    together = {c: render_app(catalog, catalog.find(f"flux:flux-system/{c}")).to_yaml()
                for c in CLUSTERS}
    assert together == alone
    assert "namespace: ns-b" in together["b"] and "cluster: b" in together["b"]
    assert "replicas: 3" in together["c"]
    bases = catalog.bases()
    assert (bases.misses, bases.hits) == (1, len(CLUSTERS) - 1)   # apps/base, accumulated once


def view(top: Path, files: Dict[str, bytes]) -> ConfinedFS:
    return ConfinedFS(OverlayFS(DiskFS(), {str(top / k): v for k, v in files.items()}), str(top))


def test_a_base_is_not_reused_by_a_view_rewriting_its_kustomization(tmp_path: Path) -> None:
    # two views of one tree: the second rewrites the base's kustomization, as a controller's
    # view rewrites the one it builds; the base one view accumulated is not the other's
    for rel, text in {"base/kustomization.yaml": "resources: [cm.yaml]\n",
                      "base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
                      "one/kustomization.yaml": "resources: [../base]\n",
                      "two/kustomization.yaml": "resources: [../base]\n"}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    cache = BuildCache()

    def out(root: str, fs: ConfinedFS) -> str:
        return build(str(tmp_path / root), BuildOptions(
            load_restrictor=NO_RESTRICTIONS, fs=fs, cache=cache)).to_yaml()
    first = out("one", view(tmp_path, {}))
    assert "namespace" not in first
    rewritten = view(tmp_path, {"base/kustomization.yaml": b"resources: [cm.yaml]\nnamespace: x\n"})
    assert "namespace: x" in out("two", rewritten)   # not the kept base: its file is rewritten
    assert (cache.misses, cache.hits) == (2, 0)
    # nor kept from the view rewriting it: another view accumulates the file on disk again
    assert out("two", view(tmp_path, {})) == first
    assert (cache.misses, cache.hits) == (2, 1)   # the first view's base is the third's
