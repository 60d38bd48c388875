"""Parsing of kustomize remote references (a port of api/internal/git/repospec.go, api/v0.18.0).

The grammar, the repository/sub-path split and the error messages are
kustomize's; the Go function names are cited next to each step.  Nothing
here touches the network or runs a program.
"""
from __future__ import annotations

import functools
import posixpath
import re

from kzgit.errors import RemoteError
from kzgit.record import FrozenRecord
from kzgit.remote._redact import redact

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Dict, List, Optional, Tuple

# repospec.go: defaultTimeout, defaultSubmodules
DEFAULT_TIMEOUT = 27.0
DEFAULT_SUBMODULES = True

FILE_SCHEME = "file://"
HTTP_SCHEME = "http://"
HTTPS_SCHEME = "https://"
SSH_SCHEME = "ssh://"

_GIT_SUFFIX = ".git"
_GIT_ROOT_DELIMITER = "_git/"
_ALL_SEGMENTS = -999999
_ORG_REPO_SEGMENTS = 2
_USER_RE = re.compile(r"^([a-zA-Z][a-zA-Z0-9-]*)@")


class RepoSpecError(RemoteError):
    """The reference is not a git repository URL kustomize accepts (repospec.go errors)."""


class RepoSpec(FrozenRecord):
    """A git repository, a directory inside it and a ref (kustomize's RepoSpec).

    ``host`` is scheme + user + host with its trailing separator
    (``https://github.com/``, ``git@github.com:``, ``file://``); ``org_repo`` is
    kustomize's RepoPath (``org/repo``, ``/abs/path/repo``); ``path`` the
    kustomization root inside the repository (KustRootPath, may be ``""``);
    ``ref`` a branch, tag or commit (``""`` means the remote HEAD).
    """

    __slots__ = ("raw", "host", "org_repo", "path", "ref", "timeout", "submodules",
                 "forced_git_prefix")
    raw: str
    host: str
    org_repo: str
    path: str
    ref: str
    timeout: float
    submodules: bool
    forced_git_prefix: bool

    def __init__(self, raw: str, host: str, org_repo: str, path: str = "", ref: str = "",
                 timeout: float = DEFAULT_TIMEOUT, submodules: bool = DEFAULT_SUBMODULES,
                 forced_git_prefix: bool = False) -> None:
        for name, value in (("raw", raw), ("host", host), ("org_repo", org_repo), ("path", path),
                            ("ref", ref), ("timeout", timeout), ("submodules", submodules),
                            ("forced_git_prefix", forced_git_prefix)):
            object.__setattr__(self, name, value)

    def clone_url(self) -> str:
        """The URL handed to git (repospec.go CloneSpec)."""
        return self.host + self.org_repo

    def warnings(self) -> List[str]:
        """Warnings kustomize logs while parsing this reference (for the build's warnings)."""
        if self.forced_git_prefix:
            return [f"'{self.redacted()}': forcing the git protocol using the 'git::' URL prefix is "
                    "not supported; kustomize and kzgit strip this prefix. Please remove the "
                    "'git::' prefix from your configuration."]
        return []

    def redacted(self) -> str:
        """The reference as the user wrote it, with credentials replaced by ``***``."""
        return redact(self.raw)

    @property
    def is_file(self) -> bool:
        return self.host == FILE_SCHEME

    @classmethod
    def parse(cls, ref: str) -> "RepoSpec":
        """Parse like NewRepoSpecFromURL; raise :class:`RepoSpecError` with kustomize's message."""
        return _parse(ref)


def parse_repo_spec(ref: str) -> Optional[RepoSpec]:
    """The :class:`RepoSpec` of ``ref``, or ``None`` when kustomize would not treat it as a repo."""
    try:
        return _parse(ref)
    except RepoSpecError:
        return None


# --- NewRepoSpecFromURL ------------------------------------------------------------------

