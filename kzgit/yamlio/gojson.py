"""Go ``encoding/json.Marshal`` text of a generic value (for the ConfigMap/Secret hash).

Keys sorted bytewise (Go sorts map keys as strings), no spaces, non-ASCII
raw, ``<`` ``>`` ``&`` and U+2028/U+2029 escaped as ``\\u003c`` etc.,
floats formatted as Go does (``1`` not ``1.0``, ``1e+21``, ``1e-7``).
"""
from __future__ import annotations

import json

from kzgit.errors import YamlError
from kzgit.yamlio.gonum import format_float_json
from kzgit.yamlio.tree import DupKeys, LazyError, SharedStr, SpelledDict

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, List

_encode_str = json.encoder.encode_basestring


def _go_string(s: str) -> str:
    out = _encode_str(s)
    if "<" in out or ">" in out or "&" in out or "\u2028" in out or "\u2029" in out:
        out = (out.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
               .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return out


def _write(v: Any, out: List[str]) -> None:
    t = type(v)
    if t is str or t is SharedStr:
        out.append(_go_string(v))
    elif t is LazyError:
        raise YamlError(v.error)
    elif t is dict or t is SpelledDict or t is DupKeys:
        out.append("{")
        first = True
        # Go's encoding/json sorts keys by their UTF-8 bytes; for str that is
        # code point order, which Python's sort gives.
        for k in sorted(v, key=str):
            if not first:
                out.append(",")
            first = False
            out.append(_go_string(str(k)))
            out.append(":")
            _write(v[k], out)
        out.append("}")
    elif t is list or t is tuple:
        out.append("[")
        for i, x in enumerate(v):
            if i:
                out.append(",")
            _write(x, out)
        out.append("]")
    elif v is None:
        out.append("null")
    elif t is bool:
        out.append("true" if v else "false")
    elif t is int:
        out.append(str(v))
    elif t is float:
        if v != v or v in (float("inf"), float("-inf")):
            raise YamlError(f"json: unsupported value: {v!r}")
        out.append(format_float_json(v))
    else:
        raise YamlError(f"json: unsupported type: {t.__name__}")


def go_json_dumps(obj: Any) -> str:
    """``json.Marshal(obj)`` as Go writes it."""
    out: List[str] = []
    _write(obj, out)
    return "".join(out)


def go_json_indent(obj: Any, indent: str = "  ") -> str:
    """``json.MarshalIndent(obj, "", indent)``: Go indents the compact text (json.Indent), an
    empty object or array staying ``{}`` / ``[]``."""
    text = go_json_dumps(obj)
    out: List[str] = []
    depth = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
            continue
        if c in "{[":
            if text[i + 1] in "}]":
                out.append(text[i:i + 2])
                i += 2
                continue
            depth += 1
            out.append(c + "\n" + indent * depth)
        elif c in "}]":
            depth -= 1
            out.append("\n" + indent * depth + c)
        elif c == ",":
            out.append(",\n" + indent * depth)
        elif c == ":":
            out.append(": ")
        else:
            out.append(c)
        i += 1
    return "".join(out)
