"""URL table for kzgit.remote's repo-spec parser, ported from kustomize
api/internal/git/repospec_test.go (api/v0.18.0) plus kzgit's own cases."""
from __future__ import annotations

import itertools
from typing import List, Optional, Tuple

import pytest

from kzgit.remote import RepoSpec, RepoSpecError, looks_remote, parse_repo_spec
from kzgit.remote._redact import redact
from kzgit.remote._repospec import DEFAULT_TIMEOUT, parse_query

# (input, host, org_repo, path, ref, clone_url) -- TestNewRepoSpecFromUrl_Smoke and more
SMOKE: List[Tuple[str, str, str, str, str, str]] = [
    ("https://git-codecommit.us-east-2.amazonaws.com/someorg/somerepo/somedir",
     "https://git-codecommit.us-east-2.amazonaws.com/", "someorg/somerepo", "somedir", "",
     "https://git-codecommit.us-east-2.amazonaws.com/someorg/somerepo"),
    ("https://git-codecommit.us-east-2.amazonaws.com/someorg/somerepo/somedir?ref=testbranch",
     "https://git-codecommit.us-east-2.amazonaws.com/", "someorg/somerepo", "somedir", "testbranch",
     "https://git-codecommit.us-east-2.amazonaws.com/someorg/somerepo"),
    ("https://fabrikops2.visualstudio.com/someorg/somerepo?ref=master",
     "https://fabrikops2.visualstudio.com/", "someorg/somerepo", "", "master",
     "https://fabrikops2.visualstudio.com/someorg/somerepo"),
    ("http://github.com/someorg/somerepo/somedir",
     "https://github.com/", "someorg/somerepo", "somedir", "", "https://github.com/someorg/somerepo"),
    ("git@github.com:someorg/somerepo/somedir",
     "git@github.com:", "someorg/somerepo", "somedir", "", "git@github.com:someorg/somerepo"),
    ("http://github.com/someorg/somerepo.git/somedir",
     "https://github.com/", "someorg/somerepo.git", "somedir", "", "https://github.com/someorg/somerepo.git"),
    ("git@github.com:someorg/somerepo.git/somedir",
     "git@github.com:", "someorg/somerepo.git", "somedir", "", "git@github.com:someorg/somerepo.git"),
    ("git@gitlab2.sqtools.ru:infra/kubernetes/thanos-base.git?ref=v0.1.0",
     "git@gitlab2.sqtools.ru:", "infra/kubernetes/thanos-base.git", "", "v0.1.0",
     "git@gitlab2.sqtools.ru:infra/kubernetes/thanos-base.git"),
    ("git@bitbucket.org:company/project.git//path?ref=branch",
     "git@bitbucket.org:", "company/project.git", "path", "branch", "git@bitbucket.org:company/project.git"),
    ("git@bitbucket.org/company/project.git//path?ref=branch",
     "git@bitbucket.org/", "company/project.git", "path", "branch", "git@bitbucket.org/company/project.git"),
    ("ssh://git@bitbucket.org/company/project.git//path?ref=branch",
     "ssh://git@bitbucket.org/", "company/project.git", "path", "branch",
     "ssh://git@bitbucket.org/company/project.git"),
    ("https://itfs.mycompany.com/collection/project/_git/somerepos",
     "https://itfs.mycompany.com/", "collection/project/_git/somerepos", "", "",
     "https://itfs.mycompany.com/collection/project/_git/somerepos"),
    ("https://itfs.mycompany.com/collection/project/_git/somerepos?version=v1.0.0",
     "https://itfs.mycompany.com/", "collection/project/_git/somerepos", "", "v1.0.0",
     "https://itfs.mycompany.com/collection/project/_git/somerepos"),
    ("https://itfs.mycompany.com/collection/project/_git/somerepos/somedir?version=v1.0.0",
     "https://itfs.mycompany.com/", "collection/project/_git/somerepos", "somedir", "v1.0.0",
     "https://itfs.mycompany.com/collection/project/_git/somerepos"),
    ("git::https://itfs.mycompany.com/collection/project/_git/somerepos",
     "https://itfs.mycompany.com/", "collection/project/_git/somerepos", "", "",
     "https://itfs.mycompany.com/collection/project/_git/somerepos"),
    ("https://bitbucket.example.com/scm/project/repository.git",
     "https://bitbucket.example.com/", "scm/project/repository.git", "", "",
     "https://bitbucket.example.com/scm/project/repository.git"),
    ("ssh://git-codecommit.us-east-2.amazonaws.com/someorg/somerepo/somepath",
     "ssh://git-codecommit.us-east-2.amazonaws.com/", "someorg/somerepo", "somepath", "",
     "ssh://git-codecommit.us-east-2.amazonaws.com/someorg/somerepo"),
    ("git@github.com/someorg/somerepo/somepath",
     "git@github.com:", "someorg/somerepo", "somepath", "", "git@github.com:someorg/somerepo"),
    ("https://github.com/kubernetes-sigs/kustomize//examples/multibases/dev/?ref=v1.0.6",
     "https://github.com/", "kubernetes-sigs/kustomize", "examples/multibases/dev/", "v1.0.6",
     "https://github.com/kubernetes-sigs/kustomize"),
    ("file://a/b/c/someRepo.git/somepath?ref=someBranch",
     "file://", "a/b/c/someRepo.git", "somepath", "someBranch", "file://a/b/c/someRepo.git"),
    ("file://a/b/c/someRepo//somepath?ref=someBranch",
     "file://", "a/b/c/someRepo", "somepath", "someBranch", "file://a/b/c/someRepo"),
    ("file://a/b/c/someRepo?ref=someBranch",
     "file://", "a/b/c/someRepo", "", "someBranch", "file://a/b/c/someRepo"),
    ("file:///a/b/c/someRepo?ref=someBranch",
     "file://", "/a/b/c/someRepo", "", "someBranch", "file:///a/b/c/someRepo"),
    ("ssh://git@github.com/kubernetes-sigs/kustomize//examples/multibases/dev?ref=v1.0.6",
     "git@github.com:", "kubernetes-sigs/kustomize", "examples/multibases/dev", "v1.0.6",
     "git@github.com:kubernetes-sigs/kustomize"),
    ("file:///a/b/c/someRepo", "file://", "/a/b/c/someRepo", "", "", "file:///a/b/c/someRepo"),
    ("file:///", "file://", "/", "", "", "file:///"),
    ("https://example.org/path/to/repo//examples/multibases/dev",
     "https://example.org/", "path/to/repo", "examples/multibases/dev", "", "https://example.org/path/to/repo"),
    ("https://example.org/path/to/repo.git/examples/multibases/dev",
     "https://example.org/", "path/to/repo.git", "examples/multibases/dev", "",
     "https://example.org/path/to/repo.git"),
    ("ssh://alice@example.com/path/to/repo//examples/multibases/dev",
     "ssh://alice@example.com/", "path/to/repo", "examples/multibases/dev", "",
     "ssh://alice@example.com/path/to/repo"),
    ("https://authority/org/repo?ref=group/version",
     "https://authority/", "org/repo", "", "group/version", "https://authority/org/repo"),
    ("https://authority/org/repo/?ref=includes_git/for_some_reason",
     "https://authority/", "org/repo", "", "includes_git/for_some_reason", "https://authority/org/repo"),
    ("https://authority/org/repo/?ref=includes.git/for_some_reason",
     "https://authority/", "org/repo", "", "includes.git/for_some_reason", "https://authority/org/repo"),
    ("https://authority/org/repo/%-invalid-uri-so-not-parsable-by-net/url.Parse",
     "https://authority/", "org/repo", "%-invalid-uri-so-not-parsable-by-net/url.Parse", "",
     "https://authority/org/repo"),
    ("ssh://myusername@bitbucket.org/ourteamname/ourrepositoryname.git//path?ref=branch",
     "ssh://myusername@bitbucket.org/", "ourteamname/ourrepositoryname.git", "path", "branch",
     "ssh://myusername@bitbucket.org/ourteamname/ourrepositoryname.git"),
    ("file://git@home/path/to/repository.git//path?ref=branch",
     "file://", "git@home/path/to/repository.git", "path", "branch", "file://git@home/path/to/repository.git"),
    ("http://git@home.com/path/to/repository.git//path?ref=branch",
     "http://git@home.com/", "path/to/repository.git", "path", "branch",
     "http://git@home.com/path/to/repository.git"),
    ("https://git@home.com/path/to/repository.git//path?ref=branch",
     "https://git@home.com/", "path/to/repository.git", "path", "branch",
     "https://git@home.com/path/to/repository.git"),
    ("ssh://git@ssh.github.com:443/YOUR-USERNAME/YOUR-REPOSITORY.git",
     "ssh://git@ssh.github.com:443/", "YOUR-USERNAME/YOUR-REPOSITORY.git", "", "",
     "ssh://git@ssh.github.com:443/YOUR-USERNAME/YOUR-REPOSITORY.git"),
    ("git@gitlab.com/user:name/YOUR-REPOSITORY.git/path",
     "git@gitlab.com/", "user:name/YOUR-REPOSITORY.git", "path", "", "git@gitlab.com/user:name/YOUR-REPOSITORY.git"),
    ("git@gitlab.com:gitlab-tests/sample-project.git",
     "git@gitlab.com:", "gitlab-tests/sample-project.git", "", "", "git@gitlab.com:gitlab-tests/sample-project.git"),
    ("git@gitlab.com:gitlab-tests/sample-project",
     "git@gitlab.com:", "gitlab-tests/sample-project", "", "", "git@gitlab.com:gitlab-tests/sample-project"),
    ("https://username@dev.azure.com/org/project/_git/repo//path/to/kustomization/root",
     "https://username@dev.azure.com/", "org/project/_git/repo", "path/to/kustomization/root", "",
     "https://username@dev.azure.com/org/project/_git/repo"),
    ("https://org.visualstudio.com/project/_git/repo/path/to/kustomization/root",
     "https://org.visualstudio.com/", "project/_git/repo", "path/to/kustomization/root", "",
     "https://org.visualstudio.com/project/_git/repo"),
    ("ssh://org-12345@github.com/kubernetes-sigs/kustomize",
     "org-12345@github.com:", "kubernetes-sigs/kustomize", "", "", "org-12345@github.com:kubernetes-sigs/kustomize"),
    ("org-12345@github.com/kubernetes-sigs/kustomize",
     "org-12345@github.com:", "kubernetes-sigs/kustomize", "", "", "org-12345@github.com:kubernetes-sigs/kustomize"),
    ("git@gist.github.com:bc7947cb727d7f9217e7862d961a1ffd.git",
     "git@gist.github.com:", "bc7947cb727d7f9217e7862d961a1ffd.git", "", "",
     "git@gist.github.com:bc7947cb727d7f9217e7862d961a1ffd.git"),
    ("https://gist.github.com/bc7947cb727d7f9217e7862d961a1ffd.git",
     "https://gist.github.com/", "bc7947cb727d7f9217e7862d961a1ffd.git", "", "",
     "https://gist.github.com/bc7947cb727d7f9217e7862d961a1ffd.git"),
    # kzgit additions
    ("github.com/org/repo//deploy?ref=v1", "https://github.com/", "org/repo", "deploy", "v1",
     "https://github.com/org/repo"),
    ("GitHub.com:org/repo/a/b?version=v2&ref=v3", "https://github.com/", "org/repo", "a/b", "v3",
     "https://github.com/org/repo"),
    ("https://user:s3cret@git.example.com/org/repo.git//k?ref=main",
     "https://user:s3cret@git.example.com/", "org/repo.git", "k", "main",
     "https://user:s3cret@git.example.com/org/repo.git"),
    ("https://github.com/org/repo//a?ref=--upload-pack=touch%20/tmp/x",
     "https://github.com/", "org/repo", "a", "--upload-pack=touch /tmp/x", "https://github.com/org/repo"),
]


