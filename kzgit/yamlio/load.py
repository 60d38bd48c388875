"""Reading YAML the way kustomize does.

Two readers:

* :func:`load_documents` — resource files, as ``kyaml/kio/byteio_reader.go``
  reads them: ``\\r\\n`` → ``\\n``, split on ``\\n---.*\\n`` lines, each part
  parsed by go-yaml **v3** (YAML 1.2 core typing plus v3's legacy octal),
  anchors expanded (``RNode.DeAnchor``), duplicate keys rejected the way v3's
  decoder rejects them when kustomize later unmarshals into a map.
* :func:`load_yaml11` — kustomization files, as ``sigs.k8s.io/yaml`` reads
  them: go-yaml **v2** (YAML 1.1 booleans ``yes/on/y``), duplicate keys
  silently last-wins.

Parsing uses libyaml through PyYAML's ``CSafeLoader`` composer only (never an
unsafe loader): the C code builds the node graph, and a small Python walk
types the scalars with go-yaml's rules and expands aliases into copies under
a node budget and a depth limit (a billion-laughs file must fail fast, a 3000-deep
honest file must load).  libyaml's composer recurses
on the C stack and crashes near 100 000 levels, so nesting is bounded
*before* the text reaches it.

One module on purpose, although long: the node walk, its budget and go-yaml's typing rules
share the inner loops every build runs per scalar, and splitting them would add calls there.
"""
from __future__ import annotations

import base64
import binascii
import contextlib
import gc
import json
import functools
import re
import sys

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from kzgit.errors import YamlError
from kzgit.yamlio import parsed
from kzgit.yamlio.gonum import DOT_FLOAT, parse_timestamp, resolve_number
from kzgit.yamlio.tree import DupKeys, LazyError, SpelledDict, canonical_text, copy_tree

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

# go-yaml v3's parser refuses deeper nesting ("exceeded max depth of 10000",
# goyaml.v3 parserc.go / scannerc.go max_flow_level and max_indents).
MAX_DEPTH = 10000
# Expanded-node budget: aliases may add at most this many nodes, or ten
# times the document's own node count when that is larger, so that honest
# anchor reuse works and memory stays proportional to the input.
MAX_ALIAS_EXPANSION = 1_000_000
ALIAS_EXPANSION_FACTOR = 10

# libyaml 0.2.6 (bundled by PyYAML 6.0.4 wheels) refuses nesting deeper than 1000 levels
# ("exceeded maximum nesting depth"), which go-yaml and so kubectl accept up to MAX_DEPTH.
# Nesting is bounded before the text reaches libyaml (_nesting_bound, _check_depth_exact), so
# its own limit is raised above ours wherever the binding exposes it; older libyaml has none.
_set_max_nest = getattr(getattr(yaml, "_yaml", None), "_set_max_nest_level", None)
if _set_max_nest is not None:
    _set_max_nest(2 * MAX_DEPTH)

_PLAIN = "(True, False)"  # _Loader's tag for an untagged plain scalar
_QUOTED = "(False, True)"  # _Loader's tag for an untagged quoted or block scalar
_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_BINARY = "tag:yaml.org,2002:binary"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MERGE = "tag:yaml.org,2002:merge"


class _Loader(yaml.CSafeLoader):
    """libyaml's parser and composer; every implicit tag decision is ours.

    The C composer calls ``resolve(kind, value, implicit)`` for each
    untagged node and ``descend_resolver``/``ascend_resolver`` around every
    node.  Python methods there cost about a third of the load time, so they
    are C builtins: ``resolve`` is ``"{2}".format``, which turns a scalar's
    ``(plain_implicit, quoted_implicit)`` into the text ``"(True, False)"``
    (plain: typed later by go-yaml's rules, :data:`_PLAIN`) or
    ``"(False, True)"`` (quoted or block: a string, :data:`_QUOTED`);
    collections get "True"/"1", which nothing reads.  The path resolvers are
    unused and become no-ops.
    """

    resolve = staticmethod("{2}".format)
    descend_resolver = staticmethod(slice)  # type: ignore[assignment]  # a no-op, see above
    ascend_resolver = staticmethod(tuple)  # type: ignore[assignment]  # a no-op, see above


class _BomLoader(yaml.SafeLoader):
    """PyYAML's Python parser with :class:`_Loader`'s resolver, for a text holding a byte-order
    mark after its first character.

    libyaml skips a BOM at the start of any line (scanner.c "Allow the BOM"); go-yaml has the
    same lines, yet kustomize reads ``\ufeffkind`` after a first line as a key spelled with the
    BOM (``json: unknown field "\ufeffresources"``, verified with kubectl v1.32), as PyYAML's
    Python scanner does: it skips a BOM at index 0 only.  Such files are rare, so the slower
    parser costs nothing in practice.
    """

    resolve = _Loader.resolve
    descend_resolver = _Loader.descend_resolver  # type: ignore[assignment]  # as in _Loader
    ascend_resolver = _Loader.ascend_resolver  # type: ignore[assignment]  # as in _Loader


