"""The checkout cache: one directory per repository, one checkout per resolved commit.

Layout under :func:`cache_root` (``$KZGIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/kzgit``,
else ``~/.cache/kzgit``)::

    git/<sha256(clone URL)[:32]>/
        url            the clone URL, redacted (for people browsing the cache)
        .lock          flock()ed while a fetch of this repository runs
        refs.json      {"tags": {ref: commit}, "branches": {ref: commit}}
        trees/<commit>-<s|n>/   a complete checkout (s: with submodules, n: without),
                       without ``.git`` (which would keep the URL and its credentials)
        tmp/           work directories, renamed into trees/ when complete

A checkout appears in ``trees/`` only by an atomic ``rename``, so a reader that
sees it sees all of it; writers take the lock and re-check after locking
(pre-commit store.py).  Only a full commit id resolves from the cache with no
network: tags, like branches (and HEAD), are re-resolved with ``git ls-remote`` on
every online build, as kustomize resolves them on every build, except in the hooks, which
reuse a resolution younger than a minute (:data:`REUSE_ENV`: the hooks of one pre-commit
run, each a process, ask once) (a tag can be moved; `kzgit localize` and `kzgit rebuild` resolve it again too, and all
three must agree).
The last resolution serves ``--offline`` builds.  A failed fetch leaves nothing of
a repository the cache did not hold before.
kustomize itself has no cache: it clones into a temp dir on every build
(api/internal/git/cloner.go; issues #1132, #1431, #2460).
"""
from __future__ import annotations

import contextlib
import errno
try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from typing import Any, Dict, Iterator, Optional, Tuple

from kzgit.atomic import write_atomic
from kzgit.cachedir import cache_root
from kzgit.errors import RemoteError
from kzgit.remote._gitcli import ALLOWED_PROTOCOLS, GitAuth, run_git
from kzgit.remote._redact import redact, userinfo
from kzgit.remote._repospec import RepoSpec

_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
#: Longest wait for another kzgit process holding a repository's lock, in seconds.
LOCK_WAIT = 600.0
#: How long a tag or branch resolved on its remote is not asked again: 0, as kustomize
#: resolves on every build, unless the environment variable :data:`REUSE_ENV` says otherwise
#: (the hooks set it to 60: the hooks of one pre-commit run, each its own process with its
#: own workers, resolve a tag-pinned base once; a tag moved on the remote is seen a minute later).
RESOLVED_FOR = 0.0
REUSE_ENV = "KZGIT_REUSE_RESOLVED_REFS"


def _reuse_for() -> float:
    try:
        return max(RESOLVED_FOR, float(os.environ.get(REUSE_ENV, "0")))
    except ValueError:
        return RESOLVED_FOR


