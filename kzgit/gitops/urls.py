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
    from typing import FrozenSet, Iterable, List, Optional, Tuple
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


def _json_strings(payload: bytes) -> Optional[List[str]]:
    """The list of strings an entry holds as JSON (None: not one)."""
    import json   # start-up: only discovery asks
    try:
        got = json.loads(payload.decode("utf-8"))
    except ValueError:
        return None
    return got if isinstance(got, list) and all(isinstance(u, str) for u in got) else None


def git_remotes(top: str, store: Optional[Store] = None) -> list:
    """The URLs of the repository's remotes (``remote.<name>.url``; none: an empty list), as
    ``git config --get-regexp`` lists them: read from the repository's configuration file
    where only it can name them and it is written plainly (:func:`_read_remotes`), else from
    the render cache ``store`` while every configuration file git reads holds the bytes it
    held (:func:`_remotes_key`), else from git."""
    import json   # start-up: only discovery asks
    files = _config_files(top)
    if files is not None:
        got = _read_remotes(files)
        if got is not None:
            return got
    key = _remotes_key(top, files) if store is not None and files is not None else None
    if key is not None and store is not None:
        cached = store.lookup(key, lambda _, payload: _json_strings(payload))
        if cached is not None:
            return cached
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
    if key is not None and store is not None:
        again = _config_files(top)
        if again is not None and _remotes_key(top, again) == key:
            # (not when a file changed while git read it)
            store.write(key, {"trace": None}, json.dumps(urls).encode("utf-8"))
    return urls


# the layout of a cached list of remotes
REMOTES_FORMAT = 1

if TYPE_CHECKING:  # pragma: no cover
    ConfigFiles = List[Tuple[str, Optional[bytes]]]


def _config_files(top: str) -> Optional[ConfigFiles]:
    """Each file git reads its configuration from at ``top``, with its bytes (None: absent):
    the repository's ``.git/config`` first, then the global ones (``GIT_CONFIG_GLOBAL``, else
    ``$XDG_CONFIG_HOME/git/config`` and ``~/.gitconfig``) and the system ones
    (``GIT_CONFIG_SYSTEM``, else ``/etc/gitconfig`` and ``<prefix>/etc/gitconfig`` of the git
    on PATH: git's Makefile puts it in ``$(sysconfdir)``, ``/etc`` under ``/usr``), config.c
    ``do_git_config_sequence``.  None where another file could count: a repository
    :func:`kzgit.paths.discover` does not read plainly (steering variables,
    ``GIT_CONFIG_COUNT``, a linked work tree, ``include`` or ``worktree`` in its
    configuration), a ``.git`` that is not a directory, an ``include`` in any file, a file
    that cannot be read."""
    import os   # start-up: only discovery asks
    from kzgit.paths import discover   # start-up: as os
    found = discover(top)
    gitdir = os.path.join(top, ".git")
    if found is None or found[0] != os.path.realpath(top) or not os.path.isdir(gitdir):
        return None
    env = os.environ
    home = env.get("HOME", "")
    names = [os.path.join(gitdir, "config")]
    if env.get("GIT_CONFIG_GLOBAL") is not None:
        names.append(env["GIT_CONFIG_GLOBAL"])
    else:
        xdg = env.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
        names += [os.path.join(xdg, "git", "config") if xdg else "",
                  os.path.join(home, ".gitconfig") if home else ""]
    # (read whatever GIT_CONFIG_NOSYSTEM says: a file more is only a key more)
    if env.get("GIT_CONFIG_SYSTEM") is not None:
        names.append(env["GIT_CONFIG_SYSTEM"])
    names.append("/etc/gitconfig")
    for d in env.get("PATH", os.defpath).split(os.pathsep):
        git = os.path.join(d or ".", "git")
        if os.path.isfile(git) and os.access(git, os.X_OK):   # shutil.which's rule
            prefix = os.path.dirname(os.path.dirname(os.path.realpath(git)))
            names.append(os.path.join(prefix, "etc", "gitconfig"))
            break
    out: ConfigFiles = []
    for name in names:
        if not name:
            out.append(("", None))
            continue
        try:
            with open(name, "rb") as fh:
                data: Optional[bytes] = fh.read()
        except FileNotFoundError:
            data = None
        except OSError:
            return None
        if data is not None and b"include" in data.lower():
            return None
        out.append((name, data))
    return out


def _remotes_key(top: str, files: ConfigFiles) -> str:
    """The render cache key of the remotes git lists at ``top``: the bytes of every file of
    ``files`` (:func:`_config_files`), with the variables that choose them and kzgit's code."""
    import json   # start-up: only discovery asks
    import os   # start-up: as json
    from kzgit.rendercache import code_fingerprint   # start-up: as json
    from kzgit.sha import sha256   # start-up: as json
    parts: list = [REMOTES_FORMAT, code_fingerprint(), top,
                   sorted((k, v) for k, v in os.environ.items() if k.startswith("GIT_CONFIG"))]
    for name, data in files:
        parts.append([name, None if data is None else sha256(data).hexdigest()])
    return sha256(json.dumps(parts).encode("utf-8", "surrogateescape")).hexdigest()


_SECTION = re.compile(r'\[\s*([A-Za-z0-9.-]+)(?:\s+"([^"\\]*)")?\s*\]\s*(?:[#;].*)?\Z')
_KEY = re.compile(r"[A-Za-z][A-Za-z0-9-]*\Z")


def _read_remotes(files: ConfigFiles) -> Optional[List[str]]:
    """The remotes' URLs in the repository's configuration file (the first of ``files``),
    where no other file mentions a remote and that file is written plainly: sections
    ``[name]`` or ``[name "sub"]`` alone on their line, ``key = value`` lines whose URL
    values hold no quote, comment character, backslash or blank; None (ask git) otherwise
    (git's own reading, config.c ``parse_value``, unquotes, unescapes and joins lines)."""
    if any(data is not None and b"remote" in data.lower() for _, data in files[1:]):
        return None
    data = files[0][1]
    if data is None:
        return []
    if b"\\" in data or b"\r" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    urls: List[str] = []
    section: Optional[Tuple[str, Optional[str]]] = None
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line[0] == "[":
            m = _SECTION.match(line)
            if m is None or "." in m.group(1):
                return None   # [remote.name], a key after the section: git's reading
            section = (m.group(1).lower(), m.group(2))
            continue
        key, sep, value = line.partition("=")
        if section is None or not _KEY.match(key.strip()):
            return None
        if section[0] != "remote" or section[1] is None or key.strip().lower() != "url":
            continue
        value = value.strip()
        if not sep or not value:
            continue   # git lists "remote.NAME.url" without a value: no URL
        if any(c in value for c in '"#;') or any(c.isspace() for c in value):
            return None
        urls.append(value)
    return urls
