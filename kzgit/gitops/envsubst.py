"""Flux's variable substitution: a port of fluxcd/pkg ``envsubst`` (tag ``envsubst/v1.7.0``).

The kustomize-controller runs it on each resource's YAML after the build
(fluxcd/pkg ``kustomize/kustomize_varsub.go`` ``varSubstitution``).  Its syntax is not a
shell's: ``parse/scan.go`` and ``parse/parse.go`` decide what parses, ``template.go`` and
``funcs.go`` what each operator yields.  Ported rule by rule, including what it refuses:

- ``${var}``, ``${#var}``, ``${var^}``, ``${var^^}``, ``${var,}``, ``${var,,}``, ``${var:n}``,
  ``${var:n:len}``, ``${var#p}``, ``${var##p}``, ``${var%p}``, ``${var%%p}``,
  ``${var/p/r}``, ``${var//p/r}``, ``${var/#p/r}``, ``${var/%p/r}``;
- ``${var=d}``, ``${var:=d}``, ``${var:-d}`` (and ``${var:?d}``, ``${var:+d}``, which parse)
  all yield ``d`` when the value is empty (``funcs.go`` ``toDefault``): no operator assigns;
- ``${var-d}`` does not parse ("missing closing brace": ``parseFunc`` has no case for ``-``);
- ``$$`` escapes a dollar (``$${var}`` is the text ``${var}``); ``$var`` without braces is text;
- a NUL character ends the text, as the scanner reads rune 0 as its end (``scan.go`` ``eof``).

Strict mode (the controller's ``--feature-gates=StrictPostBuildSubstitutions``, kzgit's
``[gitops] flux-strict-substitution``): a variable referenced without a default operator
and not defined is an error (``template.go`` ``evalFunc``, ``isDefaultOp``).
"""
from __future__ import annotations

import unicodedata

from kzgit.gitops.gomatch import BadPattern, match

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, List, Optional, Tuple
    Node = Any   # a node: text (str), a function (_Func) or a list of nodes

_EOF = "\0"
# token kinds (scan.go)
_ILLEGAL, _EOF_TOKEN, _IDENT, _LBRACK, _RBRACK = range(5)
# scanner modes
_SCAN_IDENT, _SCAN_LBRACK, _SCAN_RBRACK, _SCAN_ESCAPE = 1, 2, 4, 8
# escape characters
_DOLLAR, _BACKSLASH = 1, 2
_ESCAPE_ALL = _DOLLAR | _BACKSLASH


class SubstitutionError(ValueError):
    """What envsubst refuses; ``str()`` is its message ("bad substitution", ...)."""


# parse.go's errors, in its words
BAD_SUBSTITUTION = "bad substitution"
MISSING_CLOSING_BRACE = "missing closing brace"
PARSE_VARIABLE_NAME = "unable to parse variable name"
PARSE_FUNC_SUBSTITUTION = "unable to parse substitution within function"
PARSE_DEFAULT_FUNCTION = "unable to parse default function"


class _Func:
    """parse.go FuncNode: an operator ``name`` on variable ``param`` with argument nodes."""

    __slots__ = ("param", "name", "args")

    def __init__(self, param: str = "", name: str = "") -> None:
        self.param = param
        self.name = name
        self.args: List[Node] = []




def _accept_rune(r: str, i: int) -> bool:
    return True


def _accept_ident(r: str, i: int) -> bool:
    # unicode.IsLetter || unicode.IsDigit (category Nd) || '_'
    return r.isalpha() or r == "_" or (r != _EOF and unicodedata.category(r) == "Nd")


def _accept_colon(r: str, i: int) -> bool:
    return r == ":"


def _accept_one_hash(r: str, i: int) -> bool:
    return r == "#" and i == 1


def _accept_not_closing(r: str, i: int) -> bool:
    return r != "}"


def _accept_hash_func(r: str, i: int) -> bool:
    return r == "#" and i < 3


def _accept_percent_func(r: str, i: int) -> bool:
    return r == "%" and i < 3


def _accept_default_func(r: str, i: int) -> bool:
    return (i == 1 and r == ":") or (i == 2 and r in "=-?+")


def _accept_replace_func(r: str, i: int) -> bool:
    return (i == 1 and r == "/") or (i == 2 and r in "/#%")


def _accept_one_equal(r: str, i: int) -> bool:
    return i == 1 and r == "="


def _accept_one_colon(r: str, i: int) -> bool:
    return i == 1 and r == ":"


