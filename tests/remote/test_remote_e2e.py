"""End to end: ``kzgit build`` over remote bases, compared with ``kubectl kustomize``
on ``file://`` references when kubectl is on PATH (no test reaches the internet)."""
from __future__ import annotations

import os
import shutil
import subprocess
from typing import Dict, Iterator

import pytest

from gitserver import (GitHTTPServer, GitRepo, configmap, insteadof_env, kustomization,
                       offline_home)
from kzgit.builder import BuildOptions, build
from kzgit.errors import KzgitError

KUBECTL = shutil.which("kubectl")

SERVICE = "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  ports:\n  - port: 80\n"


@pytest.fixture(autouse=True)
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: "os.PathLike[str]") -> str:
    return offline_home(monkeypatch, tmp_path)


@pytest.fixture
def tmp(tmp_path: "os.PathLike[str]") -> str:
    return os.path.realpath(os.fspath(tmp_path))


@pytest.fixture
def repos(tmp: str) -> Dict[str, GitRepo]:
    """``lib`` (a plain base) and ``app`` whose base reaches ``lib`` as a nested remote."""
    lib = GitRepo.create(os.path.join(tmp, "srv", "org", "lib"), {
        "svc/kustomization.yaml": kustomization(("svc.yaml",), namePrefix="lib-"),
        "svc/svc.yaml": SERVICE,
        "comp/kustomization.yaml": ("apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
                                    "commonLabels:\n  from: component\n"),
    })
    lib.tag("v1.0.0")
    app = GitRepo.create(os.path.join(tmp, "srv", "org", "app"), {
        "base/kustomization.yaml": kustomization(
            ("cm.yaml", "../shared", lib.file_url("svc", "v1.0.0")), namePrefix="base-"),
        "base/cm.yaml": configmap("cm", k="v"),
        "shared/kustomization.yaml": kustomization(("cm2.yaml",)),
        "shared/cm2.yaml": configmap("shared", a="b"),
        "escape/kustomization.yaml": kustomization(("out",)),
        "fileescape/kustomization.yaml": kustomization(("../base/cm.yaml",)),
    })
    outside = os.path.join(tmp, "outside")
    os.makedirs(outside)
    with open(os.path.join(outside, "kustomization.yaml"), "w") as f:
        f.write(kustomization())
    os.symlink(outside, os.path.join(app.path, "escape", "out"))   # a base leaving the clone
    app.commit({}, "symlinked base outside the repo")
    app.tag("v2")
    return {"lib": lib, "app": app}


def _local(tmp: str, text: str) -> str:
    d = os.path.join(tmp, "local")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "kustomization.yaml"), "w") as f:
        f.write(text)
    return d


