"""A ``helmCharts`` entry with a ``repo`` and no ``version``, or a version range (``^1.2.0``,
``~1.2``, ``>=1.0 <2``, ``1.x``: ``helm pull --version`` resolves it anew each time);
``helmChartInflationGenerator``: ``chartVersion``.

Helm takes the newest release the repository serves, so the same commit renders differently
later.  A chart without ``repo`` is read from ``chartHome`` (files in the repository: pinned by
git) and is not reported.  The finding is on the entry's line.

```yaml
helmCharts:
- name: c
  repo: https://charts.example.com   # no version: helm pulls the newest
  releaseName: r
```
"""
from __future__ import annotations

import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Iterable, Tuple
    from kzgit.lint.kfile import Hit, KFile

ID = "unpinned-chart"
SEVERITY = "error"
SUMMARY = "a helm chart from a repository without a pinned version"
KIND = "file"
RAISED_BY_WARNINGS_AS_ERRORS = False

# a semver constraint rather than one release: operators, wildcards, alternatives, spaces
_RANGE = re.compile(r"[\^~<>=*|, ]|(^|\.)[xX](\.|$)")


def check(k: KFile, version: Tuple[int, int, int], origin: str) -> Iterable[Hit]:
    """Each chart pulled from a repository with no version, or a range."""
    for field, version_key in (("helmCharts", "version"), ("helmChartInflationGenerator", "chartVersion")):
        entries = k.value(field)
        if not isinstance(entries, list):
            continue
        for i, c in enumerate(entries):
            if not isinstance(c, dict):
                continue
            repo = c.get("repo" if field == "helmCharts" else "chartRepoUrl")
            if not repo:
                continue
            name = c.get("name" if field == "helmCharts" else "chartName") or "?"
            pinned = c.get(version_key)
            if not pinned:
                yield (ID, k.line(field, i), f"{field}[{i}]",
                       f"chart '{name}' from {repo} has no {version_key}: helm pulls whatever "
                       "release is newest when it renders; pin one")
            elif isinstance(pinned, str) and _RANGE.search(pinned):
                # helm pull --version takes a semver constraint (Masterminds/semver): a range
                # is resolved against the repository's index on each pull
                yield (ID, k.path_line(field, i, version_key), f"{field}[{i}].{version_key}",
                       f"chart '{name}' from {repo}: {version_key} '{pinned}' is a range: helm "
                       "pulls the newest release it allows; pin one release")