def _reject_colon_close(r: str, i: int) -> bool:
    return r != ":" and r != "}"


def _accept_slash(r: str, i: int) -> bool:
    return r == "/"


def _accept_not_slash(r: str, i: int) -> bool:
    return r != "/"


def _accept_casing_func(r: str, i: int) -> bool:
    return r in ",^" and i < 3


class _Scanner:
    """scan.go's scanner, over code points (every position its accept functions test is
    reached through ASCII characters, so code-point offsets equal Go's byte offsets)."""

    def __init__(self, buf: str) -> None:
        self.buf = buf
        self.pos = 0
        self.start = 0
        self.width = 0
        self.mode = 0
        self.escape_chars = 0
        self.accept: Callable[[str, int], bool] = _accept_rune

    def read(self) -> str:
        if self.pos >= len(self.buf):
            self.width = 0
            return _EOF
        r = self.buf[self.pos]
        self.width = 1
        self.pos += 1
        return r

    def unread(self) -> None:
        self.pos -= self.width

    def skip(self) -> None:
        self.buf = self.buf[:self.pos - 1] + self.buf[self.pos:]

    def peek(self) -> str:
        r = self.read()
        self.unread()
        return r

    def string(self) -> str:
        return self.buf[self.start:self.pos]

    def scan(self) -> int:
        self.start = self.pos
        r = self.read()
        if r == _EOF:
            return _EOF_TOKEN
        if self._lbrack(r):
            return _LBRACK
        if self._rbrack(r):
            return _RBRACK
        if self._ident(r):
            return _IDENT
        return _ILLEGAL

    def _ident(self, r: str) -> bool:
        if not self.mode & _SCAN_IDENT:
            return False
        if self._escaped(r):
            self.skip()
        elif not self.accept(r, self.pos - self.start):
            return False
        while True:
            r = self.read()
            if r == _EOF:
                self.unread()
                break
            if self._lbrack(r):
                self.unread()
                self.unread()
                break
            if self._escaped(r):
                self.skip()
                continue
            if not self.accept(r, self.pos - self.start):
                self.unread()
                break
        return True

    def _lbrack(self, r: str) -> bool:
        if not self.mode & _SCAN_LBRACK:
            return False
        if r == "$":
            if self.read() == "{":
                return True
            self.unread()
        return False

    def _rbrack(self, r: str) -> bool:
        return bool(self.mode & _SCAN_RBRACK) and r == "}"

    def _escaped(self, r: str) -> bool:
        if not self.mode & _SCAN_ESCAPE:
            return False
        if r == "$" and self.escape_chars & _DOLLAR and self.peek() == "$":
            return True
        if r == "\\" and self.escape_chars & _BACKSLASH:
            return self.peek() in ("/", "\\")
        return False


