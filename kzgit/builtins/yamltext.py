"""YAML text held in a scalar, read and written back as kyaml (go-yaml v3) does.

Kustomize 5.8 sets replacement targets inside a string that holds YAML and writes the document
back with kyaml's encoder (``RNode.String()``: go-yaml v3, indent 2, compact sequences, no line
width), which keeps each node's style: a quoted scalar stays quoted the same way, a plain one
stays plain unless its new text would read as another type (v3 ``encoder.node``: double quotes,
"forceQuoting"), a text with a line break becomes a literal block.  Untouched nodes are written
from their original style, touched ones from the rules above.

kzgit writes the node tree with libyaml (PyYAML's emitter, whose analysis go-yaml's emitter
ports) at v3's settings.  What that cannot reproduce byte for byte is refused, naming the
feature, rather than written differently: comments (v3 keeps and re-indents them), anchors,
aliases and tags, duplicate keys, and a touched scalar whose tag its new text does not fit (v3
writes an explicit ``!!int``).  A flow collection (``{a: 1}``, ``[x, y]``) keeps its flow style,
as v3's encoder keeps a node's ``Style``; what is inside it is written in flow too (libyaml and
v3's emitter both force flow below a flow level).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from kzgit.errors import BuildError
from kzgit.builtins.fieldpath import Scalar, decode, is_scalar, resolve, scalar_of
from kzgit.yamlio.gonum import parse_timestamp
from kzgit.yamlio.emit import NODE_TAG, TagFreeDumper

__all__ = ["StructuredText", "Unsupported"]

_QUOTED = ("'", '"', "|", ">")


class Unsupported(BuildError):
    """A YAML text kzgit cannot write back as kyaml would."""


def _resolved_tag(text: str) -> str:
    """go-yaml v3 ``resolve("", text)``'s tag, timestamps included (resolve.go: a plain scalar
    starting with a digit that parseTimestamp accepts is a !!timestamp)."""
    tag = resolve(text)[0]
    if tag == "!!str" and text[:1].isdigit() and parse_timestamp(text) is not None:
        return "!!timestamp"
    return tag


def _tag_of(node: ScalarNode) -> str:
    """The short tag go-yaml v3's parser gives a scalar: quoted and block ones are strings."""
    return "!!str" if node.style in _QUOTED else resolve(node.value)[0]


def _refuse_features(text: str) -> None:
    hashes = text.count("#")
    in_scalars = 0
    try:
        tokens = list(yaml.scan(text, Loader=yaml.CSafeLoader))
    except yaml.YAMLError as e:
        raise Unsupported(f"not YAML: {e}") from None
    for tok in tokens:
        if isinstance(tok, (yaml.TagToken, yaml.AnchorToken, yaml.AliasToken)):
            raise Unsupported("it holds a tag, an anchor or an alias")
        if isinstance(tok, yaml.DocumentStartToken):
            raise Unsupported("it holds a document marker (---)")
        if isinstance(tok, yaml.ScalarToken):
            in_scalars += tok.value.count("#")
    if hashes > in_scalars:
        raise Unsupported("it holds comments, which kyaml keeps and re-indents")


