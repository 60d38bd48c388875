"""``# kzgit: ignore[NAME, ...]``: the one reading of the comment that silences a finding on its
line, for ``kzgit lint`` (rule ids) and ``kzgit validate`` (``validate`` or a finding's code).
Its own module, without YAML: a warm run answered from the cache reads it without the parser."""
from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, TypeVar

__all__ = ["ignored_rules", "silence"]

F = TypeVar("F")

_IGNORE = re.compile(r"#\s*kzgit:\s*ignore\[([^\]]*)\]")


def ignored_rules(line_text: str) -> Set[str]:
    """The names a ``# kzgit: ignore[NAME, ...]`` comment on this line holds."""
    m = _IGNORE.search(line_text)
    if m is None:
        return set()
    return {r.strip() for r in m.group(1).split(",") if r.strip()}


def silence(findings: Sequence[F], read: Callable[[str], Optional[bytes]],
            names: Callable[[Any], Set[str]]) -> Tuple[List[F], int]:
    """``findings`` without those whose line holds an ignore comment naming one of
    ``names(finding)``, and how many were silenced.  A finding is read by its ``file``
    (repo-relative, through ``read``) and ``line`` (none: line 1); one without a file stays."""
    lines: Dict[str, List[str]] = {}
    kept: List[F] = []
    for f in findings:
        file = getattr(f, "file", None)
        if file:
            if file not in lines:
                data = read(file)
                lines[file] = [] if data is None else data.decode("utf-8", "replace").splitlines()
            n = (getattr(f, "line", None) or 1) - 1
            if 0 <= n < len(lines[file]) and ignored_rules(lines[file][n]) & names(f):
                continue
        kept.append(f)
    return kept, len(findings) - len(kept)