class _Parser:
    """parse.go's Tree."""

    def __init__(self, text: str) -> None:
        self.s = _Scanner(text)

    def parse_any(self) -> Node:
        # iterative over the text (parse.go recurses once per text/function run)
        nodes: List[Node] = []
        while True:
            s = self.s
            s.accept = _accept_rune
            s.mode = _SCAN_IDENT | _SCAN_LBRACK | _SCAN_ESCAPE
            s.escape_chars = _DOLLAR
            nxt = s.buf.find("$", s.pos)
            if nxt < 0 or nxt > s.pos:
                # a run of text holding no '$' is one token whatever it holds (scanIdent
                # accepts every rune until '${' or an escape, both of which start at a '$'),
                # read at once rather than rune by rune; a NUL still ends the text (scan.go)
                end = len(s.buf) if nxt < 0 else nxt
                nul = s.buf.find(_EOF, s.pos, end)
                if nul >= 0:
                    if nul > s.pos:
                        nodes.append(s.buf[s.pos:nul])
                    return nodes
                nodes.append(s.buf[s.pos:end])
                s.pos = end
                if nxt < 0:
                    return nodes
                continue
            tok = s.scan()
            if tok == _IDENT:
                nodes.append(s.string())
            elif tok == _EOF_TOKEN:
                return nodes
            elif tok == _LBRACK:
                nodes.append(self.parse_func())
            else:
                raise SubstitutionError(BAD_SUBSTITUTION)

    def parse_func(self) -> Node:
        s = self.s
        s.escape_chars = _ESCAPE_ALL
        if s.peek() == "#":
            return self._len_func()
        name = self._ident(_accept_ident, PARSE_VARIABLE_NAME)
        r = s.peek()
        if r == ":":
            return self._default_or_substr(name)
        if r == "=":
            return self._default_func(name)
        if r in (",", "^"):
            return self._casing_func(name)
        if r == "/":
            return self._replace_func(name)
        if r == "#":
            return self._remove_func(name, _accept_hash_func)
        if r == "%":
            return self._remove_func(name, _accept_percent_func)
        s.accept = _accept_ident
        s.mode = _SCAN_RBRACK
        if s.scan() == _RBRACK:
            return _Func(name)
        raise SubstitutionError(MISSING_CLOSING_BRACE)

    def _param(self, accept: Callable[[str, int], bool], mode: int) -> Node:
        s = self.s
        s.accept = accept
        s.mode = mode | _SCAN_LBRACK
        tok = s.scan()
        if tok == _LBRACK:
            return self.parse_func()
        if tok in (_IDENT, _RBRACK):
            return s.string()
        raise SubstitutionError(PARSE_FUNC_SUBSTITUTION)

    def _default_or_substr(self, name: str) -> Node:
        s = self.s
        s.read()
        r = s.peek()
        s.unread()
        if r in "=-?+" and r != _EOF:
            return self._default_func(name)
        return self._substr_func(name)

    def _substr_func(self, name: str) -> Node:
        s = self.s
        node = _Func(name)
        node.name = self._ident(_accept_one_colon)
        node.args.append(self._param(_reject_colon_close, _SCAN_IDENT))
        s.accept = _accept_colon
        s.mode = _SCAN_IDENT | _SCAN_RBRACK
        tok = s.scan()
        if tok == _RBRACK:
            return node
        if tok != _IDENT:
            raise SubstitutionError(BAD_SUBSTITUTION)
        node.args.append(self._param(_accept_not_closing, _SCAN_IDENT))
        self._rbrack()
        return node

    def _remove_func(self, name: str, accept: Callable[[str, int], bool]) -> Node:
        node = _Func(name)
        node.name = self._ident(accept)
        node.args.append(self._param(_accept_not_closing, _SCAN_IDENT))
        self._rbrack()
        return node

    def _replace_func(self, name: str) -> Node:
        s = self.s
        node = _Func(name)
        node.name = self._ident(_accept_replace_func)
        node.args.append(self._param(_accept_not_slash, _SCAN_IDENT | _SCAN_ESCAPE))
        self._ident(_accept_slash)
        if s.peek() == "}":
            self._rbrack()
            return node
        node.args.append(self._param(_accept_not_closing, _SCAN_IDENT | _SCAN_ESCAPE))
        self._rbrack()
        return node

    def _default_func(self, name: str) -> Node:
        s = self.s
        node = _Func(name)
        node.name = self._ident(_accept_one_equal if s.peek() == "=" else _accept_default_func,
                                PARSE_DEFAULT_FUNCTION)
        while True:
            if s.peek() == "}":
                self._rbrack()
                return node
            node.args.append(self._param(_accept_not_closing, _SCAN_IDENT))

    def _casing_func(self, name: str) -> Node:
        node = _Func(name)
        node.name = self._ident(_accept_casing_func)
        self._rbrack()
        return node

    def _len_func(self) -> Node:
        node = _Func()
        node.name = self._ident(_accept_one_hash)
        node.param = self._ident(_accept_ident)
        self._rbrack()
        return node

    def _ident(self, accept: Callable[[str, int], bool], error: str = BAD_SUBSTITUTION) -> str:
        """Scan an identifier the ``accept`` function delimits (``error`` when there is none)."""
        s = self.s
        s.accept = accept
        s.mode = _SCAN_IDENT
        if s.scan() != _IDENT:
            raise SubstitutionError(error)
        return s.string()

    def _rbrack(self) -> None:
        self.s.mode = _SCAN_RBRACK
        if self.s.scan() != _RBRACK:
            raise SubstitutionError(BAD_SUBSTITUTION)


# -- evaluation (template.go, funcs.go) ----------------------------------------------------

_DEFAULT_OPS = ("-", "+", "=", "?", ":-", ":+", ":=", ":?")


def _bytes_len(s: str) -> int:
    return len(s.encode("utf-8", "surrogatepass"))


