"""A kustomization file as text cut into top-level fields, for edits that keep every other byte.

``kustomize edit fix`` re-marshals the whole file from its Go struct
(``kustomize/commands/internal/kustfile/kustomizationfile.go`` ``marshal``): it keeps only
the comment lines found *above* a field, re-indents and re-quotes everything, and drops
comments inside values (kustomize issues #5158, #2310, #4481).  kzgit edits the text
instead.  ruamel.yaml (round-trip mode) parses the file and says where each top-level key
and each list item starts; the edits splice lines at those places, so the fields a
migration does not touch stay byte for byte, and a moved field carries its comments.

A :class:`Field` is one top-level key with the lines that belong to it, as kustomize's
``parseCommentedFields`` assigns them: the comment and blank lines right above the key
(its ``prefix``), the key line, and every line below it up to the next field's prefix
(its ``body``).  Comment lines inside a value stay in the value.
"""
from __future__ import annotations

import re

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from kzgit.yamlio.roundtrip import indent_of, round_trip

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, List, Optional, Tuple


class Unsupported(Exception):
    """The file's shape is one the in-place edit does not handle; the message says which."""


def is_comment_or_blank(line: str) -> bool:
    """kustfile.go isCommentOrBlankLine: blank, or a comment after leading spaces."""
    s = line.strip(" \r\n")
    return not s or s.startswith("#")


def shift(lines: List[str], delta: int) -> List[str]:
    """``lines`` moved ``delta`` columns right (left when negative; never past column 0).
    Blank lines stay as they are: moving every non-blank line of a value by the same amount
    keeps its structure, block scalars included (their indentation is relative)."""
    if delta == 0:
        return list(lines)
    out = []
    for ln in lines:
        if not ln.strip():
            out.append(ln)
        elif delta > 0:
            out.append(" " * delta + ln)
        else:
            out.append(ln[min(-delta, indent_of(ln)):])
    return out


class Field:
    """One top-level key of the file and its lines."""

    def __init__(self, key: str, prefix: List[str], key_line: str, body: List[str]) -> None:
        self.key = key
        self.prefix = prefix
        self.key_line = key_line
        self.body = body

    def lines(self) -> List[str]:
        return self.prefix + [self.key_line] + self.body

    # -- the key line ------------------------------------------------------------------
    def _split_key_line(self) -> Tuple[str, str]:
        """(the key token with its colon, the rest of the line)."""
        m = re.match(r"""^(?:(["'])%s\1|%s)[ \t]*:""" % (re.escape(self.key), re.escape(self.key)),
                     self.key_line)
        if not m:
            raise Unsupported(f"'{self.key}': the key is not written plainly at the start of its line")
        return self.key_line[:m.end()], self.key_line[m.end():]

    @property
    def rest(self) -> str:
        """What follows ``key:`` on the key line (newline included)."""
        return self._split_key_line()[1]

    def inline_value(self) -> str:
        """The value written on the key line, without its comment ('' when none)."""
        return _strip_comment(self.rest).strip()

    def eol_comment(self) -> str:
        """The comment ending the key line ('' when none)."""
        rest = self.rest.rstrip("\r\n")
        value = _strip_comment(rest)
        return rest[len(value):].strip()

    def rename(self, new: str) -> None:
        _, rest = self._split_key_line()
        self.key_line = new + ":" + rest
        self.key = new

    # -- a block value -----------------------------------------------------------------
    def content_end(self) -> int:
        """Index in ``body`` after its last non-blank line."""
        end = len(self.body)
        while end > 0 and not self.body[end - 1].strip():
            end -= 1
        return end

    def has_content(self) -> bool:
        return any(not is_comment_or_blank(ln) for ln in self.body)

    def item_indent(self) -> Optional[int]:
        """Column of the dash of a block sequence's items (None: no item in the body)."""
        for ln in self.body:
            if not is_comment_or_blank(ln):
                s = ln.lstrip(" ")
                if s.startswith("-") and (len(s) == 1 or s[1] in " \t\r\n"):
                    return indent_of(ln)
                return None
        return None

    def map_indent(self) -> Optional[int]:
        """Column of the keys of a block mapping value (None: no content)."""
        for ln in self.body:
            if not is_comment_or_blank(ln):
                return indent_of(ln)
        return None


def _strip_comment(text: str) -> str:
    """``text`` without a trailing `` # comment`` (quotes respected; flow values on one line)."""
    quote = ""
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == quote:
                if quote == "'" and text[i + 1:i + 2] == "'":
                    i += 2
                    continue
                quote = ""
            elif c == "\\" and quote == '"':
                i += 1
        elif c in "'\"" and (i == 0 or text[i - 1] in " \t[{,:"):
            quote = c
        elif c == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[:i].rstrip(" \t")
        i += 1
    return text.rstrip("\r\n")


def yaml_problem(e: Exception) -> str:
    """A YAML parser's error (PyYAML's or ruamel's) as ``line L, column C: what``, lines of the
    file as written, without the parser's ``in "<unicode string>", line 3, column 1``."""
    problem = getattr(e, "problem", None)
    if not problem:
        text = " ".join(str(e).split())
        return re.sub(r'\s*in "<[^>]*>", line (\d+), column (\d+)', r" (line \1, column \2)", text)
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    words = ": ".join(w for w in (getattr(e, "context", None), problem) if w)
    return f"line {mark.line + 1}, column {mark.column + 1}: {words}" if mark is not None else words


