"""kzgit.remote against real git repositories served over file:// and loopback smart HTTP.

No test reaches the internet: servers bind 127.0.0.1 and are started and
stopped here; https://github.com/... URLs are rewritten with insteadOf.
"""
from __future__ import annotations

import concurrent.futures
import os
import shutil
import subprocess
from typing import Iterator, List

import pytest

import kzgit.remote._cache as remote_cache

from gitserver import (GitHTTPServer, GitRepo, configmap, git, insteadof_env, kustomization,
                       offline_home)
from helpers import wait_gone
from kzgit.options import BuildOptions
from kzgit.errors import BuildError, LoadRestrictionError, RemoteError
from kzgit.loader import ROOT_ONLY, Loader
from kzgit.remote import _http, open_remote

ONLINE = BuildOptions()
OFFLINE = BuildOptions(offline=True)


@pytest.fixture(autouse=True)
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: "os.PathLike[str]") -> str:
    return offline_home(monkeypatch, tmp_path)


@pytest.fixture
def parent(tmp_path: "os.PathLike[str]") -> Loader:
    local = os.path.join(os.fspath(tmp_path), "local")
    os.makedirs(local)
    return Loader(os.path.realpath(local))


@pytest.fixture
def srv_root(tmp_path: "os.PathLike[str]") -> str:
    return os.path.realpath(os.path.join(os.fspath(tmp_path), "srv"))


@pytest.fixture
def repo(srv_root: str) -> GitRepo:
    r = GitRepo.create(os.path.join(srv_root, "org", "repo"), {
        "base/kustomization.yaml": kustomization(("cm.yaml",)),
        "base/cm.yaml": configmap("cm", v="1"),
        "README.md": "hello\n",
    })
    r.tag("v1")
    r.tag("v1a", annotated=True)
    r.commit({"base/cm.yaml": configmap("cm", v="2")}, "v2")
    return r


@pytest.fixture
def server(srv_root: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitHTTPServer]:
    with GitHTTPServer(srv_root) as s:
        for k, v in insteadof_env({"https://github.com/": s.url + "/git/"}).items():
            monkeypatch.setenv(k, v)
        yield s


def _read(loader: Loader, name: str) -> str:
    return loader.load(name).decode()


def _trees(cache: str) -> List[str]:
    out = []
    for dirpath, dirnames, _ in os.walk(os.path.join(cache, "git")):
        if os.path.basename(dirpath) == "trees":
            out += dirnames
            dirnames[:] = []
    return out


# --- file:// --------------------------------------------------------------------------------

def test_file_url_tag(repo: GitRepo, parent: Loader, cache: str) -> None:
    ldr = open_remote(parent, repo.file_url("base", "v1"), ONLINE)
    assert isinstance(ldr, Loader)
    assert "v: 1" in _read(ldr, "cm.yaml")
    assert ldr.restrictor == ROOT_ONLY and ldr.parent is parent
    assert ldr.repo_root is not None and ldr.root == os.path.join(ldr.repo_root, "base")
    assert ldr.repo_root.startswith(cache)
    assert ldr.remote_label == repo.file_url("base", "v1")
    # the remote root is confined to the checkout
    with pytest.raises(Exception, match="security"):
        ldr.load("../README.md")


def test_file_url_head_annotated_tag_and_sha(repo: GitRepo, parent: Loader) -> None:
    head = open_remote(parent, repo.file_url("base"), ONLINE)
    assert isinstance(head, Loader) and "v: 2" in _read(head, "cm.yaml")
    ann = open_remote(parent, repo.file_url("base", "v1a"), ONLINE)
    assert isinstance(ann, Loader) and "v: 1" in _read(ann, "cm.yaml")
    sha = git("rev-parse", "v1", cwd=repo.path).strip()
    by_sha = open_remote(parent, repo.file_url("base", sha), ONLINE)
    assert isinstance(by_sha, Loader) and by_sha.repo_root == ann.repo_root


