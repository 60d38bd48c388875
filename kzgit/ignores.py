"""``# kzgit: ignore[NAME, ...]``: the one reading of the comment that silences a finding on its
line, for ``kzgit lint`` (rule ids) and ``kzgit validate`` (``validate`` or a finding's code).
Its own module, without YAML: a warm run answered from the cache reads it without the parser."""
from __future__ import annotations

import re
from typing import Set

__all__ = ["ignored_rules"]

_IGNORE = re.compile(r"#\s*kzgit:\s*ignore\[([^\]]*)\]")


def ignored_rules(line_text: str) -> Set[str]:
    """The names a ``# kzgit: ignore[NAME, ...]`` comment on this line holds."""
    m = _IGNORE.search(line_text)
    if m is None:
        return set()
    return {r.strip() for r in m.group(1).split(",") if r.strip()}
