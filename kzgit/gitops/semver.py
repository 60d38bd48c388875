"""A Flux GitRepository's ``spec.ref.semver``: the newest tag in a version range.

source-controller checks such a GitRepository out as fluxcd/pkg ``git/gogit/clone.go``
``cloneSemVer`` does: every tag of the repository parsed with fluxcd/pkg ``version.ParseVersion``
(three dot-separated parts, then Masterminds/semver v3 ``NewVersion`` with
``CoerceNewVersion``: ``v`` prefix and leading zeros allowed), kept when the constraint
(``semver.NewConstraint``) checks it, sorted by version and then by the date of the tag's
commit, the last one taken; none is "no match found for semver: RANGE". fluxcd/pkg requires
github.com/Masterminds/semver/v3 v3.5.0; its ``constraints.go`` and ``version.go`` (read at
``71f2b39``, the commit of the v3.5 line) are ported here: ``||`` alternatives of
comma- or space-separated comparisons (``=``, ``!=``, ``>``, ``<``, ``>=``, ``<=``, ``~``,
``~>``, ``^``, ``A - B`` ranges, ``x``/``X``/``*`` wildcards), and a prerelease version matching
only an alternative that names a prerelease.
"""
from __future__ import annotations

import functools

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple


class SemverError(ValueError):
    """A constraint Masterminds/semver refuses (its words)."""


class Version:
    __slots__ = ("major", "minor", "patch", "pre", "original")

    def __init__(self, major: int, minor: int, patch: int, pre: str, original: str) -> None:
        self.major, self.minor, self.patch, self.pre, self.original = major, minor, patch, pre, original

    def compare(self, o: "Version") -> int:
        """version.go ``Compare``: the numbers, then a release above its prereleases, then the
        prereleases part by part (metadata ignored)."""
        for a, b in ((self.major, o.major), (self.minor, o.minor), (self.patch, o.patch)):
            if a != b:
                return -1 if a < b else 1
        if self.pre == o.pre == "":
            return 0
        if self.pre == "":
            return 1
        if o.pre == "":
            return -1
        return _compare_prerelease(self.pre, o.pre)


# version.go looseSemVerRegex, anchored (coerceNewVersion)
_LOOSE = (r"^v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?"
          r"(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
          r"(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?$")
_MAX_UINT64 = (1 << 64) - 1


def new_version(text: str) -> Optional[Version]:
    """``semver.NewVersion`` with ``CoerceNewVersion`` (None where it refuses)."""
    m = _rx(_LOOSE).match(text)
    if m is None:
        return None
    nums = [int(m.group(1)), int((m.group(2) or ".0")[1:]), int((m.group(3) or ".0")[1:])]
    if any(n > _MAX_UINT64 for n in nums):
        return None
    pre = m.group(5) or ""
    for part in pre.split(".") if pre else ():
        # validatePrerelease: no empty part, a number without a leading zero
        if not part or (part.isdigit() and len(part) > 1 and part[0] == "0"):
            return None
    return Version(nums[0], nums[1], nums[2], pre, text)


def parse_tag(tag: str) -> Optional[Version]:
    """fluxcd/pkg ``version.ParseVersion``: three dot-separated parts, then ``NewVersion``."""
    if len(tag.split(".", 2)) != 3:
        return None
    return new_version(tag)


def _compare_prerelease(a: str, b: str) -> int:
    ap, bp = a.split("."), b.split(".")
    for i in range(max(len(ap), len(bp))):
        d = _compare_pre_part(ap[i] if i < len(ap) else "", bp[i] if i < len(bp) else "")
        if d:
            return d
    return 0


def _compare_pre_part(s: str, o: str) -> int:
    if s == o:
        return 0
    if s == "":
        return -1
    if o == "":
        return 1
    s_num, o_num = s.isdigit() and int(s) <= _MAX_UINT64, o.isdigit() and int(o) <= _MAX_UINT64
    if not s_num and not o_num:
        return 1 if s > o else -1
    if not o_num:
        return -1   # numbers sort below identifiers
    if not s_num:
        return 1
    return 1 if int(s) > int(o) else -1


# -- constraints (constraints.go) ----------------------------------------------------------------

_CV = (r"v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?"
       r"(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
       r"(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?")
