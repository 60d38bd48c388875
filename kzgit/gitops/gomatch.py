"""Go's ``path.Match`` / ``filepath.Match`` (Unix) as a regular expression.

Used where the controllers match shell patterns: fluxcd/pkg ``envsubst/path/match.go`` (a copy
of Go's ``path.Match``, for ``${var#pattern}``) and ``sourceignore/gitignore/pattern.go``
(``filepath.Match`` on each path element of a ``.sourceignore`` pattern).

``*`` matches any run of characters other than ``/``, ``?`` one such character, ``[...]`` a
class (``^`` negates; ``lo-hi`` ranges; ``\\`` escapes), ``\\c`` the character ``c``.  A
malformed pattern (an unclosed class, a trailing backslash, an empty class) is Go's
``ErrBadPattern``: :class:`BadPattern` here.

``envsubst/path/match.go`` is a fork where ``*``, ``?`` and classes match ``/`` too (its
``Match`` returns true for a trailing ``*`` whatever follows): ``crossing=True``.
"""
from __future__ import annotations

import functools
import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import List


class BadPattern(ValueError):
    """Go's path.ErrBadPattern: "syntax error in pattern"."""


def _class(pattern: str, i: int, out: List[str], crossing: bool = False) -> int:
    """Translate the class starting after ``[`` at ``i``; return the index after ``]``."""
    n = len(pattern)
    negate = i < n and pattern[i] == "^"
    if negate:
        i += 1
    parts: List[str] = []
    first = True
    while True:
        if i >= n:
            raise BadPattern("syntax error in pattern")
        c = pattern[i]
        if c == "]" and not first:
            i += 1
            break
        first = False
        lo, i = _class_char(pattern, i)
        hi = lo
        if i < n and pattern[i] == "-":
            if i + 1 >= n:
                raise BadPattern("syntax error in pattern")
            hi, i = _class_char(pattern, i + 1)
            if hi < lo:
                raise BadPattern("syntax error in pattern")
        parts.append(re.escape(lo) if lo == hi else f"{re.escape(lo)}-{re.escape(hi)}")
    body = "".join(parts)
    # a negated class never matches '/' in Go's path.Match (it matches one non-'/' rune)
    if crossing:
        out.append(f"[^{body}]" if negate else f"[{body}]")
    else:
        out.append(f"[^/{body}]" if negate else f"(?:(?!/)[{body}])")
    return i


def _class_char(pattern: str, i: int) -> "tuple[str, int]":
    c = pattern[i]
    if c == "\\":
        i += 1
        if i >= len(pattern):
            raise BadPattern("syntax error in pattern")
        return pattern[i], i + 1
    if c in "-]":
        raise BadPattern("syntax error in pattern")
    return c, i + 1


@functools.lru_cache(maxsize=512)
def compile_pattern(pattern: str, crossing: bool = False) -> "re.Pattern[str]":
    """The regular expression of a Go shell pattern (raises :class:`BadPattern`)."""
    star, one = (".*", ".") if crossing else ("[^/]*", "[^/]")
    out: List[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            out.append(star)
            i += 1
        elif c == "?":
            out.append(one)
            i += 1
        elif c == "[":
            i = _class(pattern, i + 1, out, crossing)
        elif c == "\\":
            if i + 1 >= n:
                raise BadPattern("syntax error in pattern")
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def match(pattern: str, name: str, crossing: bool = False) -> bool:
    """Go ``path.Match(pattern, name)`` (``crossing``: envsubst's fork);
    :class:`BadPattern` for a malformed pattern."""
    return compile_pattern(pattern, crossing).fullmatch(name) is not None
