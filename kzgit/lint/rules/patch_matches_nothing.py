"""A ``patches`` or ``patchesJson6902`` target that selects no resource, in the kustomization,
a base or a component (then per root that includes it).

kustomize applies such a patch to nothing, silently (kustomize #1512, #3307, #4379, #5093).
Observed by the build (the listener in :mod:`kzgit.builtins.common`); the finding is on the
target's line.

```yaml
# in a component the root includes
kind: Component
patches:
- target: {kind: StatefulSet}        # the base has a Deployment only
  patch: '[{"op": "add", "path": "/metadata/labels/x", "value": "y"}]'
```
"""
from __future__ import annotations

import json

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

ID = "patch-matches-nothing"
SEVERITY = "error"
SUMMARY = "a patch target that selects no resource"
KIND = "build"
RAISED_BY_WARNINGS_AS_ERRORS = False


def message(what: str, selector: Any, root: str) -> str:
    """The finding for a target (``what``: ``target`` or ``select``) that selected nothing
    when ``root`` was built (shared with ``replacement-matches-nothing``)."""
    shown = json.dumps(selector, sort_keys=True, default=str, separators=(", ", ": "))
    return (f"{what} {shown} selects no resource when {root} is built; kustomize applies it to "
            "nothing, silently")
