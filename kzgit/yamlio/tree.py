"""Copying loaded documents.

Loaded YAML is plain ``dict``/``list`` trees over immutable scalars, so a
structural copy is all a deep copy has to do.  ``copy.deepcopy`` keeps a memo
of every object for shared references and costs several times more; on a
3,000-resource build the copies made for patches and cached bases are on the
hot path.  Aliased nodes become independent copies, which is what a later
in-place edit of one of them needs (kyaml expands aliases before editing).
"""
from __future__ import annotations

from typing import Any


def copy_tree(value: Any) -> Any:
    """A copy of ``value`` sharing no dict or list with it."""
    if isinstance(value, dict):
        return {k: (copy_tree(v) if isinstance(v, _CONTAINERS) else v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_tree(v) if isinstance(v, _CONTAINERS) else v for v in value]
    return value


_CONTAINERS = (dict, list)
