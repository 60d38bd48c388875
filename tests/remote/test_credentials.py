"""Credentials written in a remote URL reach only the host and port they were written for.

Two loopback servers play two hosts: ``127.0.0.1:<a>`` (the one the URL names) and
``localhost:<b>`` (somewhere a redirect or a git ``insteadOf`` rule points).  Each records the
``Authorization`` header of every request; the second must never see the credential.
"""
from __future__ import annotations

import base64
import os
import urllib.parse
from typing import Iterator, Tuple

import pytest

from gitserver import (GitHTTPServer, GitRepo, configmap, insteadof_env, kustomization,
                       offline_home, self_signed_cert)
from kzgit.options import BuildOptions
from kzgit.errors import RemoteError
from kzgit.loader import Loader
from kzgit.remote import _http, fresh_checkout, open_remote, parse_repo_spec

ONLINE = BuildOptions()
USER, PASSWORD = "alice", "s3cret-Pa55"
BASIC = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()


@pytest.fixture(autouse=True)
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: "os.PathLike[str]") -> str:
    return offline_home(monkeypatch, tmp_path)


@pytest.fixture
def srv_root(tmp_path: "os.PathLike[str]") -> str:
    root = os.path.realpath(os.path.join(os.fspath(tmp_path), "srv"))
    GitRepo.create(os.path.join(root, "org", "repo"), {
        "base/kustomization.yaml": kustomization(("cm.yaml",)),
        "base/cm.yaml": configmap("cm", v="1"),
    }).tag("v1")
    os.makedirs(os.path.join(root, "files"))
    with open(os.path.join(root, "files", "cm.yaml"), "w") as f:
        f.write(configmap("web"))
    return root


@pytest.fixture
def servers(srv_root: str) -> Iterator[Tuple[GitHTTPServer, GitHTTPServer]]:
    """``first`` at 127.0.0.1, ``other`` at localhost (another port)."""
    with GitHTTPServer(srv_root) as first, GitHTTPServer(srv_root, host="localhost") as other:
        yield first, other


@pytest.fixture
def parent(tmp_path: "os.PathLike[str]") -> Loader:
    local = os.path.join(os.fspath(tmp_path), "local")
    os.makedirs(local)
    return Loader(os.path.realpath(local))


def _with_credentials(url: str) -> str:
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{USER}:{PASSWORD}@{rest}"


def _leaked(server: GitHTTPServer) -> bool:
    """The server saw the credential: as a header, or anywhere in a request line."""
    return (any(PASSWORD in base64.b64decode(a.split()[-1] + "==").decode("latin-1")
                for _, a in server.authorizations if a.startswith("Basic "))
            or any(PASSWORD in urllib.parse.unquote(p) for _, p in server.requests))


# --- http(s) files ------------------------------------------------------------------------

def test_redirect_to_another_host_drops_the_credentials(
        parent: Loader, servers: Tuple[GitHTTPServer, GitHTTPServer]) -> None:
    first, other = servers
    target = other.url + "/raw/files/cm.yaml"
    url = _with_credentials(first.url) + "/redirect?to=" + urllib.parse.quote(target, safe="")
    assert open_remote(parent, url, ONLINE) == configmap("web").encode()
    assert first.authorizations == [(first.requests[0][1], BASIC)]   # the host it was written for
    assert other.requests == [("GET", "/raw/files/cm.yaml")]           # the redirect was followed
    assert other.authorizations == [] and not _leaked(other)


def test_redirect_on_the_same_origin_keeps_them(
        parent: Loader, servers: Tuple[GitHTTPServer, GitHTTPServer]) -> None:
    first, _ = servers
    url = _with_credentials(first.url) + "/redirect?to=/raw/files/cm.yaml"
    assert open_remote(parent, url, ONLINE) == configmap("web").encode()
    assert [a for _, a in first.authorizations] == [BASIC, BASIC]


def test_same_host_other_port_is_another_origin(srv_root: str, parent: Loader) -> None:
    with GitHTTPServer(srv_root) as first, GitHTTPServer(srv_root) as second:
        target = second.url + "/raw/files/cm.yaml"
        url = _with_credentials(first.url) + "/redirect?to=" + urllib.parse.quote(target, safe="")
        assert open_remote(parent, url, ONLINE) == configmap("web").encode()
        assert second.requests and not _leaked(second)