class Document:
    """The file: a head (a ``---`` or directives before the first field) and its fields."""

    def __init__(self, text: str, source: str) -> None:
        self.source = source
        self.newline = "\r\n" if "\r\n" in text else "\n"
        try:
            docs = list(round_trip().load_all(text))
        except YAMLError as e:
            raise Unsupported(f"not valid YAML: {yaml_problem(e)}") from None
        if len(docs) > 1:
            raise Unsupported("several YAML documents in one kustomization file")
        self.tree: Any = docs[0] if docs else None
        lines = text.splitlines(keepends=True)
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += self.newline   # put back on output (see text())
            self._no_final_newline = True
        else:
            self._no_final_newline = False
        self.head: List[str] = []
        self.fields: List[Field] = []
        if not isinstance(self.tree, CommentedMap):
            self.head = lines
            return
        if self.tree.fa.flow_style():
            raise Unsupported("the kustomization is a flow mapping ({...})")
        starts: List[Tuple[int, str]] = []
        for key in self.tree:
            line, col = self.tree.lc.key(key)
            if col != 0 or not isinstance(key, str):
                raise Unsupported(f"top-level key '{key}' does not start its line")
            starts.append((line, key))
        starts.sort()
        # each field's prefix: the comment and blank lines right above its key
        bounds = []
        for n, (line, key) in enumerate(starts):
            low = starts[n - 1][0] + 1 if n else 0
            p = line
            while p > low and is_comment_or_blank(lines[p - 1]) and (
                    not lines[p - 1].strip() or not lines[p - 1].startswith(" ")):
                p -= 1
            bounds.append((p, line, key))
        self.head = lines[:bounds[0][0]] if bounds else lines
        for n, (p, line, key) in enumerate(bounds):
            end = bounds[n + 1][0] if n + 1 < len(bounds) else len(lines)
            self.fields.append(Field(key, lines[p:line], lines[line], lines[line + 1:end]))

    def field(self, key: str) -> Optional[Field]:
        for f in self.fields:
            if f.key == key:
                return f
        return None

    def value(self, key: str) -> Any:
        """The ruamel value of ``key`` as parsed (positions, flow style)."""
        return self.tree.get(key) if isinstance(self.tree, CommentedMap) else None

    def index(self, key: str) -> int:
        for n, f in enumerate(self.fields):
            if f.key == key:
                return n
        return -1

    def remove(self, key: str) -> None:
        self.fields = [f for f in self.fields if f.key != key]

    def drop_key(self, key: str) -> None:
        """Remove the field ``key`` that holds no value, keeping its comment lines where they
        are (as the prefix of the next field, or the end of the previous one)."""
        n = self.index(key)
        f = self.fields[n]
        if f.eol_comment():
            raise Unsupported(f"'{key}': the comment on its key line has no place to go")
        keep = f.prefix + f.body
        del self.fields[n]
        if n < len(self.fields):
            self.fields[n].prefix[0:0] = keep
        elif n > 0:
            self.fields[n - 1].body += keep
        else:
            self.head += keep

    def seq_indent(self) -> int:
        """The column this file puts list items at (kustomize writes them at column 0)."""
        for f in self.fields:
            if isinstance(self.value(f.key), CommentedSeq) and not self.value(f.key).fa.flow_style():
                ind = f.item_indent()
                if ind is not None:
                    return ind
        return 0

    def text(self) -> str:
        out = "".join(self.head + [ln for f in self.fields for ln in f.lines()])
        if self._no_final_newline and out.endswith(self.newline):
            out = out[:-len(self.newline)]
        return out


def flow_items(doc: Document, key: str) -> Optional[List[str]]:
    """The source text of each item of a one-line flow sequence at ``key`` (None when the value
    is not one)."""
    value = doc.value(key)
    f = doc.field(key)
    if f is None or not isinstance(value, CommentedSeq) or not value.fa.flow_style():
        return None
    if f.has_content():
        raise Unsupported(f"'{key}': a flow list over several lines")
    rest = f.rest
    col0 = len(f.key_line) - len(rest)
    inline = _strip_comment(rest)
    open_at = inline.index("[")
    close_at = inline.rindex("]")
    if not value:
        return []
    cols = [value.lc.item(i)[1] - col0 for i in range(len(value))]
    out = []
    for n, c in enumerate(cols):
        end = cols[n + 1] if n + 1 < len(cols) else close_at
        text = inline[c:end].rstrip(" \t")
        if n + 1 < len(cols):
            if not text.endswith(","):
                raise Unsupported(f"'{key}': cannot read the flow list's items")
            text = text[:-1].rstrip(" \t")
        out.append(text)
    del open_at
    return out


def set_flow_items(f: Field, items: List[str]) -> None:
    """Rewrite a one-line flow list's items on the key line, its comment kept."""
    key_token = f.key_line[:len(f.key_line) - len(f.rest)]
    rest = f.rest
    inline = _strip_comment(rest)
    tail = rest[len(inline):]
    lead = inline[:len(inline) - len(inline.lstrip(" \t"))]
    f.key_line = key_token + lead + "[" + ", ".join(items) + "]" + tail
