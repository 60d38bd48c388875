"""Go regular expressions (RE2 syntax) run with Python's :mod:`re`.

A CRD's ``pattern`` is checked by the API server with Go's ``regexp`` package
(k8s.io/kube-openapi pkg/validation/validate: ``regexp.Compile``), and kubeconform
checks schema files with Go too; Python's ``re`` reads a different dialect.
:func:`compile` translates what differs and refuses what Python would read
differently without saying so:

* inline flags anywhere (``^(?i)abc``: Go applies them to the rest of the group,
  Python 3.11 only accepts them at the very start): ``(?i)rest`` becomes
  ``(?i:rest)`` up to the end of the enclosing group;
* ``\\z`` (end of text) is Python's ``\\Z``; ``$`` without the ``m`` flag is the end of
  the text in Go, where Python's ``$`` also matches before a final newline: ``\\Z``;
* ``(?<name>...)`` (Go 1.22) is Python's ``(?P<name>...)``; ``\\Q...\\E`` is quoted
  text; ``\\x{10FFFF}`` is a code point; POSIX classes ``[[:alpha:]]`` are ASCII ranges;
* ``\\d``, ``\\w``, ``\\s`` and ``\\b`` are ASCII in RE2 (``re.ASCII``).

Refused (:class:`RegexError`, naming the construct): what RE2 itself refuses
(backreferences, lookarounds, atomic groups, possessive repetition) -- the API
server refuses such a CRD -- and RE2 features Python's ``re`` lacks (``\\pL``
Unicode classes, ``\\C``, the ungreedy flag ``U``).
"""
from __future__ import annotations

import re
from typing import Dict, List

_POSIX = {
    "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7f", "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f", "digit": "0-9", "graph": "!-~", "lower": "a-z",
    "print": " -~", "punct": "!-/:-@\\[-`{-~", "space": "\\t\\n\\v\\f\\r ", "upper": "A-Z",
    "word": "0-9A-Za-z_", "xdigit": "0-9A-Fa-f",
}
_FLAGS = set("imsU-")
_cache: Dict[str, "re.Pattern[str]"] = {}


class RegexError(ValueError):
    """A pattern Go would refuse, or one Python cannot run with Go's meaning."""


def compile(pattern: str) -> "re.Pattern[str]":  # noqa: A001 - the module's verb, as re.compile
    """The Python regex with the meaning Go's ``regexp.Compile(pattern)`` gives it."""
    rx = _cache.get(pattern)
    if rx is None:
        try:
            rx = re.compile(translate(pattern), re.ASCII)
        except re.error as e:
            raise RegexError(str(e)) from None
        _cache[pattern] = rx
    return rx


