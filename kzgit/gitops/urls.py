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
    from kzgit.rendercache import Store

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


def git_remotes(top: str, store: Optional[Store] = None) -> list:
    """The URLs of the repository's remotes (``remote.<name>.url``; none: an empty list);
    with the render cache ``store``, from it while every configuration file git reads them
    from holds the bytes it held (:func:`_remotes_key`)."""
    import json   # start-up: only discovery asks
    key = _remotes_key(top) if store is not None else None
    if key is not None and store is not None:
        for entry in store.variants(key):
            got = store.read(entry, key)
            if got is None:
                continue
            try:
                urls = json.loads(got[1].decode("utf-8"))
            except ValueError:
                continue
            if isinstance(urls, list) and all(isinstance(u, str) for u in urls):
                store.touch(entry)
                return urls
    from kzgit import gitio   # start-up: only discovery asks git
    from kzgit.errors import KzgitError   # start-up: loaded only by what uses it
    try:
        out = gitio.git(["config", "--get-regexp", r"^remote\..*\.url$"], top)
    except KzgitError:
        out = b""   # no remote at all: git config exits 1
    urls = []
    for line in out.decode("utf-8", "replace").splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2:
            urls.append(parts[1])
    if key is not None and store is not None and _remotes_key(top) == key:
        # (not when a file changed while git read it)
        store.write(key, {"trace": None}, json.dumps(urls).encode("utf-8"))
    return urls


# the layout of a cached list of remotes
REMOTES_FORMAT = 1


def _remotes_key(top: str) -> Optional[str]:
    """The render cache key of the remotes git lists at ``top``: the bytes of every file git
    reads its configuration from there (config.c ``do_git_config_sequence``: the system file,
    ``$(prefix)/etc/gitconfig`` or ``/etc/gitconfig``; the global ones, ``$XDG_CONFIG_HOME/git/
    config`` and ``~/.gitconfig``, or ``GIT_CONFIG_GLOBAL``; the repository's ``.git/config``),
    with the variables that choose them and kzgit's code.  None (ask git every time) where another file could
    count: a repository :func:`kzgit.paths.discover` does not read plainly (steering variables,
    ``GIT_CONFIG_COUNT``, a linked work tree, ``include`` or ``worktree`` in its
    configuration), a ``.git`` that is not a directory, an ``include`` in any of the files."""
    import json   # start-up: only discovery asks
    import os   # start-up: as json
    from kzgit.paths import discover   # start-up: as os
    from kzgit.sha import sha256   # start-up: as os
    found = discover(top)
    gitdir = os.path.join(top, ".git")
    if found is None or found[0] != os.path.realpath(top) or not os.path.isdir(gitdir):
        return None
    env = os.environ
    home = env.get("HOME", "")
    files = [os.path.join(gitdir, "config")]
    if env.get("GIT_CONFIG_GLOBAL") is not None:
        files.append(env["GIT_CONFIG_GLOBAL"])
    else:
        xdg = env.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
        files += [os.path.join(xdg, "git", "config") if xdg else "",
                  os.path.join(home, ".gitconfig") if home else ""]
    if env.get("GIT_CONFIG_NOSYSTEM") is None:
        if env.get("GIT_CONFIG_SYSTEM") is not None:
            files.append(env["GIT_CONFIG_SYSTEM"])
        else:
            # the system file is $(sysconfdir)/gitconfig: /etc for a git installed under /usr,
            # else <prefix>/etc (git's Makefile); both, for the git found on PATH
            files.append("/etc/gitconfig")
            for d in env.get("PATH", os.defpath).split(os.pathsep):
                git = os.path.join(d or ".", "git")
                if os.path.isfile(git) and os.access(git, os.X_OK):   # shutil.which's rule
                    prefix = os.path.dirname(os.path.dirname(os.path.realpath(git)))
                    files.append(os.path.join(prefix, "etc", "gitconfig"))
                    break
    from kzgit.rendercache import code_fingerprint   # start-up: as os
    parts: list = [REMOTES_FORMAT, code_fingerprint(), top,
                   sorted((k, v) for k, v in env.items() if k.startswith("GIT_CONFIG"))]
    for f in files:
        if not f:
            parts.append(None)
            continue
        try:
            with open(f, "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            parts.append([f, None])
            continue
        except OSError:
            return None
        if b"include" in data.lower():
            return None
        parts.append([f, sha256(data).hexdigest()])
    return sha256(json.dumps(parts).encode("utf-8", "surrogateescape")).hexdigest()
