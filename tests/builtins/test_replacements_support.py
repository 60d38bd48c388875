"""Helpers shared by the replacements and vars table tests (no tests here; named to sit in their files).


Each case directory holds a kustomization written for ``kubectl kustomize``
and, in the fixture format (tests/fixtures/README.md), the oracle's output
(``expected.yaml``) or error (``expected.err``), recorded by
``scripts/record_fixture.py --tables``.  The helpers here load a case
without kzgit's pipeline (only ``resources`` files and directories and a plain
``namePrefix``), so that these tests pin the transformers alone; outputs are
compared as data, never as text.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import yaml

from helpers import expected_documents, expects_error, kustomize_error
from kzgit.resource import ResId, ResMap, Resource, split_api_version

Level = Callable[[ResMap, Dict[str, Any], str], None]


def load_level(path: str, on_level: Optional[Level] = None) -> ResMap:
    """Accumulate one kustomization directory: resources, then ``namePrefix``,
    then ``on_level`` (the transformer under test, per level)."""
    with open(os.path.join(path, "kustomization.yaml"), encoding="utf-8") as f:
        kust = yaml.safe_load(f) or {}
    rm = ResMap()
    for entry in kust.get("resources") or []:
        p = os.path.join(path, entry)
        if os.path.isdir(p):
            rm.append_all(load_level(p, on_level).resources())
            continue
        with open(p, encoding="utf-8") as f:
            for doc in yaml.safe_load_all(f):
                if doc:
                    rm.append(_with_previous_ids(Resource(doc, p)))
    rename(rm, kust)
    if on_level is not None:
        on_level(rm, kust, path)
    return rm


def rename(rm: ResMap, kust: Dict[str, Any]) -> None:
    """A level's plain ``namespace`` then ``namePrefix`` (kusttarget_configplugin.go order);
    each stores a previous id on every resource."""
    if kust.get("namespace"):
        for r in rm.resources():
            r.store_prev_id()
            if not r.cur_id().is_cluster_scoped():
                r.namespace = kust["namespace"]
        rm.invalidate()
    prefix = kust.get("namePrefix")
    if prefix:
        for r in rm.resources():
            r.store_prev_id()
            r.name = prefix + r.name
        rm.invalidate()


_PREV = "internal.config.kubernetes.io/previous"


def _with_previous_ids(r: Resource) -> Resource:
    """Input may carry kustomize's rename history as build annotations
    (api/resource/resource.go PrevIds); kustomize honours them."""
    ann = r.obj.get("metadata", {}).get("annotations") or {}
    names = str(ann.get(_PREV + "Names", "")).split(",") if ann.get(_PREV + "Names") else []
    kinds = str(ann.get(_PREV + "Kinds", "")).split(",")
    nss = str(ann.get(_PREV + "Namespaces", "")).split(",")
    g, v = split_api_version(r.api_version)
    for i, n in enumerate(names):
        r.prev_ids.append(ResId(g, v, kinds[i] if i < len(kinds) else "", n,
                                nss[i] if i < len(nss) else ""))
    for k in [k for k in ann if str(k).startswith(_PREV)]:
        del ann[k]
    if "annotations" in r.obj.get("metadata", {}) and not ann:
        del r.obj["metadata"]["annotations"]
    return r


def finish(rm: ResMap) -> List[Any]:
    """What kustomize does to every resource after the transformers and
    before output that matters here: ``RemoveBuildAnnotations`` rewrites a
    non-empty ``metadata.annotations`` as a string map (api/resource/resource.go)."""
    out = []
    for r in rm.resources():
        md = r.obj.get("metadata")
        if isinstance(md, dict) and _go_str((md.get("annotations") or {}).get(
                "config.kubernetes.io/local-config")) == "true":
            continue  # IgnoreLocal (kusttarget.go)
        if isinstance(md, dict) and isinstance(md.get("annotations"), dict) and md["annotations"]:
            md["annotations"] = {k: _go_str(v) for k, v in md["annotations"].items()}
        out.append(r.obj)
    return out


def _go_str(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return ""
    return str(v)


def expected(path: str) -> Tuple[Optional[List[Any]], Optional[str]]:
    """kubectl's documents, or (for a failing case) kustomize's error message."""
    case = Path(path)
    if expects_error(case):
        return None, kustomize_error(case)
    return expected_documents(case), None


def cases(root: str) -> List[str]:
    return sorted(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "case.json")))
