"""kyaml's field paths over plain Python data (dicts, lists, scalars).

Three path dialects meet in kustomize and all are reproduced here:

* ``a.b.[name=x].c`` -- the *replacement* dialect, split by
  ``SmarterPathSplitter`` (kyaml/utils/pathsplitter.go) and walked either by
  ``PathGetter`` (``yaml.Lookup``, kyaml/yaml/fns.go: sources, var values) or
  by ``PathMatcher`` (kyaml/yaml/match.go: replacement targets, with wildcards,
  regex list matching and creation of missing parts);
* ``a/b/c`` -- the *field-spec* dialect (api/filters/fieldspec/fieldspec.go),
  split by ``PathSplitter`` on ``/`` with ``\\/`` as an escape; a sequence met
  on the way applies the rest of the path to every element.

kustomize works on go-yaml nodes, where a scalar is a text plus a tag.  kzgit
keeps plain Python values; :class:`Scalar` restores the (text, tag) view where
kustomize's behaviour depends on it (a replacement copies only the *text* of a
value into a scalar target and keeps the target's tag).
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, Callable, List, NamedTuple, Optional, Tuple, Union

from kzgit.errors import BuildError, YamlError
from kzgit.yamlio.tree import MAPPING, SEQUENCE, SpelledDict, node_kind, spelled

__all__ = [
    "FieldPathError", "Scalar", "Slot", "CREATED", "path_splitter", "smarter_path_splitter",
    "convert_slice_index", "lookup", "path_match", "walk_fieldspec", "scalar_of", "resolve",
    "is_scalar", "MISSING",
]


class FieldPathError(BuildError):
    """A path cannot be walked (wrong node kind, bad index, bad list matcher)."""


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class _Created:
    """Placeholder for a scalar leaf created by ``PathMatcher`` with ``Create``.

    go-yaml creates an empty ``ScalarNode`` without a tag; the value written
    into it later is re-resolved from its text (so a copied ``"8080"`` string
    becomes the integer 8080 -- verified with kubectl kustomize v5.5.0).
    """

    def __repr__(self) -> str:
        return "CREATED"


CREATED: Any = _Created()

# Node kinds, as in go-yaml.

Slot = Tuple[Union[dict, list], Any]
"""Where a matched node lives: ``container[key]``."""


# --------------------------------------------------------------------------- scalars
class Scalar(NamedTuple):
    """A scalar as go-yaml holds it: text and resolved tag (``!!str`` ...)."""

    text: str
    tag: str


_INT_RE = re.compile(r"^[-+]?(0|[1-9][0-9_]*)\Z")
_FLOAT_RE = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")


def is_scalar(v: Any) -> bool:
    return not isinstance(v, (dict, list))


def _format_float(v: float) -> str:
    if math.isnan(v):
        return ".nan"
    if math.isinf(v):
        return ".inf" if v > 0 else "-.inf"
    return repr(v)


def scalar_of(v: Any) -> Scalar:
    """The (text, tag) go-yaml would hold for a parsed Python scalar."""
    if v is CREATED:
        return Scalar("", "")
    if v is None:
        return Scalar("null", "!!null")
    if isinstance(v, bool):
        return Scalar("true" if v else "false", "!!bool")
    if isinstance(v, int):
        return Scalar(str(v), "!!int")
    if isinstance(v, float):
        return Scalar(_format_float(v), "!!float")
    return Scalar(str(v), "!!str")


def resolve(text: str) -> Tuple[str, Any]:
    """go-yaml v3 ``resolve("", text)``: the implicit tag and value of a plain scalar."""
    if text in ("", "~", "null", "Null", "NULL"):
        return "!!null", None
    if text in ("true", "True", "TRUE"):
        return "!!bool", True
    if text in ("false", "False", "FALSE"):
        return "!!bool", False
    if text in (".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"):
        return "!!float", math.inf
    if text in ("-.inf", "-.Inf", "-.INF"):
        return "!!float", -math.inf
    if text in (".nan", ".NaN", ".NAN"):
        return "!!float", math.nan
    plain = text.replace("_", "")
    try:
        if _INT_RE.match(text):
            return "!!int", int(plain)
        low = plain.lower().lstrip("+-")
        if low.startswith(("0x", "0o", "0b")):
            sign = -1 if plain.startswith("-") else 1
            return "!!int", sign * int(low, 0)
    except ValueError:
        pass
    if _FLOAT_RE.match(text):
        try:
            return "!!float", float(text)
        except ValueError:
            pass
    return "!!str", text


def decode(s: Scalar) -> Any:
    """Turn a (text, tag) scalar back into a Python value, as the final
    JSON round trip of kustomize's output does (go-yaml ``Decode``).

    A text that does not fit its tag fails the build the way kustomize does:
    ``yaml: cannot decode !!str `hello` as a !!int``.
    """
    if s.tag in ("", None):
        return resolve(s.text)[1]
    if s.tag == "!!str":
        return s.text
    rtag, val = resolve(s.text)
    if rtag == s.tag:
        return val
    if s.tag == "!!float" and rtag == "!!int":
        return float(val)
    raise BuildError(f"map[string]interface {{}}(nil): yaml: cannot decode {rtag} `{s.text}` as a {s.tag}")


# --------------------------------------------------------------------------- splitting
def path_splitter(path: str, delimiter: str) -> List[str]:
    """kyaml/utils/pathsplitter.go PathSplitter: split, honouring a trailing
    backslash as an escape of the delimiter; a leading delimiter is dropped."""
    ps = path.split(delimiter)
    if len(ps) > 1 and ps[0] == "":
        ps = ps[1:]
    res = [ps[0]]
    for part in ps[1:]:
        if res[-1].endswith("\\"):
            res[-1] = res[-1][:-1] + delimiter + part
        else:
            res.append(part)
    return res


def smarter_path_splitter(path: str, delimiter: str = ".") -> List[str]:
    """kyaml SmarterPathSplitter: keep ``[name=a.b]`` whole; ``[a.b.c]`` becomes
    the single map key ``a.b.c``."""
    split = path_splitter(path, delimiter)
    result: List[str] = []
    i = 0
    while i < len(split):
        elem = split[i]
        if elem.startswith("[") and not elem.endswith("]"):
            bracketed = [elem]
            while i < len(split) - 1:
                i += 1
                bracketed.append(split[i])
                if split[i].endswith("]"):
                    break
            s = delimiter.join(bracketed)
            result.append(s if "=" in s else s.strip("[]"))
        else:
            result.append(elem)
        i += 1
    return result


_SLICE_RE = re.compile(r"^(.*)\[(\d+)\]$")


def convert_slice_index(fields: List[str]) -> List[str]:
    """kyaml rnode.go convertSliceIndex: ``ports[0]`` -> ``ports``, ``0`` (vars only)."""
    res: List[str] = []
    for s in fields:
        m = _SLICE_RE.match(s) if s.endswith("]") else None
        if not m:
            res.append(s)
            continue
        if m.group(1):
            res.append(m.group(1))
        res.append(m.group(2))
    return res


def _is_list_index(p: str) -> bool:
    return p.startswith("[") and p.endswith("]")


def _is_idx_number(p: str) -> bool:
    return _atoi(p) is not None and _atoi(p) >= 0  # type: ignore[operator]


def _atoi(p: str) -> Optional[int]:
    """Go strconv.Atoi: optional sign and decimal digits only."""
    if re.fullmatch(r"[-+]?[0-9]+", p):
        return int(p)
    return None


def split_index_name_value(p: str) -> Tuple[str, str]:
    """kyaml SplitIndexNameValue: ``[name=nginx]`` -> (name, nginx)."""
    elem = p[:-1] if p.endswith("]") else p
    elem = elem[1:] if elem.startswith("[") else elem
    if "=" not in elem:
        raise FieldPathError("list path element must contain fieldName=fieldValue for element to match")
    k, v = elem.split("=", 1)
    return k, v


def _wrong_kind(expected: str, v: Any) -> FieldPathError:
    # kyaml/yaml/fns.go InvalidNodeKindError; kustomize appends the node's YAML,
    # which kzgit leaves out.
    return FieldPathError(f"wrong node kind: expected {expected} but got {node_kind(v)}")


# --------------------------------------------------------------------------- PathGetter
def lookup(node: Any, parts: List[str]) -> Any:
    """kyaml ``yaml.Lookup(parts...)`` (PathGetter without create).

    Returns :data:`MISSING` when a part is absent; raises on a wrong node kind.
    ``None`` values are returned as found (the caller decides whether a null
    counts as missing).
    """
    parts = [p.strip() for p in parts if p.strip()]  # cleanPath
    cur = node
    for part in parts:
        idx = _atoi(part)
        if idx is not None:
            if idx < 0:
                raise FieldPathError(f"array index {idx} cannot be negative")
            if cur is None:
                return MISSING
            if not isinstance(cur, list):
                raise _wrong_kind("SequenceNode", cur)
            if idx >= len(cur):
                return MISSING
            cur = cur[idx]
        elif part == "-":
            if cur is None:
                return MISSING
            if not isinstance(cur, list):
                raise _wrong_kind("SequenceNode", cur)
            if not cur:
                raise FieldPathError("index out of range [-1]")
            cur = cur[-1]
        elif part == "*":
            raise FieldPathError("wildcard is not supported in PathGetter")
        elif _is_list_index(part):
            name, value = split_index_name_value(part)
            if cur is None:
                return MISSING
            if not isinstance(cur, list):
                raise _wrong_kind("SequenceNode", cur)
            found: Any = MISSING
            for el in cur:
                if not name:
                    # ElementMatcher compares a primitive element's text.
                    if is_scalar(el) and scalar_of(el).text == value:
                        found = el
                        break
                    continue
                if isinstance(el, dict) and name in el and is_scalar(el[name]) \
                        and el[name] is not None and scalar_of(el[name]).text == value:
                    found = el
                    break
            if found is MISSING:
                return MISSING
            cur = found
        else:
            if cur is None:
                return MISSING
            if not isinstance(cur, dict):
                raise _wrong_kind("MappingNode", cur)
            if part not in cur:
                return MISSING
            cur = cur[part]
    return cur


# --------------------------------------------------------------------------- PathMatcher
def _part_kind(next_part: str, default: Optional[str]) -> Optional[str]:
    """kyaml getPathPartKind."""
    if _is_list_index(next_part) or _is_idx_number(next_part):
        return SEQUENCE
    if next_part == "":
        return default
    return MAPPING


def _new_node(kind: Optional[str]) -> Any:
    if kind == MAPPING:
        # a SpelledDict, so a replacement can record the text of what it writes there
        return SpelledDict()
    if kind == SEQUENCE:
        return []
    return CREATED


def _element_text(v: Any) -> str:
    """``strings.TrimSpace(elem.String())`` for the regex match of ``[k=v]``.

    kyaml serialises the node as YAML; for maps and lists kzgit uses JSON,
    which only matters to a regex written against a whole sub-document.
    """
    if isinstance(v, (dict, list)):
        return json.dumps(v)
    if v is CREATED:
        return ""
    return scalar_of(v).text


def path_match(node: Any, path: List[str], create: Optional[str] = None,
               parent: Optional[Slot] = None, into_scalars: bool = False) -> List[Slot]:
    """kyaml ``PathMatcher``: every slot matching ``path`` below ``node``.

    ``create`` is the node kind (``scalar``/``mapping``/``sequence``) to create
    for a missing leaf, or None.  List parts ``[k=v]`` match ``v`` as an
    *unanchored* regular expression against the element's field (match.go
    ``visitElem``), so ``[name=app]`` also selects ``myapp``; verified with
    kubectl kustomize v5.5.0.  ``parent`` is where ``node`` lives, so that an
    empty path can name its slot.  ``into_scalars`` (Kustomize 5.8): a field part that
    finds a scalar while path remains continues inside the scalar's text parsed as YAML,
    on a copy (match.go handleStructuredDataInScalar, kustomize 2dc0d0da8): what matches
    there can be set, and the change goes nowhere.
    """
    if not path:
        return [parent] if parent is not None else []
    part = path[0]
    rest = path[1:]
    if _is_idx_number(part):
        return _match_index(node, int(part), rest, create, into_scalars)
    if _is_list_index(part):
        return _match_seq(node, part, rest, create, into_scalars)
    if part == "*":
        if node is None:
            return []
        if not isinstance(node, list):
            raise _wrong_kind("SequenceNode", node)
        out: List[Slot] = []
        for i in range(len(node)):
            out.extend(path_match(node[i], rest, create, (node, i), into_scalars))
        return out
    return _match_field(node, part, rest, create, into_scalars)


def _match_field(node: Any, part: str, rest: List[str], create: Optional[str],
                 into_scalars: bool) -> List[Slot]:
    if node is None or node is CREATED:
        return []
    if not isinstance(node, dict):
        raise _wrong_kind("MappingNode", node)
    if part not in node:
        if not create:
            return []
        node[part] = _new_node(_part_kind(rest[0] if rest else "", create))
    elif node[part] is None and create and rest:
        if into_scalars and spelled(node, part) == "":
            # 5.8.1 (kubectl 1.36, the only 5.8 kzgit renders): a null written as nothing
            # (``annotations:``) is a node of no kind to kyaml's ErrorIfInvalid, which 5.7.1
            # let pass as null; a spelled null (``null``, ``~``) still passes
            raise FieldPathError(f"wrong node kind: expected {_part_kind(rest[0], create)} "
                                 f"but got : node contents:\nnull")
        # match.go doField: Get finds the null node, and the next level's SetField appends
        # to that scalar's content (ErrorIfInvalid lets a null pass), which never prints:
        # the value goes to a node outside the resource, and the field stays null
        return path_match(_new_node(_part_kind(rest[0], create)), rest, create, None, into_scalars)
    field = node[part]
    if into_scalars and rest and field is not None and field is not CREATED and is_scalar(field):
        return [CopySlot(s) for s in path_match(parse_scalar_data(field), rest, create, None,
                                                into_scalars)]
    return path_match(field, rest, create, (node, part), into_scalars)


class CopySlot(tuple):
    """A slot inside a copy of a scalar's parsed text (``into_scalars``): a value set there
    goes nowhere."""


def parse_scalar_data(v: Any) -> Any:
    """A scalar's text read as YAML (``yaml.Unmarshal`` into a node: its first document);
    a text that is not YAML is a FieldPathError with the reader's words."""
    from kzgit.yamlio import load_documents   # start-up: only 5.8 paths into scalars
    try:
        docs = load_documents(scalar_of(v).text.encode("utf-8"), "structured data in a scalar")
    except YamlError as e:
        raise FieldPathError(str(e)) from None
    return docs[0] if docs else None


