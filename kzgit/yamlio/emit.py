"""Writing YAML exactly as kustomize prints resources.

kustomize prints each resource through ``sigs.k8s.io/yaml.JSONToYAML``: the
JSON text is read by go-yaml **v2** and written again by v2's ``Marshal``
(a Go port of libyaml's emitter).  kzgit builds the same event
stream and lets the real libyaml (PyYAML's ``CEmitter``) write it:

* mapping keys in go-yaml v2's natural order (``goyaml.v2/sorter.go``);
* each string's requested style as ``goyaml.v2/encode.go stringv`` picks it:
  literal block if it contains a newline, double-quoted if a YAML 1.1 reader
  (``goyaml.v2/resolve.go``) would not read it back as a string, otherwise
  plain — libyaml's analysis then falls back to single or double quotes;
* numbers as the JSON → v2 round trip prints them (``gonum``).

Width 80, indent 2, unicode allowed: the settings of v2's emitter.
"""
from __future__ import annotations

import functools
import os
import re
import sys

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from kzgit.errors import YamlError
from kzgit.yamlio import parsed
from kzgit.yamlio.load import MAX_DEPTH, no_gc
from kzgit.yamlio.gonum import DOT_FLOAT, parse_timestamp, resolve_number, yaml_number_text
from kzgit.yamlio.tree import DupKeys, LazyError, SharedStr, SpelledDict

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List, Optional, Tuple

# One tag for every node: see TagFreeDumper.
NODE_TAG = "tag:yaml.org,2002:str"
_STR = _MAP = _SEQ = NODE_TAG

# resolveMap of goyaml.v2/resolve.go: every spelling that is not a string.
_V2_WORDS = frozenset(
    "y Y yes Yes YES true True TRUE on On ON n N no No NO false False FALSE off Off OFF "
    "~ null Null NULL .nan .NaN .NAN .inf .Inf .INF +.inf +.Inf +.INF -.inf -.Inf -.INF".split()
) | {""}
_HINT_WORDS = frozenset("yYnNtTfFoO~")
_NUMERIC_START = frozenset("0123456789+-")


# isBase60Float in goyaml.v2/encode.go; compiled on first use: most builds never need it
@functools.lru_cache(maxsize=None)
def _base60() -> "re.Pattern[str]":
    return re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?\Z")


def _v2_not_string(s: str) -> bool:
    """True when goyaml.v2 resolve("", s) gives a non-string tag, or s is a base-60 float.

    Those strings are written double-quoted (encode.go stringv: canUsePlain false).
    """
    if s in _V2_WORDS:
        return True
    c = s[0]
    if c in _NUMERIC_START:
        if len(s) >= 8 and s[4] == "-" and parse_timestamp(s) is not None:
            return True
        if resolve_number(s) is not None:
            return True
        return ":" in s and _base60().match(s) is not None
    if c == ".":
        return DOT_FLOAT.match(s) is not None
    return False


@functools.lru_cache(maxsize=None)   # compiled on first use: most builds never need it
def _json_raw_control() -> "re.Pattern[str]":
    return re.compile("[\x7f-\x84\x86-\x9f\ufffe\uffff]")


def _has_json_raw_control(s: str) -> bool:
    """Whether ``s`` holds a character of :func:`_json_raw_control` (of ASCII, only DEL)."""
    return "\x7f" in s if s.isascii() else _json_raw_control().search(s) is not None


_LITERAL = "|"
_DOUBLE = '"'
_RARE = "rare"
_style_cache: Dict[str, Optional[str]] = {}


def _style(s: str) -> Optional[str]:
    """The style go-yaml v2 requests for string ``s`` (None = plain, libyaml may quote it).

    ``_RARE`` marks the strings :class:`_Writer` must treat specially.
    """
    if _has_json_raw_control(s):
        # encoding/json writes these raw and go-yaml v2's reader refuses them
        # when kustomize converts JSON back to YAML (readerc.go).
        raise YamlError("yaml: control characters are not allowed (a string holds one of "
                        "U+007F-U+009F or U+FFFE/U+FFFF, which kustomize cannot print)")
    if s and (s[0] == "\ufeff" or "\x85" in s or s[-1] in "\u2028\u2029"):
        st = _RARE
    elif "\n" in s:
        st = _LITERAL
    elif _v2_not_string(s):
        st = _DOUBLE
    else:
        st = None
    if len(_style_cache) > 100_000:
        _style_cache.clear()
    _style_cache[s] = st
    return st