class StructuredText:
    """The document of a YAML text as Python data (:attr:`data`), set through :meth:`set`,
    written back by :meth:`dump`."""

    def __init__(self, text: str) -> None:
        _refuse_features(text)
        root = yaml.compose(text, Loader=yaml.CSafeLoader)
        self._nodes: Dict[int, Node] = {}          # id(container) -> its original node
        self._changed: Dict[Tuple[int, Any], Tuple[str, Any]] = {}
        self.data = self._build(root) if root is not None else None

    def _build(self, node: Node) -> Any:
        if isinstance(node, ScalarNode):
            return decode(Scalar(node.value, _tag_of(node)))
        if isinstance(node, MappingNode):
            d: Dict[str, Any] = {}
            for k, v in node.value:
                if not isinstance(k, ScalarNode):
                    raise Unsupported("a mapping key is not a scalar")
                if k.value in d:
                    raise Unsupported(f"the key {k.value!r} appears twice")
                d[k.value] = self._build(v)
            self._nodes[id(d)] = node
            return d
        assert isinstance(node, SequenceNode)
        seq = [self._build(v) for v in node.value]
        self._nodes[id(seq)] = node
        return seq

    def set(self, container: Any, key: Any, text: Optional[str], value: Any) -> None:
        """``container[key]`` takes ``text`` when it is a scalar (keeping its tag and style, as
        ``t.YNode().Value = value``), else the node ``value``."""
        target = container[key]
        if text is not None and is_scalar(target):
            tag = scalar_of(target).tag
            if tag not in ("", "!!str") and resolve(text)[0] != tag:
                raise Unsupported(f"the {tag} node {key!r} would be written with an explicit tag "
                                  f"for its new text {text!r}")
            container[key] = decode(Scalar(text, tag))
            self._changed[(id(container), key)] = ("scalar", text)
        else:
            container[key] = value
            self._changed[(id(container), key)] = ("node", value)

    # -- writing ------------------------------------------------------------------------------
    def _scalar_node(self, text: str, tag: str, style: Optional[str]) -> ScalarNode:
        """v3 encoder.node's choice of style for a scalar whose Value is ``text`` (the
        composer's style: '' or None for plain)."""
        if not style:
            style = None
            if "\n" in text:
                style = "|"
            elif tag == "!!str" and _resolved_tag(text) != "!!str":
                style = '"'   # forceQuoting
        return ScalarNode(NODE_TAG, text, style=style)

    def _fresh(self, v: Any) -> Node:
        """A node for a value that has no original (a created field, a copied node)."""
        if isinstance(v, dict):
            return MappingNode(NODE_TAG, [(ScalarNode(NODE_TAG, str(k)), self._fresh(x)) for k, x in v.items()],
                               flow_style=not v)
        if isinstance(v, list):
            return SequenceNode(NODE_TAG, [self._fresh(x) for x in v], flow_style=not v)
        s = scalar_of(v)
        return self._scalar_node(s.text, s.tag, None)

    def _value_node(self, container: Any, key: Any, original: Optional[Node]) -> Node:
        change = self._changed.get((id(container), key))
        v = container[key]
        if change is not None:
            kind, what = change
            if kind == "scalar":
                style = original.style if isinstance(original, ScalarNode) else None
                tag = _tag_of(original) if isinstance(original, ScalarNode) else scalar_of(v).tag
                return self._scalar_node(what, tag, style)
            return self._fresh(what)
        if original is None:
            return self._fresh(v)
        if isinstance(original, ScalarNode):
            return ScalarNode(NODE_TAG, original.value, style=original.style)
        return self._node(v)

    def _node(self, v: Any) -> Node:
        original = self._nodes.get(id(v))
        if original is None:
            return self._fresh(v)
        if isinstance(v, dict):
            assert isinstance(original, MappingNode)
            by_key = {k.value: (k, x) for k, x in original.value}
            pairs: List[Tuple[Node, Node]] = []
            for k in v:
                kn, vn = by_key.get(k, (None, None))
                key_node = ScalarNode(NODE_TAG, kn.value, style=kn.style) if kn is not None \
                    else self._scalar_node(str(k), "!!str", None)
                pairs.append((key_node, self._value_node(v, k, vn)))
            return MappingNode(NODE_TAG, pairs, flow_style=bool(original.flow_style) or not pairs)
        assert isinstance(original, SequenceNode)
        items = [self._value_node(v, i, original.value[i] if i < len(original.value) else None)
                 for i in range(len(v))]
        return SequenceNode(NODE_TAG, items, flow_style=bool(original.flow_style) or not items)

    def dump(self) -> str:
        """``RNode.String()`` of the document, trimmed (replacement.go serializeAsYAML)."""
        out: List[str] = []

        class _Sink:
            write = staticmethod(out.append)

        d = TagFreeDumper(_Sink(), width=-1, indent=2, allow_unicode=True,  # type: ignore[arg-type]
                    default_flow_style=False, explicit_start=False, explicit_end=False,
                    line_break="\n")
        try:
            d.open()
            d.serialize(self._node(self.data) if isinstance(self.data, (dict, list))
                        else self._fresh(self.data))
            d.close()
        finally:
            d.dispose()
        return "".join(out).strip()