def _match_index(node: Any, idx: int, rest: List[str], create: Optional[str],
                 into_scalars: bool) -> List[Slot]:
    if node is None:
        elements: list = []
    elif not isinstance(node, list):
        raise _wrong_kind("SequenceNode", node)
    else:
        elements = node
    if len(elements) == idx and create and isinstance(node, list):
        node.append(_new_node(_part_kind(rest[0] if rest else "", create)))
    if len(elements) < idx + 1:
        raise FieldPathError(f"index {idx} specified but only {len(elements)} elements found")
    return path_match(node[idx], rest, create, (node, idx), into_scalars)


def _match_seq(node: Any, part: str, rest: List[str], create: Optional[str],
               into_scalars: bool) -> List[Slot]:
    field, pattern = split_index_name_value(part)
    from kzgit import gore   # start-up: only a path with a [field=value] matcher loads RE2
    try:
        rx = gore.compile(pattern)   # kyaml yaml/match.go: Go's regexp.Compile
    except gore.RegexError as e:
        raise FieldPathError(str(e)) from None
    if node is None:
        return []
    if not isinstance(node, list):
        raise _wrong_kind("SequenceNode", node)
    out: List[Slot] = []
    for i, el in enumerate(node):
        if not field:
            if rx.test(_element_text(el)):
                out.append((node, i))
            continue
        if not isinstance(el, dict) or field not in el or el[field] is None:
            continue
        if not rx.test(_element_text(el[field]).strip()):
            continue
        out.extend(path_match(el, rest, create, (node, i), into_scalars))
    if out or not create:
        return out
    # match.go doSeq: append an element made from the matcher (its value is an
    # untagged scalar, resolved on output) and search again.
    value = resolve(pattern)[1]
    node.append(value if not field else {field: value})
    return _match_seq(node, part, rest, create, into_scalars)


