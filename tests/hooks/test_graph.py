"""The dependency graph: what each kustomization reaches, roots, affected roots."""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional

import pytest

from kzgit.graph import Graph, scan

REPO: Dict[str, str] = {
    "base/kustomization.yaml": "resources:\n- deploy.yaml\n- ../components-free.yaml\nconfigMapGenerator:\n"
                               "- name: c\n  files:\n  - key=conf/app.ini\n  envs:\n  - env/a.env\n",
    "base/deploy.yaml": "kind: Deployment\n",
    "base/conf/app.ini": "x=1\n",
    "base/env/a.env": "A=1\n",
    "components-free.yaml": "kind: ConfigMap\n",
    "components/mon/kustomization.yaml": "kind: Component\npatches:\n- path: p.yaml\n",
    "components/mon/p.yaml": "kind: X\n",
    "overlays/prod/kustomization.yaml": (
        "resources:\n- ../../base\n- github.com/org/repo//x?ref=main\ncomponents:\n- ../../components/mon\n"
        "patchesStrategicMerge:\n- smp.yaml\n- |-\n  kind: Inline\npatchesJson6902:\n- path: j.yaml\n"
        "replacements:\n- path: r.yaml\nconfigurations:\n- conf.yaml\ncrds:\n- crd.yaml\n"
        "openapi:\n  path: schema.json\ntransformers:\n- fn.yaml\n"
        "secretGenerator:\n- name: s\n  env: s.env\n"),
    "overlays/prod/smp.yaml": "", "overlays/prod/j.yaml": "", "overlays/prod/r.yaml": "",
    "overlays/prod/conf.yaml": "", "overlays/prod/crd.yaml": "", "overlays/prod/schema.json": "",
    "overlays/prod/s.env": "",
    "overlays/prod/fn.yaml": ("apiVersion: x\nkind: Fn\nmetadata:\n  name: f\n  annotations:\n"
                              "    config.kubernetes.io/function: |\n      exec:\n        path: ./bin/fn\n"),
    "overlays/prod/bin/fn": "#!/bin/sh\n",
    "overlays/dev/kustomization.yml": "resources:\n- ../../base\nhelmCharts:\n- name: c\n  repo: https://h\n"
                                      "  valuesFile: values.yaml\n",
    "overlays/dev/values.yaml": "",
    "overlays/dev/charts/c/Chart.yaml": "",
    "overlays/broken/kustomization.yaml": "resources: [\n",
    "unrelated/file.txt": "",
}


def _graph(repo: Dict[str, str] = REPO, **kw: object) -> Graph:
    def read(p: str) -> Optional[bytes]:
        return repo[p].encode() if p in repo else None
    return scan(repo.keys(), read, **kw)  # type: ignore[arg-type]


def test_roots_are_unreferenced_kustomizations() -> None:
    g = _graph()
    assert g.roots == ["overlays/broken", "overlays/dev", "overlays/prod"]
    assert g.nodes["overlays/prod"].children == {"base", "components/mon"}
    assert g.nodes["overlays/dev"].file == "overlays/dev/kustomization.yml"


def test_broken_kustomization_is_kept_with_its_error() -> None:
    g = _graph()
    assert g.nodes["overlays/broken"].error
    assert g.affected_roots(["overlays/broken/kustomization.yaml"]) == ["overlays/broken"]


