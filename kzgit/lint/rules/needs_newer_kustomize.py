"""A field the pinned ``kustomize-version`` does not read (a later supported release does), or
a value it reads otherwise: a regular expression in a replacement's ``select`` before 5.8
(compared as written there, so it selects nothing).

The field is found in the per-release kustomization structs (:func:`kzgit.kustomization.schema`);
the finding is on the field's line.  A root whose build fails for the same reason is reported
here rather than as ``render-error``.

```yaml
# with kustomize-version = "5.6": "'sourceValue' needs Kustomize 5.7 or later"
replacements:
- sourceValue: shop
  targets: [{select: {kind: Deployment}, fieldPaths: [spec.template.metadata.labels.app]}]
```
"""
from __future__ import annotations

import re

from kzgit.errors import KzgitError

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Iterable, List, Tuple
    from kzgit.lint.kfile import Hit, KFile

ID = "needs-newer-kustomize"
SEVERITY = "error"
SUMMARY = "a field the pinned Kustomize release does not support"
KIND = "file"
RAISED_BY_WARNINGS_AS_ERRORS = False

# what no Kubernetes name, kind, group or version holds (a '.' does: not counted)
_REGEX = re.compile(r"[*+?()|\[\]{}^$\\]")


def check(k: KFile, version: Tuple[int, int, int], origin: str) -> Iterable[Hit]:
    """A field the pinned release's kustomization struct does not have but a later supported
    release's has (:func:`kzgit.kustomization.needs_release`)."""
    from kzgit.kustomization import decode_kustomization   # start-up: lint only
    from kzgit.versions import needs
    try:
        decode_kustomization(k.raw, version)
    except KzgitError as e:
        got = getattr(e, "needs", None)
        if got is None:
            return   # not a question of releases: the build reports it (render-error)
        field, minimum = got
        yield (ID, k.find_key(field) or k.line(field), field,
               needs(f"'{field}'", minimum, version, origin))


def regex_fields(selector: Any) -> List[str]:
    """``field: value`` of a replacement select's id fields that can only be regular
    expressions (kustomize 7c04cbb23, PR #5863, 5.8: select and reject fields are anchored
    regular expressions; before, compared as written, so such a select selects nothing)."""
    if not isinstance(selector, dict):
        return []
    return [f"{k}: {v}" for k, v in selector.items()
            if k in ("group", "version", "kind", "name", "namespace") and isinstance(v, str)
            and _REGEX.search(v)]


def regex_message(regex: List[str], version: Tuple[int, int, int], origin: str, root: str) -> str:
    """The finding for a select holding regular expressions under a release before 5.8."""
    from kzgit.versions import V5_8, needs   # start-up: lint only
    return (needs(f"a regular expression in a replacement's select ({', '.join(regex)})",
                  V5_8, version, origin) + "; this release compares select fields as "
            f"written, so it selects no resource when {root} is built")
