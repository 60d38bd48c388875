"""A field kustomize warns about as deprecated, in kustomize's own words, with the
``kzgit fix DIR`` that migrates it (``kzgit fix --vars DIR`` for ``vars``).

kustomize 5.8.1 warns about six deprecated fields (``api/types/kustomization.go``
``CheckDeprecatedFields``): ``bases``, ``commonLabels``, ``imageTags``, ``patchesJson6902``,
``patchesStrategicMerge``, ``vars``.  A kustomization without ``apiVersion``/``kind`` gets no
warning from ``kustomize build`` (only ``kustomize edit fix`` adds them), so this rule does not
report it.  The finding is on the field's line; ``warnings-as-errors = true`` raises it to an
error.

```yaml
# "Warning: 'commonLabels' is deprecated. Please use 'labels' instead.
# Run 'kustomize edit fix' to update your Kustomization automatically. With kzgit: `kzgit fix app`"
resources: [../base]
commonLabels: {team: shop}
```
"""
from __future__ import annotations

from kzgit.kustomization import DEPRECATIONS

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Iterable, Set, Tuple
    from kzgit.lint.kfile import Hit, KFile

ID = "deprecated-field"
SEVERITY = "warning"
SUMMARY = "a kustomization field kustomize deprecates (its own warning)"
KIND = "file"
RAISED_BY_WARNINGS_AS_ERRORS = True


def fix_command(k: KFile, field: str) -> str:
    """The ``kzgit fix`` that migrates ``field`` of this kustomization (``vars`` only with
    ``--vars``, as ``kustomize edit fix --vars``)."""
    return f"kzgit fix {'--vars ' if field == 'vars' else ''}{k.dir}"


def check(k: KFile, version: Tuple[int, int, int], origin: str) -> Iterable[Hit]:
    """kustomize's own warnings (api/types/kustomization.go CheckDeprecatedFields at
    kustomize/v5.8.1: a field that is not nil, an empty list too), word for word, then the
    command that migrates the field keeping the file as written."""
    for field, message in DEPRECATIONS:
        if k.key(field) is None or k.value(field) is None:
            continue
        text = message[2:] if message.startswith("# ") else message
        yield (ID, k.line(field), field,
               f"{text} With kzgit: `{fix_command(k, field)}` (keeps comments and layout, and checks "
               "that every root renders the same)")


def kustomize_messages() -> Set[str]:
    """The warnings a build prints that this rule reports at their field (so ``warnings`` does
    not report them again)."""
    return {msg for _, msg in DEPRECATIONS}
