"""The report of ``kzgit diff`` and how resources of two renderings are paired.

Resources are keyed by kind, namespace and name.  A generated ConfigMap or
Secret gets a hash of its content appended to its name, so any data change
renames it: ``cfg-7b4mf2dt6g`` at the base and ``cfg-hk9c2m7b5d`` at the head
are one resource that *changed*, not a deletion plus an addition.  The name
without the suffix (the *stem*) comes from what the build recorded when it
added the hash (:attr:`kzgit.resource.Resource.needs_hash` and the id before
the rename); for an external engine's YAML, which records nothing, from the
shape of kustomize's suffix (:data:`HASH_SUFFIX`).

Pairing runs in passes, each on what the previous ones left unpaired:
same apiVersion, kind, namespace and name; same kind, namespace and name
(an apiVersion change); same kind, namespace and stem (a hash rename).

The model's classes are :class:`kzgit.record.Record` classes, not dataclasses: ``dataclasses``
imports ``inspect`` (``ast``, ``dis``, ``tokenize``), a cost every ``kzgit diff`` would pay.
"""
from __future__ import annotations

import difflib
import json
import re
import shlex
from typing import Any, Callable, Dict, List, Optional, Tuple

from kzgit.record import Record
from kzgit.sha import sha256

CHANGED, ADDED, REMOVED, UNCHANGED, ERROR = "changed", "added", "removed", "unchanged", "error"
# A root that does not render at the base and renders at the head: the change repairs it.
FIXED = "fixed"

# api/hasher/hasher.go encode(): 10 hex digits of a sha256 with 0,1,3,a,e replaced by
# g,h,k,m,t -- so a suffix only ever holds these 16 characters.
HASH_SUFFIX = re.compile(r"^(?P<stem>.+)-[245-9bcdfghkmt]{10}$")
_HASHED_KINDS = ("ConfigMap", "Secret")


class RenderedResource(Record):
    """One resource of a rendering: its identity and its YAML as ``kustomize build`` prints it."""

    __slots__ = ("api_version", "kind", "namespace", "name", "text", "stem")

    def __init__(self, api_version: str, kind: str, namespace: str, name: str, text: str,
                 stem: Optional[str] = None) -> None:
        self.api_version = api_version
        self.kind = kind
        self.namespace = namespace
        self.name = name
        self.text = text
        self.stem = stem    # the name without its hash suffix, when it has one

    @property
    def id(self) -> str:
        """``Kind/namespace/name``, or ``Kind/name`` without a namespace."""
        return "/".join(p for p in (self.kind, self.namespace, self.name) if p)

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]


def stem_from_shape(kind: str, name: str) -> Optional[str]:
    """The stem of a generated name judged by its shape alone (no build record)."""
    if kind not in _HASHED_KINDS:
        return None
    m = HASH_SUFFIX.match(name)
    return m.group("stem") if m else None


class ResourceChange(Record):
    """A resource that differs between the renderings of one root."""

    __slots__ = ("status", "api_version", "kind", "namespace", "name", "previous_name", "diff")

    def __init__(self, status: str, api_version: str, kind: str, namespace: str, name: str,
                 previous_name: Optional[str], diff: str) -> None:
        self.status = status                  # CHANGED, ADDED or REMOVED
        self.api_version = api_version
        self.kind = kind
        self.namespace = namespace
        self.name = name                      # at the head (at the base when removed)
        self.previous_name = previous_name    # at the base, when it differs (a hash suffix changed)
        self.diff = diff                      # unified diff of the YAML

    @property
    def id(self) -> str:
        return "/".join(p for p in (self.kind, self.namespace, self.name) if p)


class RenderError(Record):
    """A root that does not render at one side."""

    __slots__ = ("side", "revision", "message")

    def __init__(self, side: str, revision: str, message: str) -> None:
        self.side = side            # "base" or "head"
        self.revision = revision    # the side's label (the revision as written, or "working tree")
        self.message = message


