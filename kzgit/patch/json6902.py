"""JSON 6902 patches with kustomize's behaviour (evanphx json-patch v4.12.0).

kustomize (``api/filters/patchjson6902/patchjson6902.go``) turns the resource
into JSON, applies ``gopkg.in/evanphx/json-patch.v4`` and reads the result back
through ``json.Unmarshal`` into ``map[string]interface{}`` and YAML.  That
library departs from RFC 6902 (and from the ``jsonpatch`` package) in ways
kustomize users see, so the operations are re-implemented here after
``patch.go`` at v4.12.0:

* ``replace`` of a missing object key adds it; ``copy`` from a missing key
  copies ``null``; negative array indices count from the end;
* a path without a leading ``/`` addresses a key of the root object;
* ``move`` error messages name the key, not the path;
* every number passes through float64 (``9223372036854775807`` becomes
  ``9223372036854776000``), then is printed by encoding/json and re-read as
  YAML: integral values below 1e21 come back as integers (when they fit
  int64/uint64), the rest as floats.

Errors are :class:`kzgit.errors.BuildError` whose text contains kustomize's.
"""
from __future__ import annotations

import contextlib
import json
import math
import re


from kzgit.errors import BuildError
from kzgit.yamlio.gostruct import go_json_kind
from kzgit.yamlio.tree import SharedStr, copy_tree

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, Iterator, List, Tuple

__all__ = ["apply"]

_MISSING: Any = object()


class _PatchError(Exception):
    """An evanphx error, message in its words."""


# --- numbers ---------------------------------------------------------------


def _to_float64(v: Any) -> Any:
    """Every JSON number becomes a Go float64 (``json.Unmarshal`` into interface{})."""
    if isinstance(v, dict):
        return {k: _to_float64(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_to_float64(x) for x in v]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        # JSON rebuilds every node: no value is shared with another place any more
        return str(v) if v.__class__ is SharedStr else v
    try:
        return float(v)
    except OverflowError:
        return math.copysign(math.inf, v)


# Below 2**53 every integer is a float64 and its shortest digits are its own, so int(v) is
# what encoding/json prints; above, the shortest digits are padded with zeros (Decimal).
_EXACT = float(2 ** 53)


def _from_float64(v: Any) -> Any:
    """float64 -> encoding/json text -> YAML value, as kyaml reads it back.

    encoding/json prints integral floats below 1e21 without exponent
    (shortest digits padded with zeros); YAML then reads an int when it fits
    int64 or uint64, else a float.
    """
    if isinstance(v, dict):
        return {k: _from_float64(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_from_float64(x) for x in v]
    if not isinstance(v, float) or math.isnan(v) or math.isinf(v):
        return v
    if v == int(v) and abs(v) < 1e21:
        if abs(v) < _EXACT:
            return int(v)
        from decimal import Decimal  # only large numbers need it: not imported at start-up
        n = int(Decimal(repr(v)))
        if -(2 ** 63) <= n < 2 ** 64:
            return n
    return v


def _go_json_text(v: Any) -> str:
    """Compact JSON text of a scalar as Go prints it (for ``test`` equality)."""
    if isinstance(v, float):
        if v == int(v) and abs(v) < 1e21:
            if abs(v) < _EXACT:
                return str(int(v))
            from decimal import Decimal  # only large numbers need it: not imported at start-up
            return str(int(Decimal(repr(v))))
        return repr(v)
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def _equal(a: Any, b: Any) -> bool:
    """``lazyNode.equal``: structural for objects/arrays, text for scalars."""
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)) or len(a) != len(b):
            return False
        return all(k in b and _equal(x, b[k]) for k, x in a.items())
    if isinstance(a, list) or isinstance(b, list):
        if not (isinstance(a, list) and isinstance(b, list)) or len(a) != len(b):
            return False
        return all(_equal(x, y) for x, y in zip(a, b))
    return _go_json_text(a) == _go_json_text(b)


# --- containers (patch.go partialDoc / partialArray) ----------------------


def _atoi(key: str) -> int:
    """Go ``strconv.Atoi``."""
    s = key[1:] if key[:1] in "+-" else key
    if not s or not s.isdigit() or not s.isascii():
        raise _PatchError(f'strconv.Atoi: parsing "{key}": invalid syntax')
    return int(key)


