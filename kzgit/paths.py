"""The repository holding a path, found without running git.

:func:`discover` is git's own repository discovery where it can be read unambiguously (the
hooks' work tree and index, :func:`kzgit.gitio.repo_root`), and None where git could answer
otherwise; :func:`repository_top` answers for any path (whose configuration applies to it),
from :func:`discover`, else from the nearest ``.git`` upwards.  Kept free of imports beyond
``os`` and ``stat``: ``kzgit build`` asks it on every run (the repository's ``cache``
setting) before it knows whether it will build at all.
"""
from __future__ import annotations

import os
import stat

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Optional, Tuple


def repo_relative(message: str, repo: str) -> str:
    """Paths inside the repository ``repo`` written relative to its top in ``message``, as the
    hooks and ``kzgit diff`` name files (``base/kustomization.yaml``, not ``/home/.../base/...``)."""
    for top in sorted({repo, os.path.realpath(repo)}, key=len, reverse=True):
        message = message.replace(top.rstrip(os.sep) + os.sep, "")
    return message


def repository_top(path: str) -> Optional[str]:
    """The nearest directory at or above ``path`` holding ``.git`` (None outside a repository):
    git's work tree top where :func:`discover` can tell it, which is that same directory."""
    d = os.path.abspath(path)
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


# Environment variables that change where git finds the repository, its work tree or its
# configuration (git's environment.c and setup.c).
_STEERING = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
             "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS",
             "GIT_CONFIG_COUNT", "GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE")


def _steering_config(config: bytes) -> bool:
    """Whether a repository's configuration may move the work tree or pull in more
    configuration: any mention of ``worktree`` or ``include``, or ``bare`` set to anything
    but false (read as text, not parsed: a doubt sends the question to git)."""
    text = config.lower()
    if b"worktree" in text or b"include" in text:
        return True
    for line in text.splitlines():
        key, sep, value = line.partition(b"=")
        if key.strip() == b"bare" and (not sep or value.split(b"#")[0].split(b";")[0].strip()
                                       not in (b"false", b"no", b"off", b"0")):
            return True
    return False


def discover(cwd: str) -> "Optional[Tuple[str, str]]":
    """(work tree top, absolute index path) as git's repository discovery finds them from
    ``cwd`` (setup.c ``setup_git_directory_gently``: the nearest directory upwards holding a
    ``.git`` directory or ``gitdir:`` file), without running git; None whenever git's answer
    could be another (see :data:`_STEERING` and :func:`_plain_repository`): then ask git."""
    if any(v in os.environ for v in _STEERING):
        return None
    try:
        here = d = os.path.realpath(cwd)
        device = os.stat(d).st_dev
        while True:
            dotgit = os.path.join(d, ".git")
            try:
                st = os.lstat(dotgit)
            except FileNotFoundError:
                parent = os.path.dirname(d)
                if parent == d or os.stat(parent).st_dev != device:
                    return None   # no repository, or a file-system boundary: git says which
                d = parent
                continue
            if stat.S_ISDIR(st.st_mode):
                gitdir = dotgit
            elif stat.S_ISREG(st.st_mode):
                with open(dotgit, "rb") as f:
                    text = f.read(4096)
                if not text.startswith(b"gitdir: ") or len(text) >= 4096:
                    return None
                target = text[len(b"gitdir: "):].rstrip(b"\r\n")
                if not target or b"\n" in target:
                    return None
                gitdir = os.path.join(d, os.fsdecode(target))
            else:
                return None
            if ".git" in os.path.relpath(here, d).split(os.sep):
                return None   # inside the repository's own directory: no work tree there
            index = os.environ.get("GIT_INDEX_FILE")
            if index is not None and not os.path.isabs(index) and here != d:
                return None   # relative to the top or to here? git knows
            return _plain_repository(d, gitdir)
    except (OSError, ValueError):
        return None


def _plain_repository(top: str, gitdir: str) -> "Optional[Tuple[str, str]]":
    """(top, index) when ``gitdir`` is a plain repository of the work tree ``top``."""
    if os.stat(gitdir).st_uid != os.geteuid() or not os.path.isfile(os.path.join(gitdir, "HEAD")):
        return None
    if os.path.exists(os.path.join(gitdir, "commondir")):
        return None   # a linked work tree (git sets GIT_DIR in its hooks anyway)
    if os.path.exists(os.path.join(gitdir, "config.worktree")) \
            or not os.path.isdir(os.path.join(gitdir, "objects")):
        return None
    try:
        with open(os.path.join(gitdir, "config"), "rb") as f:
            config = f.read()
    except FileNotFoundError:
        config = b""
    if _steering_config(config):
        return None
    # a relative GIT_INDEX_FILE is here only when the run is at the top (discover)
    index = os.environ.get("GIT_INDEX_FILE") or os.path.join(gitdir, "index")
    return top, os.path.normpath(os.path.join(top, index))