class RootDiff(Record):
    """What changed in the rendering of one kustomization root."""

    __slots__ = ("root", "file", "status", "resources", "errors", "app")

    def __init__(self, root: str, file: str, status: str,
                 resources: Optional[List[ResourceChange]] = None,
                 errors: Optional[List[RenderError]] = None, app: Optional[str] = None) -> None:
        self.root = root        # repo-relative directory (an application's id, for one)
        #: the id of the Argo CD Application or Flux Kustomization this section renders
        #: (kzgit.gitops); None for a plain kustomization root
        self.app = app
        self.file = file        # its kustomization file (at the head, else the base)
        # CHANGED, ADDED, REMOVED, UNCHANGED, ERROR (does not render at the head, or at either
        # side), or FIXED (does not render at the base only: errors holds the base's, and
        # resources the head's whole rendering, as added)
        self.status = status
        self.resources: List[ResourceChange] = [] if resources is None else resources
        self.errors: List[RenderError] = [] if errors is None else errors

    def count(self, status: str) -> int:
        return sum(1 for r in self.resources if r.status == status)


class Drift(Record):
    """A localized copy that no longer matches its original after the change."""

    __slots__ = ("copy", "original", "status", "problems")

    def __init__(self, copy: str, original: Optional[str], status: str, problems: List[str]) -> None:
        self.copy = copy            # repo-relative directory of the copy
        self.original = original    # repo-relative directory of the original (None: remote/unknown)
        self.status = status        # "original-changed", "copy-changed" or "stale"
        self.problems = problems    # what check_copy found, repo-relative

    @property
    def summary(self) -> str:
        orig = f"'{self.original}'" if self.original else "its original"
        if self.status == "original-changed":
            return f"original {orig} changed but the localized copy was not rebuilt"
        if self.status == "copy-changed":
            return f"the localized copy changed without its original {orig}"
        return f"the localized copy does not match its original {orig}"

    @property
    def rebuild(self) -> str:
        return f"kzgit rebuild {shlex.quote(self.copy)}"


class Side(Record):
    """A revision as the report names it."""

    __slots__ = ("label", "rev", "commit")

    def __init__(self, label: str, rev: Optional[str], commit: Optional[str]) -> None:
        self.label = label      # the revision as written, or "working tree"
        self.rev = rev          # None for the working tree
        self.commit = commit    # full object id; None for the working tree


class RenderStat(Record):
    """How one rendering of a diff went (``kzgit diff -v``): not part of the report's formats."""

    __slots__ = ("root", "side", "status", "seconds", "label")

    def __init__(self, root: str, side: str, status: str, seconds: float, label: str = "") -> None:
        self.root = root
        self.side = side        # "base" or "head"
        self.status = status    # "built", "cached" or "failed"
        self.seconds = seconds
        self.label = label      # the side's revision as the user named it


class DiffReport(Record):
    """Everything ``kzgit diff`` found; the formats in :mod:`kzgit.diff.output` print it."""

    __slots__ = ("base", "head", "roots", "drift", "notes", "renders", "shard", "fingerprint")

    def __init__(self, base: Side, head: Side, roots: Optional[List[RootDiff]] = None,
                 drift: Optional[List[Drift]] = None, notes: Optional[List[str]] = None,
                 renders: Optional[List[RenderStat]] = None) -> None:
        self.base = base
        self.head = head
        # (I, N) when this report is part I of N of a sharded diff (--shard I/N)
        self.shard: Optional[Tuple[int, int]] = None
        # what the diff compared, the same in every shard of one diff and in the unsharded
        # report (:func:`fingerprint`): shards of different diffs cannot be merged
        self.fingerprint: Optional[str] = None
        self.roots: List[RootDiff] = [] if roots is None else roots
        self.drift: List[Drift] = [] if drift is None else drift
        self.notes: List[str] = [] if notes is None else notes
        self.renders: List[RenderStat] = [] if renders is None else renders

    @property
    def changed(self) -> bool:
        """Whether any rendering differs (what ``--exit-code`` gates on)."""
        return any(r.status in (CHANGED, ADDED, REMOVED, FIXED) for r in self.roots)

    @property
    def failed(self) -> bool:
        """Whether a root does not render at the head (exit code 4); a root the change fixes
        (broken at the base only) is a change, not a failure."""
        return any(r.status == ERROR for r in self.roots)


def fingerprint(base_commit: Optional[str], head_commit: Optional[str], roots: List[str],
                changed: List[str]) -> str:
    """What one diff compares: its revisions, its affected roots before sharding and the
    changed paths (the working tree counts as one revision)."""
    data = json.dumps([base_commit, head_commit, sorted(roots), sorted(changed)])
    return sha256(data.encode()).hexdigest()


# -- pairing ------------------------------------------------------------------------------------
_Key = Callable[[RenderedResource], Optional[Tuple[Any, ...]]]
_PASSES: Tuple[_Key, ...] = (
    lambda r: (r.group, r.kind, r.namespace, r.name),
    lambda r: (r.kind, r.namespace, r.name),
    lambda r: (r.kind, r.namespace, r.stem or r.name) if r.kind in _HASHED_KINDS or r.stem else None,
)


