"""Field specs and the walker that applies a function at every matching field.

Semantics of api/filters/fieldspec/fieldspec.go (kustomize api/v0.18.0):
the spec's group/version/kind select objects by their *current* apiVersion and
kind (empty = any); the path is split on ``/`` (``\\/`` escapes a slash); a
sequence met on the way applies the rest of the path to every element; with
``create`` missing maps (and the final field) are created, and a ``null``
value on the path is turned into the kind being created.
"""
from __future__ import annotations

import functools

from kzgit.errors import BuildError
from kzgit.resource import split_api_version
from kzgit.resource._tuples import FieldSpecFields
from kzgit.yamlio.tree import SpelledDict, spelled

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, Iterable, List, Optional

    Setter = Callable[[Any], Any]

MAP = "map"
SCALAR = "scalar"


@functools.lru_cache(maxsize=4096)
def split_path(path: str) -> List[str]:
    """kyaml utils.PathSplitter with '/': a backslash escapes the delimiter (cached; callers must not mutate)."""
    if "\\" not in path:
        return path.split("/")   # no escape: the same segments, empty ones included
    out, cur, i = [], [], 0
    while i < len(path):
        c = path[i]
        if c == "\\" and i + 1 < len(path) and path[i + 1] == "/":
            cur.append("/")
            i += 2
            continue
        if c == "/":
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    out.append("".join(cur))
    return out


class FieldSpec(FieldSpecFields):
    __slots__ = ()

    @classmethod
    def from_row(cls, row: list) -> "FieldSpec":
        return cls(row[0], row[1], row[2], row[3], bool(row[4]))

    @classmethod
    def from_dict(cls, d: Dict[str, Any], where: str = "") -> "FieldSpec":
        if not isinstance(d, dict):
            raise BuildError(f"{where}: a field spec must be a mapping, got {d!r}")
        g = d.get("group") or ""
        v = d.get("version") or ""
        return cls(str(g), str(v), str(d.get("kind") or ""), str(d.get("path") or ""),
                   bool(d.get("create", False)))

    def matches(self, obj: Dict[str, Any]) -> bool:
        kind = obj.get("kind")
        if self.kind and self.kind != kind:
            return False
        if self.group or self.version:
            av = obj.get("apiVersion")
            g, v = split_api_version(av if isinstance(av, str) else "")
            if self.group and self.group != g:
                return False
            if self.version and self.version != v:
                return False
        return True

    def gvk_key(self) -> tuple:
        return (self.group, self.version, self.kind)


def rows_to_specs(rows: Iterable[list]) -> List[FieldSpec]:
    return [FieldSpec.from_row(r) for r in rows]


def merge_specs(base: List[FieldSpec], extra: Iterable[FieldSpec]) -> List[FieldSpec]:
    """types.FsSlice.MergeAll: union by (gvk, path); same key with other ``create`` is an error."""
    out = list(base)
    index = {(fs.gvk_key(), fs.path): fs for fs in out}
    for fs in extra:
        k = (fs.gvk_key(), fs.path)
        old = index.get(k)
        if old is None:
            index[k] = fs
            out.append(fs)
        elif old.create != fs.create:
            raise BuildError(f"conflicting fieldspecs: {old} and {fs}")
    return out


def apply_fieldspec(obj: Dict[str, Any], fs: FieldSpec, fn: Setter, create_kind: Optional[str] = None,
                    resource_desc: Any = "", texts: bool = True) -> None:
    """Call ``fn(old) -> new`` at every field ``fs`` selects in ``obj`` (when its gvk matches).

    ``resource_desc`` names the resource in errors; a callable is only called on error.
    ``old`` is a plain scalar's text as written where it differs from its value (kyaml
    filters read the text), unless ``texts`` is False: then always the loaded value."""
    if not fs.matches(obj):
        return
    segs = split_path(fs.path)
    try:
        _walk(obj, segs, 0, fs.create, create_kind, fn, texts)
    except BuildError as e:
        desc = resource_desc() if callable(resource_desc) else resource_desc
        raise BuildError(f"considering field '{fs.path}' of object {desc}: {e}") from None


def _walk(node: Any, segs: List[str], i: int, create: bool, create_kind: Optional[str], fn: Setter,
          texts: bool = True) -> None:
    if node is None:
        return
    if isinstance(node, list):
        for el in node:
            _walk(el, segs, i, create, create_kind, fn, texts)
        return
    if not isinstance(node, dict):
        raise BuildError("expected sequence or mapping node")
    seg = segs[i]
    is_seq = seg.endswith("[]")
    name = seg[:-2] if is_seq else seg
    if not name:
        raise BuildError("cannot set or create an empty field name")
    last = i == len(segs) - 1
    if name != name.strip():
        # the lookup is a kyaml PathGetter, whose cleanPath (kyaml/yaml/match.go) trims each
        # element and drops a blank one: a folded "spec/config\n" finds spec.config, and a
        # blank element looks up the node itself
        name = name.strip()
        if not name:
            if not last:
                _walk(node, segs, i + 1, create, create_kind, fn, texts)
                return
            new = fn(node)   # the setter meets this mapping itself
            if new is not node:
                # (a setter refuses a mapping, or edits it: metadata and nameref setters)
                assert isinstance(new, dict)
                node.clear()
                node.update(new)
            return
    if not create or create_kind is None or is_seq:
        if name not in node:
            return
        kind = "seq" if is_seq else None
    elif last:
        kind = create_kind
        if name not in node:
            node[name] = {} if kind == MAP else None
    else:
        kind = MAP
        if name not in node:
            node[name] = {}
    val = node[name]
    if val is None and kind is not None:
        # "if the value exists, but is null and kind is set, then change it to the creation type"
        val = {} if kind == MAP else ([] if kind == "seq" else None)
        node[name] = val
    if last:
        text = spelled(node, name) if texts and isinstance(node, SpelledDict) else None
        if text is not None and text != val:
            # kyaml filters read a scalar node's text: a name written 0123 or 2021-01-01 is
            # prefixed, matched and compared as written; a setter handing the text back
            # unchanged leaves the loaded value in place (it prints as the node would)
            new = fn(text)
            node[name] = val if new is text else new
        else:
            node[name] = fn(val)
    else:
        _walk(val, segs, i + 1, create, create_kind, fn, texts)
