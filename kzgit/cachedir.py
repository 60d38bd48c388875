"""Where kzgit keeps its caches: remote checkouts (:mod:`kzgit.remote`) and renders
(:mod:`kzgit.rendercache`).

A module of its own, importing only ``os``: a ``kzgit build`` answered from the render
cache needs this path and nothing of the remote machinery.
"""
from __future__ import annotations

import os


def cache_root() -> str:
    """Where kzgit caches: ``$KZGIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/kzgit``, else ``~/.cache/kzgit``."""
    explicit = os.environ.get("KZGIT_CACHE_DIR")
    if explicit:
        return os.path.abspath(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = xdg if xdg and os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "kzgit")
