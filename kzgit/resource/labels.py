"""Kubernetes label selector strings, as kustomize parses them.

A port of ``labels.Parse`` from the copy kyaml vendors
(kyaml/yaml/internal/k8sgen/pkg/labels/selector.go, from k8s.io/apimachinery v0.19.8) and of
the key/value checks it calls (…/util/validation/validation.go ``IsQualifiedName``,
``IsValidLabelValue``).  kustomize parses a patch or replacement target's
``labelSelector``/``annotationSelector`` with it for every resource that reaches the selector
(kyaml/yaml/rnode.go MatchesLabelSelector), so its errors are kustomize's errors.

The lexer reads bytes, and treats a NUL byte as Go's does (see :func:`_lex`).
"""
from __future__ import annotations

import functools
import re

from kzgit.errors import BuildError

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Callable, List, Mapping, Tuple

    Predicate = Callable[[Mapping[str, str]], bool]

# Tokens (selector.go Token): the values only name them.
_ERROR, _END, _CLOSE, _COMMA, _NOT, _DEQ, _EQ, _GT, _ID, _IN, _LT, _NEQ, _NOTIN, _OPEN = range(14)
_STRING2TOKEN = {")": _CLOSE, ",": _COMMA, "!": _NOT, "==": _DEQ, "=": _EQ, ">": _GT, "in": _IN,
                 "<": _LT, "!=": _NEQ, "notin": _NOTIN, "(": _OPEN}
_SPECIAL = frozenset(b"=!(),><")
_WHITESPACE = frozenset(b" \t\r\n")

_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
              "with an alphanumeric character")
_LABEL_VALUE_FMT = "(" + _QNAME_FMT + ")?"
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, "
                    "'-', '_' or '.', and must start and end with an alphanumeric character")
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = ("a DNS-1123 subdomain must consist of lower case alphanumeric characters, "
                          "'-' or '.', and must start and end with an alphanumeric character")


# compiled on first use: most builds validate no label
@functools.lru_cache(maxsize=None)
def _qname() -> "re.Pattern[str]":
    return re.compile("^" + _QNAME_FMT + r"\Z")


@functools.lru_cache(maxsize=None)
def _label_value() -> "re.Pattern[str]":
    return re.compile("^" + _LABEL_VALUE_FMT + r"\Z")


