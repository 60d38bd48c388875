"""Which file (and line) a field of a rendered resource came from.

The build records, for every resource, the file it was read from (the origin
``buildMetadata: [originAnnotations]`` prints, kept as ``Resource.source``
whether or not the kustomization asks for the annotation, so the output does
not change).  A field a patch set is not in that file: the patches the root
reaches are searched for it, last-applied first being unknowable from the files
alone, so a patch that sets the very path wins over the resource file, and
among patches one naming the resource wins.  Lines come from a round-trip parse
(ruamel.yaml) of the file, done only for files a finding points at.
"""
from __future__ import annotations

import io
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from kzgit.loader import KUSTOMIZATION_FILE_NAMES

Read = Callable[[str], Optional[bytes]]
Where = Tuple[Optional[str], Optional[int]]


def _parse_parts(pointer: str) -> List[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]] if pointer else []


def _line(node: Any, key: Any) -> Optional[int]:
    """1-based line of ``key`` in a ruamel mapping or of item ``key`` in a sequence."""
    lc = getattr(node, "lc", None)
    if lc is None:
        return None
    try:
        if isinstance(node, dict):
            return int(lc.key(key)[0]) + 1
        return int(lc.item(key)[0]) + 1
    except (KeyError, IndexError, TypeError, AttributeError):
        return None


def _walk(node: Any, parts: Sequence[str]) -> Optional[int]:
    """Line of the deepest key of ``parts`` present in ``node`` (None if not even the first)."""
    if not parts:
        return None
    head, rest = parts[0], parts[1:]
    if isinstance(node, dict):
        if head not in node:
            return None
        deeper = _walk(node[head], rest)
        return deeper if deeper is not None else _line(node, head)
    if isinstance(node, list) and head.isdigit() and int(head) < len(node):
        deeper = _walk(node[int(head)], rest)
        return deeper if deeper is not None else _line(node, int(head))
    return None


def _key_line(node: Any, parts: Sequence[str]) -> Optional[int]:
    """Line of the last key of ``parts`` when the whole path is present, else None."""
    if not parts:
        return None
    cur = node
    for i, p in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(cur, dict):
            if p not in cur:
                return None
            if last:
                return _line(cur, p)
            cur = cur[p]
        elif isinstance(cur, list):
            idx = int(p) if p.isdigit() else -1
            order = ([idx] if 0 <= idx < len(cur) else []) + [j for j in range(len(cur)) if j != idx]
            for j in order:
                got = _line(cur, j) if last else _key_line(cur[j], parts[i + 1:])
                if got is not None:
                    return got
            return None
        else:
            return None
    return None


class Locator:
    """Finds source files and lines for findings of one workspace; parses each file once."""

    def __init__(self, repo: str, read: Read) -> None:
        self.repo = repo
        self.read = read
        self._docs: Dict[str, List[Any]] = {}

    def rel(self, path: str) -> Optional[str]:
        """Repo-relative form of an absolute path in the workspace (None outside it)."""
        rel = os.path.relpath(path, self.repo)
        return None if rel.startswith("..") else rel.replace(os.sep, "/")

    def docs(self, rel: str) -> List[Any]:
        if rel not in self._docs:
            from ruamel.yaml import YAML
            data = self.read(rel)
            docs: List[Any] = []
            if data is not None:
                try:
                    docs = [d for d in YAML(typ="rt").load_all(io.BytesIO(data)) if d is not None]
                except Exception:  # noqa: BLE001 - not YAML: nothing to point into
                    docs = []
            self._docs[rel] = docs
        return self._docs[rel]

    def in_resource_file(self, rel: str, kind: str, names: Sequence[str], pointer: str) -> Where:
        """The line of ``pointer`` (or of its deepest present part) in a resource's own file."""
        parts = _parse_parts(pointer)
        docs = [d for d in self.docs(rel) if isinstance(d, dict) and d.get("kind") == kind]
        named = [d for d in docs if (d.get("metadata") or {}).get("name") in names] or docs
        if named:
            doc = named[0]
            line = _walk(doc, parts)
            if line is None:
                line = (getattr(getattr(doc, "lc", None), "line", 0) or 0) + 1
            return rel, line
        return rel, None

    def exact_in_resource_file(self, rel: str, kind: str, names: Sequence[str],
                               pointer: str) -> Optional[int]:
        """The line of ``pointer`` in the resource's own document, only when all of it is there."""
        parts = _parse_parts(pointer)
        for d in self.docs(rel):
            if isinstance(d, dict) and d.get("kind") == kind \
                    and (d.get("metadata") or {}).get("name") in names:
                return _key_line(d, parts)
        return None

    def in_patches(self, candidates: Sequence[str], kind: str, names: Sequence[str],
                   pointer: str, named_only: bool = False) -> Where:
        """A patch among ``candidates`` that sets ``pointer`` on a resource of ``kind``
        (with ``named_only``, a strategic-merge patch naming the resource)."""
        parts = _parse_parts(pointer)
        if not parts:
            return None, None
        best: Where = (None, None)
        for rel in candidates:
            for doc in self.docs(rel):
                if isinstance(doc, list):
                    if named_only:
                        continue
                    got = _json6902_line(doc, pointer)
                    if got is not None and best[0] is None:
                        best = (rel, got)
                    continue
                if not isinstance(doc, dict) or doc.get("kind") not in (kind, None):
                    continue
                line = _key_line(doc, parts)
                if line is None:
                    continue
                if (doc.get("metadata") or {}).get("name") in names:
                    return rel, line
                if best[0] is None and not named_only:
                    best = (rel, line)
        return best

    def inline_patches(self, kustomization_dirs: Sequence[str], kind: str, names: Sequence[str],
                       pointer: str) -> Where:
        """A patch written inline in a kustomization (``patches[].patch``) that sets ``pointer``."""
        from ruamel.yaml import YAML
        parts = _parse_parts(pointer)
        if not parts:
            return None, None
        for d in kustomization_dirs:
            for fname in KUSTOMIZATION_FILE_NAMES:
                rel = fname if d in (".", "") else f"{d}/{fname}"
                for k in self.docs(rel)[:1]:
                    if not isinstance(k, dict):
                        continue
                    for field in ("patches", "patchesJson6902", "patchesStrategicMerge"):
                        entries = k.get(field)
                        for i, e in enumerate(entries if isinstance(entries, list) else []):
                            text = e.get("patch") if isinstance(e, dict) else e
                            if not isinstance(text, str) or "\n" not in text.strip() and ":" not in text:
                                continue
                            try:
                                docs = list(YAML(typ="rt").load_all(text))
                            except Exception:  # noqa: BLE001
                                continue
                            base = _line(entries, i) or 1
                            for doc in docs:
                                got = (_json6902_line(doc, pointer) if isinstance(doc, list)
                                       else _key_line(doc, parts)
                                       if isinstance(doc, dict) and doc.get("kind") in (kind, None) else None)
                                if got is not None:
                                    # the text starts on the line after `patch: |`
                                    return rel, base + got - (0 if isinstance(e, dict) else 1)
        return None, None


def _json6902_line(ops: List[Any], pointer: str) -> Optional[int]:
    for i, op in enumerate(ops):
        if not isinstance(op, dict) or op.get("op") not in ("add", "replace", "copy", "move"):
            continue
        p = op.get("path")
        if isinstance(p, str) and (pointer == p or pointer.startswith(p.rstrip("/") + "/")
                                   or (p.endswith("/-") and pointer.startswith(p[:-2] + "/"))):
            return _line(op, "path") or _line(ops, i)
    return None