def _parse(n: str) -> RepoSpec:
    raw = n
    if n.startswith("/"):  # filepath.IsAbs
        raise RepoSpecError(f"uri looks like abs path: {redact(n)}")
    # "?" is only allowed in the query (rfc3986), so cut there first.
    n, _, query = n.partition("?")
    ref, timeout, submodules = parse_query(query)
    host, rest, forced = _extract_host(n)
    default_len = _ALL_SEGMENTS if host.startswith(FILE_SCHEME) else _ORG_REPO_SEGMENTS
    org_repo, path = _parse_path_parts(rest, default_len)
    return RepoSpec(raw=raw, host=host, org_repo=org_repo, path=path, ref=ref,
                    timeout=timeout, submodules=submodules, forced_git_prefix=forced)


def _parse_path_parts(n: str, default_len: int) -> Tuple[str, str]:
    """parsePathParts: explicit markers (_git/, //, .git) first, then the default length."""
    split = _try_explicit_marker_split(n)
    if split is None:
        split = _try_default_length_split(n, default_len)
    if split is None or not split[0]:
        raise RepoSpecError("failed to parse repo path segment")
    repo_path, kust_root = split
    if _kust_root_path_exits_repo(kust_root):
        raise RepoSpecError(f"url path exits repo: {redact(n)}")
    if kust_root.startswith("/"):
        kust_root = kust_root[1:]
    return repo_path, kust_root


def _try_explicit_marker_split(n: str) -> Optional[Tuple[str, str]]:
    i = n.find(_GIT_ROOT_DELIMITER)
    if i >= 0:  # Azure: .../_git/repo/sub/path
        head = n[: i + len(_GIT_ROOT_DELIMITER)]
        segs = n[i + len(_GIT_ROOT_DELIMITER):].split("/")
        return head + segs[0], "/".join(segs[1:])
    i = n.find("//")
    if i >= 0:  # repo//sub/path; the "//" is a convention, not a path element
        return n[:i], n[i + 2:]
    i = n.find(_GIT_SUFFIX)
    if i >= 0:  # repo.git/sub/path (the first ".git" anywhere, even mid-name: kustomize quirk)
        return n[: i + len(_GIT_SUFFIX)], n[i + len(_GIT_SUFFIX):]
    return None


def _try_default_length_split(n: str, default_len: int) -> Optional[Tuple[str, str]]:
    if default_len == _ALL_SEGMENTS:
        return n, ""
    segs = n.split("/")
    if len(segs) >= default_len:
        return "/".join(segs[:default_len]), "/".join(segs[default_len:])
    return None


def _kust_root_path_exits_repo(p: str) -> bool:
    cleaned = _go_clean(p[1:] if p.startswith("/") else p)
    return cleaned.split("/")[0] == ".."


def _go_clean(p: str) -> str:
    """filepath.Clean (Go): like normpath but a leading '//' collapses to '/'."""
    c = posixpath.normpath(p) if p else "."
    if c.startswith("//"):
        c = "/" + c.lstrip("/")
    return c


# --- parseQuery ----------------------------------------------------------------------------

def _go_parse_query(query: str) -> Tuple[Dict[str, List[str]], bool]:
    """url.ParseQuery: '&'-separated; a ';' or a bad escape is an error (the pair is skipped)."""
    values: Dict[str, List[str]] = {}
    ok = True
    for part in query.split("&"):
        if not part:
            continue
        if ";" in part:  # Go 1.17+: "invalid semicolon separator in query"
            ok = False
            continue
        key, _, value = part.partition("=")
        try:
            k = _go_query_unescape(key)
            v = _go_query_unescape(value)
        except ValueError:
            ok = False
            continue
        values.setdefault(k, []).append(v)
    return values, ok


def _go_query_unescape(s: str) -> str:
    if re.search(r"%(?![0-9A-Fa-f]{2})", s):
        raise ValueError(s)
    import urllib.parse  # ipaddress and more: only for a URL with a query
    return urllib.parse.unquote_plus(s, errors="surrogateescape")