@pytest.mark.parametrize("changed,expected", [
    (["base/deploy.yaml"], ["overlays/dev", "overlays/prod"]),
    (["base/conf/app.ini"], ["overlays/dev", "overlays/prod"]),
    (["base/env/a.env"], ["overlays/dev", "overlays/prod"]),
    (["components-free.yaml"], ["overlays/dev", "overlays/prod"]),
    (["components/mon/p.yaml"], ["overlays/prod"]),
    (["overlays/prod/smp.yaml"], ["overlays/prod"]),
    (["overlays/prod/j.yaml"], ["overlays/prod"]),
    (["overlays/prod/r.yaml"], ["overlays/prod"]),
    (["overlays/prod/conf.yaml"], ["overlays/prod"]),
    (["overlays/prod/crd.yaml"], ["overlays/prod"]),
    (["overlays/prod/schema.json"], ["overlays/prod"]),
    (["overlays/prod/s.env"], ["overlays/prod"]),
    (["overlays/prod/fn.yaml"], ["overlays/prod"]),
    (["overlays/prod/bin/fn"], ["overlays/prod"]),
    (["overlays/dev/values.yaml"], ["overlays/dev"]),
    (["overlays/dev/charts/c/Chart.yaml"], ["overlays/dev"]),
    (["base/Kustomization"], ["overlays/dev", "overlays/prod"]),   # a second kustomization file
    (["unrelated/file.txt"], []),
    (["../outside.yaml"], []),
    (["./base/deploy.yaml"], ["overlays/dev", "overlays/prod"]),
])
def test_affected_roots(changed: List[str], expected: List[str]) -> None:
    assert _graph().affected_roots(changed) == expected


def test_remote_refs_have_lines() -> None:
    g = _graph()
    refs = g.nodes["overlays/prod"].remotes
    assert [(r.field, r.value, r.line) for r in refs] == [
        ("resources", "github.com/org/repo//x?ref=main", 3)]
    helm = g.nodes["overlays/dev"].remotes
    assert helm[0].kind == "helm" and helm[0].line == 5


def test_configured_roots_and_exclude() -> None:
    g = _graph(roots=["overlays/prod", "base"])
    assert g.roots == ["base", "overlays/prod"]
    g = _graph(exclude=["overlays/broken"])
    assert "overlays/broken" not in g.nodes and g.roots == ["overlays/dev", "overlays/prod"]


def test_exclude_keeps_roots_out_but_what_a_root_reaches_is_followed() -> None:
    repo = {"shop/kustomization.yaml": "resources:\n- app.yaml\ncomponents:\n- components/db\n",
            "shop/app.yaml": "", "shop/components/db/kustomization.yaml": "kind: Component\npatches:\n"
            "- path: ../../../patches/db.yaml\ncomponents:\n- ../extra\n",
            "patches/db.yaml": "",
            "shop/components/extra/kustomization.yaml": "kind: Component\npatches:\n- path: p.yaml\n",
            "shop/components/extra/p.yaml": "",
            "shop/components/unused/kustomization.yaml": "resources: [\n",
            "fixtures/broken/kustomization.yaml": "resources:\n- ../../base\n",
            "base/kustomization.yaml": "resources: []\n"}
    g = _graph(repo, exclude=["shop/components/**", "fixtures"])
    # base is referenced only by an excluded kustomization: still a root
    assert g.roots == ["base", "shop"]
    assert "shop/components/unused" not in g.nodes and "fixtures/broken" not in g.nodes
    for changed in ("shop/components/db/kustomization.yaml", "patches/db.yaml", "shop/components/extra/p.yaml"):
        assert g.affected_roots([changed]) == ["shop"], changed
    assert g.affected_roots(["shop/components/unused/kustomization.yaml"]) == []


def test_cycles_terminate() -> None:
    repo = {"a/kustomization.yaml": "resources:\n- ../b\n", "b/kustomization.yaml": "resources:\n- ../a\n",
            "c/kustomization.yaml": "resources:\n- ../a\n"}
    g = _graph(repo)
    assert g.roots == ["c"]
    assert g.reach("a").kustomization_dirs == {"a", "b"}


def test_missing_reference_is_reached_so_creating_it_counts() -> None:
    repo = {"o/kustomization.yaml": "resources:\n- gone.yaml\n"}
    assert _graph(repo).affected_roots(["o/gone.yaml"]) == ["o"]