def pair(base: List[RenderedResource], head: List[RenderedResource]
         ) -> List[Tuple[Optional[RenderedResource], Optional[RenderedResource]]]:
    """(base, head) pairs; one side None for a resource only the other rendering has."""
    left = list(range(len(base)))
    right = list(range(len(head)))
    pairs: List[Tuple[Optional[RenderedResource], Optional[RenderedResource]]] = []
    for key in _PASSES:
        by_key: Dict[Tuple[Any, ...], List[int]] = {}
        for i in right:
            k = key(head[i])
            if k is not None:
                by_key.setdefault(k, []).append(i)
        still: List[int] = []
        taken = set()
        for i in left:
            k = key(base[i])
            cands = by_key.get(k, []) if k is not None else []
            if cands:
                j = cands.pop(0)   # several with one key: pair them in rendering order
                taken.add(j)
                pairs.append((base[i], head[j]))
            else:
                still.append(i)
        left = still
        right = [j for j in right if j not in taken]
    pairs += [(base[i], None) for i in left]
    pairs += [(None, head[j]) for j in right]
    return pairs


def unified(root: str, a: Optional[RenderedResource], b: Optional[RenderedResource]) -> str:
    """The unified diff of one resource, headed ``a/ROOT ID`` and ``b/ROOT ID``."""
    return "".join(difflib.unified_diff(
        a.text.splitlines(keepends=True) if a else [],
        b.text.splitlines(keepends=True) if b else [],
        f"a/{root} {a.id}" if a else "/dev/null",
        f"b/{root} {b.id}" if b else "/dev/null"))


def _redacted(r: RenderedResource) -> RenderedResource:
    """``r`` with its Secret values replaced by their digests (:mod:`kzgit.diff.redact`)."""
    from kzgit.diff.redact import redacted_text   # start-up: YAML round trip of Secrets only
    text = redacted_text(r.api_version, r.kind, r.name, r.text)
    return r if text is r.text else RenderedResource(r.api_version, r.kind, r.namespace, r.name,
                                                     text, r.stem)


def compare(root: str, base: List[RenderedResource], head: List[RenderedResource],
            show_secrets: bool = False) -> List[ResourceChange]:
    """The resources that differ, sorted by kind, namespace and name (numbers in names in
    numeric order, as a person reads them); Secret values redacted (:mod:`kzgit.diff.redact`)
    unless ``show_secrets``."""
    out: List[ResourceChange] = []
    if not show_secrets:
        base, head = [_redacted(r) for r in base], [_redacted(r) for r in head]
    for a, b in pair(base, head):
        if a is not None and b is not None and a.text == b.text:
            continue
        cur = b if b is not None else a
        assert cur is not None
        status = CHANGED if a is not None and b is not None else (ADDED if b is not None else REMOVED)
        prev = a.name if a is not None and b is not None and a.name != b.name else None
        out.append(ResourceChange(status, cur.api_version, cur.kind, cur.namespace, cur.name, prev,
                                  unified(root, a, b)))
    out.sort(key=lambda c: (c.kind, natural(c.namespace), natural(c.name), c.api_version))
    return out


