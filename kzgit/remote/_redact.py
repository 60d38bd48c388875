"""Redaction of credentials in URLs and messages.

kustomize 5.5 prints ``http://user:password@host/...`` in its errors; kzgit never does: every message that can
contain a URL goes through :func:`redact`.
"""
from __future__ import annotations

import functools
import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Iterable, Optional


# scheme://userinfo@  ->  scheme://***@   (userinfo: anything up to '@' without '/', whitespace);
# compiled on first use: most builds never need it
@functools.lru_cache(maxsize=None)
def _userinfo() -> "re.Pattern[str]":
    return re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/@\s'\"]+@")


def userinfo(url: str) -> Optional[str]:
    """The userinfo of a ``scheme://userinfo@host/...`` URL, or None."""
    m = _userinfo().match(url) if "://" in url else None   # the pattern needs "://"
    return m.group(0)[len(m.group(1)):-1] if m else None


def redact(text: str, secrets: Iterable[Optional[str]] = ()) -> str:
    """Replace the userinfo (user, password, token) of every ``scheme://`` URL in ``text``.

    scp-style ``git@host:org/repo`` keeps its user: kustomize's grammar only
    accepts ``[A-Za-z][A-Za-z0-9-]*`` there (repospec.go extractUsername), which
    cannot carry a password.
    """
    for secret in secrets:  # also where a tool printed it without its scheme
        # a bare short user name ("git") is no secret, and replacing it would garble text
        if secret and (":" in secret or len(secret) >= 8):
            text = text.replace(secret + "@", "***@").replace(secret, "***")
    # the pattern needs "://": a local path (every build's root) does not compile it
    return _userinfo().sub(r"\1***@", text) if "://" in text else text