def _lock_nb(fd: int) -> None:
    """Take an exclusive lock on ``fd`` or raise OSError(EAGAIN); released by closing ``fd``."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    import msvcrt  # pragma: no cover - Windows
    try:  # pragma: no cover
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    except OSError:  # pragma: no cover
        raise OSError(errno.EAGAIN, "locked") from None


@contextlib.contextmanager
def _repo_lock(repo_dir: str, wait: float, label: str) -> Iterator[None]:
    """Hold the lock of one repository's cache directory (``.lock``, flock) for the block."""
    fd = os.open(os.path.join(repo_dir, ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                _lock_nb(fd)
                break
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() > deadline:
                    raise RemoteError(f"timed out after {wait:g}s waiting for another kzgit "
                                      f"process fetching {label} (lock {repo_dir}/.lock)") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing releases the flock


def validate_spec(spec: RepoSpec) -> None:
    """Refuse, before anything runs, refs and URL parts that git could read as options.

    kustomize 5.5 passes ``?ref=`` to ``git fetch`` unchecked, so
    ``?ref=--upload-pack=<cmd>`` runs ``<cmd>`` (reproduced with kubectl v1.32).
    """
    label = spec.redacted()
    ref = spec.ref
    if ref:
        why = None
        if ref.startswith("-"):
            why = "it starts with '-' and would be read as a git option"
        elif ref.startswith("+") or ":" in ref or "*" in ref:
            why = "a ref may not contain ':' or '*' or start with '+' (it would be a refspec)"
        elif any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in ref):
            why = "it contains whitespace or control characters"
        elif ".." in ref or ref.endswith((".lock", "/", ".")) or "@{" in ref or "\\" in ref:
            why = "it is not a valid git ref name"
        if why:
            raise RemoteError(f"refusing ref '{redact(ref)}' of '{label}': {why}")
    url = spec.clone_url()
    if any(ord(c) < 32 or ord(c) == 127 for c in url):
        raise RemoteError(f"refusing '{label}': the URL contains control characters")
    after_scheme = url.split("://", 1)[1] if "://" in url else url
    host_part = after_scheme.split("@", 1)[1] if "@" in after_scheme.split("/", 1)[0] else after_scheme
    for part in (after_scheme, host_part, spec.org_repo, spec.path):
        if part.startswith("-"):
            raise RemoteError(f"refusing '{label}': a URL part starts with '-' "
                              "and would be read as an option")


class RepoCache:
    """The cache directory of one repository (see the module docstring)."""

    def __init__(self, spec: RepoSpec, root: Optional[str] = None) -> None:
        self.spec = spec
        self.label = spec.redacted()
        self.root = root or cache_root()
        key = hashlib.sha256(spec.clone_url().encode("utf-8", "surrogateescape")).hexdigest()[:32]
        self.dir = os.path.join(self.root, "git", key)
        self.trees = os.path.join(self.dir, "trees")
        self.flavour = "s" if spec.submodules else "n"
        self.secrets = [userinfo(spec.clone_url())]
        #: the URL git is given, and the credentials for its origin only
        self.auth = GitAuth(spec.clone_url())

    # -- reading ---------------------------------------------------------------------------
    def tree(self, commit: str) -> str:
        return os.path.join(self.trees, f"{commit}-{self.flavour}")

    def cached_tree(self, commit: Optional[str]) -> Optional[str]:
        if commit and os.path.isdir(self.tree(commit)):
            return self.tree(commit)
        return None

    def refs(self) -> Dict[str, Dict[str, Any]]:
        try:
            with open(os.path.join(self.dir, "refs.json"), encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            data = {}
        # "resolved": when each "<kind>:<ref>" was last resolved on the remote (epoch seconds)
        return {"tags": dict(data.get("tags", {})), "branches": dict(data.get("branches", {})),
                "resolved": dict(data.get("resolved", {}))}

    def recently_resolved(self, ref: str, now: float) -> Optional[str]:
        """The commit ``ref`` resolved to on the remote recently enough to reuse
        (:data:`REUSE_ENV`; never, by default), else None."""
        refs = self.refs()
        for kind in ("tags", "branches"):
            commit = refs[kind].get(ref or "HEAD")
            when = refs["resolved"].get(f"{kind}:{ref or 'HEAD'}")
            if commit and isinstance(when, (int, float)) and 0 <= now - when < _reuse_for():
                return str(commit)
        return None

    def lookup_immutable(self, ref: str) -> Optional[str]:
        """A checkout for a full commit id already cached, else None (no network)."""
        return self.cached_tree(ref) if _FULL_SHA.fullmatch(ref) else None

    def lookup_offline(self, ref: str) -> Optional[str]:
        """The checkout of ``ref``'s last resolution (a commit id, a tag or a branch)."""
        hit = self.lookup_immutable(ref)
        if hit:
            return hit
        refs = self.refs()
        return self.cached_tree(refs["tags"].get(ref) or refs["branches"].get(ref or "HEAD"))

    def forget_if_empty(self) -> None:
        """Remove the repository's directory when it holds no checkout and no resolved ref
        (what a failed first fetch or ls-remote leaves: its lock, url and tmp/)."""
        if os.path.isdir(self.trees) and os.listdir(self.trees):
            return
        if os.path.exists(os.path.join(self.dir, "refs.json")):
            return
        shutil.rmtree(self.dir, ignore_errors=True)
        with contextlib.suppress(OSError):
            os.rmdir(os.path.dirname(self.dir))   # git/, when this was its only repository

    # -- writing (under the lock) ------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self, wait: float = LOCK_WAIT) -> Iterator[None]:
        os.makedirs(self.dir, exist_ok=True)
        with _repo_lock(self.dir, wait, f"'{self.label}'"):
            url_file = os.path.join(self.dir, "url")
            if not os.path.exists(url_file):
                with open(url_file, "w", encoding="utf-8") as f:
                    f.write(redact(self.spec.clone_url()) + "\n")
            yield

    def record(self, kind: str, ref: str, commit: str) -> None:
        """Remember ``ref`` -> ``commit`` (call with the lock held); atomic replace."""
        data = self.refs()
        data[kind][ref] = commit
        data["resolved"][f"{kind}:{ref}"] = time.time()
        write_atomic(os.path.join(self.dir, "refs.json"), json.dumps(data, indent=1, sort_keys=True))

    # -- network -----------------------------------------------------------------------------
    def ls_remote(self, ref: str) -> Tuple[Optional[str], str]:
        """Resolve ``ref`` on the remote as git fetch would: (commit or None, 'tags'|'branches')."""
        # an empty directory of its own outside the cache: ls-remote runs without the lock, and
        # another process's failed first fetch removes this repository's cache directory
        # (forget_if_empty) under it; out of any repository, so no repository config applies
        tmp = tempfile.mkdtemp(prefix="kzgit-ls-remote-")
        try:
            out = run_git(["ls-remote", "--", self.auth.url, ref or "HEAD"], cwd=tmp,
                          timeout=self.spec.timeout, label=self.label,
                          secrets=self.secrets, auth=self.auth)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        found: Dict[str, str] = {}
        for line in out.splitlines():
            sha, _, name = line.partition("\t")
            found[name.strip()] = sha.strip()
        if not ref:
            return found.get("HEAD"), "branches"
        # git's rev-parse rules for a short name: refs/<n>, refs/tags/<n>, refs/heads/<n>
        for name, kind in ((ref, "branches"), (f"refs/{ref}", "branches"),
                           (f"refs/tags/{ref}", "tags"), (f"refs/heads/{ref}", "branches")):
            if name in found:
                if kind == "tags" or name.startswith("refs/tags/"):
                    return found.get(name + "^{}", found[name]), "tags"
                return found[name], kind
        return None, "branches"

    def fetch(self, ref: str, commit: Optional[str] = None) -> str:
        """Fetch ``ref`` (kustomize's init/remote add/fetch --depth=1/checkout/submodule update)
        into the cache; return the checkout directory.  Takes the lock.  ``commit``: what
        ``ref`` resolved to just before, so a checkout another process made meanwhile is used."""
        spec = self.spec
        url = self.auth.url
        with self.locked():
            hit = self.lookup_immutable(ref) or self.cached_tree(commit)
            if hit:
                return hit
            self._remove_stale_work_dirs()
            work = self._tmpdir()
            try:
                def run(*a: str) -> str:
                    return run_git(list(a), cwd=work, timeout=spec.timeout, label=self.label,
                                   secrets=self.secrets, auth=self.auth)

                run("init", "--quiet")
                # relative submodule URLs need an origin (kustomize #5131)
                run("remote", "add", "origin", "--", url)
                run("fetch", "--depth=1", "--no-tags", "--", url, ref or "HEAD")
                commit = run("rev-parse", "--verify", "--end-of-options", "FETCH_HEAD^{commit}").strip()
                with open(os.path.join(work, ".git", "FETCH_HEAD"), encoding="utf-8",
                          errors="replace") as f:
                    is_tag = "\ttag '" in f.read()
                final = self.tree(commit)
                if not os.path.isdir(final):
                    run("checkout", "--quiet", "FETCH_HEAD")
                    if spec.submodules and os.path.exists(os.path.join(work, ".gitmodules")):
                        self._submodules(work)
                    _strip_git_metadata(work)
                    os.makedirs(self.trees, exist_ok=True)
                    os.rename(work, final)
                if ref and not _FULL_SHA.fullmatch(ref):
                    self.record("tags" if is_tag else "branches", ref, commit)
                elif not ref:
                    self.record("branches", "HEAD", commit)
                return final
            finally:
                shutil.rmtree(work, ignore_errors=True)

    def _submodules(self, work: str) -> None:
        """``git submodule update --init --recursive`` (kustomize's default), with file://
        and ext:: submodule transports refused unless the parent itself is file://."""
        spec = self.spec
        if spec.is_file:
            protocols: Tuple[str, ...] = ALLOWED_PROTOCOLS
            config: Tuple[str, ...] = ("protocol.file.allow=always",)
        else:
            protocols = tuple(p for p in ALLOWED_PROTOCOLS if p != "file")
            config = ("protocol.file.allow=never",)
        # no --depth: a pinned submodule commit need not be a branch tip (kustomize: none either)
        run_git(["submodule", "--quiet", "update", "--init", "--recursive"],
                cwd=work, timeout=spec.timeout, label=self.label, config=config,
                protocols=protocols, secrets=self.secrets, auth=self.auth)

    def _remove_stale_work_dirs(self, age: float = 3600.0) -> None:
        """Work dirs left by a kzgit that was killed mid-fetch (call with the lock held;
        ls-remote dirs live for seconds, so anything older than ``age`` is stale)."""
        tmp = os.path.join(self.dir, "tmp")
        now = time.time()
        for name in os.listdir(tmp) if os.path.isdir(tmp) else []:
            p = os.path.join(tmp, name)
            try:
                if now - os.lstat(p).st_mtime > age:
                    shutil.rmtree(p, ignore_errors=True)
            except OSError:
                pass

    def _tmpdir(self) -> str:
        tmp = os.path.join(self.dir, "tmp")
        os.makedirs(tmp, exist_ok=True)
        return tempfile.mkdtemp(dir=tmp)


def _strip_git_metadata(work: str) -> None:
    """Drop ``.git`` (directories and submodule gitfiles) from a finished checkout.

    The cache keeps files, not repositories: ``.git/config`` and ``FETCH_HEAD``
    hold the clone URL, credentials included, and nothing reads them later
    (the commit is the directory's name).
    """
    for dirpath, dirnames, filenames in os.walk(work):
        if ".git" in dirnames:
            shutil.rmtree(os.path.join(dirpath, ".git"))
            dirnames.remove(".git")
        if ".git" in filenames:
            os.remove(os.path.join(dirpath, ".git"))


def checkout(spec: RepoSpec, *, offline: bool, root: Optional[str] = None) -> str:
    """The cached checkout directory for ``spec`` (fetching it unless ``offline``)."""
    validate_spec(spec)
    cache = RepoCache(spec, root)
    ref = spec.ref
    hit = cache.lookup_immutable(ref)
    if hit:
        return hit
    if offline:
        hit = cache.lookup_offline(ref)
        if hit:
            return hit
        raise RemoteError(
            f"offline: '{spec.redacted()}' at ref '{ref or 'HEAD'}' is not in the kzgit cache "
            f"({cache.root})", tip="run the build once without --offline to fill the cache")
    try:
        commit: Optional[str] = None
        if not _FULL_SHA.fullmatch(ref):
            hit = cache.cached_tree(cache.recently_resolved(ref, time.time()))
            if hit:
                return hit
            commit, kind = cache.ls_remote(ref)
            hit = cache.cached_tree(commit)
            if hit and commit:
                with cache.locked():
                    cache.record(kind, ref or "HEAD", commit)
                return hit
        return cache.fetch(ref, commit)
    except BaseException:
        with contextlib.suppress(OSError, RemoteError):
            with cache.locked(wait=1.0):
                cache.forget_if_empty()
        raise


def resolve(spec: RepoSpec, offline: bool, root: Optional[str] = None) -> Optional[str]:
    """The commit ``spec``'s ref names now, as :func:`checkout` would resolve it (a full commit
    id is itself; a tag or branch resolved recently enough (:data:`REUSE_ENV`) is not asked
    again; ``offline``: its last resolution), or None when it cannot be known."""
    if _FULL_SHA.fullmatch(spec.ref):
        return spec.ref
    cache = RepoCache(spec, root)
    recent = cache.recently_resolved(spec.ref, time.time())
    if recent or offline:
        return recent or (os.path.basename(cache.lookup_offline(spec.ref) or "").split("-", 1)[0] or None)
    try:
        commit, kind = cache.ls_remote(spec.ref)
    except RemoteError:
        return None
    if commit and cache.cached_tree(commit):
        with cache.locked():
            cache.record(kind, spec.ref or "HEAD", commit)
    return commit


def _git_dir(root: Optional[str]) -> str:
    return os.path.join(root or cache_root(), "git")


def _checkouts(repo_dir: str) -> int:
    trees = os.path.join(repo_dir, "trees")
    return len(os.listdir(trees)) if os.path.isdir(trees) else 0


def cache_info(root: Optional[str] = None) -> Dict[str, Any]:
    """Where the remote checkouts are, how many repositories and checkouts, and their bytes."""
    top = _git_dir(root)
    repos = [os.path.join(top, d) for d in sorted(os.listdir(top))] if os.path.isdir(top) else []
    size = 0
    for dirpath, _, filenames in os.walk(top):
        for name in filenames:
            with contextlib.suppress(OSError):
                size += os.lstat(os.path.join(dirpath, name)).st_size
    return {"path": top, "repositories": len(repos),
            "checkouts": sum(_checkouts(r) for r in repos), "bytes": size}


def clear_cache(root: Optional[str] = None) -> int:
    """Remove every remote checkout and resolved ref, each repository under its lock (a build
    fetching it meanwhile finishes first); the number of checkouts removed."""
    top = _git_dir(root)
    removed = 0
    for name in sorted(os.listdir(top)) if os.path.isdir(top) else []:
        repo_dir = os.path.join(top, name)
        with _repo_lock(repo_dir, LOCK_WAIT, repo_dir):
            removed += _checkouts(repo_dir)
            shutil.rmtree(repo_dir, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.rmdir(top)
    return removed