def _get(con: Any, key: str) -> Any:
    if isinstance(con, dict):
        return con.get(key, _MISSING)
    idx = _atoi(key)
    if idx < 0:
        if idx < -len(con):
            raise _PatchError(f"Unable to access invalid index: {idx}: invalid index referenced")
        idx += len(con)
    if idx >= len(con):
        raise _PatchError(f"Unable to access invalid index: {idx}: invalid index referenced")
    return con[idx]


def _set(con: Any, key: str, val: Any) -> None:
    if isinstance(con, dict):
        con[key] = val
        return
    idx = _atoi(key)
    if idx < 0:
        if idx < -len(con):
            raise _PatchError(f"Unable to access invalid index: {idx}: invalid index referenced")
        idx += len(con)
    con[idx] = val


def _add(con: Any, key: str, val: Any) -> None:
    if isinstance(con, dict):
        con[key] = val
        return
    if key == "-":
        con.append(val)
        return
    with _prefixed(f"value was not a proper array index: '{key}'"):
        idx = _atoi(key)
    size = len(con) + 1
    if idx >= size:
        raise _PatchError(f"Unable to access invalid index: {idx}: invalid index referenced")
    if idx < 0:
        if idx < -size:
            raise _PatchError(f"Unable to access invalid index: {idx}: invalid index referenced")
        idx += size
    con.insert(idx, val)


def _remove(con: Any, key: str) -> None:
    if isinstance(con, dict):
        if key not in con:
            raise _PatchError(f"Unable to remove nonexistent key: {key}: missing value")
        del con[key]
        return
    idx = _atoi(key)
    if idx >= len(con):
        raise _PatchError(f"Unable to access invalid index: {idx}: invalid index referenced")
    if idx < 0:
        if idx < -len(con):
            raise _PatchError(f"Unable to access invalid index: {idx}: invalid index referenced")
        idx += len(con)
    del con[idx]


_ESCAPE = re.compile("~[01]")


def _decode_key(k: str) -> str:
    # rfc6901Decoder is strings.NewReplacer("~1", "/", "~0", "~"): one pass, left to right
    return _ESCAPE.sub(lambda m: "/" if m.group() == "~1" else "~", k)


def _find_object(doc: Any, path: str) -> Tuple[Any, str]:
    """``findObject``: the container holding ``path``'s last key, or None."""
    split = path.split("/")
    if len(split) < 2:
        return None, ""
    cur = doc
    for part in split[1:-1]:
        try:
            nxt = _get(cur, _decode_key(part))
        except _PatchError:
            return None, ""
        if nxt is _MISSING or nxt is None or not isinstance(nxt, (dict, list)):
            return None, ""
        cur = nxt
    return cur, _decode_key(split[-1])


# --- operations ------------------------------------------------------------


def _path(op: Dict[str, Any], field: str = "path") -> str:
    if op.get(field) is None:
        if field == "path":
            raise _PatchError("operation missing path field: missing value")
        raise _PatchError("operation, missing from field: missing value")
    v = op[field]
    if not isinstance(v, str):
        raise _PatchError(f"json: cannot unmarshal {go_json_kind(v)} into Go value of type string")
    return v


def _decoded(op: Dict[str, Any], kind: str, field: str = "path", cause: bool = True) -> str:
    """``op``'s path or from, or evanphx's error for it: "<kind> operation failed to decode
    <field>: <cause>"; add, remove and copy's path say "missing value" whatever the cause."""
    try:
        return _path(op, field)
    except _PatchError as e:
        raise _PatchError(f"{kind} operation failed to decode {field}: "
                          f"{e if cause else 'missing value'}") from None


def _value(op: Dict[str, Any]) -> Any:
    return copy_tree(op.get("value"))


def _parent(doc: Any, path: str, missing: str, quoted: bool = False) -> Tuple[Any, Any]:
    """evanphx's findObject for ``path``; ``missing`` starts the error when its container is
    absent (add and remove quote the path there, the other operations do not: patch.go)."""
    con, key = _find_object(doc, path)
    if con is None:
        shown = f'"{path}"' if quoted else path
        raise _PatchError(f"{missing}: {shown}: missing value")
    return con, key