@functools.lru_cache(maxsize=None)
def _dns1123_subdomain() -> "re.Pattern[str]":
    return re.compile("^" + _DNS1123_SUBDOMAIN_FMT + r"\Z")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """validation.RegexError, spacing included."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    msg += " (e.g. "
    for i, e in enumerate(examples):
        if i:
            msg += " or "
        msg += f"'{e}', "
    return msg + f"regex used for validation is '{fmt}')"


def _blen(s: str) -> int:
    return len(s.encode("utf-8", "surrogateescape"))


def qualified_name_errors(value: str) -> List[str]:
    """validation.IsQualifiedName: ``[prefix/]name``, name ≤ 63 characters."""
    errs: List[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            if _blen(prefix) > 253:
                errs.append("prefix part must be no more than 253 characters")
            if not _dns1123_subdomain().match(prefix):
                errs.append("prefix part " + _regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT,
                                                          "example.com"))
    else:
        return ["a qualified name " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif _blen(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _qname().match(name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


# The current wording of k8s.io/apimachinery pkg/util/validation/validation.go (the API
# server's, which Kubernetes' CEL format library returns; the copy kyaml vendors above says
# "a DNS-1123 subdomain"):
_RFC1123_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                      "and must start and end with an alphanumeric character")
_RFC1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                          "'-' or '.', and must start and end with an alphanumeric character")
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                      "alphabetic character, and end with an alphanumeric character")


def dns1123_label_errors(value: str) -> List[str]:
    """validation.IsDNS1123Label: ≤ 63 characters of ``[a-z0-9]([-a-z0-9]*[a-z0-9])?``."""
    errs: List[str] = []
    if _blen(value) > 63:
        errs.append("must be no more than 63 characters")
    if not re.fullmatch(_DNS1123_LABEL_FMT, value):
        if _dns1123_subdomain().match(value):   # a subdomain of the right length: dots
            errs.append("must not contain dots")
        else:
            errs.append(_regex_error(_RFC1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def dns1123_subdomain_errors(value: str) -> List[str]:
    """validation.IsDNS1123Subdomain: ≤ 253 characters, dot-separated DNS-1123 labels."""
    errs: List[str] = []
    if _blen(value) > 253:
        errs.append("must be no more than 253 characters")
    if not _dns1123_subdomain().match(value):
        errs.append(_regex_error(_RFC1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def dns1035_label_errors(value: str) -> List[str]:
    """validation.IsDNS1035Label: ≤ 63 characters of ``[a-z]([-a-z0-9]*[a-z0-9])?``."""
    errs: List[str] = []
    if _blen(value) > 63:
        errs.append("must be no more than 63 characters")
    if not re.fullmatch(_DNS1035_LABEL_FMT, value):
        errs.append(_regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def label_value_errors(value: str) -> List[str]:
    """validation.IsValidLabelValue: empty, or a qualified name part of ≤ 63 characters."""
    errs: List[str] = []
    if _blen(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _label_value().match(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def _lex(selector: str) -> List[Tuple[int, str]]:
    """Lexer.Lex until the end token, over the UTF-8 bytes as Go reads the string.

    Go's ``read`` returns 0 at the end of the string, and for a NUL byte too (consumed): a
    NUL where a token starts ends the selector, inside a token it ends the token.
    """
    s = selector.encode("utf-8", "surrogateescape")
    n, pos = len(s), 0
    items: List[Tuple[int, str]] = []
    while True:
        while pos < n and s[pos] in _WHITESPACE:
            pos += 1
        if pos >= n or s[pos] == 0:
            items.append((_END, ""))
            return items
        if s[pos] in _SPECIAL:
            # scanSpecialSymbol: the longest run of special symbols that is a token
            buf = b""
            last: Tuple[int, str] = (_ERROR, "")
            while pos < n:
                if s[pos] == 0:
                    pos += 1
                    break
                if s[pos] not in _SPECIAL:
                    break
                buf += s[pos:pos + 1]
                tok = _STRING2TOKEN.get(buf.decode("ascii"))
                if tok is not None:
                    last = (tok, buf.decode("ascii"))
                elif last[0] != _ERROR:
                    break
                pos += 1
            if last[0] == _ERROR:
                last = (_ERROR, f"error expected: keyword found '{buf.decode('ascii')}'")
            items.append(last)
            continue
        start = pos
        while pos < n and s[pos] not in _SPECIAL and s[pos] not in _WHITESPACE and s[pos] != 0:
            pos += 1
        word = s[start:pos].decode("utf-8", "surrogateescape")
        if pos < n and s[pos] == 0:
            pos += 1
        items.append((_STRING2TOKEN.get(word, _ID), word))


class _Parser:
    def __init__(self, selector: str) -> None:
        self.items = _lex(selector)
        self.pos = 0

    def lookahead(self, values: bool) -> Tuple[int, str]:
        tok, lit = self.items[self.pos]
        if values and tok in (_IN, _NOTIN):
            tok = _ID
        return tok, lit

    def consume(self, values: bool) -> Tuple[int, str]:
        self.pos += 1
        tok, lit = self.items[self.pos - 1]
        if values and tok in (_IN, _NOTIN):
            tok = _ID
        return tok, lit

    def parse(self) -> List[Predicate]:
        reqs: List[Predicate] = []
        while True:
            tok, lit = self.lookahead(True)
            if tok in (_ID, _NOT):
                try:
                    reqs.append(self.requirement())
                except _ParseError as e:
                    raise _ParseError(f"unable to parse requirement: {e}") from None
                t, lit2 = self.consume(True)
                if t == _END:
                    return reqs
                if t == _COMMA:
                    t2, l2 = self.lookahead(True)
                    if t2 not in (_ID, _NOT):
                        raise _ParseError(f"found '{l2}', expected: identifier after ','")
                else:
                    raise _ParseError(f"found '{lit2}', expected: ',' or 'end of string'")
            elif tok == _END:
                return reqs
            else:
                raise _ParseError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def requirement(self) -> Predicate:
        key, op = self.key_and_operator()
        if op in ("exists", "!"):
            return _new_requirement(key, op, [])
        op = self.operator()
        values = self.values() if op in ("in", "notin") else self.exact_value()
        return _new_requirement(key, op, sorted(set(values)))

    def key_and_operator(self) -> Tuple[str, str]:
        op = ""
        tok, lit = self.consume(True)
        if tok == _NOT:
            op = "!"
            tok, lit = self.consume(True)
        if tok != _ID:
            raise _ParseError(f"found '{lit}', expected: identifier")
        _validate_key(lit)
        t, _ = self.lookahead(True)
        if t in (_END, _COMMA) and op != "!":
            op = "exists"
        return lit, op

    def operator(self) -> str:
        tok, lit = self.consume(False)
        ops = {_IN: "in", _EQ: "=", _DEQ: "==", _GT: "gt", _LT: "lt", _NOTIN: "notin", _NEQ: "!="}
        if tok not in ops:
            raise _ParseError(f"found '{lit}', expected: '=', '!=', '==', 'in', notin'")
        return ops[tok]

    def values(self) -> List[str]:
        tok, lit = self.consume(True)
        if tok != _OPEN:
            raise _ParseError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead(True)
        if tok in (_ID, _COMMA):
            s = self.identifiers()
            tok2, _ = self.consume(True)
            if tok2 != _CLOSE:
                raise _ParseError(f"found '{lit}', expected: ')'")
            return s
        if tok == _CLOSE:
            self.consume(True)
            return [""]
        raise _ParseError(f"found '{lit}', expected: ',', ')' or identifier")

    def identifiers(self) -> List[str]:
        s: List[str] = []
        while True:
            tok, lit = self.consume(True)
            if tok == _ID:
                s.append(lit)
                tok2, lit2 = self.lookahead(True)
                if tok2 == _COMMA:
                    continue
                if tok2 == _CLOSE:
                    return s
                raise _ParseError(f"found '{lit2}', expected: ',' or ')'")
            if tok == _COMMA:
                if not s:
                    s.append("")
                tok2, _ = self.lookahead(True)
                if tok2 == _CLOSE:
                    s.append("")
                    return s
                if tok2 == _COMMA:
                    self.consume(True)
                    s.append("")
                continue
            raise _ParseError(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> List[str]:
        tok, _ = self.lookahead(True)
        if tok in (_END, _COMMA):
            return [""]
        tok, lit = self.consume(True)
        if tok == _ID:
            return [lit]
        raise _ParseError(f"found '{lit}', expected: identifier")


class _ParseError(Exception):
    pass


def _validate_key(key: str) -> None:
    errs = qualified_name_errors(key)
    if errs:
        raise _ParseError(f'invalid label key "{key}": ' + "; ".join(errs))


def _go_int(text: str) -> bool:
    """strconv.ParseInt(text, 10, 64) succeeds."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return False
    return -(2 ** 63) <= int(text) < 2 ** 63