@pytest.mark.parametrize("url,host,org_repo,path,ref,clone", SMOKE, ids=[c[0] for c in SMOKE])
def test_smoke(url: str, host: str, org_repo: str, path: str, ref: str, clone: str) -> None:
    rs = RepoSpec.parse(url)
    assert (rs.host, rs.org_repo, rs.path, rs.ref) == (host, org_repo, path, ref)
    assert rs.clone_url() == clone
    assert rs.raw == url
    assert looks_remote(url)


_SCHEME_AUTHORITY = [
    ("gitHub.com/", "https://github.com/"),
    ("github.com:", "https://github.com/"),
    ("http://github.com/", "https://github.com/"),
    ("https://github.com/", "https://github.com/"),
    ("hTTps://github.com/", "https://github.com/"),
    ("https://git-codecommit.us-east-2.amazonaws.com/", "https://git-codecommit.us-east-2.amazonaws.com/"),
    ("https://fabrikops2.visualstudio.com/", "https://fabrikops2.visualstudio.com/"),
    ("ssh://git.example.com:7999/", "ssh://git.example.com:7999/"),
    ("git::https://gitlab.com/", "https://gitlab.com/"),
    ("git::http://git.example.com/", "http://git.example.com/"),
    ("git::https://git.example.com/", "https://git.example.com/"),
    ("git@github.com:", "git@github.com:"),
    ("git@github.com/", "git@github.com:"),
    ("git::git@github.com:", "git@github.com:"),
    ("org-12345@github.com:", "org-12345@github.com:"),
    ("org-12345@github.com/", "org-12345@github.com:"),
]
_PERMUTE = list(itertools.product(
    _SCHEME_AUTHORITY, ["someOrg/someRepo", "kubernetes/website"],
    ["README.md", "foo/krusty.txt", ""], ["group/version", "someBranch", "master", "v0.1.0", ""]))