def natural(name: str) -> Tuple[Any, ...]:
    """A sort key putting ``cfg-2`` before ``cfg-10``: runs of digits compare as numbers."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


# -- reading reports back (kzgit diff --merge) ------------------------------------------------------
class ReportFormatError(ValueError):
    """A JSON report that is not one ``kzgit diff --format json`` writes."""


def _field(d: Any, name: str, kind: Any, where: str) -> Any:
    if not isinstance(d, dict) or name not in d or not isinstance(d[name], kind):
        raise ReportFormatError(f"{where}: missing or bad '{name}'")
    return d[name]


def _opt_str(d: Dict[str, Any], name: str, where: str) -> Optional[str]:
    v = d.get(name)
    if v is not None and not isinstance(v, str):
        raise ReportFormatError(f"{where}: bad '{name}'")
    return v


def from_dict(data: Any) -> DiffReport:
    """The report a ``kzgit diff --format json`` output holds (version 1); ReportFormatError if not."""
    if _field(data, "version", int, "report") != 1:
        raise ReportFormatError(f"report version {data['version']} is not supported (expected 1)")

    def side(name: str) -> Side:
        s = _field(data, name, dict, "report")
        return Side(str(_field(s, "label", str, name)), _opt_str(s, "rev", name),
                    _opt_str(s, "commit", name))

    report = DiffReport(side("base"), side("head"))
    for i, r in enumerate(_field(data, "roots", list, "report")):
        where = f"roots[{i}]"
        root = RootDiff(_field(r, "root", str, where), _field(r, "file", str, where),
                        _field(r, "status", str, where), app=_opt_str(r, "app", where))
        for e in _field(r, "errors", list, where):
            root.errors.append(RenderError(_field(e, "side", str, where), _field(e, "revision", str, where),
                                           _field(e, "message", str, where)))
        for c in _field(r, "resources", list, where):
            root.resources.append(ResourceChange(
                _field(c, "status", str, where), _field(c, "api_version", str, where),
                _field(c, "kind", str, where), _field(c, "namespace", str, where),
                _field(c, "name", str, where), _opt_str(c, "previous_name", where),
                _field(c, "diff", str, where)))
        report.roots.append(root)
    for i, d in enumerate(_field(data, "localized", list, "report")):
        where = f"localized[{i}]"
        problems = _field(d, "problems", list, where)
        report.drift.append(Drift(_field(d, "copy", str, where), _opt_str(d, "original", where),
                                  _field(d, "status", str, where), [str(p) for p in problems]))
    report.notes = [str(n) for n in _field(data, "notes", list, "report")]
    shard = data.get("shard")
    if shard is not None:
        index, count = _field(shard, "index", int, "shard"), _field(shard, "count", int, "shard")
        if not 1 <= index <= count:
            raise ReportFormatError(f"shard: index {index} is not in 1..{count}")
        report.shard = (index, count)
    report.fingerprint = _opt_str(data, "fingerprint", "report")
    return report


def merge(reports: List[DiffReport], names: Optional[List[str]] = None) -> DiffReport:
    """One report from the reports of all the shards of one diff.

    Roots are sorted as one run sorts them.  ReportFormatError, naming the report, when the
    reports compare different revisions, when one is not a shard report or belongs to another
    diff (another fingerprint or shard count), or when a shard is missing or given twice: a
    partial or doubled merge would pass for the whole diff.
    """
    if not reports:
        raise ReportFormatError("no report to merge")
    names = names or [f"report {i + 1}" for i in range(len(reports))]
    first = reports[0]
    out = DiffReport(first.base, first.head)
    for i, r in enumerate(reports):
        if (r.base.commit, r.head.commit, r.base.label, r.head.label) != \
                (first.base.commit, first.head.commit, first.base.label, first.head.label):
            raise ReportFormatError(
                f"report {i + 1} compares {r.base.label}..{r.head.label} "
                f"({r.base.commit}..{r.head.commit}), report 1 compares {first.base.label}.."
                f"{first.head.label} ({first.base.commit}..{first.head.commit})")
    seen: Dict[int, str] = {}
    for name, r in zip(names, reports):
        if r.shard is None:
            raise ReportFormatError(f"{name} is not a shard report (made without --shard I/N)")
        assert first.shard is not None   # the first report passed the check above
        if r.shard[1] != first.shard[1]:
            raise ReportFormatError(f"{name} is shard {r.shard[0]}/{r.shard[1]}, "
                                    f"{names[0]} is shard {first.shard[0]}/{first.shard[1]}")
        if r.fingerprint != first.fingerprint:
            raise ReportFormatError(f"{name} is a shard of another diff than {names[0]} "
                                    "(other affected roots or changed paths)")
        if r.shard[0] in seen:
            raise ReportFormatError(f"shard {r.shard[0]}/{r.shard[1]} given twice: "
                                    f"{seen[r.shard[0]]} and {name}")
        seen[r.shard[0]] = name
    assert first.shard is not None
    missing = [str(i) for i in range(1, first.shard[1] + 1) if i not in seen]
    if missing:
        raise ReportFormatError(f"shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                                f"of {first.shard[1]} missing: the merged report would be partial")
    roots: Dict[str, RootDiff] = {}
    copies: Dict[str, Drift] = {}
    for r in reports:
        for root in r.roots:
            roots.setdefault(root.root, root)
        for d in r.drift:
            copies.setdefault(d.copy, d)
        out.notes += [n for n in r.notes if n not in out.notes]
    out.roots = [roots[k] for k in sorted(roots)]
    out.drift = [copies[k] for k in sorted(copies)]
    out.fingerprint = first.fingerprint
    return out