def _kubectl(path: str) -> str:
    p = subprocess.run([KUBECTL or "kubectl", "kustomize", path], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


def _compare(path: str) -> str:
    got = build(path, BuildOptions()).to_yaml()
    if KUBECTL:
        assert got == _kubectl(path)
    return got


def test_kubectl_presence_is_reported() -> None:
    if not KUBECTL:
        pytest.skip("kubectl not on PATH: kzgit builds over remotes are not compared with "
                    "kubectl kustomize in this run")


def test_remote_base_with_nested_remote_and_local_sibling(repos: Dict[str, GitRepo], tmp: str) -> None:
    app = repos["app"]
    path = _local(tmp, kustomization((app.file_url("base", "v2"),), namespace="prod"))
    out = _compare(path)
    assert "name: base-cm" in out and "name: base-shared" in out and "name: base-lib-svc" in out


def test_remote_build_target(repos: Dict[str, GitRepo], tmp: str) -> None:
    # kustomize build URL: loader.go NewLoader clones a target that parses as a repo URL
    out = _compare(repos["app"].file_url("base", "v2"))
    assert "name: base-cm" in out and "name: base-lib-svc" in out
    with pytest.raises(KzgitError, match="does not exist in the repository"):
        build(repos["lib"].file_url("nothere", "v1.0.0"), BuildOptions())


def test_git_prefix_is_stripped_with_a_warning(repos: Dict[str, GitRepo], tmp: str) -> None:
    url = "git::" + repos["lib"].file_url("svc", "v1.0.0")
    path = _local(tmp, kustomization((url,)))
    result = build(path, BuildOptions())
    assert "name: lib-svc" in result.to_yaml()
    assert [w for w in result.warnings if "'git::' URL prefix" in w] == [
        f"'{url}': forcing the git protocol using the 'git::' URL prefix is not supported; "
        "kustomize and kzgit strip this prefix. Please remove the 'git::' prefix from your "
        "configuration."]


def test_remote_component(repos: Dict[str, GitRepo], tmp: str) -> None:
    lib = repos["lib"]
    path = _local(tmp, kustomization(("cm.yaml",)) + f"components:\n- {lib.file_url('comp', 'v1.0.0')}\n")
    with open(os.path.join(path, "cm.yaml"), "w") as f:
        f.write(configmap("local"))
    assert "from: component" in _compare(path)


def test_remote_head_and_sha(repos: Dict[str, GitRepo], tmp: str) -> None:
    lib = repos["lib"]
    _compare(_local(tmp, kustomization((lib.file_url("svc"),))))
    _compare(_local(tmp, kustomization((lib.file_url("svc", lib.head()),))))


@pytest.mark.parametrize("sub,needle", [
    ("escape", "within the repo"),
    ("fileescape", "is not in or below"),
])
def test_remote_is_confined_to_its_repo(repos: Dict[str, GitRepo], tmp: str, sub: str, needle: str) -> None:
    path = _local(tmp, kustomization((repos["app"].file_url(sub, "v2"),)))
    with pytest.raises(KzgitError, match=needle):
        build(path, BuildOptions())


def test_offline_build(repos: Dict[str, GitRepo], tmp: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _local(tmp, kustomization((repos["app"].file_url("base", "v2"),)))
    with pytest.raises(KzgitError, match=r"offline: .*app//base\?ref=v2.*'v2'"):
        build(path, BuildOptions(offline=True))
    online = build(path, BuildOptions()).to_yaml()
    shutil.rmtree(os.path.join(tmp, "srv"))        # the remote is gone: only the cache is left
    assert build(path, BuildOptions(offline=True)).to_yaml() == online
    with pytest.raises(KzgitError, match="ls-remote"):   # a tag is resolved online, as kustomize does
        build(path, BuildOptions())


@pytest.fixture
def github(tmp: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitHTTPServer]:
    with GitHTTPServer(os.path.join(tmp, "srv")) as s:
        for k, v in insteadof_env({"https://github.com/": s.url + "/git/"}).items():
            monkeypatch.setenv(k, v)
        yield s


def test_github_url_over_smart_http(repos: Dict[str, GitRepo], tmp: str, github: GitHTTPServer) -> None:
    file_path = _local(tmp, kustomization((repos["lib"].file_url("svc", "v1.0.0"),)))
    want = build(file_path, BuildOptions()).to_yaml()
    path = _local(tmp, kustomization(("https://github.com/org/lib//svc?ref=v1.0.0",)))
    assert build(path, BuildOptions()).to_yaml() == want
    assert any("/git/org/lib" in p for _, p in github.requests)


def test_loopback_http_file_and_repo_match_kubectl(repos: Dict[str, GitRepo], tmp: str) -> None:
    """kubectl and kzgit both GET the URLs first: a raw file is a resource, a forge-like
    page (HTML) makes them clone the URL instead."""
    raw = os.path.join(tmp, "rawfiles")
    os.makedirs(raw)
    with open(os.path.join(raw, "cm.yaml"), "w") as f:
        f.write(configmap("fromhttp", a="1"))
    with GitHTTPServer(os.path.join(tmp, "srv"), raw_root=raw) as s:
        path = _local(tmp, kustomization((s.url + "/raw/cm.yaml", s.url + "/site/org/lib//svc?ref=v1.0.0")))
        out = _compare(path)
    assert "name: fromhttp" in out and "name: lib-svc" in out


def test_cli_offline_miss_and_refused_ref(repos: Dict[str, GitRepo], tmp: str) -> None:
    import sys
    app = repos["app"]
    marker = os.path.join(tmp, "pwned")

    def kzgit_build(*args: str) -> "subprocess.CompletedProcess[str]":
        return subprocess.run([sys.executable, "-m", "kzgit", "build", *args], capture_output=True,
                              text=True, timeout=120)
    path = _local(tmp, kustomization((app.file_url("base", "v2"),)))
    p = kzgit_build("--offline", path)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert f"offline: '{app.file_url('base', 'v2')}' at ref 'v2'" in p.stderr
    evil = app.file_url("base") + f"?ref=--upload-pack=touch%20{marker}%20%26%26%20git-upload-pack"
    path = _local(tmp, kustomization((evil,)))
    p = kzgit_build(path)
    assert p.returncode == 1 and "refusing ref '--upload-pack=" in p.stderr
    assert not os.path.exists(marker)


@pytest.mark.parametrize("variable", ["GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"])
def test_git_config_files_named_in_the_environment_are_honoured(
        repos: Dict[str, GitRepo], tmp: str, monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    """A CI system points GIT_CONFIG_GLOBAL (or GIT_CONFIG_SYSTEM) at a file with an insteadOf
    mirror: git reads it for kzgit as for kubectl, as it reads $HOME/.gitconfig."""
    config = os.path.join(tmp, "ci-gitconfig")
    with open(config, "w") as f:
        f.write(f'[url "file://{tmp}/srv/org/"]\n\tinsteadOf = https://git.example.invalid/org/\n')
    monkeypatch.setenv(variable, config)
    if variable == "GIT_CONFIG_SYSTEM":
        monkeypatch.delenv("GIT_CONFIG_NOSYSTEM")
    path = _local(tmp, kustomization(("https://git.example.invalid/org/lib//svc?ref=v1.0.0",)))
    assert "name: lib-svc" in _compare(path)
    # GIT_CONFIG_NOSYSTEM still chooses: the system file is not read, so the host is unknown
    if variable == "GIT_CONFIG_SYSTEM":
        monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
        monkeypatch.setenv("KZGIT_CACHE_DIR", os.path.join(tmp, "fresh-cache"))
        with pytest.raises(KzgitError, match="git.example.invalid"):
            build(path, BuildOptions())


def test_variables_that_redirect_git_are_still_dropped(repos: Dict[str, GitRepo], tmp: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside a hook git exports GIT_DIR / GIT_INDEX_FILE / GIT_OBJECT_DIRECTORY for the user's
    repository; a remote fetch with them would act on that repository."""
    user = GitRepo.create(os.path.join(tmp, "user"), {"README": "x\n"})
    head = subprocess.run(["git", "-C", user.path, "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout
    monkeypatch.setenv("GIT_DIR", os.path.join(user.path, ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", os.path.join(user.path, ".git", "index"))
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", os.path.join(user.path, ".git", "objects"))
    path = _local(tmp, kustomization((repos["lib"].file_url("svc", "v1.0.0"),)))
    assert "name: lib-svc" in build(path, BuildOptions()).to_yaml()
    for k in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"):
        monkeypatch.delenv(k)
    after = subprocess.run(["git", "-C", user.path, "rev-parse", "HEAD"], capture_output=True,
                           text=True, check=True).stdout
    tags = subprocess.run(["git", "-C", user.path, "tag"], capture_output=True, text=True,
                          check=True).stdout
    assert after == head and tags == ""


def test_a_tag_pinned_remote_base_is_cached_by_the_commit_it_resolves_to(
        repos: Dict[str, GitRepo], tmp: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33 item 6: render, validate and lint each rendered a tag-pinned remote base again
    in one commit. The render cache records the commit the tag resolved to; a lookup resolves it
    again (at most once a minute on the remote), and a moved tag is a miss."""
    from kzgit.rendercache import BUILT, CACHED, open_store, render_yaml
    import kzgit.remote._cache as remote_cache
    monkeypatch.setenv(remote_cache.REUSE_ENV, "60")   # as in the hooks
    lib = repos["lib"]
    local = _local(tmp, kustomization((lib.file_url("svc", "v1.0.0"),)))
    store, _ = open_store(os.path.join(tmp, "renders"))
    assert store is not None
    asked = []
    real = remote_cache.RepoCache.ls_remote
    monkeypatch.setattr(remote_cache.RepoCache, "ls_remote",
                        lambda self, ref: asked.append(ref) or real(self, ref))
    first = render_yaml(local, BuildOptions(), store)
    second = render_yaml(local, BuildOptions(), store)
    assert (first.status, second.status) == (BUILT, CACHED) and second.yaml == first.yaml
    assert asked == ["v1.0.0"]   # resolved once: the lookup reused the minute-old answer
    # the tag moves; once the minute has passed, the lookup asks again and misses
    lib.commit({"svc/svc.yaml": SERVICE.replace("port: 80", "port: 8080")}, "new port")
    git_tag = ["git", "tag", "-f", "v1.0.0"]
    subprocess.run(git_tag, cwd=lib.path, check=True, capture_output=True, timeout=60)
    monkeypatch.setenv(remote_cache.REUSE_ENV, "0")
    third = render_yaml(local, BuildOptions(), store)
    assert third.status == BUILT and "8080" in third.yaml
