"""Bounded HTTP(S) GET of a single remote file.

kustomize uses a bare ``http.Client{}``: no timeout and ``io.ReadAll`` of the
whole body (fileloader.go httpClientGetContent), so a slow or endless server hangs or exhausts it.
kzgit bounds both, only speaks http/https and refuses redirects to any other
scheme.

Credentials written in the URL (``https://user:pass@host/...``) become a basic
``Authorization`` header, as Go's net/http makes them, and are sent to that
URL's origin (scheme, host and port) only: urllib copies every header onto a
redirected request, so a 302 to another host used to deliver them there.  Go
resolves the redirect's ``Location`` against the request URL and sends the
userinfo only when it survives (a relative redirect, the same host); kzgit
keys it on the origin.  A redirect from https to http is refused (it would
downgrade whatever the first request protected), and at most
:data:`MAX_REDIRECTS` redirects are followed (Go's client stops after 10).
"""
from __future__ import annotations

import base64
import http
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import IO, Any, List, Optional, Tuple

from kzgit.errors import RemoteError
from kzgit.remote._redact import redact, userinfo

#: Seconds allowed for one request, from connect to the last byte of the body.
HTTP_TIMEOUT = 30.0
#: Largest body accepted, in bytes.
HTTP_MAX_BYTES = 64 * 1024 * 1024

#: Redirects followed before giving up (Go's net/http defaultCheckRedirect: 10).
MAX_REDIRECTS = 10

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


def _origin(url: str) -> Tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL, the port defaulted: what credentials are scoped to."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port or (443 if scheme == "https" else 80)


class _Credentials(urllib.request.BaseHandler):
    """Add the URL's basic auth to every request whose origin is the one it was written for.

    The header is "unredirected": urllib's redirect handler never copies it, so each hop
    decides afresh (by its own origin) whether it gets the credentials.
    """

    handler_order = 100   # before the http(s) handlers open the connection

    def __init__(self, origin: Tuple[str, str, int], authorization: str) -> None:
        self.origin = origin
        self.authorization = authorization

    def http_request(self, req: urllib.request.Request) -> urllib.request.Request:
        if _origin(req.full_url) == self.origin:
            req.add_unredirected_header("Authorization", self.authorization)
        else:
            req.remove_header("Authorization")
        return req

    https_request = http_request


class _SafeRedirects(urllib.request.HTTPRedirectHandler):
    """Follow redirects only to http/https (urllib itself would also follow ftp), never from
    https down to http, and at most :data:`MAX_REDIRECTS` of them."""

    def http_error_302(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str,
                       headers: Any) -> Any:
        target = headers.get("location") or headers.get("uri")
        if target:
            newurl = urllib.parse.urljoin(req.full_url, target)
            scheme = urllib.parse.urlsplit(newurl).scheme.lower()
            if scheme not in ("http", "https"):
                raise RemoteError(
                    f"refusing redirect of '{redact(req.full_url)}' to '{redact(newurl)}': "
                    "only http and https are allowed")
            if scheme == "http" and urllib.parse.urlsplit(req.full_url).scheme.lower() == "https":
                raise RemoteError(
                    f"refusing redirect of '{redact(req.full_url)}' to '{redact(newurl)}': "
                    "a redirect from https to http is not followed")
            hops = len(getattr(req, "redirect_dict", {}))
            if hops >= MAX_REDIRECTS:
                raise RemoteError(f"GET '{redact(req.full_url)}': stopped after {MAX_REDIRECTS} "
                                  "redirects")
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


#: What Go's url.shouldEscape leaves alone in a path besides letters, digits and ``-_.~``.
_GO_PATH_SAFE = "$&+,/:;=@"


def request_uri(url: str) -> str:
    """The URL Kustomize 5.8 requests for a remote file: ``url.ParseRequestURI`` then
    ``String()`` (fileloader.go, kustomize 2a79ea148).  ParseRequestURI knows no fragment, so
    a ``#`` before the query is part of the path, which Go then writes escaped as a whole
    (``#`` as ``%23``); a ``#`` in the query still ends the URL when http.Get parses it again.
    A URL without ``#`` in its path is requested as before.  A bad escape is an error."""
    parts = urllib.parse.urlsplit(url, allow_fragments=False)
    if "#" not in parts.path:
        return url
    if re.search(r"%(?![0-9A-Fa-f]{2})", parts.path):
        raise RemoteError(f"parse \"{redact(url)}\": invalid URL escape")
    path = urllib.parse.quote(urllib.parse.unquote(parts.path), safe=_GO_PATH_SAFE)
    return urllib.parse.urlunsplit(parts._replace(path=path))


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
    handlers: List[urllib.request.BaseHandler] = [_SafeRedirects()]
    headers = {"User-Agent": "kzgit", "Accept-Encoding": "identity"}
    secret = userinfo(url)
    if secret:
        # as Go's net/http: userinfo in the URL becomes basic auth, never part of the request
        # line, and only for the origin it was written for (see the module's docstring)
        parts = urllib.parse.urlsplit(url)
        user, _, password = secret.partition(":")
        token = base64.b64encode(
            (urllib.parse.unquote(user) + ":" + urllib.parse.unquote(password)).encode()).decode()
        url = urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
        handlers.append(_Credentials(_origin(url), "Basic " + token))
    opener = urllib.request.build_opener(*handlers)
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


__all__ = ["HTTP_TIMEOUT", "HTTP_MAX_BYTES", "MAX_REDIRECTS", "HTTPStatusError", "HTTPTransportError", "http_get",
           "request_uri"]