def test_https_to_http_redirect_refused(srv_root: str, parent: Loader, tmp_path: "os.PathLike[str]",
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    cert, key = self_signed_cert(os.fspath(tmp_path))
    monkeypatch.setenv("SSL_CERT_FILE", cert)
    with GitHTTPServer(srv_root, tls=(cert, key)) as tls, GitHTTPServer(srv_root, host="localhost") as plain:
        assert open_remote(parent, tls.url + "/raw/files/cm.yaml", ONLINE) == configmap("web").encode()
        target = plain.url + "/raw/files/cm.yaml"
        url = _with_credentials(tls.url) + "/redirect?to=" + urllib.parse.quote(target, safe="")
        with pytest.raises(RemoteError, match="from https to http") as e:
            open_remote(parent, url, ONLINE)
        assert PASSWORD not in str(e.value)
        assert plain.requests == []


def _chain(base: str, hops: int, last: str) -> str:
    url = last
    for _ in range(hops):
        url = base + "/redirect?to=" + urllib.parse.quote(url, safe="")
    return url


def test_redirects_are_capped_at_ten(parent: Loader, servers: Tuple[GitHTTPServer, GitHTTPServer]) -> None:
    first, _ = servers
    assert _http.MAX_REDIRECTS == 10   # Go's net/http
    ten = _chain(first.url, 10, first.url + "/raw/files/cm.yaml")
    assert open_remote(parent, ten, ONLINE) == configmap("web").encode()
    del first.requests[:]
    with pytest.raises(RemoteError, match="stopped after 10 redirects"):
        open_remote(parent, _chain(first.url, 11, first.url + "/raw/files/cm.yaml"), ONLINE)
    assert len(first.requests) == 11


# --- git ----------------------------------------------------------------------------------

def test_git_redirect_to_another_host_gets_no_credentials(
        parent: Loader, servers: Tuple[GitHTTPServer, GitHTTPServer]) -> None:
    first, other = servers
    first.moved_to = other.url + "/auth"    # /auth/ asks for basic auth, as a forge would
    url = _with_credentials(first.url) + "/moved/org/repo//base?ref=v1"
    with pytest.raises(RemoteError) as e:
        open_remote(parent, url, ONLINE)
    assert PASSWORD not in str(e.value)
    assert any("/info/refs" in p for _, p in other.requests)   # git did follow the redirect
    assert not _leaked(other)


def test_git_credentials_still_reach_their_own_host(
        parent: Loader, servers: Tuple[GitHTTPServer, GitHTTPServer]) -> None:
    first, _ = servers
    url = _with_credentials(first.url) + "/auth/org/repo//base?ref=v1"
    ldr = open_remote(parent, url, ONLINE)
    assert isinstance(ldr, Loader) and "v: 1" in ldr.load("cm.yaml").decode()
    assert first.authorizations and all(a == BASIC for _, a in first.authorizations)


def test_git_insteadof_to_another_host_gets_no_credentials(
        parent: Loader, servers: Tuple[GitHTTPServer, GitHTTPServer],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A rewrite of the scheme (the user's ``url.<x>.insteadOf = http://``) sends every URL
    elsewhere; the credential written for 127.0.0.1 must not go along, in a header or a path."""
    first, other = servers
    for k, v in insteadof_env({"http://": other.url + "/auth/"}).items():
        monkeypatch.setenv(k, v)
    url = _with_credentials(first.url) + "/git/org/repo//base?ref=v1"
    with pytest.raises(RemoteError) as e:
        open_remote(parent, url, ONLINE)
    assert PASSWORD not in str(e.value)
    assert other.requests and not _leaked(other)


def test_fresh_checkout_uses_the_credentials_for_their_host_only(
        tmp_path: "os.PathLike[str]", servers: Tuple[GitHTTPServer, GitHTTPServer]) -> None:
    first, other = servers
    spec = parse_repo_spec(_with_credentials(first.url) + "/auth/org/repo//base?ref=v1")
    assert spec is not None
    dest = os.path.join(os.fspath(tmp_path), "checkout")
    assert len(fresh_checkout(spec, dest)) == 40
    assert first.authorizations
    with open(os.path.join(dest, ".git", "config")) as f:
        assert PASSWORD not in f.read()     # the clone does not keep them either
    first.moved_to = other.url + "/auth"
    spec = parse_repo_spec(_with_credentials(first.url) + "/moved/org/repo//base?ref=v1")
    assert spec is not None
    with pytest.raises(RemoteError):
        fresh_checkout(spec, os.path.join(os.fspath(tmp_path), "checkout2"))
    assert other.requests and not _leaked(other)
