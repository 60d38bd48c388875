"""Remote references: git repositories and http(s) files, fetched once, cached, bounded, safe.

Public API (called by the build pipeline for ``resources``/``components``
entries):

* :func:`looks_remote` -- is this entry a URL kustomize would fetch?
* :func:`parse_repo_spec` / :class:`RepoSpec` -- kustomize's repo-URL grammar
  (api/internal/git/repospec.go).
* :func:`open_remote` -- bytes of an http(s) file, or a :class:`~kzgit.loader.Loader`
  rooted in a cached checkout of a git repository.

For ``kzgit localize``, which needs the commit a ref resolved to and a private
copy of every file: :func:`fresh_checkout` (an uncached checkout into a new
directory) and :func:`fetch_file` (a bounded http(s) GET).  For anything else
that runs git on the user's behalf: :func:`no_git_env`.

Differences from kustomize v5.5.0, all on purpose: checkouts are cached by
commit (kustomize re-clones on every build); refs and URL parts that git could
read as options are refused; only https/http/ssh/git/file transports; HTTP is
bounded (30 s, 64 MiB) and git commands time out with their process group
killed; credentials never appear in messages.
"""
from __future__ import annotations

import importlib
import os
import re
import weakref

from kzgit.errors import RemoteError
from kzgit.loader import ROOT_ONLY, DiskFS, Loader, is_within
from kzgit.remote._redact import redact
from kzgit.remote._repospec import RepoSpec, RepoSpecError, parse_repo_spec
from kzgit.versions import V5_8

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Optional, Union
    from kzgit.options import BuildOptions
    from kzgit.remote._cache import cache_info, cache_root, clear_cache, validate_spec
    from kzgit.remote._gitcli import no_git_env

# Every local build asks parse_repo_spec about its root; the cache and the git runner
# (subprocess, shutil, tempfile, hashlib, json) are imported only once a repository is
# touched, so a small local build does not pay for them at start-up.
_LAZY = {"cache_root": "kzgit.remote._cache", "validate_spec": "kzgit.remote._cache",
         "cache_info": "kzgit.remote._cache", "clear_cache": "kzgit.remote._cache",
         "no_git_env": "kzgit.remote._gitcli"}


def __getattr__(name: str) -> Any:
    """The names re-exported from the cache and git modules, imported on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

__all__ = ["RepoSpec", "RepoSpecError", "looks_remote", "is_http_url", "parse_repo_spec",
           "open_remote", "open_remote_repo", "redact", "cache_root", "cache_info", "clear_cache", "validate_spec",
           "cached_ref_kind", "fresh_checkout", "fetch_file", "no_git_env",
           "resolve_ref"]

# "<transport>::<address>" (git's remote-helper syntax: ext::, fd::, ...) or "<scheme>://".
_TRANSPORT_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)(::|://)")
_REPO_SCHEMES = ("https", "http", "ssh", "file")

# The raw URL of every remote loader, for kustomize's repo-URL cycle check
# (fileloader.go errIfRepoCycle); weak so finished builds free their loaders.
_REMOTE_RAW: "weakref.WeakKeyDictionary[Loader, str]" = weakref.WeakKeyDictionary()


def is_http_url(ref: str) -> bool:
    """kustomize's IsRemoteFile: ``url.Parse`` succeeds and the scheme is http or https."""
    m = _TRANSPORT_RE.match(ref)
    if not m or m.group(2) != "://" or m.group(1).lower() not in ("http", "https"):
        return False
    # url.Parse fails on control characters and malformed %-escapes
    if any(ord(c) < 32 or ord(c) == 127 for c in ref) or re.search(r"%(?![0-9A-Fa-f]{2})", ref):
        return False
    return True


def looks_remote(ref: str) -> bool:
    """True when ``ref`` is a remote reference: an http(s) file, a git repo URL kustomize
    accepts, or any ``<transport>::``/``<scheme>://`` form (the latter are refused by
    :func:`open_remote` instead of being read as a local path)."""
    if is_http_url(ref) or parse_repo_spec(ref) is not None:
        return True
    return bool(_TRANSPORT_RE.match(ref))


