"""``kzgit-pinned-refs``: every remote reference in a changed kustomization carries a version.

Checks the kustomization files among the changed files (all of them with
``--all``), plus plugin config files they name: remote resources, bases,
components, generators/transformers/validators, KRM function exec paths and
images, helm charts.  Reports file, line and URL.

Offline, a tag cannot be told from a branch by its name alone, so a ref must
*look like* a version (the configurable ``refs.allowed`` patterns) or be a full
commit SHA; ``main``, ``master``, ``HEAD``... and every other ref are refused.
The verdict depends on the name alone, so a fresh clone and a machine whose
cache a build has filled agree; with ``refs.check-cache = true`` a ref that
kzgit's remote cache knows as a branch is refused too (an extra check that
only ever refuses more).  ``require_sha`` accepts full SHAs only.  Container images of
KRM functions need a digest or a version tag; helm charts need a version.
"""
from __future__ import annotations

import re
from typing import Any, Iterable, List, Optional
from urllib.parse import parse_qs, urlsplit

from kzgit.config import RefPolicy
from kzgit.graph import RemoteRef, helm_ref_parts
from kzgit.hooks import Finding, Workspace
from kzgit.record import Record

_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_RAW_GITHUB = re.compile(r"^https?://raw\.githubusercontent\.com/[^/]+/[^/]+/([^/?#]+)/")


class RefProblem(Record):
    """One refused reference."""

    __slots__ = ("file", "line", "value", "reason")

    def __init__(self, file: str, line: Optional[int], value: str, reason: str) -> None:
        self.file = file
        self.line = line
        self.value = value
        self.reason = reason

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.value}: {self.reason}"


def _spec(url: str) -> Any:
    from kzgit.remote import parse_repo_spec   # only files naming a remote pay for the parser
    try:
        return parse_repo_spec(url)
    except Exception:  # noqa: BLE001 - a bad URL is reported by the build; here it has no ref
        return None


def ref_of(url: str) -> Optional[str]:
    """The ref a remote reference pins: ``?ref=``/``?version=`` of a repo URL (kustomize's
    grammar, :func:`kzgit.remote.parse_repo_spec`), or the ref segment of a
    raw.githubusercontent.com file URL; None when it pins nothing."""
    m = _RAW_GITHUB.match(url)
    if m:
        return m.group(1)
    spec = _spec(url)
    if spec is not None:
        return getattr(spec, "ref", "") or None
    params = parse_qs(urlsplit(url).query)
    for key in ("ref", "version"):
        if params.get(key):
            return params[key][-1]
    return None


def _branch_in_cache(url: str, ref: str) -> bool:
    """Whether kzgit's remote cache resolved ``ref`` of ``url`` as a branch (False if not cached;
    a name the cache knows as a tag is a tag, as checkouts resolve it)."""
    spec = _spec(url)
    if spec is None:
        return False
    try:
        from kzgit.remote import cached_ref_kind   # only refs.check-cache reads the remote cache
        return cached_ref_kind(spec, ref) == "branch"
    except Exception:  # noqa: BLE001 - an unreadable cache entry proves nothing
        return False


def check_ref(ref: Optional[str], policy: RefPolicy) -> Optional[str]:
    """Why ``ref`` is refused under ``policy``, or None when it is pinned."""
    if not ref:
        return "no ref: pin a version with ?ref=<tag or full commit SHA>"
    if _FULL_SHA.fullmatch(ref):
        return None
    if policy.require_sha:
        return f"ref '{ref}' is not a full commit SHA (require-sha is on)"
    if any(re.fullmatch(p, ref) for p in policy.allowed):
        return None
    return (f"ref '{ref}' does not look like a version or a full commit SHA "
            "(branches such as main or master move)")


def _check_image(image: str) -> Optional[str]:
    if "@sha256:" in image:
        return None
    name = image.rsplit("/", 1)[-1]
    if ":" not in name:
        return "image has no tag or digest"
    tag = name.rsplit(":", 1)[1]
    if tag == "latest":
        return "image tag 'latest' moves; pin a version or a digest"
    return None


def check_refs(refs: Iterable[RemoteRef], policy: RefPolicy) -> List[RefProblem]:
    """Problems with ``refs`` (as the graph collected them), in order."""
    out: List[RefProblem] = []
    for r in refs:
        if r.kind == "image":
            reason = _check_image(r.value)
        elif r.kind == "helm":
            _, version = helm_ref_parts(r)
            reason = None if version else "helm chart has no version"
        else:
            ref = ref_of(r.value)
            reason = check_ref(ref, policy)
            if (reason is None and policy.check_cache and ref and not _FULL_SHA.fullmatch(ref)
                    and _branch_in_cache(r.value, ref)):
                reason = f"ref '{ref}' is a branch in the cached repository"
        if reason:
            out.append(RefProblem(r.file, r.line, r.value, reason))
    return out


def run(ws: Workspace, require_sha: bool = False) -> List[Finding]:
    """Findings for unpinned references in the changed kustomizations."""
    policy = ws.config.refs
    if require_sha:
        policy = policy.replace(require_sha=True)
    return check(ws, policy)


def check(ws: Workspace, policy: RefPolicy) -> List[Finding]:
    """Apply ``policy`` to the remote references of the changed kustomizations."""
    out: List[Finding] = []
    for node in sorted(ws.graph.nodes.values(), key=lambda n: n.file):
        if not ws.is_changed(node.file) and not any(ws.is_changed(f) for f in node.files):
            continue
        for p in check_refs(node.remotes, policy):
            out.append(Finding(p.file, f"{p.value}: {p.reason}", p.line))
    return out