def _new_requirement(key: str, op: str, values: List[str]) -> Predicate:
    """NewRequirement's checks, then the requirement's Matches."""
    _validate_key(key)
    if op in ("gt", "lt"):
        if len(values) != 1:
            raise _ParseError("for 'Gt', 'Lt' operators, exactly one value is required")
        if not _go_int(values[0]):
            raise _ParseError("for 'Gt', 'Lt' operators, the value must be an integer")
    for v in values:
        errs = label_value_errors(v)
        if errs:
            raise _ParseError(f'invalid label value: "{v}": at key: "{key}": ' + "; ".join(errs))
    vs = frozenset(values)
    if op in ("in", "=", "=="):
        return lambda ls: key in ls and ls[key] in vs
    if op in ("notin", "!="):
        return lambda ls: key not in ls or ls[key] not in vs
    if op == "exists":
        return lambda ls: key in ls
    if op == "!":
        return lambda ls: key not in ls
    bound = int(values[0])

    def compare(ls: Mapping[str, str]) -> bool:
        v = ls.get(key)
        if v is None or not _go_int(v):
            return False
        return int(v) > bound if op == "gt" else int(v) < bound
    return compare


def parse_label_selector(text: str) -> Predicate:
    """labels.Parse: a predicate over a label (or annotation) map; BuildError when the
    selector does not parse, in the parser's words."""
    try:
        reqs = _Parser(text).parse()
    except _ParseError as e:
        # kustomize's words, plus the selector they are about
        raise BuildError(f"{e} in selector '{text}'") from None
    return lambda labels: all(r(labels) for r in reqs)
