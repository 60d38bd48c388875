"""Downloads for localize: git clones at a ref and http(s) files.

A thin adapter over :mod:`kzgit.remote` (URL parsing, hardened ``git``,
bounded HTTP).  Localize needs two things the build cache does not give: the
commit a ref resolved to (for the lock file) and a private checkout per run
(localize reads every file of a root, and must never execute or trust a
shared, mutable cache).  Clones go into the run's work directory and are
removed with it.

The checkout itself is :func:`kzgit.remote.fresh_checkout` (kustomize's steps
from ``api/internal/git/cloner.go``).
"""
from __future__ import annotations

import dataclasses
import os
from typing import Dict, Optional, Tuple

from kzgit.errors import RemoteError
from kzgit.remote import RepoSpec, fetch_file as _remote_fetch_file, fresh_checkout, parse_repo_spec

__all__ = ["RepoSpec", "parse_repo_spec", "Clone", "Cloner", "fetch_file"]


@dataclasses.dataclass(frozen=True)
class Clone:
    """A checked-out repository: where it is and what the ref resolved to."""

    clone_url: str
    ref: str
    commit: str
    dir: str


class Cloner:
    """Clones each (repository, ref) once per localize run, under ``work_dir``."""

    def __init__(self, work_dir: str) -> None:
        self.work_dir = work_dir
        self._clones: Dict[Tuple[str, str], Clone] = {}

    def clone(self, spec: RepoSpec) -> Clone:
        """Check out ``spec`` at its ref (cached for the run)."""
        key = (spec.clone_url(), spec.ref)
        if key in self._clones:
            return self._clones[key]
        d = os.path.join(self.work_dir, "repo-%d" % len(self._clones))
        commit = fresh_checkout(spec, d)
        c = Clone(spec.clone_url(), spec.ref, commit, os.path.realpath(d))
        self._clones[key] = c
        return c


def fetch_file(url: str, timeout: Optional[float] = None) -> bytes:
    """GET a remote file (kustomize's ``fileLoader.Load`` for http(s) paths)."""
    try:
        return _remote_fetch_file(url, timeout=timeout)
    except RemoteError:
        raise
    except OSError as e:  # pragma: no cover - http_get maps transport errors itself
        raise RemoteError(f"unable to fetch '{url}': {e}") from None