def cached_ref_kind(spec: RepoSpec, ref: Optional[str] = None) -> Optional[str]:
    """``"tag"`` or ``"branch"`` when kzgit's cache has resolved ``ref`` (default: ``spec.ref``)
    of this repository before, else ``None``.  Reads the cache only: no network, no process."""
    from kzgit.remote._cache import RepoCache   # start-up: loaded when a remote is fetched
    ref = spec.ref if ref is None else ref
    try:
        refs = RepoCache(spec).refs()
    except OSError:
        return None
    if ref in refs["tags"]:
        return "tag"
    if (ref or "HEAD") in refs["branches"]:
        return "branch"
    return None


def fresh_checkout(spec: RepoSpec, dest: str) -> str:
    """Check out ``spec`` at its ref into the new directory ``dest``; return the commit id.

    Not cached and not shared: the caller owns ``dest`` and removes it.  The
    steps are kustomize's (api/internal/git/cloner.go: ``git init``, ``git
    remote add``, ``git fetch --depth=1 origin <ref>``, ``git checkout
    FETCH_HEAD``, ``git submodule update --init --recursive``), run with the
    same hardening as the cache (scrubbed environment, pinned transports,
    ``spec.timeout``, process group killed on timeout or interrupt).  Refs that
    git would read as options are refused before ``dest`` is created.  Raises
    :class:`kzgit.errors.RemoteError`; messages never contain credentials.
    """
    from kzgit.remote import _gitcli   # start-up: loaded when a remote is fetched
    from kzgit.remote._cache import validate_spec   # start-up: loaded when a remote is fetched
    validate_spec(spec)   # refs that git would read as options are refused
    label = spec.redacted()
    auth = _gitcli.GitAuth(spec.clone_url())   # credentials for their own origin only
    os.makedirs(dest)
    t = spec.timeout

    def git(*args: str) -> str:
        return _gitcli.run_git(list(args), cwd=dest, timeout=t, label=label, auth=auth)

    git("init", "-q", ".")
    git("remote", "add", "origin", auth.url)
    git("fetch", "-q", "--depth=1", "origin", spec.ref or "HEAD")
    git("checkout", "-q", "FETCH_HEAD")
    if spec.submodules:
        git("submodule", "update", "-q", "--init", "--recursive")
    return git("rev-parse", "HEAD").strip()


def fetch_file(url: str, *, timeout: Optional[float] = None) -> bytes:
    """GET an http(s) file and return its body (kustomize's ``fileLoader.Load`` for URLs).

    Bounded: ``timeout`` seconds (default :data:`kzgit.remote._http.HTTP_TIMEOUT`)
    and :data:`~kzgit.remote._http.HTTP_MAX_BYTES`; redirects are followed to
    http(s) only.  Raises :class:`kzgit.errors.RemoteError` (for a non-2xx
    answer, no answer, or a too large or too slow body); messages never
    contain credentials.
    """
    from kzgit.remote import _http  # urllib/http.client: only when something is downloaded
    return _http.http_get(url, timeout=timeout)


def _refuse_transport(ref: str) -> None:
    m = _TRANSPORT_RE.match(ref)
    if not m:
        return
    name, sep = m.group(1).lower(), m.group(2)
    if sep == "::" and name == "git":  # go-getter's "git::" prefix, stripped by the parser
        return
    if sep == "://" and name in _REPO_SCHEMES:
        return
    raise RemoteError(
        f"refusing '{redact(ref)}': transport '{name}' is not allowed; "
        "only https, http, ssh and file repositories (and http(s) files) are fetched")


def _check_repo_cycle(parent: Optional[Loader], spec: RepoSpec) -> None:
    """fileloader.go errIfRepoCycle: a URL that prefixes an enclosing remote's URL is a cycle."""
    cur: Optional[Loader] = parent
    while cur is not None:
        raw = _REMOTE_RAW.get(cur)
        if raw is not None and raw.startswith(spec.raw):
            raise RemoteError(f"cycle detected: URI '{spec.redacted()}' referenced by previous "
                              f"URI '{redact(raw)}'")
        cur = cur.parent


