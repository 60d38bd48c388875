"""Removed and deprecated Kubernetes APIs over the whole history since 1.16, pluto-style.

The bundled schemas start at one release (1.25): a kind removed before it would otherwise be
"no schema" (a warning) instead of "not served" (what the API server answers).  The facts are
data with their sources (``removed_apis.json``); :func:`removal` and :func:`deprecation` turn
a row into the finding for the pinned release.
"""
from __future__ import annotations

import functools
import json
import os
from typing import Dict, Optional, Tuple

from kzgit.record import Record


class ApiRow(Record):
    """One apiVersion/kind: deprecated in a release, removed in a later one, and its successor."""

    __slots__ = ("api_version", "kind", "deprecated", "removed", "use", "note")

    def __init__(self, api_version: str, kind: str, deprecated: str, removed: str,
                 use: Optional[str], note: Optional[str]) -> None:
        self.api_version, self.kind = api_version, kind
        self.deprecated, self.removed = deprecated, removed
        self.use, self.note = use, note


def release_key(v: str) -> Tuple[int, ...]:
    """``"1.25"`` -> (1, 25), for comparing releases."""
    return tuple(int(p) for p in v.split("."))


@functools.lru_cache(maxsize=None)
def table() -> Dict[Tuple[str, str], ApiRow]:
    """(apiVersion, kind) -> its row."""
    with open(os.path.join(os.path.dirname(__file__), "removed_apis.json"), encoding="utf-8") as f:
        data = json.load(f)
    out: Dict[Tuple[str, str], ApiRow] = {}
    for r in data["rows"]:
        for kind in r["kinds"]:
            out[(r["api"], kind)] = ApiRow(r["api"], kind, r["deprecated"], r["removed"], r.get("use"),
                                           r.get("note"))
    return out


def _instead(row: ApiRow) -> str:
    if row.use:
        return f"; use {row.use}"
    return f"; {row.note}" if row.note else ""


def removal(api_version: str, kind: str, release: str) -> Optional[str]:
    """Why ``release`` refuses the kind (removed in it or before), else None."""
    row = table().get((api_version, kind))
    if row is None or release_key(release) < release_key(row.removed):
        return None
    return (f"{kind} {api_version} is not served by Kubernetes {release} "
            f"(removed in {row.removed}, deprecated since {row.deprecated}{_instead(row)})")


def deprecation(api_version: str, kind: str, release: str) -> Optional[str]:
    """A warning for a kind ``release`` still serves but has deprecated, else None."""
    row = table().get((api_version, kind))
    if row is None or not release_key(row.deprecated) <= release_key(release) < release_key(row.removed):
        return None
    return (f"{kind} {api_version} is deprecated since Kubernetes {row.deprecated} and removed in "
            f"{row.removed}{_instead(row)}")