@pytest.mark.parametrize("sa,repo_path,path,ref", _PERMUTE)
def test_permute(sa: Tuple[str, str], repo_path: str, path: str, ref: str) -> None:
    """TestNewRepoSpecFromUrl_Permute: 960 combinations."""
    url = sa[0] + repo_path + ("/" + path if path else "") + ("?ref=" + ref if ref else "")
    rs = RepoSpec.parse(url)
    assert (rs.host, rs.org_repo, rs.path, rs.ref) == (sa[1], repo_path, path, ref)


ERRORS = [
    ("/tmp", "uri looks like abs path"),
    ("../../tmp", "failed to parse scheme"),
    ("src/github.com/org/repo/path", "failed to parse scheme"),
    ("iauhsdiuashduas", "failed to parse scheme"),
    ("htxxxtp://github.com/", "failed to parse scheme"),
    ("ssh://git.example.com", "failed to parse repo path segment"),
    ("git::___", "failed to parse scheme"),
    ("https://host?ref=group/version/minor_version", "failed to parse repo path segment"),
    ("https://github.com/org/repo.git//path/../../exits/repo", "url path exits repo"),
    ("github.com!org/repo.git//path", "failed to parse scheme"),
    ("gh:org/repo", "failed to parse scheme"),
    ("https://github.com/thisisa404.yaml", "failed to parse repo path segment"),
    ("file:////tmp//path/to/whatever", "failed to parse repo path segment"),
    ("git@scp://github.com/org/repo.git//path", "failed to parse repo path segment"),
    ("git@ssh://github.com/org/repo.git//path", "failed to parse repo path segment"),
    ("ext::sh -c touch% /tmp/pwned", "failed to parse scheme"),
    ("base", "failed to parse scheme"),
]