_OPS = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^"
_CONSTRAINT = rf"^\s*({_OPS})\s*({_CV})\s*$"
_RANGE = rf"\s*({_CV})\s+-\s+({_CV})\s*"
_FIND = rf"({_OPS})\s*({_CV})"
_VALID = rf"^(\s*({_OPS})\s*({_CV})\s*)((?:\s+|,\s*)({_OPS})\s*({_CV})\s*)*$"


@functools.lru_cache(maxsize=None)
def _rx(pattern: str) -> Any:
    """The expression compiled by Go's engine (RE2, :mod:`kzgit.gore`): the constraint is a
    repository's text, matched in linear time with Go's leftmost-first choices."""
    from kzgit import gore   # start-up: only a GitRepository that follows a semver range
    return gore.compile(pattern)


class _Constraint:
    __slots__ = ("op", "con", "orig", "dirty", "minor_dirty", "patch_dirty")

    def __init__(self, op: str, con: Version, orig: str, dirty: bool, minor_dirty: bool,
                 patch_dirty: bool) -> None:
        self.op, self.con, self.orig = op, con, orig
        self.dirty, self.minor_dirty, self.patch_dirty = dirty, minor_dirty, patch_dirty


def _is_x(s: str) -> bool:
    return s in ("x", "*", "X")


def _parse_constraint(text: str) -> _Constraint:
    if not text:
        zero = new_version("0.0.0")
        assert zero is not None
        return _Constraint("", zero, text, True, False, False)
    m = _rx(_CONSTRAINT).match(text)
    if m is None:
        raise SemverError(f"improper constraint: {text}")
    # groups: 1 op, 2 the version, 3 major, 4 .minor, 5 .patch, 6 -pre (with its dash)
    major, minor, patch, pre = m.group(3), m.group(4) or "", m.group(5) or "", m.group(6) or ""
    ver = m.group(2)
    dirty = minor_dirty = patch_dirty = False
    if _is_x(major) or major == "":
        ver, dirty = f"0.0.0{pre}", True
    elif _is_x(minor[1:]) or minor == "":
        ver, dirty, minor_dirty = f"{major}.0.0{pre}", True, True
    elif _is_x(patch[1:]) or patch == "":
        ver, dirty, patch_dirty = f"{major}{minor}.0{pre}", True, True
    con = new_version(ver)
    if con is None:
        raise SemverError("constraint parser error")
    return _Constraint(m.group(1), con, m.group(2), dirty, minor_dirty, patch_dirty)


class Constraints:
    """``semver.NewConstraint`` and ``Check``."""

    def __init__(self, text: str) -> None:
        for m in list(_rx(_RANGE).finditer(text)):   # rewriteRange: "A - B" is ">= A, <= B"
            text = text.replace(m.group(0), f">= {m.group(1)}, <= {m.group(11)} ", 1)
        self.groups: List[Tuple[List[_Constraint], bool]] = []
        for part in text.split("||"):
            if not _rx(_VALID).match(part):
                raise SemverError(f"improper constraint: {part}")
            found = [m.group(0) for m in _rx(_FIND).finditer(part)] or [part]
            cs = [_parse_constraint(s) for s in found]
            self.groups.append((cs, any(c.con.pre for c in cs)))

    def check(self, v: Version) -> bool:
        return any(all(_OPS_CHECK[c.op](v, c, pre) for c in cs) for cs, pre in self.groups)


def _not_equal(v: Version, c: _Constraint, pre: bool) -> bool:
    if v.pre and not pre:
        return False
    if c.dirty:
        if c.con.major != v.major:
            return True
        if c.con.minor != v.minor and not c.minor_dirty:
            return True
        if c.minor_dirty:
            return False
        if c.con.patch != v.patch and not c.patch_dirty:
            return True
        if c.patch_dirty:
            if v.pre or c.con.pre:
                return _compare_prerelease(v.pre, c.con.pre) != 0
            return False
    return v.compare(c.con) != 0


def _greater(v: Version, c: _Constraint, pre: bool) -> bool:
    if v.pre and not pre:
        return False
    if not c.dirty:
        return v.compare(c.con) == 1
    if v.major != c.con.major:
        return v.major > c.con.major
    if c.minor_dirty:
        return False
    if c.patch_dirty:
        return v.minor > c.con.minor
    return v.compare(c.con) == 1


