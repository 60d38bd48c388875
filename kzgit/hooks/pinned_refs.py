"""``kzgit-pinned-refs``: every remote reference in a changed kustomization carries a version.

Checks the kustomization files among the changed files (all of them with
``--all``), plus plugin config files they name: remote resources, bases,
components, generators/transformers/validators, KRM function exec paths and
images, helm charts.  Reports file, line and URL.

Offline, a tag cannot be told from a branch by its name alone, so a ref must
*look like* a version (the configurable ``refs.allowed`` patterns) or be a full
commit SHA; ``main``, ``master``, ``HEAD``... and every other ref are refused.

A plain file fetched over HTTP(S) (kustomize fetches an http(s) entry as a file
first, and clones it only when that fails or gives a web page: fileloader.go
``httpClientGetContent``, kusttarget.go ``accumulateResources``) has no
``?ref=``: it is pinned by a version in its path -- a GitHub release asset's tag
(``/releases/download/<tag>/``), the ref of a raw.githubusercontent.com URL, or any
directory of the path that ``refs.allowed`` matches (``/manifests/v1.2.3/``).
``refs.ignore-urls`` exempts references that a regular expression matches.
Findings come in file and line order.
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

from kzgit import gore
from kzgit.config import RefPolicy
from kzgit.graph import RemoteRef, helm_ref_parts
from kzgit.hooks import HookFinding, Workspace
from kzgit.record import Record

_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
# the version a GitHub file URL carries in its path: a release asset's tag, the ref of a raw file
# (raw.githubusercontent.com/<owner>/<repo>/<ref>/..., or github.com/<owner>/<repo>/raw/<ref>/...,
# the ref possibly spelled refs/heads/<branch> or refs/tags/<tag>)
_GITHUB_FILE = re.compile(r"^https?://(?:github\.com/[^/]+/[^/]+/releases/download"
                          r"|raw\.githubusercontent\.com/[^/]+/[^/]+"
                          r"|github\.com/[^/]+/[^/]+/raw)/(refs/(?:heads|tags)/)?([^/?#]+)/", re.I)
# any GitHub release asset (releases/latest/download/... too) is a file
_GITHUB_RELEASES = re.compile(r"^https?://github\.com/[^/]+/[^/]+/releases/", re.I)
# hosts whose bare https URLs are git repositories (a web page when fetched as a file)
_GIT_HOSTS = ("github.com", "gitlab.com", "bitbucket.org")


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


def is_http_file(url: str) -> bool:
    """Whether an http(s) reference is a plain file rather than a git repository.

    Offline, as kustomize would find out by fetching it: a URL with ``?ref=``/``?version=``,
    a ``//`` between repository and directory, a ``.git`` or ``_git`` segment, or a bare
    repository page of GitHub, GitLab or Bitbucket is a repository; a GitHub release asset or
    raw file, or any other URL whose last segment is a file name (``install.yaml``), is a file.
    """
    from kzgit.remote import is_http_url   # only files naming a remote pay for the module
    if not is_http_url(url):
        return False
    parts = urlsplit(url)
    if {"ref", "version"} & set(parse_qs(parts.query)):
        return False
    path = parts.path
    segments = [x for x in path.split("/") if x]
    if "//" in path or any(x.endswith(".git") or x == "_git" for x in segments):
        return False
    if _GITHUB_FILE.match(url) or _GITHUB_RELEASES.match(url):
        return True
    if (parts.hostname or "").lower() in _GIT_HOSTS:
        return False
    return bool(segments) and "." in segments[-1]


def check_http_file(url: str, policy: RefPolicy) -> Optional[str]:
    """Why the plain http(s) file ``url`` is refused under ``policy`` (None: its path carries
    a version, as :func:`check_ref` judges one)."""
    m = _GITHUB_FILE.match(url)
    if m:
        prefix, ref = m.group(1), m.group(2)
        if prefix and prefix.lower().startswith("refs/heads/"):
            return f"'{prefix}{ref}' in the path is a branch (branches move)"
        if check_ref(ref, policy) is None:
            return None
        if policy.require_sha:
            return f"'{ref}' in the path is not a full commit SHA (require-sha is on)"
        return (f"'{ref}' in the path does not look like a version or a full commit SHA "
                "(branches such as main or master move)")
    directories = [x for x in urlsplit(url).path.split("/") if x][:-1]
    if any(check_ref(x, policy) is None for x in directories):
        return None
    if policy.require_sha:
        return "no full commit SHA in the path (require-sha is on)"
    return ("no version in the path: a file fetched over HTTP(S) can change under the same URL; "
            "use a URL whose path carries a version (a release asset, a tag), or list it in "
            "refs.ignore-urls")


def ignored(value: str, policy: RefPolicy) -> bool:
    """Whether a ``refs.ignore-urls`` pattern matches the reference ``value`` (searched)."""
    return any(gore.compile(p).test(value) for p in policy.ignore_urls)


def ref_of(url: str) -> Optional[str]:
    """The ref a git remote reference pins: ``?ref=``/``?version=`` of a repo URL (kustomize's
    grammar, :func:`kzgit.remote.parse_repo_spec`); None when it pins nothing."""
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
    if any(gore.compile(p).fullmatch(ref) for p in policy.allowed):
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
        if ignored(helm_ref_parts(r)[0] if r.kind == "helm" else r.value, policy):
            continue
        if r.kind == "image":
            reason = _check_image(r.value)
        elif r.kind == "helm":
            _, version = helm_ref_parts(r)
            reason = None if version else "helm chart has no version"
        elif is_http_file(r.value):
            reason = check_http_file(r.value, policy)
        else:
            ref = ref_of(r.value)
            reason = check_ref(ref, policy)
            if (reason is None and policy.check_cache and ref and not _FULL_SHA.fullmatch(ref)
                    and _branch_in_cache(r.value, ref)):
                reason = f"ref '{ref}' is a branch in the cached repository"
        if reason:
            out.append(RefProblem(r.file, r.line, r.value, reason))
    return out


def run(ws: Workspace, require_sha: bool = False) -> List[HookFinding]:
    """Findings for unpinned references in the changed kustomizations."""
    policy = ws.config.refs
    if require_sha:
        policy = policy.replace(require_sha=True)
    return check(ws, policy)


def check(ws: Workspace, policy: RefPolicy) -> List[HookFinding]:
    """Apply ``policy`` to the remote references of the changed kustomizations; findings in
    file and line order."""
    problems: List[RefProblem] = []
    for node in ws.graph.nodes.values():
        if not ws.is_changed(node.file) and not any(ws.is_changed(f) for f in node.files):
            continue
        problems += check_refs(node.remotes, policy)
    problems.sort(key=lambda p: (p.file, p.line or 0, p.value))
    return [HookFinding(p.file, f"{p.value}: {p.reason}", p.line) for p in problems]
