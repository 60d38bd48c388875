"""Comment-preserving edits of reference strings in YAML files.

kustomize re-serializes every kustomization it localizes from its Go struct
(``api/internal/localizer/localizer.go`` ``localize``: ``yaml.Marshal``), which
drops comments and sorts keys (the struct's field order).  kzgit only
changes the reference strings: the file is parsed with ruamel.yaml in
round-trip mode to find each scalar's position, and the new value is spliced
into the original text at that position.  Everything else (comments, key
order, quoting, indentation, blank lines) stays byte for byte.  When a value
cannot be spliced safely (a multi-line flow scalar, say) the edited
round-trip tree is dumped by ruamel instead, which still keeps comments.
"""
from __future__ import annotations

import io
import re
from typing import Any, List, Tuple, Union

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.scalarstring import LiteralScalarString

from kzgit.errors import YamlError
from kzgit.yamlio.roundtrip import indent_of, round_trip

# A string that every YAML 1.1 and 1.2 reader takes as the same plain string:
# starts with a safe character, no ": " or " #", not a bool/null/number look-alike.
_SAFE_PLAIN = re.compile(r"^[A-Za-z0-9_./][A-Za-z0-9_./@+=~*%()-]*\Z")
_AMBIGUOUS = re.compile(
    r"^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"
    r"|null|Null|NULL|~|[-+]?(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][-+]?\d+)?|\.inf|\.nan|[-+]?0x[0-9a-fA-F]+"
    r"|[-+]?0o?[0-7]+|\d+:[0-5]?\d(?::[0-5]?\d)*)\Z")

Container = Union[CommentedMap, CommentedSeq]


def _yaml() -> YAML:
    y = round_trip()
    y.width = 1 << 16   # the fallback dump never folds a line
    return y


def _quote_like(value: str, quote: str) -> str:
    if quote == "'" or "\n" in value:
        if "\n" in value:
            return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
        return "'" + value.replace("'", "''") + "'"
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_scalar(value: str, quote: str = "") -> str:
    """``value`` as a one-line YAML scalar, plain when unambiguous, else in ``quote`` style."""
    if not quote and _SAFE_PLAIN.match(value) and not _AMBIGUOUS.match(value):
        return value
    return _quote_like(value, quote or "'")


class YamlText:
    """One YAML file (or inline string) whose reference strings are being rewritten."""

    def __init__(self, text: str, source: str = "", multi: bool = False) -> None:
        self.text = text
        self.source = source
        self.multi = multi
        self._edits: List[Tuple[int, int, str, str]] = []  # line, col, old raw value, new value
        self._fallback = False
        try:
            y = _yaml()
            if multi:
                self.docs: List[Any] = [d for d in y.load_all(text)]
            else:
                self.docs = [y.load(text)]
        except YAMLError as e:
            where = f" in {source}" if source else ""
            raise YamlError(f"invalid YAML{where}: {str(e).strip()}") from None

    @property
    def doc(self) -> Any:
        return self.docs[0] if self.docs else None

    @property
    def changed(self) -> bool:
        return bool(self._edits) or self._fallback

    def set(self, container: Any, key: Any, new: str) -> None:
        """Replace the string at ``container[key]`` with ``new`` (no-op when equal)."""
        old = container[key]
        if isinstance(old, str) and str(old) == new:
            return
        try:
            if isinstance(container, CommentedSeq):
                line, col = container.lc.item(key)
            else:
                line, col = container.lc.value(key)
        except (KeyError, IndexError, TypeError, AttributeError):
            line, col = -1, -1
        # Keep the scalar's class (quoted, literal...) so a fallback dump keeps its style.
        if hasattr(old, "style") and type(old) is not str and "\n" not in new:
            try:
                container[key] = type(old)(new)
            except TypeError:
                container[key] = new
        elif "\n" in new:
            container[key] = LiteralScalarString(new)
        else:
            container[key] = new
        if line < 0:
            self._fallback = True
            return
        self._edits.append((line, col, "" if old is None else str(old), new))

    # -- output --------------------------------------------------------------------------
    def result(self) -> str:
        """The edited text: original bytes with the values spliced in, or a ruamel dump."""
        if not self.changed:
            return self.text
        if not self._fallback:
            spliced = self._splice()
            if spliced is not None:
                return spliced
        out = io.StringIO()
        y = _yaml()
        if self.multi:
            y.dump_all(self.docs, out)
        else:
            y.dump(self.doc, out)
        return out.getvalue()

    def _splice(self) -> "str | None":
        lines = self.text.splitlines(keepends=True)
        for line, col, old, new in sorted(self._edits, reverse=True):
            if line >= len(lines):
                return None
            text = lines[line]
            body = text.rstrip("\r\n")
            eol = text[len(body):]
            ch = body[col:col + 1]
            if ch in ("'", '"'):
                end = _quoted_end(body, col)
                if end is None:
                    return None
                lines[line] = body[:col] + render_scalar(new, ch) + body[end:] + eol
            elif ch in ("|", ">"):
                rep = _splice_block(lines, line, col, new)
                if rep is None:
                    return None
            else:
                if "\n" in old or body[col:col + len(old)] != old or "\n" in new:
                    return None
                lines[line] = body[:col] + render_scalar(new) + body[col + len(old):] + eol
        return "".join(lines)


def _quoted_end(body: str, col: int) -> "int | None":
    q = body[col]
    i = col + 1
    while i < len(body):
        c = body[i]
        if q == "'" and c == "'":
            if body[i + 1:i + 2] == "'":
                i += 2
                continue
            return i + 1
        if q == '"':
            if c == "\\":
                i += 2
                continue
            if c == '"':
                return i + 1
        i += 1
    return None


def _splice_block(lines: List[str], line: int, col: int, new: str) -> "bool | None":
    """Replace the block scalar whose indicator is at (line, col) with a literal of ``new``."""
    head = lines[line].rstrip("\r\n")
    indicator = re.match(r"[|>][-+0-9]*", head[col:])
    if not indicator or head[col + indicator.end():].strip() not in ("",) and \
            not head[col + indicator.end():].lstrip().startswith("#"):
        return None
    # The block's lines: following lines that are blank or indented deeper than the
    # first content line's indentation allows.
    first = None
    end = line + 1
    for i in range(line + 1, len(lines)):
        s = lines[i].rstrip("\r\n")
        if not s.strip():
            end = i + 1
            continue
        if first is None:
            first = indent_of(s)
            if first <= _parent_indent(lines, line):
                break
        if indent_of(s) < first:
            break
        end = i + 1
    if first is None:
        return None
    # Trailing blank lines belong to what follows (clip chomping drops them anyway).
    while end > line + 1 and not lines[end - 1].strip():
        end -= 1
    if new.endswith("\n"):
        chomp = "+" if new.endswith("\n\n") else ""
    else:
        chomp = "-"
    body_lines = new[:-1].split("\n") if new.endswith("\n") else new.split("\n")
    pad = " " * first
    block = [(pad + ln if ln else "") + "\n" for ln in body_lines]
    lines[line] = head[:col] + "|" + chomp + "\n"
    lines[line + 1:end] = block
    return True


def _parent_indent(lines: List[str], line: int) -> int:
    """Indentation of the line holding the block indicator ("- |" counts the dash)."""
    s = lines[line]
    m = re.match(r"^( *)(- +)*", s)
    return len(m.group(0)) - 1 if m and m.group(2) else indent_of(s)
