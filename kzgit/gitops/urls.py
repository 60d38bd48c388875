"""Which repository URLs are "this repository".

An application is rendered from the working tree only when its source is this repository:
a URL equal, after :func:`normalise`, to one of the repository's git remotes or to one of
``.kzgit.toml`` ``[gitops] repo-urls`` (a repository that moved keeps its old URL in its
manifests).  Flux's ``flux-system/flux-system`` GitRepository, which ``flux bootstrap``
creates for the repository itself, counts wherever it is referenced (see
:mod:`kzgit.gitops.discover`).

Normalising makes the spellings of one repository equal: ``https://``, ``http://``,
``ssh://[user@]host[:port]/path`` and scp-like ``user@host:path`` name the host and path;
the host's case, a user, a port, a trailing ``/`` and a trailing ``.git`` do not count
(GitHub, GitLab and Argo CD's own ``git.NormalizeGitURL`` treat them so).
"""
from __future__ import annotations

import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import FrozenSet, Iterable, Optional

_SCHEME = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?:(?P<user>[^@/]*)@)?(?P<host>[^/:]*)"
                     r"(?::(?P<port>\d*))?(?P<path>/.*)?$", re.IGNORECASE)
_SCP = re.compile(r"^(?:(?P<user>[^@/:]+)@)?(?P<host>[^/:]+):(?P<path>(?!//).*)$")


def normalise(url: str) -> Optional[str]:
    """``host/path`` of a repository URL (lower-case host, no ``.git``, no trailing ``/``),
    or None when ``url`` is not one (a local path, an OCI reference)."""
    text = url.strip()
    m = _SCHEME.match(text)
    if m:
        if m.group("scheme").lower() not in ("https", "http", "ssh", "git", "git+ssh", "ssh+git"):
            return None
        host, path = m.group("host"), m.group("path") or ""
    else:
        m = _SCP.match(text)
        if not m or "/" in m.group("host"):
            return None
        host, path = m.group("host"), m.group("path")
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4].rstrip("/")
    if not host or not path:
        return None
    return f"{host.lower()}/{path}"


def repository_urls(remotes: Iterable[str], configured: Iterable[str]) -> FrozenSet[str]:
    """The normalised URLs of this repository."""
    out = set()
    for u in [*remotes, *configured]:
        n = normalise(u)
        if n is not None:
            out.add(n)
    return frozenset(out)


def git_remotes(top: str) -> list:
    """The URLs of the repository's remotes (``remote.<name>.url``; none: an empty list)."""
    from kzgit import gitio   # start-up: only discovery asks git
    from kzgit.errors import KzgitError   # start-up: loaded only by what uses it
    try:
        out = gitio.git(["config", "--get-regexp", r"^remote\..*\.url$"], top)
    except KzgitError:
        return []   # no remote at all: git config exits 1
    urls = []
    for line in out.decode("utf-8", "replace").splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2:
            urls.append(parts[1])
    return urls
