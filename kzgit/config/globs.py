"""Path globs of the configuration (``roots``, ``exclude``, ``localized``): matched against
'/'-separated paths from the top of the repository; ``*`` and ``?`` stay within one path segment
and ``**`` spans segments; a glob matches a directory and everything below it.

One module rather than pathspec: gitignore's patterns (pathspec's ``gitwildmatch``) also match a
pattern without a slash at any depth and treat a trailing slash and ``!`` specially, which these
documented semantics do not, and the patterns run on RE2 (:mod:`kzgit.gore`) like every other
pattern a repository writes."""
from __future__ import annotations



TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, Iterable, List, Sequence


def glob_match(path: str, patterns: Sequence[str]) -> bool:
    """Whether a repo-relative '/'-separated ``path``, or a dir above it, matches a glob.

    ``*`` and ``?`` stay within one path segment, ``**`` spans segments, so
    ``vendor/*`` covers ``vendor/a/b/kustomization.yaml`` through ``vendor/a``.
    """
    if not patterns:
        return False
    regexes = [_glob_re(p) for p in patterns]
    parts = path.strip("/").split("/")
    for n in range(len(parts), 0, -1):
        prefix = "/".join(parts[:n])
        if any(r.test(prefix) for r in regexes):
            return True
    return False


def glob_names(path: str, patterns: Sequence[str]) -> bool:
    """Whether a glob matches the repo-relative ``path`` itself (a dir above it is not enough)."""
    return any(_glob_re(p).test(path.strip("/")) for p in patterns)


def unmatched_globs(patterns: Sequence[str], paths: Iterable[str]) -> List[str]:
    """The ``patterns`` that match none of ``paths`` itself (give the directories too, for
    the answer :func:`glob_match` would give)."""
    left = {p: _glob_re(p) for p in patterns}
    for path in paths:
        if not left:
            break
        for p in [p for p, r in left.items() if r.test(path.strip("/"))]:
            del left[p]
    return [p for p in patterns if p in left]


_globs: Dict[str, Any] = {}


def _glob_re(pattern: str) -> Any:
    """The glob as a Go regular expression run by RE2 (:mod:`kzgit.gore`): ``**/**/**x``
    against a long path backtracks in Python's ``re``; RE2 is linear in the path."""
    rx = _globs.get(pattern)
    if rx is not None:
        return rx
    from kzgit import gore   # start-up: only a configuration with globs loads RE2
    out, i = [], 0
    text = pattern.strip("/")
    while i < len(text):
        c = text[i]
        if text.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif text.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(gore.escape(c))
            i += 1
    rx = _globs[pattern] = gore.compile("^(?:" + "".join(out) + ")$")
    return rx
