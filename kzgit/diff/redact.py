"""Secret values never reach a diff's reader unless asked (``kzgit diff --show-secrets``).

A pull request's diff is printed in CI logs, GitHub annotations and the job summary, which
everyone who can read the repository's Actions reads.  As Argo CD's diff does
(``HideSecretData``), the ``data`` and ``stringData`` values of a ``v1`` Secret are replaced
before the two renderings are compared: the diff still shows which keys were added, removed
or changed, and a short digest tells two values apart (the first 8 hex digits of the SHA-256
of the value: of the decoded bytes for ``data``, so one value has one digest in ``data`` and
in ``stringData``), never the value.  ``kzgit build`` output is the user's own and stays as it
is.  A digest of a guessable value (a short password) can be confirmed by guessing: it says
"changed", not "safe to publish".
"""
from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any

from kzgit.yamlio import dump_documents, load_documents

#: What a redacted value reads as; ``{}`` is the digest.
PLACEHOLDER = "<redacted sha256:{}>"
_FIELDS = ("data", "stringData")


def is_secret(api_version: str, kind: str) -> bool:
    return kind == "Secret" and api_version == "v1"


def digest(value: Any, field: str) -> str:
    """The first 8 hex digits of the SHA-256 of a Secret value (``data``: decoded)."""
    if isinstance(value, str):
        raw = value.encode("utf-8", "surrogateescape")
        if field == "data":
            try:
                raw = base64.b64decode(raw, validate=True)
            except (binascii.Error, ValueError):
                pass   # not base64 (the API server would refuse it): the text as written
    else:
        raw = repr(value).encode()
    return hashlib.sha256(raw).hexdigest()[:8]


def redacted_text(api_version: str, kind: str, name: str, text: str) -> str:
    """A resource's YAML ``text`` with every ``data``/``stringData`` value of a Secret replaced
    by its digest; ``text`` itself (the same object) when it is no Secret.  Text in, text out:
    :mod:`kzgit.diff.report` applies it to its resources, this module knows no report."""
    if not is_secret(api_version, kind):
        return text
    docs = load_documents(text, f"Secret {name}")
    for obj in docs:
        for field in _FIELDS:
            values = obj.get(field) if isinstance(obj, dict) else None
            if isinstance(values, dict):
                for key, value in values.items():
                    values[key] = PLACEHOLDER.format(digest(value, field))
            elif values is not None:
                obj[field] = PLACEHOLDER.format(digest(values, field))
    return dump_documents(docs)