@contextlib.contextmanager
def _prefixed(prefix: str) -> Iterator[None]:
    """evanphx wraps an operation's failure as "<prefix>: <cause>" (errors.Wrapf in patch.go)."""
    try:
        yield
    except _PatchError as e:
        raise _PatchError(f"{prefix}: {e}") from None


def _apply_op(doc: Any, op: Dict[str, Any]) -> Any:
    """Apply one operation to ``doc`` (mutated); returns the new root."""
    # a null operation decodes to a nil map, whose Kind() is "unknown" (evanphx/json-patch)
    kind = op.get("op") if isinstance(op, dict) else None
    if not isinstance(kind, str):
        kind = "unknown"
    if kind == "add":
        path = _decoded(op, "add", cause=False)
        con, key = _parent(doc, path, "add operation does not apply: doc is missing path", quoted=True)
        with _prefixed(f"error in add for path: '{path}'"):
            _add(con, key, _value(op))
        return doc
    if kind == "remove":
        path = _decoded(op, "remove", cause=False)
        con, key = _parent(doc, path, "remove operation does not apply: doc is missing path", quoted=True)
        with _prefixed(f"error in remove for path: '{path}'"):
            _remove(con, key)
        return doc
    if kind == "replace":
        path = _decoded(op, "replace")
        if path == "":
            val = _value(op)
            if not isinstance(val, (dict, list)):
                raise _PatchError("replace operation value must be object or array")
            return val
        con, key = _parent(doc, path, "replace operation does not apply: doc is missing path")
        try:
            _get(con, key)
        except _PatchError:
            raise _PatchError(
                f"replace operation does not apply: doc is missing key: {path}: missing value") from None
        with _prefixed(f"error in remove for path: '{path}'"):
            _set(con, key, _value(op))
        return doc
    if kind == "test":
        path = _decoded(op, "test")
        if path == "":
            if "value" in op and _equal(doc, op["value"]):
                return doc
            raise _PatchError(f"testing value {path} failed: test failed")
        con, key = _parent(doc, path, "test operation does not apply: is missing path")
        with _prefixed(f"error in test for path: '{path}'"):
            val = _get(con, key)
        if val is _MISSING or val is None:
            if op.get("value") is None:
                return doc
            raise _PatchError(f"testing value {path} failed: test failed")
        if "value" not in op or not _equal(val, op["value"]):
            raise _PatchError(f"testing value {path} failed: test failed")
        return doc
    if kind in ("move", "copy"):
        # evanphx's move and copy differ only in their words, in removing the source, in copying
        # the value, and in how a bad destination path is reported (patch.go move/copy)
        frm = _decoded(op, kind, "from")
        con, key = _parent(doc, frm, f"{kind} operation does not apply: doc is missing from path")
        with _prefixed(f"error in move for path: '{key}'" if kind == "move"
                       else f"error in copy for from: '{frm}'"):
            val = _get(con, key)
            if kind == "move":
                _remove(con, key)
        path = _decoded(op, kind, cause=kind == "move")
        con, key = _parent(doc, path, f"{kind} operation does not apply: doc is missing destination path")
        if val is _MISSING:
            val = None
        elif kind == "copy":
            val = copy_tree(val)
        with _prefixed(f"error in move for path: '{path}'" if kind == "move"
                       else "error while adding value during copy"):
            _add(con, key, val)
        return doc
    raise _PatchError(f"Unexpected kind: {kind}")


def apply(obj: Dict[str, Any], ops: List[Dict[str, Any]], source: str) -> Dict[str, Any]:
    """Apply JSON 6902 ``ops`` to ``obj`` as kustomize does; ``obj`` is not modified.

    The result's numbers have been through float64 (see the module docstring).
    Raises :class:`BuildError` naming ``source`` and the failing operation.
    """
    doc: Any = _to_float64(obj)
    for i, op in enumerate(ops):
        try:
            doc = _apply_op(doc, _to_float64(op))
        except _PatchError as e:
            raise BuildError(
                f"{e}",
                tip=f"in JSON patch {source}, operation {i + 1}: {json.dumps(op, default=str)}",
            ) from None
    if not isinstance(doc, dict):
        raise BuildError(
            f"json: cannot unmarshal {go_json_kind(doc)} into Go value of type map[string]interface {{}}",
            tip=f"in JSON patch {source}")
    out: Dict[str, Any] = _from_float64(doc)
    return out