def _substr(s: str, args: List[str]) -> str:
    """funcs.go toSubstr: byte offsets, as Go slices strings."""
    if not args:
        return s
    pos = _atoi(args[0])
    if pos is None:
        return s
    b = s.encode("utf-8", "surrogatepass")
    if pos < 0:
        pos = max(len(b) + pos, 0)
    if len(args) == 1:
        return b[pos:].decode("utf-8", "surrogateescape") if pos < len(b) else ""
    length = _atoi(args[1])
    if length is None:
        return s
    if pos + length >= len(b):
        return b[pos:].decode("utf-8", "surrogateescape") if pos < len(b) else ""
    return b[pos:pos + length].decode("utf-8", "surrogateescape")


def _atoi(text: str) -> Optional[int]:
    """Go strconv.Atoi: an optional sign and decimal digits only."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    return int(text)


def _trim(s: str, pattern: str, longest: bool) -> str:
    """funcs.go trimShortest / trimLongest: prefixes tried from the whole string down."""
    shortest = ""
    for i in range(len(s)):
        cand = s[:len(s) - i]
        try:
            hit = match(pattern, cand, crossing=True)   # envsubst/path: '*' crosses '/'
        except BadPattern:
            return s
        if hit:
            if longest:
                return s[len(cand):]
            shortest = cand
    return s[len(shortest):] if shortest else s


def _apply(name: str, v: str, args: List[str]) -> str:
    if name == ",":
        return v[:1].lower() + v[1:] if v else v
    if name == ",,":
        return v.lower()
    if name == "^":
        return v[:1].upper() + v[1:] if v else v
    if name == "^^":
        return v.upper()
    if name == "#":
        return str(_bytes_len(v)) if not args else _trim(v, args[0], False)
    if name == "##":
        return _trim(v, args[0], True) if args else v
    if name == "%":
        return _trim(v[::-1], args[0][::-1], False)[::-1] if args else v
    if name == "%%":
        return _trim(v[::-1], args[0][::-1], True)[::-1] if args else v
    if name == ":":
        return _substr(v, args)
    if name == "/#":
        return v.replace(args[0], args[1], 1) if len(args) == 2 and v.startswith(args[0]) else v
    if name == "/%":
        if len(args) == 2 and v.endswith(args[0]):
            return v[:len(v) - len(args[0])] + args[1]
        return v
    if name in ("/", "//"):
        count = 1 if name == "/" else -1
        if not args:
            return v
        # Go strings.Replace and str.replace agree, an empty pattern included (before each rune)
        return v.replace(args[0], args[1] if len(args) > 1 else "", count)
    # toDefault: every other name, the default operators included
    if not v and args:
        return "".join(args)
    return v


def _eval(node: Node, lookup: Callable[[str], Tuple[str, bool]], out: List[str]) -> None:
    if isinstance(node, str):
        out.append(node)
    elif isinstance(node, list):
        for n in node:
            _eval(n, lookup, out)
    else:
        args = []
        for a in node.args:
            buf: List[str] = []
            _eval(a, lookup, buf)
            args.append("".join(buf))
        value, exists = lookup(node.param)
        if not exists and node.name not in _DEFAULT_OPS:
            raise SubstitutionError(f'variable not set (strict mode): "{node.param}"')
        out.append(_apply(node.name, value, args))


def parse(text: str) -> Node:
    """The parse tree of ``text``; :class:`SubstitutionError` where envsubst refuses it.  A
    short text's tree is kept (evaluation reads a tree, never changes it): substitution in
    place evaluates the same ``${VAR}`` values in every application's resources."""
    tree = _TREES.get(text)
    if tree is None:
        tree = _Parser(text).parse_any()
        if len(text) <= _KEPT_LENGTH:
            if len(_TREES) >= 4096:
                _TREES.clear()
            _TREES[text] = tree
    return tree


_TREES: Dict[str, Node] = {}
_KEPT_LENGTH = 256


def evaluate(text: str, lookup: Callable[[str], Tuple[str, bool]]) -> str:
    """envsubst.Eval: ``text`` with each expression replaced; ``lookup(name)`` returns
    (value, defined)."""
    tree = parse(text)
    out: List[str] = []
    _eval(tree, lookup, out)
    return "".join(out)


def references(text: str) -> List[str]:
    """The variables ``text`` reads (for messages naming what a SOPS Secret would supply)."""
    names: List[str] = []

    def walk(node: Node) -> None:
        if isinstance(node, list):
            for n in node:
                walk(n)
        elif isinstance(node, _Func):
            if node.param not in names:
                names.append(node.param)
            for a in node.args:
                walk(a)
    try:
        walk(parse(text))
    except SubstitutionError:
        return names
    return names
