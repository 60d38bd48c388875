"""``-o DIR``: one file per resource (kustomize/commands/build/writer.go).

File name ``lower(<group>_<version>_<kind>)_lower(<name>).yaml`` (empty parts omitted).
A namespaced resource's name is prefixed ``lower(<namespace>)_`` (its effective namespace,
``default`` when it has none) when the namespaced resources span more than one namespace;
cluster-scoped resources are never prefixed and do not count as a namespace, since
``WriteIndividualFiles`` groups with ``GroupedByCurrentNamespace`` and writes
``ClusterScoped()`` apart, after the rest (so a cluster-scoped file wins a name collision).
Each file is written atomically (temp file, then rename).
"""
from __future__ import annotations

import os

from kzgit.resource import Resource
from kzgit.yamlio import dump

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import List


def file_name(r: Resource, with_namespace: bool) -> str:
    g = r.gvk
    gvk = "_".join(p for p in (g.group, g.version, g.kind) if p)
    name = f"{gvk}_{r.name}".lower() + ".yaml"
    if with_namespace:
        name = f"{r.cur_id().effective_namespace().lower()}_{name}"
    return name


def write_dir(resources: List[Resource], out_dir: str) -> None:
    from kzgit.atomic import write_atomic   # start-up: only the builds that need it pay for it
    namespaced = [r for r in resources if not r.cur_id().is_cluster_scoped()]
    prefixed = len({r.cur_id().effective_namespace() for r in namespaced}) > 1
    for r in namespaced:
        write_atomic(os.path.join(out_dir, file_name(r, prefixed)), dump(r.obj))
    for r in resources:
        if r.cur_id().is_cluster_scoped():
            write_atomic(os.path.join(out_dir, file_name(r, False)), dump(r.obj))
