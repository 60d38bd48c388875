"""A root that does not render: nothing else can be checked there.

The finding is placed on the kustomization, field and line the build's one-line lead names
(``patches[1].path: 'p.yaml' does not exist``, :mod:`kzgit.builder.leads`), else on the root.

```yaml
# "app does not render: ..."
resources: [missing.yaml]
```
"""
from __future__ import annotations

import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Callable, Optional, Tuple
    from kzgit.lint.kfile import KFile

ID = "render-error"
SEVERITY = "error"
SUMMARY = "a root that does not render"
KIND = "build"
RAISED_BY_WARNINGS_AS_ERRORS = False

# a lead (kzgit.builder.leads): "base/kustomization.yaml:3: resources: 'x.yaml' does not exist"
_LEAD = re.compile(r"^([^\s:]*(?:kustomization\.ya?ml|Kustomization))(?::(\d+))?: "
                   r"([A-Za-z]+(?:\[\d+\])?(?:\.[A-Za-z]+)?): ")


def place(root: str, root_file: str, lead: str, kfile: Callable[[str], Optional[KFile]]
          ) -> Tuple[str, Optional[int], str, str]:
    """(file, line, field, message) for a root whose build failed with ``lead`` (the first
    line of its error, repository-relative)."""
    file, field, line = root_file, "", None
    m = _LEAD.match(lead)
    named = kfile(m.group(1)) if m is not None else None
    if m is not None and named is not None:
        # the lead names the kustomization and field nearest the problem: the finding goes there
        file, field = m.group(1), m.group(3)
        parts = re.match(r"(\w+)(?:\[(\d+)\])?(?:\.(\w+))?", field)
        if m.group(2):   # the lead names the entry's line itself
            line = int(m.group(2))
        elif parts is not None:
            index = int(parts.group(2)) if parts.group(2) is not None else None
            line = named.line(parts.group(1), index, parts.group(3))
    return file, line, field, f"{root} does not render: {lead}"