# ---------------------------------------------------------------- key order

def _wrap64(n: int) -> int:
    n &= (1 << 64) - 1
    return n - (1 << 64) if n >= 1 << 63 else n


def _go_is_digit(c: str) -> bool:
    return c.isdecimal()


def key_less(a: str, b: str) -> bool:
    """goyaml.v2/sorter.go keyList.Less for two string keys (a natural sort)."""
    ar, br = a, b
    n = min(len(ar), len(br))
    for i in range(n):
        ca, cb = ar[i], br[i]
        if ca == cb:
            continue
        al, bl = ca.isalpha(), cb.isalpha()
        if al and bl:
            return ca < cb
        if al or bl:
            return bl
        an = bn = 0
        if ca == "0" or cb == "0":
            j = i - 1
            while j >= 0 and _go_is_digit(ar[j]):
                if ar[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai = i
        while ai < len(ar) and _go_is_digit(ar[ai]):
            an = _wrap64(an * 10 + (ord(ar[ai]) - 48))
            ai += 1
        bi = i
        while bi < len(br) and _go_is_digit(br[bi]):
            bn = _wrap64(bn * 10 + (ord(br[bi]) - 48))
            bi += 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return ca < cb
    return len(ar) < len(br)


# Keys made only of ASCII letters and of ASCII punctuation below "A" (but no
# digits) sort bytewise under keyList.Less: letters compare by code point,
# a non-letter before a letter, two non-digits by code point.
_BYTEWISE_SAFE = re.compile(r"[A-Za-z!-/:-@ ]*\Z")
_order_cache: Dict[Tuple[str, ...], List[str]] = {}


def _comparison_sort(keys: List[str]) -> List[str]:
    """Sorts with keyList.Less itself.

    On key sets where Less is a total order any sort gives Go's result.  On
    the rare sets where it is not (``b1c b10c b01c``), Go's own output
    depends on the random map iteration order, so kubectl is not
    deterministic there either (observed: four different outputs in six
    runs) and no order is "right".
    """
    def cmp(x: str, y: str) -> int:
        if key_less(x, y):
            return -1
        if key_less(y, x):
            return 1
        return 0

    return sorted(keys, key=functools.cmp_to_key(cmp))


def sorted_keys(d: Dict[str, Any]) -> List[str]:
    """The keys of ``d`` in go-yaml v2's output order."""
    keys = tuple(d)
    hit = _order_cache.get(keys)
    if hit is not None:
        return hit
    if not all(type(k) is str for k in keys):
        raise YamlError("mapping keys must be strings to be written as YAML (JSON objects have string keys)")
    if all(_BYTEWISE_SAFE.match(k) for k in keys):
        out = sorted(keys)
    else:
        out = _comparison_sort(list(keys))
    if len(keys) <= 64:
        if len(_order_cache) > 20_000:
            _order_cache.clear()
        _order_cache[keys] = out
    return out


# ---------------------------------------------------------------- nodes

def _scalar_text(v: Any) -> Tuple[str, Optional[str]]:
    t = type(v)
    if t is bool:
        return ("true" if v else "false"), None
    if t is int:
        return str(v), None
    if t is float:
        if v != v or v in (float("inf"), float("-inf")):
            raise YamlError(f"json: unsupported value: {v!r}")
        return yaml_number_text(v), None
    if v is None:
        return "null", None
    raise YamlError(f"cannot write a value of type {t.__name__} as YAML")


class _Writer:
    """Builds the node tree for one document and remembers the rare fix-ups.

    libyaml (PyYAML's CEmitter) and go-yaml v2's Go port of it agree on
    everything kzgit has measured except three corners, handled here:

    * U+0085 (NEL): encoding/json writes it raw, and v2 re-reading the JSON
      folds it like a line break inside a double-quoted scalar, so the value
      *changes* (``a<NEL>b`` → ``a b``); in a key it breaks the flow mapping
      and kustomize fails.
    * A string starting with U+FEFF: the port's ``is_bom`` looks at byte 0
      of the value instead of position i (goyaml.v2/yamlprivateh.go), so
      every character is escaped: ``"\uFEFF\x61"``.  Written by
      :func:`_bom_escaped` through a placeholder.
    * A single-quoted scalar ending in U+2028/U+2029: libyaml 0.2.5 writes
      an indentation before the closing quote, the port does not.
    """

    def __init__(self) -> None:
        self.placeholders: List[Tuple[str, str]] = []
        self.trailing_break = False

    def string(self, s: str, is_key: bool) -> ScalarNode:
        st = _style_cache.get(s, _MISS)
        if st is _MISS:
            st = _style(s)
        if st is _RARE:
            return self.rare_string(s, is_key)
        return ScalarNode(_STR, s, None, None, st)

    def rare_string(self, s: str, is_key: bool) -> ScalarNode:
        if "\x85" in s:
            if is_key:
                raise YamlError("yaml: did not find expected ',' or '}' (a U+0085 NEL character in a "
                                "mapping key breaks kustomize's JSON to YAML conversion)")
            s = _fold_nel(s)
            if not s:
                return ScalarNode(_STR, s, style=_style(s))
        if s[0] == "\ufeff":
            ph = "kzgit%s%d" % (_TOKEN, len(self.placeholders))
            self.placeholders.append((ph, _bom_escaped(s)))
            return ScalarNode(_STR, ph, style=None)
        if s[-1] in "\u2028\u2029":
            self.trailing_break = True
        return ScalarNode(_STR, s, style=_style(s))

    def node(self, obj: Any) -> Any:
        """The node tree of ``obj`` (a closure-based walk: this is the hot path)."""
        cache = _style_cache
        rare = self.rare_string
        order = sorted_keys

        def node(o: Any, depth: int) -> Any:
            t = type(o)
            if t is str:
                st = cache.get(o, _MISS)
                if st is _MISS:
                    st = _style(o)
                if st is _RARE:
                    return rare(o, False)
                return ScalarNode(_STR, o, None, None, st)
            if depth > MAX_DEPTH:
                # libyaml's emitter recurses on the C stack: keep it shallow.
                raise YamlError(f"cannot write YAML nested deeper than {MAX_DEPTH} levels")
            depth += 1
            if t is dict or t is SpelledDict or t is DupKeys:
                if not o:
                    return MappingNode(_MAP, [], None, None, True)
                pairs = []
                for k in order(o):
                    st = cache.get(k, _MISS)
                    if st is _MISS:
                        st = _style(k)
                    kn = rare(k, True) if st is _RARE else ScalarNode(_STR, k, None, None, st)
                    pairs.append((kn, node(o[k], depth)))
                return MappingNode(_MAP, pairs, None, None, False)
            if t is list or t is tuple:
                if not o:
                    return SequenceNode(_SEQ, [], None, None, True)
                return SequenceNode(_SEQ, [node(x, depth) for x in o], None, None, False)
            if t is SharedStr:
                return node(str(o), depth)  # libyaml wants an exact str
            if t is LazyError:
                raise YamlError(o.error)
            return ScalarNode(_STR, _scalar_text(o)[0], None, None, None)

        old = sys.getrecursionlimit()
        if old < 4 * MAX_DEPTH:
            sys.setrecursionlimit(4 * MAX_DEPTH)
        try:
            return node(obj, 0)
        finally:
            if old < 4 * MAX_DEPTH:
                sys.setrecursionlimit(old)

    def finish(self, text: str) -> str:
        for ph, real in self.placeholders:
            text = text.replace(ph, real, 1)
        if self.trailing_break:
            text = _trailing_break_indent().sub(r"\1'", text)
        return text


# os.urandom as secrets.token_hex does, without importing secrets (hmac, random) at start-up
_TOKEN = os.urandom(6).hex()
_MISS: Any = object()  # a sentinel, typed Any so that a cache lookup stays Optional[str]


@functools.lru_cache(maxsize=None)   # compiled on first use: most builds never need it
def _trailing_break_indent() -> "re.Pattern[str]":
    return re.compile("([\u2028\u2029]) +'")


@functools.lru_cache(maxsize=None)   # compiled on first use: most builds never need it
def _nel_run() -> "re.Pattern[str]":
    return re.compile("[ \t]*\x85(?:[ \t]*\x85)*[ \t]*")


# Escapes of goyaml.v2/emitterc.go yaml_emitter_write_double_quoted_scalar.
_SHORT_ESCAPES = {0: "0", 7: "a", 8: "b", 9: "t", 10: "n", 11: "v", 12: "f", 13: "r", 27: "e",
                  34: '"', 92: "\\", 0x85: "N", 0xA0: "_", 0x2028: "L", 0x2029: "P"}


def _fold_nel(s: str) -> str:
    """What v2 reads back for a JSON string holding raw NEL: a double-quoted line fold."""
    def fold(m: "re.Match[str]") -> str:
        n = m.group().count("\x85")
        return " " if n == 1 else "\n" * (n - 1)
    return _nel_run().sub(fold, s)


def _bom_escaped(s: str) -> str:
    """Every character escaped, as the port writes a value whose first char is a BOM."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        e = _SHORT_ESCAPES.get(o)
        if e is not None:
            out.append("\\" + e)
        elif o <= 0xFF:
            out.append("\\x%02X" % o)
        elif o <= 0xFFFF:
            out.append("\\u%04X" % o)
        else:
            out.append("\\U%08X" % o)
    out.append('"')
    return "".join(out)


class TagFreeDumper(yaml.CSafeDumper):
    """libyaml's emitter, with PyYAML's per-node Python callbacks made C calls.

    The C serializer asks ``resolve(kind, value, implicit)`` twice per scalar
    and calls ``descend_resolver``/``ascend_resolver`` around every node;
    with ~100 000 nodes in a 3,000-resource stream those Python calls cost
    about as much as the emitting.  Every node kzgit builds carries the tag
    :data:`NODE_TAG`, and ``resolve`` is the bound ``str.format`` of that tag,
    which returns it whatever it is given, so every node is "implicit" and
    no tag is ever written; the path resolvers (unused) become no-op builtins.
    """

    resolve = staticmethod(NODE_TAG.format)
    descend_resolver = staticmethod(slice)  # type: ignore[assignment]  # a no-op, see above
    ascend_resolver = staticmethod(tuple)  # type: ignore[assignment]  # a no-op, see above


class _Sink:
    __slots__ = ("parts",)

    def __init__(self) -> None:
        self.parts: List[str] = []

    def write(self, s: str) -> None:
        self.parts.append(s)


def _emit(roots: List[Any], w: "_Writer") -> str:
    sink = _Sink()
    d = TagFreeDumper(sink, width=80,  # type: ignore[arg-type]  # a write() is all it needs
                indent=2, allow_unicode=True, default_flow_style=False,
                explicit_start=False, explicit_end=False, line_break="\n")
    try:
        d.open()
        for root in roots:
            d.serialize(root)
        d.close()
    finally:
        d.dispose()
    text = "".join(sink.parts)
    if text.endswith("\n...\n"):
        # libyaml 0.2.5 closes an "open ended" stream (one ending in a
        # keep-chomped |+ block) with "...", the go-yaml v2 port never does
        # (goyaml.v2/emitterc.go yaml_emitter_emit_document_end).
        text = text[:-4]
    return w.finish(text)


def dump(obj: Any) -> str:
    """One document as kustomize prints it (no ``---``; ends with a newline)."""
    w = _Writer()
    with no_gc():
        return _emit([w.node(obj)], w)


def dump_read_back(obj: Any) -> str:
    """The text of a kustomization kzgit writes for a build to read (Flux's generated one,
    Argo CD's after ``kustomize edit``): the build reads its values, never its spelling (a
    line its error names there is left out, kzgit.gitops.render._build).  Where the reader
    gives ``obj`` back from its JSON text (:func:`kzgit.yamlio.parsed.reads_back`), that
    text, written by C, with its parse kept, so that the build does not read it again;
    else :func:`dump`'s."""
    if parsed.reads_back(obj):
        import json   # start-up: only the builds of GitOps applications
        text = json.dumps(obj, separators=(", ", ": ")) + "\n"
        parsed.remember(parsed.YAML11, text, obj)
        return text
    return dump(obj)


def dump_documents(objs: List[Any]) -> str:
    """The output stream: documents joined by ``---\\n``, no leading ``---``, "" for none.

    Resources (non-empty mappings) go through one libyaml stream, whose
    document separators are exactly kustomize's ``---\\n``; any other root
    (libyaml would write a scalar or an empty collection on the ``---``
    line) is emitted on its own.
    """
    if not objs:
        return ""
    with no_gc():
        if all(isinstance(o, dict) and o for o in objs):
            w = _Writer()
            return _emit([w.node(o) for o in objs], w)
        out = []
        for o in objs:
            w = _Writer()
            out.append(_emit([w.node(o)], w))
        return "---\n".join(out)
