"""Parses kept in the render cache, keyed by what they read (:func:`parsed`).

Discovery parses the same files on every run: each YAML file naming an application's API
group, the kustomizations that list patches, the kustomizations applications deploy.  What
such a parse gives is a function of the file's name and bytes (and of kzgit's code), so an
entry keyed by every file's git blob id is never stale: a file changed makes another key.
"""
from __future__ import annotations

import json

from kzgit.sha import sha256

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, List, Optional, Set, Tuple
    from kzgit.rendercache import Store

# the layout of an entry of parses (:func:`parsed`)
PARSED_FORMAT = 1


def parsed(store: Optional[Store], flavour: str, files: List[Tuple[str, bytes]],
           parse: Callable[[str, bytes], Any],
           blob_of: Optional[Callable[[str], Optional[str]]] = None) -> List[Any]:
    """``parse(name, data)`` of each of ``files``; with the render cache ``store``, from an
    entry of it when one holds them.

    The entry's key is ``flavour`` with every file's name and git blob id, kzgit's code,
    Python, PyYAML and the environment (:func:`kzgit.rendercache.cache_key`): the answer is a
    function of that key alone, so an entry is never stale, and any change of a file makes
    another key.  What JSON would not give back as it is (a key that is not a string, a value
    of another type, an object shared by a YAML alias) is not stored.  ``blob_of``: a file's
    blob id where the caller knows it (it must be that of the bytes given)."""
    if store is None or not files:
        return [parse(name, data) for name, data in files]
    from kzgit.options import BuildOptions   # start-up: only runs with the render cache
    from kzgit.rendercache import cache_key   # start-up: as above
    from kzgit.rendercache.reads import blob_id   # start-up: as above
    listing = [[name, (blob_of(name) if blob_of is not None else None) or blob_id(data)]
               for name, data in files]
    key = sha256(json.dumps([flavour, PARSED_FORMAT, cache_key("/", BuildOptions(), flavour),
                             listing]).encode("utf-8", "surrogateescape")).hexdigest()
    cached = store.lookup(key, lambda _, payload: _json_list(payload, len(files)))
    if cached is not None:
        return cached
    results = [parse(name, data) for name, data in files]
    if json_faithful(results, set()):
        store.write(key, {"trace": None}, json.dumps(results).encode("utf-8"))
    return results


def _json_list(payload: bytes, length: int) -> Optional[List[Any]]:
    """The list of ``length`` items an entry holds as JSON (None: not one)."""
    try:
        got = json.loads(payload.decode("utf-8"))
    except ValueError:
        return None
    return got if isinstance(got, list) and len(got) == length else None


def json_faithful(value: Any, seen: Set[int]) -> bool:
    """Whether ``json.loads(json.dumps(value))`` gives ``value`` back, types and all, with no
    container reached twice (a YAML alias shares one object: JSON would copy it)."""
    t = type(value)
    if t is str or t is int or t is float or t is bool or value is None:
        return True
    if t is dict or t is list:
        if id(value) in seen:
            return False
        seen.add(id(value))
        if t is dict:
            return all(type(k) is str and json_faithful(v, seen) for k, v in value.items())
        return all(json_faithful(v, seen) for v in value)
    return False