@pytest.mark.parametrize("url,msg", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(url: str, msg: str) -> None:
    with pytest.raises(RepoSpecError, match=msg):
        RepoSpec.parse(url)
    assert parse_repo_spec(url) is None


QUERIES: List[Tuple[str, str, bool, float]] = [
    ("", "", True, DEFAULT_TIMEOUT),
    ("ref=v1.0.0", "v1.0.0", True, DEFAULT_TIMEOUT),
    ("ref=kustomize/v4.5.7", "kustomize/v4.5.7", True, DEFAULT_TIMEOUT),
    ("version=master", "master", True, DEFAULT_TIMEOUT),
    ("version=master&ref=v1.0.0", "v1.0.0", True, DEFAULT_TIMEOUT),
    ("version=master&submodules=", "master", True, DEFAULT_TIMEOUT),
    ("version=master&submodules=maybe", "master", True, DEFAULT_TIMEOUT),
    ("version=master&submodules=true", "master", True, DEFAULT_TIMEOUT),
    ("version=master&submodules=false", "master", False, DEFAULT_TIMEOUT),
    ("version=master&timeout=", "master", True, DEFAULT_TIMEOUT),
    ("version=master&timeout=jiffy", "master", True, DEFAULT_TIMEOUT),
    ("version=master&timeout=0", "master", True, DEFAULT_TIMEOUT),
    ("version=master&timeout=0s", "master", True, DEFAULT_TIMEOUT),
    ("version=master&timeout=61", "master", True, 61.0),
    ("version=master&timeout=1m1s", "master", True, 61.0),
    ("version=master&submodules=false&timeout=1m1s", "master", False, 61.0),
    ("version=master&timeout=1.5s", "master", True, 1.5),
    ("ref=v1;x", "", True, DEFAULT_TIMEOUT),      # Go: ';' is a parse error -> all defaults
    ("ref=a%2Bb+c", "a+b c", True, DEFAULT_TIMEOUT),
]


@pytest.mark.parametrize("query,ref,submodules,timeout", QUERIES)
def test_parse_query(query: str, ref: str, submodules: bool, timeout: float) -> None:
    got_ref, got_timeout, got_submodules = parse_query(query)
    assert (got_ref, got_submodules) == (ref, submodules)
    assert got_timeout == pytest.approx(timeout)


@pytest.mark.parametrize("ref,expected", [
    ("https://example.com/raw/deploy.yaml", True),
    ("HTTP://example.com/x.yaml", True),
    ("github.com/org/repo", True),
    ("file:///srv/repo", True),
    ("ext::sh -c id", True),          # refused later, but never taken for a local path
    ("fd::17", True),
    ("ftp://host/x", True),
    ("base", False),
    ("../base", False),
    ("deploy.yaml", False),
    ("/abs/path", False),
    ("dir/with::colons", False),
])
def test_looks_remote(ref: str, expected: bool) -> None:
    assert looks_remote(ref) is expected


@pytest.mark.parametrize("text,expected", [
    ("https://user:pw@host/org/repo", "https://***@host/org/repo"),
    ("failed 'http://tok@h/x' and ssh://git@h/y", "failed 'http://***@h/x' and ssh://***@h/y"),
    ("git@github.com:org/repo", "git@github.com:org/repo"),
    ("no url here", "no url here"),
])
def test_redact(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_redacted_spec() -> None:
    rs: Optional[RepoSpec] = parse_repo_spec("https://u:p@h.example/o/r//x?ref=v1")
    assert rs is not None and rs.redacted() == "https://***@h.example/o/r//x?ref=v1"


def test_redact_secrets_without_scheme() -> None:
    assert redact("bad host 'bob:pw123@127.0.0.1'", ["bob:pw123"]) == "bad host '***@127.0.0.1'"
    assert redact("git fetch failed", ["git"]) == "git fetch failed"


def test_git_prefix_warning() -> None:
    rs = RepoSpec.parse("git::https://gitlab.com/org/repo")
    assert rs.forced_git_prefix and "git::" in rs.warnings()[0]
    assert RepoSpec.parse("https://gitlab.com/org/repo").warnings() == []
