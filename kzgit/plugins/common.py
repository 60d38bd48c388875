"""What every plugin config needs: is it a builtin, its metadata and annotations, how messages
name it (kustomize api/internal/plugins/loader/loader.go, kyaml's RNode annotation setters)."""
from __future__ import annotations

from typing import Any, Dict, Optional

from kzgit.options import BuildOptions
from kzgit.konfig.general import BUILTIN_API_VERSION
from kzgit.resource import split_api_version

__all__ = ["is_builtin", "config_meta", "annotations_of", "set_annotations", "set_labels",
           "ann_str", "describe", "plugin_timeout"]


def is_builtin(config: Dict[str, Any]) -> bool:
    """kustomize loader.go isBuiltinPlugin: no group and version ``builtin``."""
    api = config.get("apiVersion")
    group, version = split_api_version(api if isinstance(api, str) else "")
    return group == "" and version == BUILTIN_API_VERSION


def config_meta(config: Dict[str, Any]) -> Dict[str, Any]:
    md = config.get("metadata")
    return md if isinstance(md, dict) else {}


def annotations_of(obj: Dict[str, Any]) -> Dict[str, Any]:
    md = obj.get("metadata")
    if not isinstance(md, dict):
        return {}
    a = md.get("annotations")
    return a if isinstance(a, dict) else {}


def set_annotations(obj: Dict[str, Any], ann: Dict[str, Any]) -> None:
    """kyaml RNode.SetAnnotations: keys sorted, an empty map removes the field."""
    md = obj.get("metadata")
    if not isinstance(md, dict):
        md = {}
        obj["metadata"] = md
    md.pop("annotations", None)
    if ann:
        md["annotations"] = {k: ann[k] for k in sorted(ann)}


def set_labels(obj: Dict[str, Any], labels: Dict[str, Any]) -> None:
    md = obj.get("metadata")
    if not isinstance(md, dict):
        return
    md.pop("labels", None)
    if labels:
        md["labels"] = {k: labels[k] for k in sorted(labels)}


def ann_str(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return "" if v is None else str(v)


def describe(config: Dict[str, Any], source: str) -> str:
    """``Kind 'name' (from source)`` for messages."""
    kind = config.get("kind") or "<no kind>"
    name = config_meta(config).get("name")
    out = f"{kind} '{name}'" if name else f"{kind}"
    return f"{out} (from {source})" if source else out



def plugin_timeout(options: BuildOptions) -> Optional[float]:
    t = options.plugin_timeout
    return t if t and t > 0 else None

