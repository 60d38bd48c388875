"""A kustomization file as lint reads it: its typed mapping and the lines of its keys and items.

A kustomization is read twice: with kustomize's typing (:func:`kzgit.yamlio.load_yaml11`, so a
``null`` is told from an empty list as Go tells a nil slice) and with each key's and item's line
(:func:`kzgit.yamlio.lines.parse_with_lines`).  Field names match case-insensitively, as Go's
encoding/json matches struct fields (``Bases:`` is ``bases``).
"""
from __future__ import annotations

import json
import posixpath

from kzgit.errors import KzgitError

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List, Optional, Tuple
    Hit = Tuple[str, Optional[int], str, str]
    """(rule, line, field, message) of one finding in the file checked."""


class KFile:
    """One kustomization file: its typed mapping and the lines of its keys and items."""

    def __init__(self, rel: str, data: bytes) -> None:
        from kzgit.yamlio.lines import parse_with_lines   # start-up: only lint runs read lines
        from kzgit.yamlio import load_yaml11   # start-up: as above
        self.rel = rel
        self.text = data.decode("utf-8", "replace")
        self.raw: Any = load_yaml11(data, rel)
        self.tree: Any = parse_with_lines(self.text) if isinstance(self.raw, dict) else None
        # canonical (lower-case) name -> the key as written
        self.keys: Dict[str, Any] = ({str(k).lower(): k for k in self.raw}
                                     if isinstance(self.raw, dict) else {})

    @property
    def dir(self) -> str:
        return posixpath.dirname(self.rel) or "."

    def key(self, field: str) -> Any:
        """The key spelling ``field`` in this file, or None."""
        return self.keys.get(field.lower())

    def value(self, field: str) -> Any:
        k = self.key(field)
        return None if k is None else self.raw.get(k)

    def line(self, field: str, index: Optional[int] = None, sub: Optional[str] = None) -> Optional[int]:
        """The line of ``field``, of its item ``index``, or of that item's key ``sub``."""
        return self.path_line(*[p for p in (field, index, sub) if p is not None])

    def path_line(self, *parts: Any) -> Optional[int]:
        """The line of the deepest key or item of ``parts`` (field, index, key, ...) present."""
        k = self.key(str(parts[0])) if parts else None
        node, best = self.tree, None
        for p in ((str(k),) + parts[1:] if k is not None else ()):
            if isinstance(node, dict) and p in node:
                best, node = _key_lines(node).get(p) or best, node[p]
            elif isinstance(node, list) and isinstance(p, int) and 0 <= p < len(node):
                best, node = _item_lines(node)[p], node[p]
            else:
                break
        return best

    def find_key(self, name: str) -> Optional[int]:
        """The line of the first key ``name`` anywhere in the file (breadth first)."""
        queue = [self.tree]
        while queue:
            node = queue.pop(0)
            if isinstance(node, dict):
                if name in node:
                    return _key_lines(node).get(name)
                queue.extend(node.values())
            elif isinstance(node, list):
                queue.extend(node)
        return None


def _key_lines(node: Any) -> Dict[Any, int]:
    """The lines of a mapping's keys (:func:`kzgit.yamlio.lines.parse_with_lines`)."""
    return getattr(node, "key_lines", {})


def _item_lines(node: Any) -> List[int]:
    return getattr(node, "item_lines", [])


def read_kfile(rel: str, data: bytes) -> Optional[KFile]:
    """The file, or None when it is not a mapping or not YAML (the build reports that)."""
    try:
        k = KFile(rel, data)
    except KzgitError:
        return None
    return k if isinstance(k.raw, dict) else None


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def locate_target(k: Optional[KFile], field: str, selector: Any) -> Tuple[Optional[int], str]:
    """The line and field of the entry whose target is ``selector`` in the kustomization."""
    if k is None:
        return None, field
    entries = k.value(field)
    if isinstance(entries, list):
        for i, e in enumerate(entries):
            if not isinstance(e, dict):
                continue
            if field != "replacements":
                if _same(e.get("target"), selector):
                    return k.line(field, i, "target"), f"{field}[{i}].target"
                continue
            for j, t in enumerate(e.get("targets") or []):
                if isinstance(t, dict) and _same(t.get("select"), selector):
                    return (k.path_line(field, i, "targets", j, "select"),
                            f"{field}[{i}].targets[{j}].select")
            if e.get("path"):
                # a replacements file: the entry that names it
                return k.line(field, i, "path"), f"{field}[{i}].path ({e['path']})"
    return k.line(field), field