def test_missing_subdir_and_symlink_escape(repo: GitRepo, parent: Loader, tmp_path: "os.PathLike[str]") -> None:
    with pytest.raises(RemoteError, match="does not exist"):
        open_remote(parent, repo.file_url("nope", "v1"), ONLINE)
    os.symlink(os.fspath(tmp_path), os.path.join(repo.path, "out"))
    repo.commit({}, "symlink out")
    repo.tag("escape")
    with pytest.raises(RemoteError, match="outside of the repository"):
        open_remote(parent, repo.file_url("out", "escape"), ONLINE)
    with pytest.raises(RemoteError, match="expecting a directory"):
        open_remote(parent, repo.file_url("README.md", "escape"), ONLINE)


# --- smart HTTP via insteadOf, cache ---------------------------------------------------------

def test_github_url_over_smart_http_then_cache_without_network(
        repo: GitRepo, parent: Loader, server: GitHTTPServer, cache: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    url = "https://github.com/org/repo//base?ref=v1"
    ldr = open_remote(parent, url, ONLINE)
    assert isinstance(ldr, Loader) and "v: 1" in _read(ldr, "cm.yaml")
    assert any("/git/org/repo" in p for _, p in server.requests)
    assert ldr.remote_label == url
    n = len(server.requests)
    again = open_remote(parent, url, ONLINE)   # the tag is resolved again (ls-remote), not fetched
    assert isinstance(again, Loader) and again.root == ldr.root and len(server.requests) > n
    assert len(_trees(cache)) == 1
    server.stop()
    with pytest.raises(RemoteError):            # online needs the remote, as kustomize does
        open_remote(parent, url, ONLINE)
    off = open_remote(parent, url, OFFLINE)
    assert isinstance(off, Loader) and off.root == ldr.root
    assert len(_trees(cache)) == 1


def test_branch_re_resolves(repo: GitRepo, parent: Loader, server: GitHTTPServer,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    url = "https://github.com/org/repo//base?ref=main"
    first = open_remote(parent, url, ONLINE)
    assert isinstance(first, Loader) and "v: 2" in _read(first, "cm.yaml")
    repo.commit({"base/cm.yaml": configmap("cm", v="3")}, "v3")
    second = open_remote(parent, url, ONLINE)
    assert isinstance(second, Loader) and "v: 3" in _read(second, "cm.yaml")
    assert second.repo_root != first.repo_root
    # unchanged branch: ls-remote only, same checkout
    before = sum(1 for m, _ in server.requests if m == "POST")
    third = open_remote(parent, url, ONLINE)
    assert isinstance(third, Loader) and third.repo_root == second.repo_root
    assert sum(1 for m, _ in server.requests if m == "POST") - before <= 1
    server.stop()
    off = open_remote(parent, url, OFFLINE)            # offline: the last resolution
    assert isinstance(off, Loader) and off.repo_root == second.repo_root


def test_offline_miss_names_url_and_ref(repo: GitRepo, parent: Loader, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a: object, **k: object) -> None:
        raise AssertionError("no process may run offline")
    monkeypatch.setattr(subprocess, "Popen", boom)
    url = "https://tok:s3cret@github.com/org/repo//base?ref=v9"
    with pytest.raises(RemoteError) as e:
        open_remote(parent, url, OFFLINE)
    msg = str(e.value)
    assert "offline" in msg and "https://***@github.com/org/repo//base?ref=v9" in msg
    assert "'v9'" in msg and "s3cret" not in msg


# --- safety ------------------------------------------------------------------------------------

@pytest.mark.parametrize("ref", [
    "--upload-pack=touch%20{marker}%20%26%26%20git-upload-pack",
    "-oProxyCommand=touch%20{marker}",
    "%2Bmain:refs/heads/x",
])
def test_option_smuggling_refused_before_anything_runs(
        repo: GitRepo, parent: Loader, monkeypatch: pytest.MonkeyPatch,
        tmp_path: "os.PathLike[str]", ref: str) -> None:
    marker = os.path.join(os.fspath(tmp_path), "pwned")
    calls: List[object] = []
    real = subprocess.Popen

    def spy(*a: object, **k: object) -> object:
        calls.append(a)
        return real(*a, **k)  # type: ignore[call-overload]
    monkeypatch.setattr(subprocess, "Popen", spy)
    with pytest.raises(RemoteError, match="refusing ref"):
        open_remote(parent, repo.file_url("base") + "?ref=" + ref.format(marker=marker), ONLINE)
    assert calls == [] and not os.path.exists(marker)


@pytest.mark.parametrize("url", [
    "ext::sh -c touch% /tmp/kzgit-pwned",
    "git::ext::sh -c id",
    "fd::3",
    "ftp://example.invalid/org/repo",
    "git://example.invalid/org/repo",
])
def test_unsupported_transports_refused(parent: Loader, url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: pytest.fail("ran a process"))
    with pytest.raises(RemoteError, match="refusing|not a git repository"):
        open_remote(parent, url, ONLINE)


def test_ext_via_insteadof_blocked_by_git(repo: GitRepo, parent: Loader, monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: "os.PathLike[str]") -> None:
    marker = os.path.join(os.fspath(tmp_path), "pwned")
    for k, v in insteadof_env({"https://evil.example/": f"ext::sh -c touch% {marker}% #"}).items():
        monkeypatch.setenv(k, v)
    with pytest.raises(RemoteError):
        open_remote(parent, "https://evil.example/org/repo?ref=v1", ONLINE)
    assert not os.path.exists(marker)


def test_credentials_redacted_in_git_errors(parent: Loader, server: GitHTTPServer) -> None:
    url = f"http://alice:s3cret@127.0.0.1:{server.port}/git/org/missing//x?ref=v1"
    with pytest.raises(RemoteError) as e:
        open_remote(parent, url, ONLINE)
    assert "s3cret" not in str(e.value) and "alice" not in str(e.value)
    assert "***@127.0.0.1" in str(e.value)



def test_credentials_never_stored_in_the_cache(repo: GitRepo, parent: Loader, server: GitHTTPServer,
                                               cache: str) -> None:
    url = f"http://alice:s3cret@127.0.0.1:{server.port}/git/org/repo//base?ref=v1"
    ldr = open_remote(parent, url, ONLINE)
    assert isinstance(ldr, Loader) and ldr.remote_label == url.replace("alice:s3cret", "***")
    for dirpath, _, files in os.walk(cache):
        for name in files:
            with open(os.path.join(dirpath, name), "rb") as f:
                assert b"s3cret" not in f.read(), os.path.join(dirpath, name)


def test_git_timeout_names_url(parent: Loader, server: GitHTTPServer,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in insteadof_env({"https://slow.example/": server.url + "/hang/"}).items():
        monkeypatch.setenv(k, v)
    url = "https://slow.example/org/repo//base?ref=v1&timeout=1"
    with pytest.raises(RemoteError, match=r"timed out after 1s.*https://slow.example/org/repo//base"):
        open_remote(parent, url, ONLINE)


def test_repo_url_cycle(repo: GitRepo, parent: Loader) -> None:
    outer = open_remote(parent, repo.file_url("base", "v1"), ONLINE)
    assert isinstance(outer, Loader)
    with pytest.raises(RemoteError, match="cycle detected"):
        open_remote(outer, repo.file_url("base"), ONLINE)   # a prefix of the enclosing URL
    other = open_remote(outer, repo.file_url("", "v1"), ONLINE)  # nested remote, not a prefix
    assert isinstance(other, Loader) and other.parent is outer


def test_base_above_the_clone_is_a_containment_error_not_a_cycle(repo: GitRepo, parent: Loader) -> None:
    """fileloader.go New checks "within the cloned repo" before the cycle check: '..' from a
    clone's root contains the visited root, yet kustomize reports the escape."""
    top = open_remote(parent, repo.file_url("", "v1"), ONLINE)
    assert isinstance(top, Loader) and top.repo_root
    above = os.path.dirname(top.repo_root)
    with pytest.raises(LoadRestrictionError) as e:
        top.new_dir_loader("..")
    assert str(e.value) == ("security; bases in kustomizations found in cloned git repos must be "
                            f"within the repo, but base '{above}' is outside '{top.repo_root}'")
    base = top.new_dir_loader("base")   # inside the clone: fine; back up to its root: a cycle
    with pytest.raises(BuildError, match="cycle detected: candidate root"):
        base.new_dir_loader("..")


def test_submodules(repo: GitRepo, srv_root: str, parent: Loader) -> None:
    sub = GitRepo.create(os.path.join(srv_root, "org", "sub"), {"cm.yaml": configmap("sub")})
    repo.add_submodule("file://" + sub.path, "vendor/sub")
    repo.tag("withsub")
    with_sub = open_remote(parent, repo.file_url("vendor/sub", "withsub"), ONLINE)
    assert isinstance(with_sub, Loader) and "name: sub" in _read(with_sub, "cm.yaml")
    no_sub = open_remote(parent, repo.file_url("vendor/sub", "withsub") + "&submodules=false", ONLINE)
    assert isinstance(no_sub, Loader) and os.listdir(no_sub.root) == []


def test_file_submodule_refused_for_non_file_parent(repo: GitRepo, srv_root: str, parent: Loader,
                                                    server: GitHTTPServer) -> None:
    sub = GitRepo.create(os.path.join(srv_root, "org", "sub"), {"cm.yaml": configmap("sub")})
    repo.add_submodule("file://" + sub.path, "vendor/sub")
    repo.tag("withsub")
    with pytest.raises(RemoteError, match="submodule"):
        open_remote(parent, "https://github.com/org/repo//base?ref=withsub", ONLINE)


def _fetch_in_child(args: "tuple[str, str, str]") -> str:
    url, cache_home, local = args
    os.environ["XDG_CACHE_HOME"] = cache_home
    ldr = open_remote(Loader(local), url, ONLINE)
    assert isinstance(ldr, Loader)
    return ldr.root


def test_ls_remote_survives_another_process_forgetting_the_repository(
        repo: GitRepo, parent: Loader, server: GitHTTPServer, cache: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # another kzgit's failed first fetch removes the repository's cache directory under the
    # lock (forget_if_empty) while this one resolves a ref without it (seen on a cold
    # `kzgit lint --all` of the Kubeflow manifests: "cannot access '<cache>/git/<hash>/tmp'")
    from kzgit.remote import _cache
    real = _cache.run_git

    def racing(args: List[str], **kw: object) -> str:
        if args[0] == "ls-remote":
            shutil.rmtree(os.path.join(cache, "git"), ignore_errors=True)
        return real(args, **kw)   # type: ignore[arg-type]

    monkeypatch.setattr(_cache, "run_git", racing)
    got = open_remote(parent, "https://github.com/org/repo//base?ref=main", ONLINE)
    assert isinstance(got, Loader) and "v: 2" in _read(got, "cm.yaml")


def test_concurrent_fetches_share_one_cache(repo: GitRepo, parent: Loader, cache: str) -> None:
    import multiprocessing
    url = repo.file_url("base", "v1")
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(4, mp_context=ctx) as ex:
        roots = list(ex.map(_fetch_in_child, [(url, os.path.dirname(cache), parent.root)] * 6))
    assert len(set(roots)) == 1
    assert len(_trees(cache)) == 1
    assert not any(os.listdir(os.path.join(d, "tmp"))
                   for d in (os.path.join(cache, "git", k) for k in os.listdir(os.path.join(cache, "git")))
                   if os.path.isdir(os.path.join(d, "tmp")))


# --- http(s) files ---------------------------------------------------------------------------

def test_http_file(parent: Loader, server: GitHTTPServer, srv_root: str) -> None:
    os.makedirs(os.path.join(srv_root, "files"), exist_ok=True)
    with open(os.path.join(srv_root, "files", "cm.yaml"), "w") as f:
        f.write(configmap("web"))
    assert open_remote(parent, server.url + "/raw/files/cm.yaml", ONLINE) == configmap("web").encode()


def test_a_fragment_is_dropped_before_5_8_and_requested_escaped_from_5_8(
        parent: Loader, server: GitHTTPServer, srv_root: str) -> None:
    # fileloader.go: 5.8 parses the URL with url.ParseRequestURI, which knows no fragment, so
    # "#frag" is part of the path and sent as %23 (kustomize 2a79ea148); recorded with
    # kubectl 1.35 (5.7.1) and 1.36 (5.8.1) against a loopback server: /cm.yaml, /cm.yaml%23frag
    from kzgit.versions import parse
    os.makedirs(os.path.join(srv_root, "files"), exist_ok=True)
    for name in ("cm.yaml", "cm.yaml#frag"):
        with open(os.path.join(srv_root, "files", name), "w") as f:
            f.write(configmap(name.replace("#", "-").replace(".", "-")))
    url = server.url + "/raw/files/cm.yaml#frag"
    got = open_remote(parent, url, BuildOptions(kustomize_version=parse("5.7.1")))
    assert got == configmap("cm-yaml").encode()
    got = open_remote(parent, url, BuildOptions(kustomize_version=parse("5.8.1")))
    assert got == configmap("cm-yaml-frag").encode()
    assert [p for _, p in server.requests][-2:] == ["/raw/files/cm.yaml", "/raw/files/cm.yaml%23frag"]


@pytest.mark.parametrize("url, want", [
    ("http://h/a/b.yaml", "http://h/a/b.yaml"),
    ("http://h/c(1).yaml?ref=x#y", "http://h/c(1).yaml?ref=x#y"),   # no # in the path: unchanged
    ("http://h/c(1) d.yaml#f", "http://h/c%281%29%20d.yaml%23f"),   # Go escapes the whole path
    ("http://u:p@h/a%41.yaml#f!", "http://u:p@h/aA.yaml%23f%21"),
])
def test_request_uri(url: str, want: str) -> None:
    assert _http.request_uri(url) == want


def test_request_uri_refuses_a_bad_escape() -> None:
    with pytest.raises(RemoteError, match="invalid URL escape"):
        _http.request_uri("http://h/a%zz#f")


def test_http_errors(parent: Loader, server: GitHTTPServer, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RemoteError, match="status code 404"):
        open_remote(parent, server.url + "/status404", ONLINE)
    # two path segments parse as a repo spec: a 404 falls back to git, as kustomize does
    n_git = sum("/info/refs" in p for _, p in server.requests)
    with pytest.raises(RemoteError, match="git"):
        open_remote(parent, server.url + "/status/404", ONLINE)
    assert sum("/info/refs" in p for _, p in server.requests) > n_git
    monkeypatch.setattr(_http, "HTTP_MAX_BYTES", 1000)
    with pytest.raises(RemoteError, match="larger than the limit of 1000 bytes"):
        open_remote(parent, server.url + "/big/5000", ONLINE)
    monkeypatch.setattr(_http, "HTTP_TIMEOUT", 0.5)
    with pytest.raises(RemoteError, match="timed out after 0.5s"):
        open_remote(parent, server.url + "/slow/100?delay=0.1", ONLINE)
    with pytest.raises(RemoteError, match="timed out after 0.5s"):
        open_remote(parent, server.url + "/hang/x.yaml", ONLINE)
    with pytest.raises(RemoteError, match="refusing redirect"):
        open_remote(parent, server.url + "/redirect?to=file:///etc/passwd", ONLINE)
    with pytest.raises(RemoteError) as e:
        open_remote(parent, f"http://bob:pw123@127.0.0.1:{server.port}/status500", ONLINE)
    assert "pw123" not in str(e.value)


def test_http_404_resource_fails_cleanly_through_the_build(tmp_path: "os.PathLike[str]", server: GitHTTPServer) -> None:
    # the error passes levels that reword it (prefixed): an HTTPStatusError, whose __init__
    # takes the status too, used to crash there (exit 3) instead of failing the build
    from kzgit import build
    root = os.path.join(str(tmp_path), "k")
    os.makedirs(root)
    with open(os.path.join(root, "kustomization.yaml"), "w") as f:
        f.write(f"resources:\n- {server.url}/status404\n")
    with pytest.raises(RemoteError) as e:
        build(root, ONLINE)
    assert str(e.value) == (f"accumulating resources: {server.url}/status404: HTTP Error: status code 404 "
                            "(Not Found)")
    assert e.value.status == 404   # type: ignore[attr-defined]


def test_http_non_2xx_falls_back_to_git(repo: GitRepo, parent: Loader, server: GitHTTPServer) -> None:
    # GET http://127.0.0.1/git/org/repo//base answers 404; it parses as a repo, so git fetches it
    ldr = open_remote(parent, server.url + "/git/org/repo//base?ref=v1", ONLINE)
    assert isinstance(ldr, Loader) and "v: 1" in _read(ldr, "cm.yaml")


def _spy_popen(monkeypatch: pytest.MonkeyPatch) -> "List[subprocess.Popen[bytes]]":
    procs: "List[subprocess.Popen[bytes]]" = []
    real = subprocess.Popen

    def spy(*a: object, **k: object) -> "subprocess.Popen[bytes]":
        p = real(*a, **k)  # type: ignore[call-overload]
        procs.append(p)
        return p  # type: ignore[no-any-return]
    monkeypatch.setattr(subprocess, "Popen", spy)
    return procs


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to list process groups")
def test_timeout_kills_the_process_group(parent: Loader, server: GitHTTPServer,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in insteadof_env({"https://slow.example/": server.url + "/hang/"}).items():
        monkeypatch.setenv(k, v)
    procs = _spy_popen(monkeypatch)
    with pytest.raises(RemoteError, match="timed out"):
        open_remote(parent, "https://slow.example/org/repo?ref=v1&timeout=1", ONLINE)
    assert procs and all(wait_gone(p.pid, 5) for p in procs)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to list process groups")
def test_ctrl_c_kills_the_process_group(parent: Loader, server: GitHTTPServer,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import signal

    for k, v in insteadof_env({"https://slow.example/": server.url + "/hang/"}).items():
        monkeypatch.setenv(k, v)
    procs = _spy_popen(monkeypatch)
    spawn = subprocess.Popen

    def spawn_then_arm(*a: object, **k: object) -> "subprocess.Popen[bytes]":
        # ^C half a second after git starts, not after a fixed time: on a loaded machine a
        # fixed alarm can fire before any process exists, and then there is nothing to check.
        p = spawn(*a, **k)  # type: ignore[call-overload]
        if len(procs) == 1:
            signal.setitimer(signal.ITIMER_REAL, 0.5)
        return p  # type: ignore[no-any-return]
    monkeypatch.setattr(subprocess, "Popen", spawn_then_arm)

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt
    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            open_remote(parent, "https://slow.example/org/repo?ref=v1", ONLINE)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert procs and all(wait_gone(p.pid, 5) for p in procs)


def test_cache_inside_a_git_repository_is_not_confused(
        repo: GitRepo, parent: Loader, monkeypatch: pytest.MonkeyPatch,
        tmp_path: "os.PathLike[str]") -> None:
    outer = GitRepo.create(os.path.join(os.fspath(tmp_path), "outer"), {"x": "y"})
    monkeypatch.setenv("KZGIT_CACHE_DIR", os.path.join(outer.path, "cache"))
    ldr = open_remote(parent, repo.file_url("base", "v1"), ONLINE)
    assert isinstance(ldr, Loader) and ldr.root.startswith(outer.path)
    assert "v: 1" in _read(ldr, "cm.yaml")


def test_run_git_refuses_options_after_positionals(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: "os.PathLike[str]") -> None:
    from kzgit.remote._gitcli import run_git
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: pytest.fail("ran a process"))
    for args in (["fetch", "-q", "--depth=1", "origin", "--upload-pack=touch x"],
                 ["ls-remote", "file:///x", "-oProxyCommand=id"]):
        with pytest.raises(RemoteError, match="would be read as an option"):
            run_git(args, cwd=os.fspath(tmp_path), timeout=5, label="u")


def test_cached_ref_kind(repo: GitRepo, parent: Loader) -> None:
    from kzgit.remote import cached_ref_kind, parse_repo_spec
    spec = parse_repo_spec(repo.file_url("base", "v1"))
    assert spec is not None and cached_ref_kind(spec) is None
    open_remote(parent, repo.file_url("base", "v1"), ONLINE)
    open_remote(parent, repo.file_url("base", "main"), ONLINE)
    assert cached_ref_kind(spec) == "tag" and cached_ref_kind(spec, "main") == "branch"


def test_http_html_page_of_a_repo_falls_back_to_git(repo: GitRepo, parent: Loader,
                                                    server: GitHTTPServer) -> None:
    # like GitHub: the URL answers 200 with a web page, and git can clone it
    ldr = open_remote(parent, server.url + "/site/org/repo//base?ref=v1", ONLINE)
    assert isinstance(ldr, Loader) and "v: 1" in _read(ldr, "cm.yaml")
    assert ("GET", "/site/org/repo//base?ref=v1") in server.requests


def test_insteadof_from_the_users_gitconfig(repo: GitRepo, parent: Loader, srv_root: str) -> None:
    with open(os.path.join(os.environ["HOME"], ".gitconfig"), "w") as f:
        f.write(f'[url "file://{srv_root}/"]\n\tinsteadOf = https://mirror.example/\n')
    ldr = open_remote(parent, "https://mirror.example/org/repo//base?ref=v1", ONLINE)
    assert isinstance(ldr, Loader) and "v: 1" in _read(ldr, "cm.yaml")
    assert ldr.remote_label == "https://mirror.example/org/repo//base?ref=v1"


def test_moved_tag_is_fetched_again_and_offline_keeps_the_last_resolution(
        repo: GitRepo, parent: Loader, cache: str, monkeypatch: pytest.MonkeyPatch) -> None:
    url = repo.file_url("base", "v1")
    first = open_remote(parent, url, ONLINE)
    assert isinstance(first, Loader) and "v: 1" in _read(first, "cm.yaml")
    # the tag is moved to a later commit (git tag -f): kustomize renders the new commit
    git("tag", "-f", "v1", cwd=repo.path)
    moved = open_remote(parent, url, ONLINE)
    assert isinstance(moved, Loader) and "v: 2" in _read(moved, "cm.yaml")
    assert moved.repo_root != first.repo_root
    off = open_remote(parent, url, OFFLINE)     # the last resolution, with no network
    assert isinstance(off, Loader) and off.repo_root == moved.repo_root
    assert len(_trees(cache)) == 2


def test_failed_fetch_leaves_no_directory(parent: Loader, cache: str, srv_root: str) -> None:
    url = "file://" + os.path.join(srv_root, "org", "nothing") + "//base?ref=v1"
    with pytest.raises(RemoteError):
        open_remote(parent, url, ONLINE)
    assert not os.path.exists(os.path.join(cache, "git"))


def test_a_tag_resolved_a_moment_ago_is_not_asked_again_in_the_hooks(
        repo: GitRepo, parent: Loader, server: GitHTTPServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hooks of one pre-commit run each open the remote: the first resolves the tag, the
    others reuse that answer (the hooks set REUSE_ENV to a minute): no request at all.
    Elsewhere every build asks, as kustomize does."""
    url = "https://github.com/org/repo//base?ref=v1"
    first = open_remote(parent, url, ONLINE)
    n = len(server.requests)
    assert open_remote(parent, url, ONLINE).root == first.root and len(server.requests) > n
    monkeypatch.setenv(remote_cache.REUSE_ENV, "60")
    n = len(server.requests)
    again = open_remote(parent, url, ONLINE)
    assert isinstance(first, Loader) and isinstance(again, Loader) and again.root == first.root
    assert len(server.requests) == n
