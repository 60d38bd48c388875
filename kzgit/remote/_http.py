"""Bounded HTTP(S) GET of a single remote file.

kustomize uses a bare ``http.Client{}``: no timeout and ``io.ReadAll`` of the
whole body (fileloader.go httpClientGetContent), so a slow or endless server hangs or exhausts it.
kzgit bounds both, only speaks http/https and refuses redirects to any other
scheme.
"""
from __future__ import annotations

import base64
import http
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import IO, Any, Optional

from kzgit.errors import RemoteError
from kzgit.remote._redact import redact, userinfo

#: Seconds allowed for one request, from connect to the last byte of the body.
HTTP_TIMEOUT = 30.0
#: Largest body accepted, in bytes.
HTTP_MAX_BYTES = 64 * 1024 * 1024

_CHUNK = 64 * 1024


class HTTPStatusError(RemoteError):
    """The server answered with a non-2xx status (kustomize's ErrHTTP)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def _status_text(code: int) -> str:
    """Go's http.StatusText: the standard phrase of a status code, "" for an unknown one."""
    try:
        return http.HTTPStatus(code).phrase
    except ValueError:
        return ""


class HTTPTransportError(RemoteError):
    """No answer: connection refused, DNS failure, TLS error."""


class _SameFamilyRedirects(urllib.request.HTTPRedirectHandler):
    """Follow redirects only to http/https (urllib itself would also follow ftp)."""

    def http_error_302(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str,
                       headers: Any) -> Any:
        target = headers.get("location") or headers.get("uri")
        if target:
            newurl = urllib.parse.urljoin(req.full_url, target)
            if urllib.parse.urlsplit(newurl).scheme.lower() not in ("http", "https"):
                raise RemoteError(
                    f"refusing redirect of '{redact(req.full_url)}' to '{redact(newurl)}': "
                    "only http and https are allowed")
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


def http_get(url: str, *, timeout: Optional[float] = None, max_bytes: Optional[int] = None,
             label: Optional[str] = None) -> bytes:
    """GET ``url`` and return its body; bounded in time and size.

    Raises :class:`HTTPStatusError` for a non-2xx answer, :class:`HTTPTransportError`
    when no answer arrives, and :class:`RemoteError` for a too large or too slow body.
    ``label`` is how messages name the URL (default: the redacted URL).
    """
    timeout = HTTP_TIMEOUT if timeout is None else timeout
    max_bytes = HTTP_MAX_BYTES if max_bytes is None else max_bytes
    shown = label or redact(url)
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in ("http", "https"):
        raise RemoteError(f"refusing '{shown}': only http and https URLs are fetched as files")
    deadline = time.monotonic() + timeout
    opener = urllib.request.build_opener(_SameFamilyRedirects())
    headers = {"User-Agent": "kzgit", "Accept-Encoding": "identity"}
    secret = userinfo(url)
    if secret:
        # as Go's net/http: userinfo in the URL becomes basic auth, never part of the request line
        parts = urllib.parse.urlsplit(url)
        user, _, password = secret.partition(":")
        token = base64.b64encode(
            (urllib.parse.unquote(user) + ":" + urllib.parse.unquote(password)).encode()).decode()
        headers["Authorization"] = "Basic " + token
        url = urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
    req = urllib.request.Request(url, headers=headers)
    try:
        resp = opener.open(req, timeout=timeout)
    except urllib.error.HTTPError as e:
        e.close()
        # kustomize's words (fileloader.go: ErrHTTP, http.StatusText), not the server's reason
        raise HTTPStatusError(f"{shown}: HTTP Error: status code {e.code} ({_status_text(e.code)})",
                              e.code) from None
    except RemoteError:
        raise
    except (TimeoutError, OSError) as e:
        if _is_timeout(e):
            raise RemoteError(f"GET '{shown}' timed out after {timeout:g}s") from None
        raise HTTPTransportError(
            f"GET '{shown}' failed: {redact(str(_reason(e)), [secret])}") from None
    with resp:
        length: Optional[str] = resp.headers.get("Content-Length")
        if length and length.isdigit() and int(length) > max_bytes:
            raise RemoteError(f"GET '{shown}': body of {int(length)} bytes is larger than the "
                              f"limit of {max_bytes} bytes")
        chunks = []
        total = 0
        while True:
            if time.monotonic() > deadline:
                raise RemoteError(f"GET '{shown}' timed out after {timeout:g}s (body too slow)")
            try:
                chunk = resp.read1(_CHUNK) if hasattr(resp, "read1") else resp.read(_CHUNK)
            except (TimeoutError, OSError) as e:
                if _is_timeout(e):
                    raise RemoteError(f"GET '{shown}' timed out after {timeout:g}s") from None
                raise HTTPTransportError(f"GET '{shown}' failed: {redact(str(e), [secret])}") from None
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:
                raise RemoteError(f"GET '{shown}': body is larger than the limit of {max_bytes} bytes")
            chunks.append(chunk)
        return b"".join(chunks)


def _reason(e: BaseException) -> object:
    return getattr(e, "reason", e)


def _is_timeout(e: BaseException) -> bool:
    r = _reason(e)
    return isinstance(e, TimeoutError) or isinstance(r, TimeoutError) or "timed out" in str(r)


__all__ = ["HTTP_TIMEOUT", "HTTP_MAX_BYTES", "HTTPStatusError", "HTTPTransportError", "http_get"]
