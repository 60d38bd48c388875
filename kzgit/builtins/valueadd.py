"""ValueAddTransformer (api/internal/builtins/ValueAddTransformer.go, api/filters/valueadd).

Writes ``value`` (default: the name of the kustomization directory) into
``fieldPath`` of the selected resources, optionally inserted as a path part at
``filePathPosition`` of the current value.  ``metadata/namespace`` goes through
the namespace filter (cluster-scoped kinds untouched, default-named subjects).
"""
from __future__ import annotations

import os

from kzgit.errors import BuildError
from kzgit.loader import Loader
from kzgit.resource import ResMap
from kzgit.resource.selector import Selector
from kzgit.yamlio import load_yaml11

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List


def _insert_path_part(path: str, pos: int, part: str) -> str:
    """filesys.InsertPathPart."""
    if not part:
        return path
    parts = path.split("/") if path else []
    pos = max(pos, 0)
    if pos > len(parts):
        return path + "/" + part
    return "/".join(parts[:pos] + [part] + parts[pos:])


def _split_field_path(fp: str) -> List[str]:
    fields: List[str] = []
    for f in fp.split("/"):
        if fields and fields[-1].endswith("\\"):
            fields[-1] = fields[-1][:-1] + "/" + f
        else:
            fields.append(f)
    return fields


def transform(m: ResMap, cfg: Dict[str, Any], loader: Loader, where: str) -> None:
    value = str(cfg.get("value") or "").strip() or os.path.basename(loader.root)
    targets = list(cfg.get("targets") or [])
    if cfg.get("targetFilePath"):
        data = load_yaml11(loader.load(cfg["targetFilePath"]), cfg["targetFilePath"]) or {}
        targets.extend((data or {}).get("targets") or [])
    if not targets:
        raise BuildError(f"{where}: must specify at least one target")
    for t in targets:
        if not t.get("fieldPath"):
            raise BuildError(f"{where}: fieldPath cannot be empty")
        if (t.get("filePathPosition") or 0) < 0:
            raise BuildError(f"{where}: value of FilePathPosition ({t['filePathPosition']}) cannot be negative")
    for t in targets:
        resources = Selector(t["selector"], where).select(m) if t.get("selector") else list(m.resources())
        for res in resources:
            if t["fieldPath"] == "metadata/namespace":
                if not res.gvk.is_cluster_scoped():
                    res.metadata["namespace"] = value
                if res.kind in ("RoleBinding", "ClusterRoleBinding"):
                    for s in res.obj.get("subjects") or []:
                        if isinstance(s, dict) and s.get("name") == "default":
                            s["namespace"] = value
                continue
            node: Any = res.obj
            fields = _split_field_path(t["fieldPath"])
            for f in fields[:-1]:
                if not isinstance(node, dict):
                    raise BuildError(f"{where}: wrong node kind at '{f}' in {res.cur_id()}")
                if not isinstance(node.get(f), dict):
                    node[f] = {}
                node = node[f]
            last = fields[-1]
            old = node.get(last)
            if isinstance(old, (dict, list)):
                raise BuildError(f"{where}: wrong node kind: expected ScalarNode at '{t['fieldPath']}' in {res.cur_id()}")
            new = value
            pos = t.get("filePathPosition") or 0
            if pos > 0:
                new = _insert_path_part("" if old is None else str(old), pos - 1, value)
            node[last] = new
    m.invalidate()
