"""Strategic merge patch with kyaml merge2 semantics (not apimachinery's).

kustomize's ``api/filters/patchstrategicmerge`` calls
``kyaml/yaml/merge2.Merge(patch, resource, {ListIncreaseDirection: Prepend})``
which runs the three-way walker of ``kyaml/yaml/walk`` over two sources,
``[dest, origin]`` = ``[resource, patch]``.  This module re-expresses that walk
over plain Python values.  The rules, each traced to the Go file:

* maps merge key by key; the keys visited are the sorted union of both sides
  (``walk/map.go fieldNames``); a result of "nothing" or ``null`` removes the
  key (``yaml.FieldSetter``), except a ``null`` the resource already had and
  the patch does not mention (``merge2.go VisitMap``, kustomize issue #4628);
* scalars: the patch's value wins when present (``merge2.go VisitScalar``);
* a list is associative only when its schema's ``x-kubernetes-patch-strategy``
  contains ``merge`` (``yaml/schema/schema.go``; no inference); otherwise the
  patch's list replaces the resource's (``merge2.go VisitList``);
* associative lists (``walk/associative_sequence.go``): elements matched by
  the merge keys (``x-kubernetes-list-map-keys``, else
  ``x-kubernetes-patch-merge-key``) are merged; the result lists the patch's
  elements first, then the resource's other elements; strategy without a
  key = primitive set union;
* directives ``$patch: delete|replace|merge`` on maps and as a lone list
  element (``merge2/smpdirective.go``); any other ``$patch`` value is an error;
  other ``$``-keys are ordinary fields.

Values are plain ``dict``/``list``/scalars.  The inputs are deep-copied first,
so callers' objects are never modified.

Its size has a reason: it is one algorithm (kyaml's merge2 walk) whose map, associative-list
and directive cases recurse into each other.
"""
from __future__ import annotations

import math

