"""Helpers shared by the builtin transformers."""
from __future__ import annotations

import contextvars

from kzgit.errors import BuildError
from kzgit.resource.fieldspec import FieldSpec

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List, Optional, Tuple


def fieldspecs_from_config(config: Dict[str, Any], key: str = "fieldSpecs", where: str = "") -> List[FieldSpec]:
    specs = config.get(key)
    if specs is None:
        return []
    if not isinstance(specs, list):
        raise BuildError(f"{where}: '{key}' must be a list of field specs")
    return [s if isinstance(s, FieldSpec) else FieldSpec.from_dict(s, where) for s in specs]


def str_map(v: Any, field: str, where: str) -> Dict[str, str]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise BuildError(f"{where}: '{field}' must be a map of strings")
    return {str(k): ("" if x is None else x if isinstance(x, str) else _scalar_text(x)) for k, x in v.items()}


def _scalar_text(x: Any) -> str:
    if isinstance(x, bool):
        return "true" if x else "false"
    return str(x)


# Target selectors that select no resource, for `kzgit lint` (patch-matches-nothing,
# replacement-matches-nothing).  kustomize passes silently there (api/filters/patchjson6902 and
# patchstrategicmerge apply to an empty selection; api/filters/replacement/replacement.go
# applyReplacement loops over no target), so a build only *tells*: kzgit.lint sets a list
# around the builds it makes, every other build has none and nothing changes.  A context
# variable, not an argument: the builtins are called with what kustomize's plugins receive.
UNMATCHED: "contextvars.ContextVar[Optional[List[Tuple[str, str, Any]]]]" = contextvars.ContextVar(
    "kzgit_unmatched", default=None)


def note_unmatched(field: str, kfile: str, selector: Any) -> None:
    """Record that ``selector`` of a ``field`` entry (``patches``, ``patchesJson6902``,
    ``replacements``) of ``kfile`` selected nothing, when a listener asked (:data:`UNMATCHED`)."""
    got = UNMATCHED.get()
    if got is not None:
        got.append((field, kfile, selector))
