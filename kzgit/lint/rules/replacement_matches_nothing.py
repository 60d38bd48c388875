"""A ``replacements`` target ``select`` that selects no resource.

Observed by the build, as ``patch-matches-nothing``; the finding is on the ``select`` line (or,
for a replacements file, on the entry naming it).

```yaml
replacements:
- source: {kind: Deployment, name: web}
  targets:
  - select: {kind: ConfigMap}        # no ConfigMap in the build
    fieldPaths: [data.web]
```
"""
from __future__ import annotations

ID = "replacement-matches-nothing"
SEVERITY = "error"
SUMMARY = "a replacement target that selects no resource"
KIND = "build"
RAISED_BY_WARNINGS_AS_ERRORS = False
