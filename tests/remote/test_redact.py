"""Credentials in URLs are replaced in every message (kzgit.remote._redact)."""
from __future__ import annotations

import pytest

from kzgit.remote._redact import redact, userinfo


@pytest.mark.parametrize("text, redacted", [
    ("https://user:pw@example.com/org/repo", "https://***@example.com/org/repo"),
    ("HTTPS://token@example.com/x and ssh://git@host/r", "HTTPS://***@example.com/x and ssh://***@host/r"),
    ("git@github.com:org/repo", "git@github.com:org/repo"),     # scp-style keeps its user
    ("uri looks like abs path: /home/me/overlay", "uri looks like abs path: /home/me/overlay"),
    ("user@host/path", "user@host/path"),                        # no scheme: nothing to redact
    ("", ""),
])
def test_redact(text: str, redacted: str) -> None:
    assert redact(text) == redacted


@pytest.mark.parametrize("url, info", [
    ("https://user:pw@example.com/r", "user:pw"),
    ("https://example.com/r", None),
    ("user:pw@example.com/r", None),
])
def test_userinfo(url: str, info: object) -> None:
    assert userinfo(url) == info
