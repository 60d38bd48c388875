"""The same resource (``resources`` and ``bases`` together), component or patch listed twice.

Paths are compared normalised (``./a`` is ``a``), inline patches and mappings by their content.
``bases`` joins ``resources``: ``types.FixKustomization`` appends it there
(``api/types/kustomization.go``), so a path in both is accumulated twice.  The finding is on
the second entry's line.

```yaml
# "component './../comp' is listed twice"
components: [../comp, ./../comp]
```
"""
from __future__ import annotations

import json
import posixpath

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, Iterable, Optional, Tuple
    from kzgit.lint.kfile import Hit, KFile

ID = "duplicate-entry"
SEVERITY = "error"
SUMMARY = "the same resource, component or patch listed twice"
KIND = "file"
RAISED_BY_WARNINGS_AS_ERRORS = False

#: The fields whose entries are compared, and what an entry is there.
FIELDS = (("resources", "resource"), ("bases", "resource"), ("components", "component"),
          ("patches", "patch"), ("patchesStrategicMerge", "patch"), ("patchesJson6902", "patch"))


def _entry_key(field: str, entry: Any, kdir: str) -> Optional[str]:
    """What makes two entries of ``field`` the same: a path normalised (``./a`` is ``a``),
    an inline patch or a mapping by its content."""
    if isinstance(entry, str):
        if field in ("patchesStrategicMerge",) and "\n" in entry:
            return "inline:" + entry.strip()
        if "://" in entry or entry.startswith(("git@", "github.com/")):
            return "url:" + entry
        return "path:" + posixpath.normpath(posixpath.join(kdir, entry))
    if isinstance(entry, dict):
        return "entry:" + json.dumps(entry, sort_keys=True, default=str)
    return None


def check(k: KFile, version: Tuple[int, int, int], origin: str) -> Iterable[Hit]:
    """Each entry that repeats an earlier one of its group (each patch field on its own)."""
    seen: Dict[Tuple[str, str], Tuple[str, int]] = {}
    for field, what in FIELDS:
        entries = k.value(field)
        if not isinstance(entries, list):
            continue
        group = "resources" if field in ("resources", "bases") else field
        for i, e in enumerate(entries):
            key = _entry_key(field, e, k.dir)
            if key is None:
                continue
            first = seen.get((group, key))
            if first is None:
                seen[(group, key)] = (field, i)
                continue
            shown = e if isinstance(e, str) and "\n" not in e else f"entry {i}"
            at = k.line(*first)
            yield (ID, k.line(field, i), f"{field}[{i}]",
                   f"{what} {shown!r} is listed twice (first as {first[0]}[{first[1]}]"
                   + (f", line {at})" if at else ")"))
