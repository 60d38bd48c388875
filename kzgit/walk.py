"""The files of a directory tree as git sees them, for commands that scan "the repository".

Inside a git work tree that is what git tracks or would add (``git ls-files --cached
--others --exclude-standard``).  Outside one (an exported tarball, a directory that
holds several checkouts) a walk of everything would wander into ``.cache/pre-commit``,
virtualenvs and sibling repositories: there hidden directories are skipped, and git
itself, run with a throw-away repository directory whose work tree is the directory,
says which files its ``.gitignore`` files and the user's excludes leave out.  Nothing
is written into the directory.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from typing import Dict, List

from kzgit import gitio
from kzgit.errors import KzgitError

# Variables that would point git at another repository, index or object store than the one
# this module chooses; configuration variables (GIT_CONFIG_GLOBAL ...) are kept, since they
# choose the user's excludes as they do for git itself.
_LOCATING = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
             "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
             "GIT_PREFIX", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM")


def in_work_tree(root: str) -> bool:
    """Whether ``root`` lies inside a git work tree."""
    try:
        out = gitio.git(["rev-parse", "--is-inside-work-tree"], root)
    except KzgitError:
        return False
    return out.strip() == b"true"


def tree_files(root: str) -> List[str]:
    """Repo-relative ('/'-separated) files under ``root`` that belong to the project, sorted:
    inside a git work tree those git tracks or would add; outside one every file that is not
    under a hidden directory and that no ``.gitignore`` excludes."""
    if in_work_tree(root):
        # a trailing '/' is a nested repository git does not descend into
        return sorted(f for f in gitio.worktree_files(root) if not f.endswith("/"))
    return _plain_files(root)


def _plain_files(root: str) -> List[str]:
    scratch = tempfile.mkdtemp(prefix="kzgit-walk-")
    try:
        git_dir = os.path.join(scratch, "git")
        env: Dict[str, str] = {k: v for k, v in os.environ.items() if k not in _LOCATING}
        gitio.git(["init", "--quiet", "--bare", "--template=", git_dir], scratch, env=env)
        env.update(GIT_DIR=git_dir, GIT_WORK_TREE=os.path.abspath(root))
        listed = gitio.git(["-c", "core.bare=false", "ls-files", "-z", "--others",
                            "--exclude-standard"], root, env=env)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    out = []
    for rel in listed.decode("utf-8", "surrogateescape").split("\0"):
        # a trailing '/' is a nested repository git does not descend into
        if not rel or rel.endswith("/"):
            continue
        if any(part.startswith(".") for part in rel.split("/")[:-1]):
            continue
        out.append(rel)
    return sorted(out)