class _ReanchorLoader(_BomLoader):
    """:class:`_BomLoader` that lets an anchor be defined again, as go-yaml does (an alias names
    the newest definition before it: ``a: &x one``, ``b: &x two``, ``c: *x`` is ``two``,
    verified with kubectl 1.32 and 1.36), where libyaml's composer refuses "found duplicate
    anchor".  Only for a text that redefines one (:func:`_redefines_anchor`)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if not self.check_event(yaml.AliasEvent):
            anchor = self.peek_event().anchor
            if anchor is not None:
                self.anchors.pop(anchor, None)
        return super().compose_node(parent, index)


_ANCHOR = re.compile(r"(?:^|[\s\[{,:-])&([^\s,\[\]{}]+)")


def _redefines_anchor(text: str) -> bool:
    """Whether ``text`` may define one anchor name twice (a cheap look at the text; a false
    positive only costs the slower parser)."""
    if "&" not in text:
        return False
    names = _ANCHOR.findall(text)
    return len(names) != len(set(names))


def _loader(text: str) -> Union[_Loader, _BomLoader]:
    """The parser for ``text``: libyaml, unless a BOM after the start would make it read the
    text otherwise than go-yaml (see :class:`_BomLoader`), or it defines an anchor twice
    (:class:`_ReanchorLoader`)."""
    if _redefines_anchor(text):
        return _ReanchorLoader(text)
    if "\ufeff" in text.lstrip("\ufeff"):
        # (marks at the very start are skipped by both: go-yaml's reader takes the first, and
        # its scanner a second at column 0, as libyaml does)
        return _BomLoader(text)
    return _Loader(text)


class _Inf:
    """Marker for .inf / .nan: JSON cannot carry them, kustomize fails there."""


_INF = _Inf()

# resolveMap of goyaml.v3/resolve.go (YAML 1.2 core schema spellings).
_V3_WORDS: Dict[str, Any] = {
    "true": True, "True": True, "TRUE": True,
    "false": False, "False": False, "FALSE": False,
    "": None, "~": None, "null": None, "Null": None, "NULL": None,
}
# goyaml.v2/resolve.go adds the YAML 1.1 booleans.
_V2_WORDS: Dict[str, Any] = dict(_V3_WORDS)
for _w in ("y", "Y", "yes", "Yes", "YES", "on", "On", "ON"):
    _V2_WORDS[_w] = True
for _w in ("n", "N", "no", "No", "NO", "off", "Off", "OFF"):
    _V2_WORDS[_w] = False
for _w in (".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF",
           "-.inf", "-.Inf", "-.INF"):
    _V3_WORDS[_w] = _INF
    _V2_WORDS[_w] = _INF

_NUMERIC_START = frozenset("0123456789+-")


def _resolve_plain(value: str, words: Dict[str, Any], timestamps: bool) -> Any:
    """go-yaml's resolve("", value) for an untagged plain scalar (hint table first)."""
    if value in words:
        return words[value]
    c = value[0]
    if c in _NUMERIC_START:
        if timestamps and len(value) >= 8 and value[4] == "-":
            ts = parse_timestamp(value)
            if ts is not None:
                return ts
        n = resolve_number(value)
        return value if n is None else n
    if c == "." and DOT_FLOAT.match(value):
        return float(value)
    return value


def plain_scalar_is_string(text: str) -> bool:
    """Whether go-yaml v3 reads ``text``, written as a plain scalar, as a string (resolve.go:
    not null, a bool, an int, a float or a timestamp)."""
    if text in _V3_WORDS:
        return False
    c = text[:1]
    if c in _NUMERIC_START:
        if len(text) >= 8 and text[4] == "-" and parse_timestamp(text) is not None:
            return False
        return resolve_number(text) is None
    return not (c == "." and DOT_FLOAT.match(text))


@functools.lru_cache(maxsize=None)   # compiled on first use: most builds never need it
def _fold_run() -> "re.Pattern[str]":
    return re.compile(r"(?<=[^\n])\n+(?=[ \t])")


