"""YAML read with the 1-based line of every key and item: where a message points.

One reader for the messages that name a line of a user's file: the build's error leads
(:mod:`kzgit.builder.leads`), ``kzgit lint`` (:mod:`kzgit.lint.files`) and validation's
locator (:mod:`kzgit.validate.locate`).  Lines come from PyYAML's composer (libyaml when
present); scalars stay text, since only keys and names are compared.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

__all__ = ["parse_with_lines", "deepest_line", "line_at"]


class _Map(Dict[Any, Any]):
    """A mapping read from YAML, with the 1-based line of each key."""

    key_lines: Dict[Any, int]


class _Seq(List[Any]):
    """A sequence read from YAML, with the 1-based line of each item."""

    item_lines: List[int]


def _convert(node: Any) -> Any:
    """PyYAML node -> _Map/_Seq/str (scalars stay text: only keys and names are compared)."""
    import yaml   # start-up: loaded only by the runs that need it
    if isinstance(node, yaml.MappingNode):
        m = _Map()
        m.key_lines = {}
        for k, v in node.value:
            key = k.value if isinstance(k, yaml.ScalarNode) else str(k.start_mark.line)
            m[key] = _convert(v)
            m.key_lines[key] = k.start_mark.line + 1
        return m
    if isinstance(node, yaml.SequenceNode):
        s = _Seq(_convert(v) for v in node.value)
        s.item_lines = [v.start_mark.line + 1 for v in node.value]
        return s
    return node.value


def parse_with_lines(text: str) -> Any:
    """The first YAML document of ``text`` with line numbers (None if it is not YAML)."""
    import yaml   # start-up: loaded only by the runs that need it
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        node = yaml.compose(text, Loader=loader)
    except yaml.YAMLError:
        return None
    return None if node is None else _convert(node)


def line_at(node: Any, key: Any) -> Optional[int]:
    """1-based line of ``key`` in a mapping or of item ``key`` in a sequence."""
    if isinstance(node, _Map):
        return node.key_lines.get(key)
    if isinstance(node, _Seq) and isinstance(key, int) and 0 <= key < len(node.item_lines):
        return node.item_lines[key]
    return None


def deepest_line(node: Any, parts: Sequence[str]) -> Optional[int]:
    """Line of the deepest key of ``parts`` present in ``node`` (None if not even the first)."""
    if not parts:
        return None
    head, rest = parts[0], parts[1:]
    if isinstance(node, dict):
        if head not in node:
            return None
        deeper = deepest_line(node[head], rest)
        return deeper if deeper is not None else line_at(node, head)
    if isinstance(node, list) and head.isdigit() and int(head) < len(node):
        deeper = deepest_line(node[int(head)], rest)
        return deeper if deeper is not None else line_at(node, int(head))
    return None