def test_a_base_renamed_away_reaches_its_old_files() -> None:
    """After ``git mv base lib`` the overlay names a directory that is gone; the commit deletes
    ``base/kustomization.yaml`` and ``base/cm.yaml``, and either affects the overlay."""
    repo = {"o/kustomization.yaml": "resources:\n- ../base\n", "lib/kustomization.yaml": "resources: []\n"}
    g = _graph(repo)
    assert g.affected_roots(["base/kustomization.yaml"]) == ["o"]
    assert g.affected_roots(["base/cm.yaml"]) == ["o"]
    assert g.affected_roots(["based/cm.yaml"]) == []


def test_a_component_is_a_root_only_when_roots_names_its_directory() -> None:
    repo = {"c/kustomization.yaml": "kind: Component\n", "o/kustomization.yaml": "resources: []\n",
            "used/kustomization.yaml": "kind: Component\n",
            "p/kustomization.yaml": "resources: []\ncomponents:\n- ../used\n"}
    g = _graph(repo)
    assert g.roots == ["o", "p"]
    assert g.unincluded_components() == ["c"]
    assert g.unincluded_components(["c/kustomization.yaml"]) == ["c"]
    assert g.unincluded_components(["o/kustomization.yaml"]) == []
    assert _graph(repo, roots=["*"]).roots == ["c", "o", "p", "used"]
    nested = {"top/c/kustomization.yaml": "kind: Component\n", "top/o/kustomization.yaml": "resources: []\n"}
    assert _graph(nested, roots=["top"]).roots == ["top/o"]          # a dir above it: not a root
    assert _graph(nested, roots=["top", "top/c"]).roots == ["top/c", "top/o"]


def test_root_dir_kustomization() -> None:
    repo = {"kustomization.yaml": "resources:\n- app\n", "app/kustomization.yaml": "resources:\n- d.yaml\n",
            "app/d.yaml": ""}
    g = _graph(repo)
    assert g.roots == ["."]
    assert g.affected_roots(["app/d.yaml"]) == ["."]


def test_the_graph_kept_in_the_render_cache_is_the_graph_scan_gives(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import kzgit.graph
    from kzgit.graph import scan_cached
    from kzgit.rendercache import open_store
    store, _ = open_store(str(tmp_path / "renders"))
    assert store is not None
    repo = dict(REPO)
    reads: List[str] = []

    def read(path: str) -> Optional[bytes]:
        reads.append(path)
        return repo[path].encode() if path in repo else None

    def same(a: Graph, b: Graph) -> bool:
        return a.nodes == b.nodes and a.roots == b.roots

    first = scan_cached(list(repo), read, store)
    assert same(first, scan(list(repo), read)) and first.nodes["overlays/broken"].error
    real_scan = kzgit.graph.scan
    with monkeypatch.context() as m:
        def no_scan(*a: object, **k: object) -> Graph:
            raise AssertionError("parsed although nothing changed")
        m.setattr(kzgit.graph, "scan", no_scan)
        assert same(scan_cached(list(reversed(repo)), read, store), first)
    # a kustomization's bytes change: parsed again
    repo["components/mon/kustomization.yaml"] += "- path: q.yaml\n"
    repo["components/mon/q.yaml"] = ""
    again = scan_cached(list(repo), read, store)
    assert "components/mon/q.yaml" in again.nodes["components/mon"].files
    assert same(again, real_scan(list(repo), read))
    # a plugin config the scan read changes (its exec path): parsed again
    repo["overlays/prod/fn.yaml"] = repo["overlays/prod/fn.yaml"].replace("./bin/fn", "./bin/fn2")
    assert same(scan_cached(list(repo), read, store), real_scan(list(repo), read))
    # a new file (a directory appears where a resources entry pointed): the list keys the entry
    repo["components-free.yaml/x"] = ""
    assert same(scan_cached(list(repo), read, store), real_scan(list(repo), read))
    # the configuration's globs key it too
    assert scan_cached(list(repo), read, store, roots=["overlays/*"]).roots == \
        real_scan(list(repo), read, roots=["overlays/*"]).roots
