"""buildMetadata origin and transformer annotations (api/resource/origin.go).

kzgit tracks origins as attributes during the build and writes the two
annotations at the end, only when the top kustomization's ``buildMetadata``
asks for them.  The text is kyaml.Marshal of the Origin struct: fields in
struct order (path, repo, ref, configuredIn, configuredBy), empty ones omitted.
"""
from __future__ import annotations


from kzgit.resource import Resource

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List

ORIGIN = "config.kubernetes.io/origin"
TRANSFORMATIONS = "alpha.config.kubernetes.io/transformations"
_ORDER = ("path", "repo", "ref", "configuredIn", "configuredBy")
_BY_ORDER = ("apiVersion", "kind", "name", "namespace")


def _lines(origin: Dict[str, Any]) -> List[str]:
    out = []
    for k in _ORDER:
        v = origin.get(k)
        if not v:
            continue
        if k == "configuredBy":
            out.append("configuredBy:")
            out.extend(f"  {bk}: {v[bk]}" for bk in _BY_ORDER if v.get(bk))
        else:
            out.append(f"{k}: {v}")
    return out


def origin_text(origin: Dict[str, Any]) -> str:
    return "".join(line + "\n" for line in _lines(origin))


def transformations_text(items: List[Dict[str, Any]]) -> str:
    out: List[str] = []
    for o in items:
        lines = _lines(o)
        out.extend(("- " if i == 0 else "  ") + line for i, line in enumerate(lines))
    return "".join(line + "\n" for line in out)


def annotate_origins(resources: List[Resource], origins: bool, transformations: bool) -> None:
    for r in resources:
        add: Dict[str, str] = {}
        if origins and r.origin:
            add[ORIGIN] = origin_text(r.origin)
        if transformations and r.transformations:
            add[TRANSFORMATIONS] = transformations_text(r.transformations)
        if add:
            ann = r.metadata.get("annotations")
            if not isinstance(ann, dict):
                ann = r.metadata["annotations"] = {}
            ann.update(add)
