"""Which file (and line) a field of a rendered resource came from.

The build records, for every resource, the file it was read from (the origin
``buildMetadata: [originAnnotations]`` prints, kept as ``Resource.source``
whether or not the kustomization asks for the annotation, so the output does
not change).  A field a patch set is not in that file: the patches the root
reaches are searched for it, last-applied first being unknowable from the files
alone, so a patch that sets the very path wins over the resource file, and
among patches one naming the resource wins.  Lines come from PyYAML's composer
(libyaml when present) over the documents whose text mentions what is looked for,
each parsed once: a finding in a file of thousands of resources costs one small
parse, not a parse of the file.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from kzgit.loader import KUSTOMIZATION_FILE_NAMES
from kzgit.yamlio.lines import deepest_line, line_at, parse_with_lines

Read = Callable[[str], Optional[bytes]]
Where = Tuple[Optional[str], Optional[int]]


def _parse_parts(pointer: str) -> List[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]] if pointer else []


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
                return line_at(cur, p)
            cur = cur[p]
        elif isinstance(cur, list):
            idx = int(p) if p.isdigit() else -1
            order = ([idx] if 0 <= idx < len(cur) else []) + [j for j in range(len(cur)) if j != idx]
            for j in order:
                got = line_at(cur, j) if last else _key_line(cur[j], parts[i + 1:])
                if got is not None:
                    return got
            return None
        else:
            return None
    return None


class _Part:
    """One document of a file: its text, its first line, its round-trip parse when needed."""

    __slots__ = ("text", "first_line", "_doc", "_parsed")

    def __init__(self, text: str, first_line: int) -> None:
        self.text = text
        self.first_line = first_line
        self._doc: Any = None
        self._parsed = False

    @property
    def doc(self) -> Any:
        if not self._parsed:
            self._parsed = True
            self._doc = parse_with_lines(self.text)
        return self._doc

    def line(self, rel_line: Optional[int]) -> Optional[int]:
        """A line of the document (1-based within it) as a line of the file."""
        return None if rel_line is None else rel_line + self.first_line - 1


def _mentions(text: str, words: Sequence[str]) -> bool:
    return all(w in text for w in words if w)


class Locator:
    """Finds source files and lines for findings of one workspace; parses each document once."""

    def __init__(self, repo: str, read: Read) -> None:
        self.repo = repo
        self.read = read
        self._parts: Dict[str, List[_Part]] = {}

    def rel(self, path: str) -> Optional[str]:
        """Repo-relative form of an absolute path in the workspace (None outside it)."""
        rel = os.path.relpath(path, self.repo)
        return None if rel.startswith("..") else rel.replace(os.sep, "/")

    def parts(self, rel: str) -> List[_Part]:
        """The documents of a file (none when it cannot be read or split)."""
        if rel not in self._parts:
            from kzgit.yamlio.load import split_documents   # start-up: loaded only by the runs that need it
            data = self.read(rel)
            try:
                text = data.decode("utf-8") if data is not None else ""
                self._parts[rel] = [_Part(t, n) for t, n in split_documents(text, rel) if t.strip()]
            except Exception:  # noqa: BLE001 - not text or not YAML: nothing to point into
                self._parts[rel] = []
        return self._parts[rel]

    def _named(self, rel: str, kind: str, names: Sequence[str]) -> List[_Part]:
        """Documents of ``kind`` in a file whose text mentions one of ``names``, naming it first."""
        named: List[_Part] = []
        other: List[_Part] = []
        for p in self.parts(rel):
            if kind not in p.text or not any(n and n in p.text for n in names):
                continue
            d = p.doc
            if not isinstance(d, dict) or d.get("kind") != kind:
                continue
            md = d.get("metadata")
            (named if isinstance(md, dict) and md.get("name") in names else other).append(p)
        return named + other

    def in_resource_file(self, rel: str, kind: str, names: Sequence[str], pointer: str) -> Where:
        """The line of ``pointer`` (or of its deepest present part) in a resource's own file."""
        for p in self._named(rel, kind, names)[:1]:
            line = deepest_line(p.doc, _parse_parts(pointer))
            return rel, p.line(line if line is not None else 1)
        return rel, None

    def exact_in_resource_file(self, rel: str, kind: str, names: Sequence[str],
                               pointer: str) -> Optional[int]:
        """The line of ``pointer`` in the resource's own document, only when all of it is there."""
        for p in self._named(rel, kind, names)[:1]:
            md = p.doc.get("metadata")
            if isinstance(md, dict) and md.get("name") in names:
                return p.line(_key_line(p.doc, _parse_parts(pointer)))
        return None

    def in_patches(self, candidates: Sequence[str], kind: str, names: Sequence[str],
                   pointer: str, named_only: bool = False) -> Where:
        """A patch among ``candidates`` that sets ``pointer`` on a resource of ``kind``
        (with ``named_only``, a strategic-merge patch naming the resource)."""
        parts = _parse_parts(pointer)
        if not parts:
            return None, None
        last_key = next((k for k in reversed(parts) if not k.isdigit()), "")
        best: Where = (None, None)
        for rel in candidates:
            for p in self.parts(rel):
                if not _mentions(p.text, [last_key]):
                    continue
                doc = p.doc
                if isinstance(doc, list):
                    if named_only:
                        continue
                    got = _json6902_line(doc, pointer)
                    if got is not None and best[0] is None:
                        best = (rel, p.line(got))
                    continue
                if not isinstance(doc, dict) or doc.get("kind") not in (kind, None):
                    continue
                line = _key_line(doc, parts)
                if line is None:
                    continue
                if (doc.get("metadata") or {}).get("name") in names:
                    return rel, p.line(line)
                if best[0] is None and not named_only:
                    best = (rel, p.line(line))
        return best

    def inline_patches(self, kustomization_dirs: Sequence[str], kind: str, names: Sequence[str],
                       pointer: str) -> Where:
        """A patch written inline in a kustomization (``patches[].patch``) that sets ``pointer``."""
        from kzgit.yamlio.load import split_documents   # start-up: loaded only by the runs that need it
        parts = _parse_parts(pointer)
        if not parts:
            return None, None
        for d in kustomization_dirs:
            for fname in KUSTOMIZATION_FILE_NAMES:
                rel = fname if d in (".", "") else f"{d}/{fname}"
                for k in [p.doc for p in self.parts(rel)[:1]]:
                    if not isinstance(k, dict):
                        continue
                    for field in ("patches", "patchesJson6902", "patchesStrategicMerge"):
                        entries = k.get(field)
                        for i, e in enumerate(entries if isinstance(entries, list) else []):
                            text = e.get("patch") if isinstance(e, dict) else e
                            if not isinstance(text, str) or "\n" not in text.strip() and ":" not in text:
                                continue
                            try:
                                docs = [(parse_with_lines(t), n) for t, n in split_documents(text, rel)]
                            except Exception:  # noqa: BLE001 - not a patch kzgit can point into
                                continue
                            base = line_at(entries, i) or 1
                            for doc, first in docs:
                                got = (_json6902_line(doc, pointer) if isinstance(doc, list)
                                       else _key_line(doc, parts)
                                       if isinstance(doc, dict) and doc.get("kind") in (kind, None) else None)
                                if got is not None:
                                    # the text starts on the line after `patch: |`
                                    return rel, base + first - 1 + got - (0 if isinstance(e, dict) else 1)
        return None, None


def _json6902_line(ops: List[Any], pointer: str) -> Optional[int]:
    for i, op in enumerate(ops):
        if not isinstance(op, dict) or op.get("op") not in ("add", "replace", "copy", "move"):
            continue
        p = op.get("path")
        if isinstance(p, str) and (pointer == p or pointer.startswith(p.rstrip("/") + "/")
                                   or (p.endswith("/-") and pointer.startswith(p[:-2] + "/"))):
            return line_at(op, "path") or line_at(ops, i)
    return None