def go_folded_round_trip(value: str) -> str:
    """The value of a ``>`` block scalar after kyaml's v3 encode → decode round trip.

    goyaml.v3 emitterc.go yaml_emitter_write_folded_scalar looks for the
    character after a run of line breaks with ``is_break(value, k)`` from
    k = 0 instead of from the break, so unless the value starts with a blank
    it writes an extra break before *every* line break of a line that does
    not start with a blank.  Read back, that extra break only shows before a
    more-indented line (one starting with a space or tab), which is where
    libyaml (and the YAML spec) would not have written it: there the value
    gains one "\n".  kubectl: ``>\n a\n   b\n`` → ``"a\n\n  b\n"``.
    """
    if not value or value[0] in " \t\n" or " \n" in value or value.rstrip("\n").endswith(" "):
        # Starts blank: the bug never fires.  Space before a break or a
        # trailing space: v3 cannot write a block scalar and double-quotes it.
        return value
    out = []
    pos = 0
    for m in _fold_run().finditer(value):
        # The line the run ends must not itself start with a blank.
        line_start = value.rfind("\n", 0, m.start()) + 1
        if value[line_start] in " \t":
            continue
        out.append(value[pos:m.end()])
        out.append("\n")
        pos = m.end()
    if not out:
        return value
    out.append(value[pos:])
    return "".join(out)


