"""commonLabels / labels / commonAnnotations: LabelTransformer, AnnotationsTransformer
(api/filters/labels, api/filters/annotations): set each key, as a string, in the map at every
field the specs select, creating the map where the spec says ``create``."""
# No `from __future__ import annotations` here: the module's own `annotations` function
# would shadow it; annotations naming typing's aliases are quoted instead, so that typing
# is not imported at run time.


from kzgit.resource import ResMap
from kzgit.resource.fieldspec import MAP, apply_fieldspec
from kzgit.builtins.common import fieldspecs_from_config, str_map
from kzgit.yamlio.tree import SharedStr, share_update

from kzgit.errors import BuildError

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict


def _set_map(resmap: ResMap, pairs: "Dict[str, str]", config: "Dict[str, Any]", where: str) -> None:
    if not pairs:
        return
    specs = fieldspecs_from_config(config, where=where)

    for r in resmap.resources():
        # One node per key and resource, shared by every place where the field is new
        # (filtersutil.SetEntry); an existing field is set in place, and when its node is
        # shared from an earlier pass, every place sharing it changes (see SharedStr).
        nodes = {k: SharedStr(v) for k, v in pairs.items()}
        updated: Dict[int, Any] = {}  # shared values this pass already rewrote everywhere (kept alive)
        root = r.obj

        # The defaults bind this iteration's nodes (the setter runs within it).
        def setter(m: "Any", nodes: "Dict[str, Any]" = nodes, updated: "Dict[int, Any]" = updated,
                   root: "Any" = root) -> "Any":
            if not isinstance(m, dict):
                raise BuildError(f"wrong node kind: expected MappingNode but got {type(m).__name__}: node contents:\n{m}")
            for k, v in pairs.items():
                if k not in m:
                    m[k] = nodes[k]
                    continue
                old = m[k]
                if old is nodes[k] or id(old) in updated:
                    continue
                if old.__class__ is SharedStr:
                    new = share_update(root, old, v)
                    updated[id(new)] = new
                else:
                    m[k] = v
            return m

        for fs in specs:
            apply_fieldspec(root, fs, setter, MAP, r.cur_id)


def labels(resmap: ResMap, config: "Dict[str, Any]", where: str = "LabelTransformer") -> None:
    _set_map(resmap, str_map(config.get("labels"), "labels", where), config, where)


def annotations(resmap: ResMap, config: "Dict[str, Any]", where: str = "AnnotationsTransformer") -> None:
    _set_map(resmap, str_map(config.get("annotations"), "annotations", where), config, where)