from kzgit.errors import BuildError
from kzgit.openapi import Schema, schema_for
from kzgit.yamlio.tree import (
    MAPPING, SCALAR, SEQUENCE, DupKeys, SharedStr, SpelledDict, copy_tree, node_kind, share_update,
    spelled,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

__all__ = ["merge"]


class _Missing:
    """A field that is absent (Go: a nil ``*RNode``)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class _KeepNull:
    """A ``null`` the resource had and the patch left alone (``MakePersistentNullNode``)."""

    def __repr__(self) -> str:
        return "KEEP_NULL"


KEEP_NULL: Any = _KeepNull()

_DIRECTIVE = "$patch"

# Node kinds as the walker sees them.
_MAP, _SEQ, _SCALAR, _NONE = MAPPING, SEQUENCE, SCALAR, 0


def _is_missing_or_null(v: Any) -> bool:
    """``yaml.IsMissingOrNull``."""
    return v is MISSING or v is None or v is KEEP_NULL


def _is_empty_map(v: Any) -> bool:
    """``yaml.IsEmptyMap``: missing, null, or ``{}``."""
    return _is_missing_or_null(v) or (isinstance(v, dict) and not v)


def _is_nil_or_empty(v: Any) -> bool:
    """``RNode.IsNilOrEmpty``: missing, null, ``{}`` or ``[]``."""
    return _is_empty_map(v) or (isinstance(v, list) and not v)


def _text(v: Any) -> str:
    """The ``yaml.Node.Value`` string Go compares (scalars only; ``""`` else).

    kzgit has lost the source spelling, so this is the canonical YAML form.
    """
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return ".nan"
        if math.isinf(v):
            return ".inf" if v > 0 else "-.inf"
        return repr(v)
    if v is None or v is KEEP_NULL:
        return "null"
    return ""


def _get_value(v: Any) -> str:
    """``yaml.GetValue``: ``""`` for missing or null nodes."""
    return "" if _is_missing_or_null(v) else _text(v)


def _wrong_kind(expected: str, v: Any) -> BuildError:
    # fns.go InvalidNodeKindError
    return BuildError(f"wrong node kind: expected {expected} but got {node_kind(v)}")


def _check_kinds(kind: str, sources: Sequence[Any]) -> None:
    """``yaml.ErrorIfAnyInvalidAndNonNull``."""
    for s in sources:
        if not _is_missing_or_null(s) and node_kind(s) != kind:
            raise _wrong_kind(kind, s)


# ---------------------------------------------------------------------------
# Directives (merge2/smpdirective.go)

_DELETE, _REPLACE, _MERGE, _UNKNOWN = "delete", "replace", "merge", "unknown"


def _directive(patch: Any) -> Tuple[str, Optional[BuildError]]:
    """``determineSmpDirective``: find and remove the patch's ``$patch``.

    Returns (directive, error); callers that ignore the error in Go ignore it here.
    """
    if patch is MISSING:
        return _MERGE, None
    if isinstance(patch, list):
        return _sequence_directive(patch)
    if isinstance(patch, dict):
        if _DIRECTIVE not in patch:
            return _MERGE, None
        v = _text(patch[_DIRECTIVE]) if not isinstance(patch[_DIRECTIVE], (dict, list)) else ""
        if v in (_DELETE, _REPLACE, _MERGE):
            del patch[_DIRECTIVE]  # elideMappingPatchDirective
            return v, None
        return _UNKNOWN, BuildError(f"unknown patch strategy '{v}'")
    tag = "!!null" if patch is None or patch is KEEP_NULL else "!!" + type(patch).__name__
    return _UNKNOWN, BuildError(
        f"no implemented strategic merge patch strategy for '{tag}' ('{_text(patch)}')")


def _sequence_directive(patch: List[Any]) -> Tuple[str, Optional[BuildError]]:
    """``determineSequenceNodePatchStrategy``.

    Only the FIRST map element with a ``$patch`` key counts, and only when it
    has no other key; eliding then removes every map element whose ``$patch``
    equals that value (``ElementSetter`` with a nil element), and with it every
    null and ``{}`` element of the patch list.
    """
    node = None
    for e in patch:
        if isinstance(e, dict) and _DIRECTIVE in e:
            node = e
            break
    if node is None or len(node) > 1:
        return _MERGE, None
    raw = node[_DIRECTIVE]
    if raw is None or raw is KEEP_NULL:
        v = "null"
    else:
        v = _text(raw)
    if v in (_DELETE, _REPLACE, _MERGE):
        _element_set(patch, MISSING, [_DIRECTIVE], [v])
        return v, None
    return _UNKNOWN, BuildError(f"unknown patch strategy '{v}'")


# ---------------------------------------------------------------------------
# List element helpers (kyaml/yaml/fns.go, rnode.go)


def _field_matcher(elem: Any, name: str, string_value: str) -> Any:
    """``FieldMatcher{Name, StringValue}``: the matched value or MISSING.

    An empty ``string_value`` means "any value" (Go leaves ``Value`` nil).
    """
    if _is_missing_or_null(elem):
        return MISSING
    if name == "":
        if not isinstance(elem, (str, int, float, bool)):
            raise _wrong_kind(_SCALAR, elem)
        return elem if _get_value(elem) == string_value else MISSING
    if not isinstance(elem, dict):
        raise _wrong_kind(_MAP, elem)
    if name not in elem:
        return MISSING
    val = elem[name]
    if string_value == "" or _text(val) == string_value:
        return val if val is not None else KEEP_NULL  # found, even when null
    return MISSING


def _element_set(seq: List[Any], element: Any, keys: List[str], values: List[str]) -> List[Any]:
    """``ElementSetter.Filter`` on ``seq``, in place (Go rewrites the node's
    content, which other walkers may share); returns ``seq``.

    Replaces (``element`` given) or deletes (``element`` MISSING) the elements
    matching keys=values, appending ``element`` when none matched (a null
    element replaces but is never appended).  Quirk: it drops every null and
    ``{}`` element of ``seq`` on the way.
    """
    if not keys:
        keys = [""]
    is_mapping_setter = keys[0] != "" and len(values) > 0 and values[0] != ""
    out: List[Any] = []
    found_any = False
    for e in seq:
        if _is_empty_map(e):
            continue
        if not isinstance(e, dict) and is_mapping_setter:
            out.append(e)
            continue
        found = True
        val: Any = MISSING
        for j in range(len(keys)):
            if j < len(values):
                val = _field_matcher(e, keys[j], values[j])
            if val is MISSING:
                found = False
                break
        if not found:
            if values:
                out.append(e)
            continue
        found_any = True
        if element is MISSING:
            continue
        out.append(element)
    seq[:] = out
    if _is_missing_or_null(element):
        return seq
    if not found_any:
        seq.append(element)
    return seq


def _element_list(seq: Any, keys: List[str], values: List[str]) -> Any:
    """``RNode.ElementList``: first element whose keys all equal values, else MISSING."""
    if not isinstance(seq, list):
        return MISSING
    if not keys:
        keys = [""]
    if not values:
        values = [""]
    if keys[0] == "":
        for e in seq:
            # compares yaml.Node.Value: "" for maps and lists
            if _node_value(e) == values[0]:
                return e
        return MISSING
    if len(keys) != len(values):
        return MISSING  # error swallowed by ElementList
    for e in seq:
        if not isinstance(e, dict):
            continue
        # MatchField always requires the value, even ""
        if all(k in e and _text(e[k]) == v for k, v in zip(keys, values)):
            return e
    return MISSING


def _element_values_list(seq: List[Any], keys: List[str]) -> List[List[str]]:
    """``RNode.ElementValuesList``: per element, the text of each key or ``""``."""
    out: List[List[str]] = []
    for e in seq:
        row: List[str] = []
        for k in keys:
            f = e.get(k, MISSING) if isinstance(e, dict) else MISSING
            row.append("" if _is_nil_or_empty(f) else _text(f))
        out.append(row)
    return out


def _validate_keys(values_list: List[List[str]], values: List[str],
                   keys: List[str]) -> Tuple[List[str], List[str]]:
    """``validateKeys``: drop keys no element gives a value for."""
    valid = {keys[i] for vs in values_list for i, v in enumerate(vs) if v != ""}
    if not valid:
        return keys, values
    vk = [k for k in keys if k in valid]
    vv = [v for i, v in enumerate(values) if v != "" or keys[i] in valid]
    return vk, vv


def _match(v1: List[str], v2: List[str]) -> Tuple[bool, List[str]]:
    """``match``: equal somewhere, and differing only where one side is empty."""
    if len(v1) != len(v2):
        return False, []
    common = False
    res: List[str] = []
    for a, b in zip(v1, v2):
        if a == b:
            common = True
            res.append(a)
            continue
        if a != "" and b != "":
            return False, []
        res.append(a if a != "" else b)
    return common, res


def _merge_values(values_list: List[List[str]]) -> List[List[str]]:
    """``mergeValues`` (keeps Go's aliasing: the outer value is read once)."""
    for i in range(len(values_list)):
        v1 = values_list[i]
        for j in range(len(values_list)):
            ok, vals = _match(v1, values_list[j])
            if ok:
                values_list[i] = vals
                values_list[j] = vals
    return values_list


# ---------------------------------------------------------------------------
# The walker (kyaml/yaml/walk/*.go with the merge2.Merger visitor)


def _merge_directive(dest: Any, origin: Any) -> Any:
    """merge2.go VisitMap / VisitList on an existing ``dest``: a null patch clears it, a
    ``$patch`` directive deletes or replaces it, otherwise the walk merges into ``dest``."""
    if origin is None or origin is KEEP_NULL:
        return MISSING
    ps, err = _directive(origin)
    if err is not None:
        raise err
    if ps == _DELETE:
        return MISSING
    if ps == _REPLACE:
        return origin
    return dest


class _Walker:
    def __init__(self, sources: List[Any], schema: Optional[Schema], path: List[str]) -> None:
        self.sources = sources  # [dest, origin]
        self.schema = schema
        self.path = path

    # walk.go
    def walk(self) -> Any:
        self.schema = self._get_schema()
        kind: Any = _NONE
        for s in self.sources:
            if not _is_missing_or_null(s):
                kind = node_kind(s)
                break
        if kind == _MAP:
            _check_kinds(_MAP, self.sources)
            return self._walk_map()
        if kind == _SEQ:
            _check_kinds(_SEQ, self.sources)
            if self.schema is not None and self.schema.is_merge_list():
                return self._walk_associative_sequence()
            return self._visit_list_nonassociative()
        if kind == _SCALAR:
            _check_kinds(_SCALAR, self.sources)
            return self._visit_scalar()
        return self._walk_map()  # empty nodes walk as maps

    def _get_schema(self) -> Optional[Schema]:
        """``Walker.GetSchema``: the parent's schema, else by apiVersion/kind.

        Field-comment schemas (``# {"$openapi": ...}``) are not supported:
        kzgit values carry no comments.
        """
        if self.schema is not None:
            return self.schema
        for s in self.sources:
            if not isinstance(s, dict):
                continue
            av, k = s.get("apiVersion"), s.get("kind")
            if not isinstance(av, str) or not isinstance(k, str) or not av or not k:
                continue
            found = schema_for(av, k)
            if found is not None:
                return found
        return None

    @property
    def dest(self) -> Any:
        return self.sources[0]

    @property
    def origin(self) -> Any:
        return self.sources[1]

    # merge2.go Merger.VisitScalar
    def _visit_scalar(self) -> Any:
        return self.origin if self.origin is not MISSING else self.dest

    # merge2.go Merger.VisitList for NonAssociateList
    def _visit_list_nonassociative(self) -> Any:
        return self.origin if self.origin is not MISSING else self.dest

    # merge2.go Merger.VisitMap
    def _visit_map(self) -> Any:
        dest, origin = self.dest, self.origin
        if _is_missing_or_null(dest):
            ps, _ = _directive(origin)  # error ignored in Go
            if ps == _DELETE:
                return MISSING
            if origin is MISSING and dest is not MISSING:
                # kustomize issue #4628: keep an explicit null the patch does not touch
                # ("null"/"~"; _walk_map drops an empty one, as Go does).
                return KEEP_NULL
            return origin
        return _merge_directive(dest, origin)

    # walk/map.go walkMap; it starts as _walk_associative_sequence does, and in parallel on
    # purpose: kyaml's walkers all visit first, then walk the fields (walk/walk.go)
    def _walk_map(self) -> Any:
        dest = self._visit_map()
        if dest is MISSING:
            return MISSING
        self.sources[0] = dest
        if not isinstance(dest, dict):
            return dest  # a null (kept or cleared by the caller)
        names: Set[Any] = set()
        for s in self.sources:
            if isinstance(s, dict):
                names.update(s)
        # walk/map.go fieldNames: sorted by the key's text (keys may be ints)
        for key in sorted(names, key=lambda k: k if isinstance(k, str) else _text(k)):
            sub = self.schema.field(key) if self.schema is not None else None
            fv = [s.get(key, MISSING) if isinstance(s, dict) else MISSING for s in self.sources]
            val = _Walker(fv, sub, self.path + [key]).walk()
            # yaml.FieldSetter: nothing or a plain null clears the field
            if val is MISSING or val is None:
                if dest.__class__ is not DupKeys or not dest.clear_first(key):
                    dest.pop(key, None)
            elif val is KEEP_NULL:
                if spelled(dest, key) == "":
                    # merge2.go VisitMap keeps a null only when its node's text
                    # is not empty: a bare "key:" the patch does not mention goes
                    # (FieldClearer: the first of a key written twice).
                    if dest.__class__ is not DupKeys or not dest.clear_first(key):
                        dest.pop(key, None)
                else:
                    dest[key] = None
            else:
                old = dest.get(key)
                if old.__class__ is SharedStr and old is not val and not isinstance(val, (dict, list)):
                    # FieldSetter on an existing field copies the patch's node into the
                    # resource's node (SetYNode): places sharing it change too.
                    _SHARED_UPDATES.append((old, val))
                dest[key] = val
        origin = self.sources[1]
        if isinstance(origin, SpelledDict) or isinstance(dest, SpelledDict):
            # (a DupKeys patch mapping too: its first values are the ones merged)
            dest = _carry_spelling(dest, origin)
        return dest

    # merge2.go Merger.VisitList for AssociativeList
    def _visit_list_associative(self) -> Any:
        dest, origin = self.dest, self.origin
        if _is_missing_or_null(dest):
            return origin
        return _merge_directive(dest, origin)

    # walk/associative_sequence.go walkAssociativeSequence
    def _walk_associative_sequence(self) -> Any:
        dest = self._visit_list_associative()
        if dest is MISSING:
            return MISSING
        self.sources[0] = dest
        assert self.schema is not None
        _, keys = self.schema.strategy_and_keys()
        values = self._element_values(keys)
        if values or keys:
            return self._set_elements(values, keys, dest)
        return self._set_elements(self._element_primitive_values(), [""], dest)

    def _ordered_sources(self) -> List[Any]:
        # ListIncreaseDirection=Prepend: the patch (origin) is read first.
        return [self.sources[1], self.sources[0]]

    def _element_values(self, keys: List[str]) -> List[List[str]]:
        out: List[List[str]] = []
        for src in self._ordered_sources():
            if not isinstance(src, list):
                continue
            for vs in _element_values_list(src, keys):
                if not vs or vs in out:
                    continue
                out.append(vs)
        return out

    def _element_primitive_values(self) -> List[List[str]]:
        out: List[List[str]] = []
        seen = set()
        for src in self._ordered_sources():
            if not isinstance(src, list):
                continue
            for item in src:
                v = _node_value(item)
                if v in seen:
                    continue
                out.append([v])
                seen.add(v)
        return out

    def _element_value_list(self, keys: List[str], values: List[str]) -> List[Any]:
        keys, values = _validate_keys([values], values, keys)
        return [MISSING if s is MISSING else _element_list(s, keys, values)
                for s in self.sources]

    def _set_elements(self, values_list: List[List[str]], keys: List[str], dest: Any) -> Any:
        """``setAssociativeSequenceElements``."""
        items: List[Any] = []
        elem_schema = self.schema.items() if self.schema is not None else None
        if len(keys) > 1:
            values_list = _merge_values(values_list)
        valid_keys: List[str] = []
        valid_values: List[str] = []
        for values in values_list:
            if not values:
                continue
            valid_keys, valid_values = _validate_keys(values_list, values, keys)
            val = _Walker(self._element_value_list(valid_keys, valid_values),
                          elem_schema, []).walk()
            exit_ = False
            for i, key in enumerate(valid_keys):
                if _is_empty_map(val):
                    # the element was deleted ($patch: delete) or emptied
                    if isinstance(dest, list):
                        _element_set(dest, MISSING, valid_keys, valid_values)
                    exit_ = True
                elif isinstance(val, dict) and key not in val and valid_values[i] != "":
                    # make sure the key is set on the element (a plain scalar)
                    val[key] = _plain_scalar(valid_values[i])
            if exit_:
                continue
            if val is KEEP_NULL:
                val = None
            _element_set(items, val, valid_keys, valid_values)
        if values_list:
            dest = _append_list(items, dest if isinstance(dest, list) else [], valid_keys)
        if _is_missing_or_null(dest):
            return MISSING
        return dest


# (shared node, new value) pairs met during one merge (see SharedStr)
_SHARED_UPDATES: List[Tuple[Any, Any]] = []


def _carry_spelling(dest: Dict[Any, Any], origin: Any) -> Dict[Any, Any]:
    """After a map merge, the source texts go with the scalars: a scalar the
    patch set keeps the patch's text (kyaml returns the patch's node), not the
    resource's (see :class:`kzgit.yamlio.tree.SpelledDict`)."""
    spelling = dict(dest.spelling) if isinstance(dest, SpelledDict) else {}
    if isinstance(origin, dict):
        for key, v in origin.items():
            if isinstance(v, (dict, list)):
                continue
            text = spelled(origin, key)
            if text is not None:
                spelling[key] = (text, v)
            else:
                spelling.pop(key, None)
    if isinstance(dest, SpelledDict):   # (a DupKeys stays one)
        dest.spelling = spelling
        return dest
    if not spelling:
        return dest
    out = SpelledDict(dest)
    out.spelling = spelling
    return out


def _node_value(item: Any) -> str:
    """``yaml.Node.Value`` of a list item (``""`` for maps and lists)."""
    if item is None or item is KEEP_NULL:
        return "null"
    return _text(item)


def _plain_scalar(text: str) -> Any:
    """The value of the untagged plain scalar ``yaml.NewScalarRNode(text)``.

    kyaml sets a missing merge key on a merged element from the key's text
    (``setAssociativeSequenceElements``); printed plain, ``80`` reads back as
    an int and ``true`` as a bool, anything else stays a string here.
    """
    if text in ("true", "false"):
        return text == "true"
    digits = text[1:] if text[:1] in "+-" else text
    if digits.isdigit() and digits.isascii():
        return int(text)
    return text


def _append_list(dst: List[Any], src: List[Any], keys: List[str]) -> List[Any]:
    """``appendListNode``: add ``src``'s elements to ``dst`` unless matched."""
    for elem in src:
        if keys and keys[0] == "":
            _element_set(dst, elem, [""], [_node_value(elem)])
            continue
        v: List[str] = []
        for key in keys:
            if not isinstance(elem, dict):
                if _is_missing_or_null(elem):
                    dst.append(elem)
                    continue
                raise _wrong_kind(_MAP, elem)
            if key not in elem:
                dst.append(elem)  # Go appends, then carries on with fewer values
                continue
            v.append(_text(elem[key]))
        if len(keys) > 1:
            _element_set(dst, MISSING, keys, v)
        _element_set(dst, elem, keys, v)
    return dst


def merge(target: Dict[str, Any], patch: Dict[str, Any],
          schema: Optional[Schema] = None) -> Optional[Dict[str, Any]]:
    """Apply the strategic merge ``patch`` to ``target`` as kustomize does.

    ``schema`` is the target type's schema; when None it is looked up, as
    kyaml's walker does, from the ``apiVersion``/``kind`` of the target, then
    of the patch (no schema: every list is replaced).  Returns the merged
    object, or None when the patch deletes it (``$patch: delete``), in which
    case kustomize drops the resource.  Neither input is modified.
    """
    dest = copy_tree(target)
    origin = copy_tree(patch)
    del _SHARED_UPDATES[:]
    out = _Walker([dest, origin], schema, []).walk()
    # A mapping the patch holds with a key twice: merged into an existing mapping the first
    # value wins (kyaml RNode.Field); added whole it stays a DupKeys with both keys, and the
    # build fails where kustomize decodes the resource (kzgit.builder.finish, a JSON patch).
    for old, new in _SHARED_UPDATES:
        share_update(out, old, new)
    del _SHARED_UPDATES[:]
    if out is MISSING or out is None or out is KEEP_NULL:
        return None
    if not isinstance(out, dict):
        raise BuildError(f"strategic merge patch produced a {node_kind(out)}, not a map")
    return out