def translate(pattern: str) -> str:
    """The Python ``re`` spelling of a Go regular expression (see the module docstring)."""
    out: List[str] = []
    # one entry per open group: the inline flags "(?i)" opened in it, each translated to a
    # "(?i:" that the group's end closes (and that a "|" closes and opens again)
    groups: List[List[str]] = [[]]
    multiline = False
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n:
                raise RegexError("trailing backslash")
            d = pattern[i + 1]
            if d == "Q":
                end = pattern.find("\\E", i + 2)
                text = pattern[i + 2:] if end < 0 else pattern[i + 2:end]
                out.append(re.escape(text))
                i = n if end < 0 else end + 2
                continue
            if d.isdigit() and d != "0":
                raise RegexError(f"backreference \\{d} (RE2 has none)")
            if d in "pP":
                raise RegexError(f"Unicode class \\{d} (Python's re has none)")
            if d == "C":
                raise RegexError("\\C (any byte)")
            if d == "z":
                out.append("\\Z")
            elif d == "Z":
                raise RegexError("\\Z (RE2 has none; \\z is the end of text)")
            elif d == "x" and i + 2 < n and pattern[i + 2] == "{":
                end = pattern.find("}", i + 3)
                if end < 0:
                    raise RegexError("unterminated \\x{")
                out.append(_code_point(pattern[i + 3:end]))
                i = end + 1
                continue
            else:
                out.append(pattern[i:i + 2])
            i += 2
            continue
        if c == "[":
            i = _char_class(pattern, i, out)
            continue
        if c == "(":
            if pattern.startswith("(?", i):
                j = i + 2
                if pattern.startswith("P<", j) or (pattern.startswith("<", j)
                                                    and not pattern.startswith(("<=", "<!"), j)):
                    out.append("(?P<")
                    groups.append([])
                    i = j + (2 if pattern[j] == "P" else 1)
                    continue
                k = j
                while k < n and pattern[k] in _FLAGS:
                    k += 1
                flags = pattern[j:k]
                if k < n and not flags and pattern[k] == ":":
                    out.append("(?:")
                    groups.append([])
                    i = k + 1
                    continue
                if k < n and flags and pattern[k] in ":)":
                    if "U" in flags:
                        raise RegexError("the ungreedy flag U")
                    if "m" in flags.partition("-")[0]:
                        multiline = True
                    if pattern[k] == ":":
                        out.append(f"(?{flags}:")
                        groups.append([])
                    else:   # (?i) applies up to the end of the enclosing group
                        out.append(f"(?{flags}:")
                        groups[-1].append(flags)
                    i = k + 1
                    continue
                what = pattern[j:j + 2]
                raise RegexError(f"(?{what}... ({_NAMES.get(what) or _NAMES.get(what[:1]) or 'not RE2 syntax'})")
            out.append("(")
            groups.append([])
            i += 1
            continue
        if c == ")":
            if len(groups) == 1:
                raise RegexError("unexpected )")
            out.append(")" * len(groups.pop()) + ")")
            i += 1
            continue
        if c in "*+?" and i + 1 < n and pattern[i + 1] == "+" and _repeatable(out):
            raise RegexError("possessive repetition (RE2 has none)")
        if c == "|" and groups[-1]:
            opened = groups[-1]
            out.append(")" * len(opened) + "|" + "".join(f"(?{f}:" for f in opened))
            i += 1
            continue
        if c == "$" and not multiline:
            out.append("\\Z")
            i += 1
            continue
        out.append(c)
        i += 1
    if len(groups) != 1:
        raise RegexError("missing )")
    out.append(")" * len(groups[0]))
    return "".join(out)


_NAMES = {"=": "lookahead", "!": "negative lookahead", "<=": "lookbehind", "<!": "negative lookbehind",
          ">": "atomic group", "#": "comment group", "(": "conditional group"}


def _repeatable(out: List[str]) -> bool:
    # "a*+" is a possessive repeat in Python 3.11 and an error in Go; "a{2}+"... the same
    return bool(out) and out[-1] not in ("(", "|")


def _code_point(hexdigits: str) -> str:
    try:
        cp = int(hexdigits, 16)
    except ValueError:
        raise RegexError(f"bad \\x{{{hexdigits}}}") from None
    if cp > 0x10FFFF:
        raise RegexError(f"bad \\x{{{hexdigits}}}")
    return f"\\U{cp:08x}"


def _char_class(pattern: str, i: int, out: List[str]) -> int:
    """Copy the class starting at ``pattern[i] == '['``; returns the index after it."""
    n = len(pattern)
    buf = ["["]
    j = i + 1
    if j < n and pattern[j] == "^":
        buf.append("^")
        j += 1
    first = True
    while j < n:
        c = pattern[j]
        if c == "]" and not first:
            buf.append("]")
            out.append("".join(buf))
            return j + 1
        first = False
        if c == "[" and pattern.startswith("[:", j):
            end = pattern.find(":]", j + 2)
            name = pattern[j + 2:end] if end > 0 else ""
            neg = name.startswith("^")
            if end > 0 and name.lstrip("^") in _POSIX:
                if neg:
                    raise RegexError(f"negated POSIX class [:{name}:] inside a class")
                buf.append(_POSIX[name])
                j = end + 2
                continue
        if c == "\\":
            if j + 1 >= n:
                raise RegexError("trailing backslash")
            d = pattern[j + 1]
            if d in "pP":
                raise RegexError(f"Unicode class \\{d} (Python's re has none)")
            if d == "x" and j + 2 < n and pattern[j + 2] == "{":
                end = pattern.find("}", j + 3)
                if end < 0:
                    raise RegexError("unterminated \\x{")
                buf.append(_code_point(pattern[j + 3:end]))
                j = end + 1
                continue
            buf.append(pattern[j:j + 2])
            j += 2
            continue
        if c == "[" or (c in "&~|" and j + 1 < n and pattern[j + 1] == c):
            buf.append("\\" + c)   # literal in Go; a (future) set operation in Python
            j += 1
            continue
        buf.append(c)
        j += 1
    raise RegexError("missing ]")