# --------------------------------------------------------------------------- field specs
def walk_fieldspec(obj: Any, path: str, setter: Callable[[Slot], None], create: bool = False,
                   create_kind: Optional[str] = None) -> None:
    """api/filters/fieldspec/fieldspec.go: call ``setter`` on every slot at ``path``.

    ``path`` is ``/``-separated (``\\/`` escapes a slash); a sequence met on the
    way applies the remaining path to each element; a trailing ``[]`` on a part
    only hints that the field is a sequence.  Missing fields are skipped unless
    ``create``.
    """
    parts = path_splitter(path, "/")
    _walk(obj, parts, setter, create, create_kind, None)


def _walk(obj: Any, parts: List[str], setter: Callable[[Slot], None], create: bool,
          create_kind: Optional[str], slot: Optional[Slot]) -> None:
    if not parts:
        if slot is not None:
            setter(slot)
        return
    if obj is None:
        return
    if isinstance(obj, list):
        try:
            for i in range(len(obj)):
                _walk(obj[i], parts, setter, create, create_kind, (obj, i))
        except BuildError as e:
            # fieldspec.go handleSequence: WrapPrefixf("visit traversal on path: %v")
            raise type(e)(f"visit traversal on path: [{' '.join(parts)}]: {e}") from None
        return
    if not isinstance(obj, dict):
        raise FieldPathError("expected sequence or mapping node")
    name = parts[0]
    is_seq = name.endswith("[]")
    if is_seq:
        name = name[:-2]
    if not name:
        raise FieldPathError("cannot set or create an empty field name")
    if name not in obj:
        if not create or create_kind is None or is_seq:
            return
        obj[name] = _new_node(create_kind if len(parts) <= 1 else MAPPING)
    elif obj[name] is None and len(parts) > 1 and create and not is_seq:
        obj[name] = {}
    _walk(obj[name], parts[1:], setter, create, create_kind, (obj, name))