def parse_query(query: str) -> Tuple[str, float, bool]:
    """repospec.go parseQuery: (ref, timeout seconds, submodules); defaults on any parse error."""
    values, ok = _go_parse_query(query)
    if not ok:
        return "", DEFAULT_TIMEOUT, DEFAULT_SUBMODULES

    def get(k: str) -> str:
        return values.get(k, [""])[0]

    ref = get("version")
    if get("ref"):
        ref = get("ref")  # ref takes precedence over version
    timeout = DEFAULT_TIMEOUT
    t = get("timeout")
    if t:
        secs = _go_atoi(t)
        if secs is not None and secs > 0:
            timeout = float(secs)
        else:
            d = _go_parse_duration(t)
            if d is not None and d > 0:
                timeout = d
    submodules = DEFAULT_SUBMODULES
    s = get("submodules")
    if s:
        b = _go_parse_bool(s)
        if b is not None:
            submodules = b
    return ref, timeout, submodules


def _go_atoi(s: str) -> Optional[int]:
    return int(s) if re.fullmatch(r"[+-]?[0-9]+", s) else None


_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3,
                   "s": 1.0, "m": 60.0, "h": 3600.0}


@functools.lru_cache(maxsize=None)   # compiled on first use: most builds never need it
def _duration_re() -> "re.Pattern[str]":
    return re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")


def _go_parse_duration(s: str) -> Optional[float]:
    """time.ParseDuration, in seconds (None when Go would return an error)."""
    sign = 1.0
    if s[:1] in "+-" and s:
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        return None
    total, pos = 0.0, 0
    while pos < len(s):
        m = _duration_re().match(s, pos)
        if not m or m.group(1) in ("", "."):
            return None
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    return sign * total


def _go_parse_bool(s: str) -> Optional[bool]:
    if s in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if s in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


# --- extractHost -----------------------------------------------------------------------------

def _trim_prefix_ignore_case(s: str, prefix: str) -> Tuple[str, bool]:
    if len(prefix) <= len(s) and s[: len(prefix)].lower() == prefix:
        return s[len(prefix):], True
    return s, False


def _extract_host(n: str) -> Tuple[str, str, bool]:
    # ignoreForcedGitProtocol: "git::" is a go-getter relic, stripped with a warning.
    n, forced = _trim_prefix_ignore_case(n, "git::")  # see RepoSpec.warnings()
    scheme = ""
    for prefix in (SSH_SCHEME, HTTPS_SCHEME, HTTP_SCHEME, FILE_SCHEME):
        rest, found = _trim_prefix_ignore_case(n, prefix)
        if found:
            scheme, n = prefix, rest
            break
    username = ""
    m = _USER_RE.match(n)
    if m:
        username = m.group(1) + "@"
        n = n[len(username):]
    low = n.lower()
    std_github = low.startswith("github.com/") or low.startswith("github.com:")
    accept_scp = scheme == "" and (username != "" or std_github)
    if scheme == "" and not accept_scp:  # validateScheme
        raise RepoSpecError("failed to parse scheme")
    if scheme == FILE_SCHEME:
        # the whole rest, including a "user@"-looking part, is the local path
        return scheme, username + n, forced
    host, rest = n, ""
    sep = _find_path_separator(n, accept_scp)
    if sep >= 0:
        host, rest = n[: sep + 1], n[sep + 1:]
    if std_github:  # normalizeGithubHostParts
        if scheme.startswith(SSH_SCHEME) or username:
            scheme, host = "", "github.com:"
        else:
            scheme, username, host = HTTPS_SCHEME, "", "github.com/"
    if host == "":
        raise RepoSpecError("failed to parse host segment")
    return scheme + username + host, rest, forced


def _find_path_separator(host_path: str, accept_scp: bool) -> int:
    sep = host_path.find("/")
    if accept_scp:
        colon = host_path.find(":")
        # the colon delimits scp-style paths only when it comes before any '/'
        if sep == -1 or (0 < colon < sep):
            sep = colon
    return sep