def _less(v: Version, c: _Constraint, pre: bool) -> bool:
    if v.pre and not pre:
        return False
    return v.compare(c.con) < 0


def _greater_equal(v: Version, c: _Constraint, pre: bool) -> bool:
    if v.pre and not pre:
        return False
    return v.compare(c.con) >= 0


def _less_equal(v: Version, c: _Constraint, pre: bool) -> bool:
    if v.pre and not pre:
        return False
    if not c.dirty:
        return v.compare(c.con) <= 0
    if v.major > c.con.major:
        return False
    return not (v.major == c.con.major and v.minor > c.con.minor and not c.minor_dirty)


def _tilde(v: Version, c: _Constraint, pre: bool) -> bool:
    if v.pre and not pre:
        return False
    if v.compare(c.con) < 0:
        return False
    if (c.con.major, c.con.minor, c.con.patch) == (0, 0, 0) and not c.minor_dirty \
            and not c.patch_dirty:
        return True   # ~0.0.0 is >= 0.0.0
    if v.major != c.con.major:
        return False
    return not (v.minor != c.con.minor and not c.minor_dirty)


def _tilde_or_equal(v: Version, c: _Constraint, pre: bool) -> bool:
    if v.pre and not pre:
        return False
    if c.dirty:
        return _tilde(v, c, pre)
    return v.compare(c.con) == 0


def _caret(v: Version, c: _Constraint, pre: bool) -> bool:
    if v.pre and not pre:
        return False
    if v.compare(c.con) < 0:
        return False
    if c.con.major > 0 or c.minor_dirty:
        return v.major == c.con.major
    if v.major > 0:
        return False
    if c.con.minor > 0 or c.patch_dirty:
        return v.minor == c.con.minor
    if v.minor > 0:
        return False
    return c.con.patch == v.patch


_OPS_CHECK: Dict[str, Callable[[Version, _Constraint, bool], bool]] = {
    "": _tilde_or_equal, "=": _tilde_or_equal, "!=": _not_equal, ">": _greater, "<": _less,
    ">=": _greater_equal, "=>": _greater_equal, "<=": _less_equal, "=<": _less_equal,
    "~": _tilde, "~>": _tilde, "^": _caret,
}


def newest_tag(constraint: str, tags: Sequence[Tuple[str, float]]) -> str:
    """The tag source-controller checks out for ``constraint`` among ``tags`` (name, date of
    its commit); :class:`SemverError` in its words when the range is malformed or nothing
    matches."""
    try:
        c = Constraints(constraint)
    except SemverError as e:
        raise SemverError(f"semver parse error: {e}") from None
    matched: List[Tuple[Version, float]] = []
    for name, when in tags:
        v = parse_tag(name)
        if v is not None and c.check(v):
            matched.append((v, when))
    if not matched:
        raise SemverError(f"no match found for semver: {constraint}")

    def order(a: Tuple[Version, float], b: Tuple[Version, float]) -> int:
        d = a[0].compare(b[0])
        if d:
            return d
        return -1 if a[1] < b[1] else (1 if a[1] > b[1] else 0)
    return max(matched, key=functools.cmp_to_key(order))[0].original


def argo_max_version(revision: str, tags: Sequence[str]) -> Optional[str]:
    """The tag an Argo CD ``targetRevision`` that is a version range names: argo-cd
    ``util/versions/tags.go`` ``MaxVersion`` as ``util/git/client.go`` ``lsRemote`` uses it.
    None when ``revision`` is a version itself (a pin, resolved as a ref), not a range
    Masterminds/semver reads (a branch name), or a range no tag matches (then Argo CD goes on
    resolving it as a ref name). Tags are any ``NewVersion`` accepts; of equal versions the
    first in ref order stays (``GreaterThan``)."""
    if not is_range(revision):
        return None
    c = Constraints(revision)
    best: Optional[Version] = None
    for tag in sorted(tags):
        v = new_version(tag)
        if v is not None and c.check(v) and (best is None or v.compare(best) > 0):
            best = v
    return best.original if best is not None else None


def is_range(revision: str) -> bool:
    """argo-cd ``versions.IsConstraint``: not a version, and a range Masterminds/semver reads."""
    if new_version(revision) is not None:
        return False
    try:
        Constraints(revision)
    except SemverError:
        return False
    return True