class _Builder:
    """Turns one composed node graph into plain Python values."""

    def __init__(self, source: str, v3: bool, first_wins: bool = False, strict: bool = False) -> None:
        self.source = source
        self.v3 = v3
        self.first_wins = first_wins
        self.strict = strict
        self.words = _V3_WORDS if v3 else _V2_WORDS
        self.count = 0
        self.extra = 0  # nodes added by alias expansion
        self.aliased = False
        # id(node) -> (value, expanded size); None marks "being built".
        self.memo: Dict[int, Optional[Tuple[Any, int]]] = {}

    def fail(self, node: Node, msg: str) -> YamlError:
        line = node.start_mark.line + 1 if node.start_mark is not None else 0
        return YamlError(f"{self.source}: yaml: line {line}: {msg}")

    def undecodable(self, node: ScalarNode, msg: str) -> Any:
        """A scalar decoding fails on: kyaml (v3) keeps the node and kustomize fails only
        when it decodes the resource (see LazyError); go-yaml v2 fails at once."""
        if not self.v3:
            raise self.fail(node, msg)
        return LazyError(node.value, str(self.fail(node, msg).message))

    def scalar(self, node: ScalarNode) -> Any:
        tag = node.tag
        value = node.value
        if tag == _PLAIN:
            if not value:
                return None
            v = _resolve_plain(value, self.words, self.v3)
            if v is _INF:
                # encoding/json refuses ±Inf and NaN when kustomize converts the
                # resource (resource.go AsYAML → json.Marshal).
                return self.undecodable(node, f"json: unsupported value: {value!s} (.inf and .nan "
                                              "cannot be converted to JSON)")
            return v
        if tag == _QUOTED or tag == _STR:
            if node.style == ">":
                return go_folded_round_trip(value)
            return value
        if tag == _BINARY:
            # v3/v2 decode: base64.StdEncoding, which skips \r and \n; json then
            # turns invalid UTF-8 into U+FFFD.
            try:
                raw = base64.b64decode(value.replace("\n", "").replace("\r", "").replace(" ", ""), validate=True)
            except (binascii.Error, ValueError):
                return self.undecodable(node, "!!binary value contains invalid base64 data")
            return raw.decode("utf-8", "replace")
        if tag in (_INT, _FLOAT, _BOOL, _NULL, _TIMESTAMP):
            v = _resolve_plain(value, self.words, self.v3) if value else None
            if v is _INF:
                return self.undecodable(node, f"json: unsupported value: {value}")
            if tag == _FLOAT and type(v) is int:
                return float(v)
            if tag == _TIMESTAMP:
                return v
            ok = {_INT: (int,), _FLOAT: (float,), _BOOL: (bool,), _NULL: (type(None),)}[tag]
            if type(v) not in ok:
                short = "!!" + tag.rsplit(":", 1)[1]
                return self.undecodable(node, f"cannot decode !!str `{value}` as a {short}")
            return v
        # Unknown or local tags (!foo, !!python/...): go-yaml ignores them and
        # keeps the text as a string (resolvableTag is false).
        return value

    def build(self, node: Node, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise self.fail(node, f"exceeded max depth of {MAX_DEPTH}")
        self.count += 1
        if node.__class__ is ScalarNode:
            return self.scalar(node)
        key = id(node)
        memo = self.memo
        if key in memo:
            hit = memo[key]
            if hit is None:
                raise self.fail(node, "anchor value contains itself")
            # An alias: its expansion costs as much as the anchored value.
            self.aliased = True
            self.count += hit[1] - 1
            self.extra += hit[1]
            budget = max(MAX_ALIAS_EXPANSION, ALIAS_EXPANSION_FACTOR * (self.count - self.extra))
            if self.extra > budget:
                raise YamlError(
                    f"{self.source}: yaml: aliases expand the document by more than {budget} nodes "
                    f"(an alias bomb?); kzgit refuses it")
            return hit[0]
        memo[key] = None
        start = self.count
        if node.__class__ is SequenceNode:
            value: Any = [self.build(child, depth + 1) for child in node.value]
        else:
            value = self.mapping(node, depth)  # type: ignore[arg-type]
        memo[key] = (value, self.count - start + 1)
        return value

    def mapping(self, node: MappingNode, depth: int) -> Dict[Any, Any]:
        out: Dict[Any, Any] = {}
        spelling: Optional[Dict[Any, Tuple[str, Any]]] = None
        merges: List[Any] = []
        seen: Optional[Dict[str, ScalarNode]] = {} if self.v3 else None
        dups: Optional[List[str]] = None
        last: Dict[str, Any] = {}
        last_spelling: Dict[Any, Tuple[str, Any]] = {}
        for knode, vnode in node.value:
            if knode.__class__ is ScalarNode and knode.value == "<<":
                # kyaml RNode.DeAnchor → removeMergeTags: a plain "<<" is a
                # merge key; then Clear("<<") drops the field whatever its
                # style, so a quoted "<<" key silently disappears too.
                if knode.tag == _PLAIN and self.v3:
                    merges.append(vnode)
                elif not self.v3:
                    # go-yaml v2 merges a plain "<<" only (decode.go isMerge).
                    if knode.tag == _PLAIN:
                        merges.append(vnode)
                    else:
                        out["<<"] = self.build(vnode, depth + 1)
                continue
            if seen is not None and knode.__class__ is ScalarNode:
                # goyaml.v3 decode.go mapping(): same kind and same text is a
                # duplicate, whatever the resolved type.
                first = seen.get(knode.value)
                if first is not None:
                    msg = (f"{self.source}: yaml: unmarshal errors:\n  line {knode.start_mark.line + 1}: "
                           f"mapping key {json.dumps(knode.value, ensure_ascii=False)} already defined at "
                           f"line {first.start_mark.line + 1}")
                    if not self.first_wins:
                        raise YamlError(msg)
                    # kept as a node, kyaml's lookups (RNode.Field) find the first one; the
                    # last is kept aside for the readers that decode a map (GetLabels)
                    dups = (dups or []) + [msg]
                    last[knode.value] = lv = self.build(vnode, depth + 1)
                    text = self.spelled_text(vnode, lv)
                    if text is None:
                        last_spelling.pop(knode.value, None)
                    else:
                        last_spelling[knode.value] = (text, lv)
                    continue
                seen[knode.value] = knode
            if knode.__class__ is not ScalarNode:
                # go-yaml v3 decoding into map[string]interface{}: "invalid map key".
                raise self.fail(knode, "invalid map key: a mapping or sequence cannot be a key")
            k = self.build(knode, depth + 1)
            if type(k) is not str or (knode.tag == _PLAIN and k != knode.value):
                # (a str that differs from its text is a timestamp: a time.Time key)
                if self.v3:
                    # v3 decodes such a map as map[interface{}]interface{},
                    # which encoding/json refuses (kustomize: "json:
                    # unsupported type: map[interface {}]interface {}").
                    raise self.fail(knode, f"json: unsupported type: map[interface {{}}]interface {{}} "
                                           f"(the mapping key {knode.value!r} is not a string)")
                k = _key_text(k, knode) if type(k) is not str else knode.value
            if self.strict and k in out:
                # go-yaml v2 UnmarshalStrict (decode.go setMapIndex): "key %#v already set in
                # map" at the line of the value
                raise YamlError(f"{self.source}: yaml: unmarshal errors:\n  line {vnode.start_mark.line + 1}: "
                                f"key {json.dumps(k, ensure_ascii=False)} already set in map")
            out[k] = v = self.build(vnode, depth + 1)
            text = self.spelled_text(vnode, v)
            if text is not None:
                if spelling is None:
                    spelling = {}
                spelling[k] = (text, v)
        if spelling is not None:
            out = SpelledDict(out)
            out.spelling = spelling
        if merges:
            if len(merges) > 1:
                raise self.fail(node, "duplicate merge key")
            out = self.merge(merges[0], out, depth)
        if dups:
            dd = DupKeys(out)
            dd.spelling = dict(getattr(out, "spelling", {}))
            dd.duplicates = dups
            dd.last = last
            dd.last_spelling = last_spelling
            out = dd
        return out

    def spelled_text(self, vnode: Node, v: Any) -> Optional[str]:
        """The plain scalar's text when ``v`` would not print back as it (see SpelledDict)."""
        if (self.v3 and vnode.__class__ is ScalarNode and vnode.tag == _PLAIN
                and (v.__class__ is not str or v != vnode.value) and canonical_text(v) != vnode.value):
            return str(vnode.value)
        return None

    def merge(self, vnode: Node, own: Dict[Any, Any], depth: int) -> Dict[Any, Any]:
        value = self.build(vnode, depth + 1)
        if isinstance(value, dict):
            sources = [value]
        elif type(value) is list and vnode.__class__ is SequenceNode:
            sources = []
            for item, inode in zip(value, vnode.value):
                if inode.__class__ is SequenceNode:
                    raise self.fail(inode, "invalid map merge: received a nested sequence")
                if not isinstance(item, dict):
                    raise self.fail(inode, "map merge requires map or sequence of maps as the value")
                sources.append(item)
            # Earlier maps in the list win (findMergeValues prepends).
            sources.reverse()
        else:
            raise self.fail(vnode, "map merge requires map or sequence of maps as the value")
        out: Dict[Any, Any] = {}
        spelling: Dict[Any, Tuple[str, Any]] = {}
        for src in sources + [own]:
            out.update(_deep_copy(src) if src is not own else own)
            texts = src.spelling if src.__class__ is SpelledDict else {}
            for k in src:
                if k in texts:
                    spelling[k] = texts[k]
                else:
                    spelling.pop(k, None)
        if spelling:
            spelled_out = SpelledDict(out)
            spelled_out.spelling = spelling
            return spelled_out
        return out


def _key_text(k: Any, knode: Node) -> Any:
    """A non-string key as it reaches JSON: sigs.k8s.io/yaml prints it as text."""
    if k is None:
        return "null"
    if type(k) is bool:
        return "true" if k else "false"
    if type(k) in (int, float):
        return knode.value if isinstance(knode, ScalarNode) else str(k)
    raise YamlError("mapping key is not a scalar")


def _deep_copy(v: Any) -> Any:
    """Copies containers so each alias expansion is its own object (kyaml CopyYNode)."""
    t = type(v)
    if t is dict:
        return {k: _deep_copy(x) for k, x in v.items()}
    if t is list:
        return [_deep_copy(x) for x in v]
    if t is SpelledDict or t is DupKeys:
        return copy_tree(v)
    return v


_SEPARATOR = re.compile(r"\n---[^\n]*\n")


def split_documents(text: str, source: str) -> List[Tuple[str, int]]:
    """kio's splitDocuments: parts between ``\\n---.*\\n`` lines, with each part's first line number.

    A separator line carrying anything but a comment is an error
    (``invalid document separator``), as in kyaml/kio/byteio_reader.go.
    """
    if not text:
        return []
    parts: List[Tuple[str, int]] = []
    prev = 0
    line = 1
    for m in _SEPARATOR.finditer(text):
        rest = m.group()[4:].strip()
        if rest and rest[0] != "#":
            raise YamlError(f"{source}: invalid document separator: {m.group().strip()}")
        parts.append((text[prev:m.start()] + "\n", line))
        line += text.count("\n", prev, m.end())
        prev = m.end()
    parts.append((text[prev:], line))
    return parts


def _nesting_bound(text: str) -> int:
    """A cheap upper bound of the nesting depth libyaml would reach.

    Every flow level needs a ``[`` or ``{``; every block level needs at least
    one more column of indentation or a ``- ``/``? `` on its line.
    """
    if len(text) <= MAX_DEPTH:
        return len(text)
    flow = text.count("[") + text.count("{")
    if flow > MAX_DEPTH:
        return flow
    return flow + max(map(len, text.split("\n")))


def _check_depth_exact(loader: Union[_Loader, _BomLoader], source: str) -> None:
    """Walks the parser events (no composing) and fails past MAX_DEPTH.

    Only used when the cheap bound is exceeded; the loader is then spent.
    """
    depth = 0
    start_types = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
    end_types = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    while True:
        ev = loader.get_event()
        if ev is None or isinstance(ev, yaml.StreamEndEvent):
            return
        if isinstance(ev, start_types):
            depth += 1
            if depth > MAX_DEPTH:
                line = ev.start_mark.line + 1 if ev.start_mark else 0
                raise YamlError(f"{source}: yaml: line {line}: exceeded max depth of {MAX_DEPTH}")
        elif isinstance(ev, end_types):
            depth -= 1


def _yaml_error(source: str, e: yaml.YAMLError, text: str, v2: bool = False) -> YamlError:
    """go-yaml's ``yaml: line N: <problem>`` for a libyaml error (the same C parser, ported).

    The line is go-yaml's, not the problem's: ``parser.fail`` takes a 0-based mark and adds one
    only for scanner errors, so a parser error names the line before.  v3 (resources, kyaml)
    prefers the context's mark ("while parsing a flow sequence" -- where the ``[`` opened), v2
    (kustomization files, sigs.k8s.io/yaml) the problem's; a mark on line 0 is skipped and no
    line at all is printed when both are.  An unclosed ``[`` opened on line 46 of 46 is "line
    45" in a resource and "line 46" in a kustomization (both verified with kubectl v1.32).
    """
    problem = getattr(e, "problem", None) or str(e)
    mark = getattr(e, "problem_mark", None)
    if problem.startswith("found undefined alias") and mark is not None:
        # go-yaml's composer: failf("unknown anchor '%s' referenced"), with no line
        m = re.match(r"\*([^\s,\[\]{}]+)", text[mark.index:]) if mark.index is not None else None
        if m:
            return YamlError(f"{source}: MalformedYAMLError: yaml: unknown anchor '{m.group(1)}' referenced")
    scanner = 1 if isinstance(e, yaml.scanner.ScannerError) else 0
    marks = [getattr(e, "context_mark", None), getattr(e, "problem_mark", None)]
    if v2:
        marks.reverse()
    line = next((m.line + scanner for m in marks if m is not None and m.line != 0), 0)
    where = f"line {line}: " if line else ""
    return YamlError(f"{source}: MalformedYAMLError: yaml: {where}{problem}")


def _compose_first(text: str, source: str, deep: bool) -> Optional[Node]:
    """The first document's node graph of ``text`` (kio decodes one document per part)."""
    try:
        if deep:
            _check_depth_exact(_loader(text), source)
        loader = _loader(text)
        try:
            return loader.get_node() if loader.check_node() else None
        finally:
            loader.dispose()
    except yaml.YAMLError as e:
        raise _yaml_error(source, e, text) from None


_UTF16_BOMS = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be"}


def is_utf16(data: Union[bytes, str]) -> bool:
    """Whether ``data`` starts with a UTF-16 byte-order mark (go-yaml then reads UTF-16)."""
    return isinstance(data, bytes) and data[:2] in _UTF16_BOMS


def decode_text(data: bytes, source: str) -> str:
    """File bytes as go-yaml's reader decodes them.

    go-yaml (v2 and v3, readerc.go yaml_parser_determine_encoding) looks for a byte-order
    mark: UTF-16LE or UTF-16BE text is decoded, a UTF-8 BOM is skipped by the scanner, and
    anything else must be valid UTF-8.
    """
    codec = _UTF16_BOMS.get(data[:2])
    if codec is not None:
        body = data[2:]
        if len(body) % 2:
            raise YamlError(f"{source}: yaml: incomplete UTF-16 character sequence")
        try:
            return body.decode(codec)
        except UnicodeDecodeError:
            raise YamlError(f"{source}: yaml: invalid UTF-16 surrogate pair") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise YamlError(f"{source}: yaml: invalid UTF-8 at byte {e.start}") from None


def _to_text(data: Union[bytes, str], source: str) -> str:
    if isinstance(data, bytes):
        return decode_text(data, source)
    return data


# Patterns of a rare path (a file cut inside a UTF-8 sequence), compiled by the re module when
# first used there rather than when every build imports this module.
# After the first document's content: a line starting a document or ending one
_DOCUMENT_MARK = r"(?m)^(?:---|\.\.\.)(?=[ \t\r\n]|$)"
_LEADING = r"(?:[ \t]*(?:#[^\n]*)?\n|%[^\n]*\n)*(?:---[^\n]*\n)?"


def _first_document_text(data: Union[bytes, str], source: str) -> str:
    """:func:`decode_text` for a reader of the first document only (go-yaml v2 Unmarshal).

    go-yaml's reader (readerc.go yaml_parser_update_buffer) decodes its input as the scanner
    asks for it, and a character cut short at the end of the input is decoded only when the
    scanner reaches it: a file whose first document ends before a last, incomplete UTF-8
    sequence (``# caf\xe9`` after ``---``) reads without error.
    """
    if not isinstance(data, bytes) or data[:2] in _UTF16_BOMS:
        return _to_text(data, source)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        p, lead = e.start, data[e.start]
        width = 2 if 0xC0 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF else 4 if 0xF0 <= lead <= 0xF7 else 0
        if width and p + width > len(data):
            head = data[:p].decode("utf-8")
            start = re.match(_LEADING, head)
            if re.compile(_DOCUMENT_MARK).search(head, start.end() if start else 0):
                return head
        raise YamlError(f"{source}: yaml: invalid UTF-8 at byte {e.start}") from None


class _NeedSlowPath(Exception):
    """The fast builder met something only :class:`_Builder` handles (merge, dup, tag)."""


def _fast_build(root: Node, v3: bool) -> Any:
    """The common case: no anchors in the text, so no aliases, merges of aliases or budgets.

    Duplicate keys, merge keys and explicit tags make it give up; the caller
    then runs :class:`_Builder`, which reports them exactly.
    """
    words = _V3_WORDS if v3 else _V2_WORDS
    cache: Dict[str, Any] = {}
    plain_tag = _PLAIN
    quoted_tag = _QUOTED

    def scalar(n: ScalarNode) -> Any:
        tag = n.tag
        v = n.value
        if tag == plain_tag:
            if not v:
                return None
            r = cache.get(v, _INF)
            if r is _INF:
                r = _resolve_plain(v, words, v3)
                if r is _INF:
                    raise _NeedSlowPath()
                cache[v] = r
                if v3 and (r.__class__ is not str or r != v) and canonical_text(r) != v:
                    spelled_texts.add(v)
            return r
        if tag == quoted_tag:
            if n.style == ">":
                return go_folded_round_trip(v)
            return v
        raise _NeedSlowPath()

    # Plain texts whose value would not print back as written (see SpelledDict).
    spelled_texts = {""} if v3 else set()

    def build(n: Node) -> Any:
        c = n.__class__
        if c is ScalarNode:
            return scalar(n)  # type: ignore[arg-type]
        if c is SequenceNode:
            return [build(x) for x in n.value]
        out: Dict[Any, Any] = {}
        spelling = None
        for kn, vn in n.value:
            if kn.__class__ is not ScalarNode or kn.value == "<<":
                raise _NeedSlowPath()
            k = scalar(kn)
            if type(k) is not str or k != kn.value:
                if v3:
                    raise _NeedSlowPath()
                k = _key_text(k, kn) if type(k) is not str else kn.value
            out[k] = v = build(vn)
            if vn.__class__ is ScalarNode and vn.value in spelled_texts and vn.tag == plain_tag:
                if spelling is None:
                    spelling = {}
                spelling[k] = (vn.value, v)
        if len(out) != len(n.value):
            raise _NeedSlowPath()  # a duplicate key: let _Builder word the error
        if spelling is not None:
            out = SpelledDict(out)
            out.spelling = spelling
        return out

    return build(root)


def _build_value(node: Node, source: str, v3: bool, anchors: bool, first_wins: bool = False,
                 strict: bool = False) -> Any:
    """Python value of one document's node graph; ``anchors`` says the text may hold aliases."""
    old = sys.getrecursionlimit()
    if old < 4 * MAX_DEPTH:
        # Nesting was bounded to MAX_DEPTH before composing; each level costs
        # two Python frames (a call and a comprehension).
        sys.setrecursionlimit(4 * MAX_DEPTH)
    try:
        if not anchors:
            try:
                return _fast_build(node, v3)
            except _NeedSlowPath:
                pass
        b = _Builder(source, v3, first_wins, strict)
        value = b.build(node, 0)
        if b.aliased:
            # Shared objects would let an edit through one alias show up at the
            # other places; kustomize expands aliases into independent copies
            # (kyaml CopyYNode).  Expanded nesting is bounded here too.
            value = _copy_bounded(value, 0, source)
        return value
    finally:
        if old < 4 * MAX_DEPTH:
            sys.setrecursionlimit(old)


def _copy_bounded(v: Any, depth: int, source: str) -> Any:
    if depth > MAX_DEPTH:
        raise YamlError(f"{source}: yaml: aliases expand the document deeper than {MAX_DEPTH} levels")
    t = type(v)
    if t is dict:
        return {k: _copy_bounded(x, depth + 1, source) for k, x in v.items()}
    if t is SpelledDict or t is DupKeys:
        out = t({k: _copy_bounded(x, depth + 1, source) for k, x in v.items()})
        out.spelling = dict(v.spelling)
        if t is DupKeys:
            out.duplicates, out.last = list(v.duplicates), dict(v.last)
            out.last_spelling = dict(v.last_spelling)
        return out
    if t is list:
        return [_copy_bounded(x, depth + 1, source) for x in v]
    return v


def _compose_stream(text: str) -> Iterator[Node]:
    """Every document's node graph from one libyaml pass, one at a time."""
    loader = _loader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            assert node is not None  # check_node() said there is one
            yield node
    finally:
        loader.dispose()


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """Pauses the cyclic garbage collector while building large acyclic trees.

    Loading and dumping allocate hundreds of thousands of nodes and
    containers, none of them in cycles; without this, CPython's generational
    collector rescans the growing heap again and again (measured: about half
    of the load time of a 3,000-document stream).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


# Texts where one libyaml pass over the whole stream could differ from kio's
# part-by-part reading: document end markers and directives.
_STREAM_UNSAFE = re.compile(r"(?:^|\n)(?:\.\.\.|%)")


def load_documents(data: Union[bytes, str], source: str = "", first_wins: bool = False,
                   keep: bool = False) -> List[Any]:
    """Parses a resource file into its non-empty documents (kio.FromBytes + DeAnchor).

    Raises :class:`YamlError` naming ``source`` for malformed YAML, bad
    separators, duplicate keys, ``.inf``/``.nan``, alias bombs and nesting
    deeper than go-yaml's 10000 levels.

    ``first_wins`` (strategic-merge patches): a duplicate key is no error; the mapping keeps
    the first value, as kyaml's lookups on the node find it, and becomes a
    :class:`~kzgit.yamlio.tree.DupKeys` that remembers the error kustomize raises once such a
    mapping is copied whole into a resource (kyaml keeps both keys; decoding the resource then
    fails).

    A text parsed before with ``keep`` (one that will be read again, :mod:`kzgit.yamlio.parsed`)
    is not parsed again.
    """
    if is_utf16(data):
        # kio splits the raw bytes on "\n---" lines, which UTF-16 text never holds, and
        # decodes one document per part (kyaml/kio/byteio_reader.go Read → decode): of a
        # UTF-16 file only the first document is read.
        text = _to_text(data, source)
        parts = [(text, 1)]
        utf16 = True
    else:
        text = _to_text(data, source).replace("\r\n", "\n")
        try:
            return parsed.recall(parsed.DOCUMENTS, text)   # this text was parsed already
        except KeyError:
            pass
        parts = split_documents(text, source)
        utf16 = False
    deep = _nesting_bound(text) > MAX_DEPTH
    anchors = "&" in text
    with no_gc():
        out = _load_parts(text, parts, source, deep, anchors, stream=not utf16, first_wins=first_wins)
    if keep and not utf16 and not anchors:
        parsed.remember(parsed.DOCUMENTS, text, out)
    return out


def _load_parts(text: str, parts: List[Tuple[str, int]], source: str, deep: bool, anchors: bool,
                stream: bool = True, first_wins: bool = False) -> List[Any]:
    out: List[Any] = []
    if stream and not deep and _STREAM_UNSAFE.search(text) is None:
        # Fast path: one libyaml pass.  kio splits on the same "---" lines
        # libyaml treats as document starts, so the documents are the same;
        # on any error the part-by-part path below words it as kustomize does.
        try:
            for node in _compose_stream(text):
                value = _build_value(node, source, True, anchors, first_wins)
                if value is not None:
                    out.append(value)
            return out
        except (yaml.YAMLError, YamlError):
            out = []
    for part, _line in parts:
        first = _compose_first(part, source, deep)
        if first is None:
            continue
        value = _build_value(first, source, True, anchors, first_wins)
        if value is None:
            continue
        out.append(value)
    return out


@functools.lru_cache(maxsize=None)   # compiled on first use: most builds never need it
def _directives() -> "re.Pattern[str]":
    return re.compile(r"(?:[ \t]*(?:#[^\n]*)?\n|%[^\n]*\n)*")


@functools.lru_cache(maxsize=None)   # compiled on first use: most builds never need it
def _yaml_directive() -> "re.Pattern[str]":
    return re.compile(r"(?m)^%YAML[ \t]+(\d+)\.(\d+)")


def _check_v2_version(text: str, source: str) -> None:
    """go-yaml v2 (parserc.go process_directives) reads YAML 1.1 only: a ``%YAML`` directive
    of another version is "found incompatible YAML document" (PyYAML only warns)."""
    if text.startswith("\ufeff"):
        text = text[1:]   # the reader skips a leading BOM before the directives
    if not text.startswith(("%", "#", "\n", " ", "\t")):
        return
    head = _directives().match(text)
    for m in _yaml_directive().finditer(head.group(0) if head else ""):
        if (m.group(1), m.group(2)) != ("1", "1"):
            raise YamlError(f"{source}: yaml: found incompatible YAML document")


def load_yaml11(data: Union[bytes, str], source: str = "", strict: bool = False,
                keep: bool = False) -> Any:
    """Parses a kustomization file as sigs.k8s.io/yaml does (go-yaml v2, YAML 1.1).

    ``yes``/``on``/``y`` are booleans, timestamps stay strings (v2 decodes them
    into ``interface{}`` as their text), duplicate keys: the last one wins.
    Only the first document is read, as ``yaml.Unmarshal`` and ``yaml.YAMLToJSON`` do.
    ``strict``: ``yaml.UnmarshalStrict``, where a key written twice is an error.
    A text parsed before with ``keep`` (one that will be read again, :mod:`kzgit.yamlio.parsed`)
    is not parsed again.
    """
    text = _first_document_text(data, source)
    if not strict:
        try:
            return parsed.recall(parsed.YAML11, text)   # this text was parsed already
        except KeyError:
            pass
    _check_v2_version(text, source)
    deep = _nesting_bound(text) > MAX_DEPTH
    try:
        if deep:
            _check_depth_exact(_loader(text), source)
        loader = _loader(text)
        try:
            # go-yaml v2 Unmarshal decodes the first document and never reads on: a
            # trailing "---" (or anything after it) is not an error
            node = loader.get_node() if loader.check_node() else None
        finally:
            loader.dispose()
    except yaml.YAMLError as e:
        raise _yaml_error(source, e, text, v2=True) from None
    if node is None:
        return None
    value = _build_value(node, source, False, "&" in text, strict=strict)
    if keep and not strict and "&" not in text:
        parsed.remember(parsed.YAML11, text, value)
    return value

