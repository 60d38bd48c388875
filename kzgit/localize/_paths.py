"""Where localized things go: pure path arithmetic, no I/O.

Ports of ``api/internal/localizer/util.go`` (kustomize api/v0.18.0): ``locFilePath``,
``locRootPath``, ``parseHost``, ``defaultNewDir``, ``urlBase``.  The layout is the
proposal's (``proposals/22-04-localize-command.md``, "Proposal"):
``localized-files/<domain>/<organization>/<repo>/<version>/<path/in/repo>``.
"""
from __future__ import annotations

import os
import posixpath
import re
import string
from typing import Optional

#: api/internal/localizer/util.go DstPrefix, LocalizeDir, FileSchemeDir
DST_PREFIX = "localized"
LOCALIZE_DIR = "localized-files"
FILE_SCHEME_DIR = "file-schemed"

# RFC 3986 pchar plus "/" and "%": what Go's url.EscapedPath keeps of a raw path
# (net/url validEncoded); anything else is percent-encoded.
_VALID_PATH_CHARS = frozenset(string.ascii_letters + string.digits + "-_.~!$&'()*+,;=:@[]%/")


def _escaped_path(raw_path: str) -> str:
    """Go's ``url.URL.EscapedPath`` for a path as written in the URL."""
    if all(c in _VALID_PATH_CHARS for c in raw_path):
        return raw_path
    out = []
    for ch in raw_path:
        if ch in _VALID_PATH_CHARS:
            out.append(ch)
        else:
            out.extend("%%%02X" % b for b in ch.encode("utf-8"))
    return "".join(out)


def _split_url(url: str) -> "tuple[str, str]":
    """(hostname without userinfo, port or brackets, raw path) of an http(s) URL."""
    rest = url.split("://", 1)[1]
    rest = rest.split("#", 1)[0].split("?", 1)[0]
    authority, slash, path = rest.partition("/")
    authority = authority.rpartition("@")[2]  # userinfo is dropped: credentials never reach a path
    if authority.startswith("["):
        host = authority[1:].split("]", 1)[0]
    else:
        host = authority.split(":", 1)[0]
    return host, slash + path


def loc_file_path(file_url: str) -> str:
    """util.go locFilePath: ``localized-files/<host>/<cleaned escaped path>``.

    The port and userinfo are dropped; ``..`` segments are cleaned against the
    root so they cannot climb out; escaped characters stay escaped.
    """
    host, path = _split_url(file_url)
    cleaned = posixpath.normpath("/" + _escaped_path(path))
    cleaned = re.sub("^/+", "/", cleaned)
    return posixpath.join(LOCALIZE_DIR, host) + ("" if cleaned == "/" else cleaned)


def parse_host(host: str) -> str:
    """util.go parseHost: the directory name for a RepoSpec host.

    ``https://github.com/`` -> ``github.com``; ``git@github.com:`` -> ``github.com``;
    ``file://`` -> ``file-schemed``; ports and userinfo dropped; IPv6 unbracketed.
    """
    scheme = host.split("://", 1)[0] if "://" in host else ""
    if host.startswith("gh:"):
        return "gh"
    if scheme == "file":
        return FILE_SCHEME_DIR
    if scheme in ("https", "http", "ssh"):
        target = host
    else:
        target = "ssh://" + host
    target = target.rstrip(":") if target.endswith(":") else target
    authority = target.split("://", 1)[1].split("/", 1)[0]
    authority = authority.rpartition("@")[2]
    if authority.startswith("["):
        return authority[1:].split("]", 1)[0]
    return authority.split(":", 1)[0]


def loc_root_path(host: str, org_repo: str, ref: str, in_repo: str) -> str:
    """util.go locRootPath: ``localized-files/<host>/<org/repo without .git>/<ref>/<in-repo>``."""
    repo = org_repo[:-4] if org_repo.endswith(".git") else org_repo
    repo_part = posixpath.normpath("/" + repo).lstrip("/")
    parts = [LOCALIZE_DIR, parse_host(host)]
    if repo_part and repo_part != ".":
        parts.append(repo_part)
    parts.append(ref)
    if in_repo and in_repo != ".":
        parts.append(in_repo)
    return posixpath.normpath(posixpath.join(*parts))


def url_base(url: str) -> str:
    """util.go urlBase: last path segment, trailing slashes ignored."""
    cleaned = url.rstrip("/")
    return cleaned.rsplit("/", 1)[-1]


def default_new_dir(target_root: str, repo_root: Optional[str] = None, org_repo: str = "",
                    ref: str = "") -> str:
    """util.go defaultNewDir: ``localized-<target>`` or ``localized-<dir>-<ref>``.

    For a remote target at the repository root the directory is named after the
    repository (``localized-<repo>-<ref>``, the proposal's Story 2); slashes in the
    ref become dashes.
    """
    target_dir = os.path.basename(target_root.rstrip(os.sep)) or os.sep
    if repo_root is not None:
        if os.path.normpath(repo_root) == os.path.normpath(target_root):
            base = url_base(org_repo)
            target_dir = base[:-4] if base.endswith(".git") else base
        return "-".join([DST_PREFIX, target_dir, ref.replace("/", "-")])
    if target_dir == os.sep:
        return DST_PREFIX
    return "-".join([DST_PREFIX, target_dir])