def open_remote_repo(parent: Optional[Loader], ref: str, options: "BuildOptions") -> Loader:
    """A RootOnly :class:`Loader` at the kustomization root inside a cached checkout of ``ref``.

    Used directly when an http(s) URL's body turned out not to be YAML and the
    URL also parses as a repo (kusttarget.go accumulateResources tries the
    file first, then ``ldr.New``).
    """
    _refuse_transport(ref)
    try:
        spec = RepoSpec.parse(ref)
    except RepoSpecError as e:
        raise RemoteError(f"'{redact(ref)}' is not a git repository URL: {e}") from None
    _check_repo_cycle(parent, spec)
    from kzgit.remote._cache import checkout, validate_spec   # start-up: loaded when a remote is fetched
    validate_spec(spec)
    tree = os.path.realpath(checkout(spec, offline=bool(getattr(options, "offline", False))))
    want = os.path.normpath(os.path.join(tree, spec.path))
    if not os.path.lexists(want):
        raise RemoteError(f"'{spec.redacted()}': directory '{spec.path}' does not exist in the "
                          "repository")
    root = os.path.realpath(want)
    if not is_within(root, tree):  # a symlink in the repo can leave it (fileloader.go)
        raise RemoteError(f"'{spec.redacted()}': '{spec.path}' refers to a directory outside "
                          "of the repository")
    if not os.path.isdir(root):
        raise RemoteError(f"'{spec.redacted()}': '{spec.path}' refers to a file; expecting "
                          "a directory")
    # the cache is always on disk, whatever file system the build reads (kzgit diff)
    loader = Loader(root, DiskFS(), ROOT_ONLY, parent=parent, repo_root=tree,
                    remote_label=spec.redacted())
    _REMOTE_RAW[loader] = spec.raw
    return loader


def resolve_ref(spec: RepoSpec) -> Optional[str]:
    """The commit ``spec`` names now, as a build would resolve it (the remote cache's
    :func:`~kzgit.remote._cache.resolve`: a tag resolved within a minute is not asked again)."""
    from kzgit.remote._cache import resolve, validate_spec   # start-up: records with remotes only
    try:
        validate_spec(spec)
    except RemoteError:
        return None
    return resolve(spec, offline=False)


def open_remote(parent: Loader, ref: str, options: "BuildOptions") -> Union[Loader, bytes]:
    """Open a remote ``resources``/``components`` entry.

    * An http(s) URL is first fetched as a file and its bytes returned (bounded:
      :data:`kzgit.remote._http.HTTP_TIMEOUT`, :data:`~kzgit.remote._http.HTTP_MAX_BYTES`).
      If the server answers non-2xx (or not at all), or with an HTML page, and the
      URL also parses as a repo spec, it is fetched as a git repository, as
      kustomize does (fileloader.go httpClientGetContent: "URL is a git
      repository"; kusttarget.go accumulateResources).  Other bodies that turn
      out not to be YAML should be retried with :func:`open_remote_repo` by the
      caller when ``parse_repo_spec(ref)`` is not None.
    * A repo URL returns a RootOnly :class:`Loader` (see :func:`open_remote_repo`).

    Raises :class:`kzgit.errors.RemoteError`; messages never contain credentials.
    """
    offline = bool(getattr(options, "offline", False))
    if is_http_url(ref):
        spec = parse_repo_spec(ref)
        if offline:
            if spec is None:
                raise RemoteError(f"offline: cannot fetch '{redact(ref)}'",
                                  tip="run the build without --offline")
        else:
            from kzgit.remote import _http  # urllib/http.client: only for http(s) entries
            url = ref
            if options.kustomize_version >= V5_8:
                url = _http.request_uri(ref)
            try:
                body = _http.http_get(url, label=redact(ref))
            except (_http.HTTPStatusError, _http.HTTPTransportError):
                if spec is None:
                    raise
            else:
                # A web page (e.g. GitHub's HTML view of https://github.com/org/repo?ref=v1) is
                # never a resource: kustomize fails to read it as YAML and then clones the URL
                # (kusttarget.go accumulateResources: accumulateFile, then ldr.New).
                if spec is None or not body.lstrip()[:1] == b"<":
                    return body
    return open_remote_repo(parent, ref, options)
