"""Any other warning a root's build prints: a var never replaced (at the ``vars`` entry
declaring it), a ``git::`` URL prefix (on the root), ...

The deprecation warnings are ``deprecated-field``'s.  ``warnings-as-errors = true`` raises this
rule to an error.

```yaml
# at the vars entry: "var 'WEB' is never replaced" (kustomize prints "well-defined
# vars that were never replaced: WEB"; nothing uses $(WEB))
vars:
- name: WEB
  objref: {apiVersion: apps/v1, kind: Deployment, name: web}
```
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Callable, List, Optional, Tuple
    from kzgit.hooks import Workspace
    from kzgit.lint.kfile import KFile

ID = "warnings"
SEVERITY = "warning"
SUMMARY = "a warning kustomize prints while building a root"
KIND = "build"
RAISED_BY_WARNINGS_AS_ERRORS = True

# refvartransformer.go's warning, which names the vars only
_UNUSED_VARS = "well-defined vars that were never replaced: "


def place(ws: Workspace, root: str, root_file: str, kfile: Callable[[str], Optional[KFile]],
          warning: str) -> List[Tuple[str, Optional[int], str, str]]:
    """(file, line, field, message) for a build's warning: each var never replaced at the
    ``vars`` entry that declares it (in the kustomizations the root reaches), anything else
    on the root's kustomization."""
    if not warning.startswith(_UNUSED_VARS):
        return [(root_file, None, "", warning)]
    names = [n for n in warning[len(_UNUSED_VARS):].split(",") if n]
    out: List[Tuple[str, Optional[int], str, str]] = []
    g = ws.graph
    for name in names:
        placed = False
        for d in sorted(g.reach(root).kustomization_dirs):
            node = g.nodes.get(d)
            k = kfile(node.file) if node is not None else None
            entries = k.value("vars") if k is not None else None
            for i, v in enumerate(entries if isinstance(entries, list) else []):
                if k is not None and node is not None and isinstance(v, dict) and v.get("name") == name:
                    out.append((node.file, k.line("vars", i), f"vars[{i}]",
                                f"var '{name}' is never replaced: no $({name}) in a field vars apply "
                                f"to when {root} is built (kustomize: \"{_UNUSED_VARS}...\")"))
                    placed = True
        if not placed:
            out.append((root_file, None, "", f"{_UNUSED_VARS}{name}"))
    return out
