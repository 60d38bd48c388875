"""The repository holding a path: whose configuration applies to it.

Kept free of imports beyond ``os``: ``kzgit build`` asks it on every run (the
repository's ``cache`` setting) before it knows whether it will build at all.
"""
from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Optional


def repository_top(path: str) -> Optional[str]:
    """The nearest directory at or above ``path`` holding ``.git`` (None outside a repository)."""
    d = os.path.abspath(path)
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent
