"""``-o DIR``: one file per resource (kustomize/commands/build/writer.go).

File name ``lower(<group>_<version>_<kind>)_lower(<name>).yaml`` (empty parts omitted),
prefixed ``lower(<namespace>)_`` when the resources span more than one namespace.
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
        name = f"{r.namespace.lower()}_{name}"
    return name


def write_dir(resources: List[Resource], out_dir: str) -> None:
    from kzgit.atomic import write_atomic   # start-up: only the builds that need it pay for it
    namespaces = {r.cur_id().effective_namespace() for r in resources}
    for r in resources:
        write_atomic(os.path.join(out_dir, file_name(r, len(namespaces) > 1)), dump(r.obj))
