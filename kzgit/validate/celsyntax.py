"""CEL's syntax: a tokenizer, a parser to a small AST and an unparser, after cel-spec doc/langdef.md.

kzgit's CEL runtime (``cel-expr-python``) lacks some macros the Kubernetes environment has
and takes none from Python; :mod:`kzgit.validate.celrewrite` rewrites a rule that uses them
into CEL the runtime runs, over this AST.  The unparser writes each literal back as it was
written (its token's text), and puts parentheses where the AST's shape needs them, so a
rewritten rule means what the original meant.

The grammar (langdef.md, "Syntax")::

    Expr           = ConditionalOr ["?" ConditionalOr ":" Expr] ;
    ConditionalOr  = [ConditionalOr "||"] ConditionalAnd ;
    ConditionalAnd = [ConditionalAnd "&&"] Relation ;
    Relation       = [Relation Relop] Addition ;   Relop = "<" | "<=" | ">=" | ">" | "==" | "!=" | "in"
    Addition       = [Addition ("+" | "-")] Multiplication ;
    Multiplication = [Multiplication ("*" | "/" | "%")] Unary ;
    Unary          = Member | "!" {"!"} Member | "-" {"-"} Member ;
    Member         = Primary | Member "." ["?"] SELECTOR ["(" [ExprList] ")"] | Member "[" ["?"] Expr "]" ;
    Primary        = ["."] IDENT ["(" [ExprList] ")"] | "(" Expr ")" | "[" [ListInits] [","] "]"
                   | "{" [MapInits] [","] "}" | ["."] SELECTOR {"." SELECTOR} "{" [FieldInits] [","] "}"
                   | LITERAL ;

A text this module cannot read raises :class:`SyntaxFault`; the caller then hands the rule to
the runtime as written, whose parser words the error.
"""
from __future__ import annotations

import functools
import re
from typing import Dict, Iterator, List, Optional, Sequence, Tuple


class SyntaxFault(Exception):
    """A text that is not CEL this parser reads (the runtime's parser words the error)."""


# -- tokens ------------------------------------------------------------------------------------
# langdef.md "Lexical structure": the string forms with their r/b prefixes and triple quotes,
# numbers (a float needs digits after its dot: ``1.all(...)`` is the int 1, a dot, a name)
_STRING = r"""(?:[rR][bB]?|[bB][rR]?)?(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"|'(?:\\.|[^\\'\n\r])*'|"(?:\\.|[^\\"\n\r])*")"""
_TOKEN = r"""
    (?P<ws>[ \t\n\f\r]+|//[^\n]*)
  | (?P<str>""" + _STRING + r""")
  | (?P<num>0[xX][0-9a-fA-F]+[uU]?
         |(?:[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|\.[0-9]+(?:[eE][+-]?[0-9]+)?)
         |[0-9]+[uU]?)
  | (?P<id>[_a-zA-Z][_a-zA-Z0-9]*)
  | (?P<quoted>`[^`\n\r]+`)
  | (?P<op>==|!=|<=|>=|&&|\|\||[-+*/%!<>?:.,()\[\]{}])
  | (?P<bad>.)
"""
#: langdef.md: reserved words that cannot be identifiers (``in`` is an operator, the
#: literals are literals)
_RESERVED = frozenset(("as", "break", "const", "continue", "else", "for", "function", "if", "import",
                       "let", "loop", "package", "namespace", "return", "var", "void", "while"))


@functools.lru_cache(maxsize=None)
def _token() -> "re.Pattern[str]":
    # compiled on first use: most runs rewrite no rule
    return re.compile(_TOKEN, re.X | re.S)


# k8s.io/apiserver pkg/cel/escaping.go: a property name as CEL sees it (celReservedSymbols are
# langdef's reserved words and the literals and ``in``)
_K8S_RESERVED = _RESERVED | {"true", "false", "null", "in"}
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def escape(name: str) -> Optional[str]:
    """A property name as CEL sees it (None: not accessible), as Kubernetes' ``Escape``:
    ``namespace`` is ``__namespace__``, ``x-y`` is ``x__dash__y``."""
    if not name or name[0].isdigit():
        return None
    if name in _K8S_RESERVED:
        return f"__{name}__"
    if _PLAIN.fullmatch(name) and "__" not in name:
        return name
    out = []
    i = 0
    while i < len(name):
        if name.startswith("__", i):
            out.append("__underscores__")
            i += 2
            continue
        c = name[i]
        if c == ".":
            out.append("__dot__")
        elif c == "-":
            out.append("__dash__")
        elif c == "/":
            out.append("__slash__")
        elif c.isascii() and (c.isalnum() or c == "_"):
            out.append(c)
        else:
            return None
        i += 1
    return "".join(out)


def tokens(text: str) -> List[Tuple[str, str]]:
    """(kind, text) of each token: kind is ``lit``, ``id`` or the operator itself."""
    out: List[Tuple[str, str]] = []
    for m in _token().finditer(text):   # every character is in a token (``bad`` at worst)
        kind = m.lastgroup
        tok = m.group()
        if kind == "ws":
            continue
        if kind == "op":
            out.append((tok, tok))
        elif kind == "bad":
            raise SyntaxFault(f"unexpected character at {m.start()}")
        elif kind in ("str", "num"):
            out.append(("lit", tok))
        elif kind == "quoted":   # a field name in backquotes (cel-spec: ``a.`b-c```)
            out.append(("quoted", tok))
        elif kind == "id":
            if tok in ("true", "false", "null"):
                out.append(("lit", tok))
            elif tok == "in":
                out.append(("in", tok))
            elif tok in _RESERVED:
                out.append(("reserved", tok))   # a field name only (cel-go from v0.22: ``a.if``)
            else:
                out.append(("id", tok))
    return out


# -- the AST -----------------------------------------------------------------------------------
class Node:
    """An expression; subclasses hold its parts."""

    __slots__ = ()


class Lit(Node):
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class Ident(Node):
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name   # with its leading dot for a root-scoped name (".a")


class Select(Node):
    __slots__ = ("operand", "field", "optional")

    def __init__(self, operand: Node, field: str, optional: bool = False) -> None:
        self.operand, self.field, self.optional = operand, field, optional


class Call(Node):
    """A call: a global function (``target`` None) or a member function of ``target``."""

    __slots__ = ("target", "name", "args")

    def __init__(self, target: Optional[Node], name: str, args: List[Node]) -> None:
        self.target, self.name, self.args = target, name, args


class Index(Node):
    __slots__ = ("operand", "index", "optional")

    def __init__(self, operand: Node, index: Node, optional: bool = False) -> None:
        self.operand, self.index, self.optional = operand, index, optional


class ListLit(Node):
    __slots__ = ("items",)

    def __init__(self, items: List[Tuple[Node, bool]]) -> None:
        self.items = items   # (element, optional: ``?e``)


class MapLit(Node):
    __slots__ = ("entries",)

    def __init__(self, entries: List[Tuple[Node, Node, bool]]) -> None:
        self.entries = entries   # (key, value, optional: ``?k: v``)


class Message(Node):
    __slots__ = ("name", "fields")

    def __init__(self, name: str, fields: List[Tuple[str, Node, bool]]) -> None:
        self.name, self.fields = name, fields


class Unary(Node):
    __slots__ = ("op", "operand")

    def __init__(self, op: str, operand: Node) -> None:
        self.op, self.operand = op, operand


class Binary(Node):
    __slots__ = ("op", "left", "right")

    def __init__(self, op: str, left: Node, right: Node) -> None:
        self.op, self.left, self.right = op, left, right


class Cond(Node):
    __slots__ = ("test", "then", "other")

    def __init__(self, test: Node, then: Node, other: Node) -> None:
        self.test, self.then, self.other = test, then, other


# -- the parser --------------------------------------------------------------------------------
#: binary operators by precedence, loosest first (langdef.md "Syntax")
_LEVELS: Sequence[Tuple[str, ...]] = (("||",), ("&&",), ("<", "<=", ">=", ">", "==", "!=", "in"),
                                      ("+", "-"), ("*", "/", "%"))
_PRECEDENCE: Dict[str, int] = {op: i for i, ops in enumerate(_LEVELS) for op in ops}
_MAX_DEPTH = 250   # cel-go's default parser recursion limit (parser.MaxRecursionDepth)


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = tokens(text)
        self.end = len(self.toks)
        self.toks += [("", ""), ("", "")]   # the end, which peek(1) may look past
        self.pos = 0
        self.depth = 0

    def peek(self, ahead: int = 0) -> str:
        return self.toks[self.pos + ahead][0]   # the end: ("", "") twice (__init__)

    def take(self, kind: Optional[str] = None) -> str:
        k, text = self.toks[self.pos]
        if not k:
            raise SyntaxFault("unexpected end of input")
        if kind is not None and k != kind:
            raise SyntaxFault(f"expected {kind!r}, found {text!r}")
        self.pos += 1
        return text

    def expr(self) -> Node:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise SyntaxFault("expression recursion limit exceeded")
        test = self.binary(0)
        if self.peek() == "?":
            self.take()
            then = self.binary(0)
            self.take(":")
            test = Cond(test, then, self.expr())
        self.depth -= 1
        return test

    def binary(self, level: int) -> Node:
        """Operators of precedence ``level`` or tighter, by precedence climbing (each
        operator is left-associative)."""
        left = self.unary()
        while True:
            op = self.peek()
            at = _PRECEDENCE.get(op)
            if at is None or at < level:
                return left
            self.pos += 1
            left = Binary(op, left, self.binary(at + 1))

    def unary(self) -> Node:
        if self.peek() in ("!", "-"):
            op = self.take()
            return Unary(op, self.unary())
        return self.member()

    def member(self) -> Node:
        node = self.primary()
        while True:
            k = self.peek()
            if k == ".":
                self.take()
                opt = self.peek() == "?"
                if opt:
                    self.take()
                k = self.peek()
                name = self.take(k if k in ("reserved", "quoted") else "id")
                if not opt and k != "quoted" and self.peek() == "(":
                    node = Call(node, name, self.args())
                else:
                    node = Select(node, name, opt)
            elif k == "[":
                self.take()
                opt = self.peek() == "?"
                if opt:
                    self.take()
                node = Index(node, self.expr(), opt)
                self.take("]")
            elif k == "{" and _qualified(node) is not None:
                node = self.message(_qualified(node) or "")
            else:
                return node

    def args(self) -> List[Node]:
        self.take("(")
        out: List[Node] = []
        if self.peek() != ")":
            out.append(self.expr())
            while self.peek() == ",":
                self.take()
                out.append(self.expr())
        self.take(")")
        return out

    def primary(self) -> Node:
        k = self.peek()
        if k == "lit":
            return Lit(self.take())
        if k == "." and self.peek(1) == "id":
            self.take()
            return Ident("." + self.take())
        if k == "id":
            name = self.take()
            if self.peek() == "(":
                return Call(None, name, self.args())
            return Ident(name)
        if k == "(":
            self.take()
            e = self.expr()
            self.take(")")
            return e
        if k == "[":
            self.take()
            items: List[Tuple[Node, bool]] = []
            while self.peek() != "]":
                opt = self.optional_mark()
                items.append((self.expr(), opt))
                if self.peek() != ",":
                    break
                self.take()
            self.take("]")
            return ListLit(items)
        if k == "{":
            self.take()
            entries: List[Tuple[Node, Node, bool]] = []
            while self.peek() != "}":
                opt = self.optional_mark()
                key = self.expr()
                self.take(":")
                entries.append((key, self.expr(), opt))
                if self.peek() != ",":
                    break
                self.take()
            self.take("}")
            return MapLit(entries)
        raise SyntaxFault(f"unexpected {self.toks[self.pos][1] if k else 'end of input'!r}")

    def optional_mark(self) -> bool:
        if self.peek() == "?":
            self.take()
            return True
        return False

    def message(self, name: str) -> Node:
        self.take("{")
        fields: List[Tuple[str, Node, bool]] = []
        while self.peek() != "}":
            opt = self.optional_mark()
            field = self.take("id")
            self.take(":")
            fields.append((field, self.expr(), opt))
            if self.peek() != ",":
                break
            self.take()
        self.take("}")
        return Message(name, fields)


def _qualified(node: Node) -> Optional[str]:
    """``a.b.c`` of a chain of names (a message literal's type name), else None."""
    if isinstance(node, Ident):
        return node.name
    if isinstance(node, Select) and not node.optional:
        inner = _qualified(node.operand)
        return None if inner is None else f"{inner}.{node.field}"
    return None


def parse(text: str) -> Node:
    """The AST of a CEL expression; SyntaxFault when this parser cannot read it.  Trees are
    never changed (a rewrite builds new nodes), so one text's tree is kept for the next time:
    CRDs repeat their rules, once per served version."""
    got = _parsed.get(text)
    if got is None:
        try:
            got = _parse(text)
        except SyntaxFault as e:
            got = e
        _parsed[text] = got
    if isinstance(got, SyntaxFault):
        raise SyntaxFault(str(got))
    return got


_parsed: Dict[str, "Node | SyntaxFault"] = {}


def _parse(text: str) -> Node:
    p = _Parser(text)
    try:
        node = p.expr()
    except RecursionError:
        raise SyntaxFault("expression too deeply nested") from None
    if p.pos != p.end:
        raise SyntaxFault(f"unexpected {p.toks[p.pos][1]!r}")
    return node


# -- the unparser ------------------------------------------------------------------------------
_ATOMS = (Lit, Ident, Select, Call, Index, ListLit, MapLit, Message)


def unparse(node: Node) -> str:
    """CEL text for ``node``: literals as written, parentheses where precedence needs them."""
    return "".join(_emit(node))


def _emit(node: Node) -> Iterator[str]:
    if isinstance(node, Lit):
        yield node.text
    elif isinstance(node, Ident):
        yield node.name
    elif isinstance(node, Select):
        yield from _operand(node.operand)
        yield ".?" if node.optional else "."
        yield node.field
    elif isinstance(node, Call):
        if node.target is not None:
            yield from _operand(node.target)
            yield "."
        yield node.name
        yield "("
        for i, a in enumerate(node.args):
            if i:
                yield ", "
            yield from _emit(a)
        yield ")"
    elif isinstance(node, Index):
        yield from _operand(node.operand)
        yield "[?" if node.optional else "["
        yield from _emit(node.index)
        yield "]"
    elif isinstance(node, ListLit):
        yield "["
        for i, (e, opt) in enumerate(node.items):
            yield ", " if i else ""
            yield "?" if opt else ""
            yield from _emit(e)
        yield "]"
    elif isinstance(node, MapLit):
        yield "{"
        for i, (k, v, opt) in enumerate(node.entries):
            yield ", " if i else ""
            yield "?" if opt else ""
            yield from _emit(k)
            yield ": "
            yield from _emit(v)
        yield "}"
    elif isinstance(node, Message):
        yield node.name
        yield "{"
        for i, (f, v, opt) in enumerate(node.fields):
            yield ", " if i else ""
            yield "?" if opt else ""
            yield f
            yield ": "
            yield from _emit(v)
        yield "}"
    elif isinstance(node, Unary):
        yield node.op
        # "-9223372036854775808" must stay one literal for the parser: no parentheses around
        # an atom; "-(-9223372036854775808)" keeps its own ("--" would negate the literal
        # 9223372036854775808, which no int holds)
        inner = node.operand
        plain = isinstance(inner, _ATOMS) or (isinstance(inner, Unary) and not (node.op == inner.op == "-"))
        yield from (_emit(inner) if plain else _parens(inner))
    elif isinstance(node, Binary):
        level = _PRECEDENCE[node.op]
        yield from _side(node.left, level, False)
        yield f" {node.op} "
        yield from _side(node.right, level, True)
    elif isinstance(node, Cond):
        yield from _side(node.test, -1, True)
        yield " ? "
        yield from _side(node.then, -1, True)
        yield " : "
        yield from _emit(node.other)
    else:   # pragma: no cover - every node class is above
        raise TypeError(type(node).__name__)


def _parens(node: Node) -> Iterator[str]:
    yield "("
    yield from _emit(node)
    yield ")"


def _operand(node: Node) -> Iterator[str]:
    """The receiver of ``.f``, ``.f()`` or ``[i]``: an atom as it is, anything else in parentheses
    (``-a.b`` is ``-(a.b)``, so ``(-a).b`` keeps its parentheses)."""
    return _emit(node) if isinstance(node, _ATOMS) else _parens(node)


def _side(node: Node, level: int, right: bool) -> Iterator[str]:
    """An operand of a binary operator of precedence ``level`` (operators are left-associative:
    an operand at the same level on the right keeps its parentheses); a conditional always does."""
    if isinstance(node, Cond):
        return _parens(node)
    if isinstance(node, Binary):
        inner = _PRECEDENCE[node.op]
        if inner < level or (right and inner == level):
            return _parens(node)
    return _emit(node)


def walk(node: Node) -> Iterator[Node]:
    """``node`` and every node below it."""
    yield node
    for child in children(node):
        yield from walk(child)


def children(node: Node) -> List[Node]:
    """The direct sub-expressions of ``node``."""
    if isinstance(node, Select):
        return [node.operand]
    if isinstance(node, Call):
        return ([node.target] if node.target is not None else []) + list(node.args)
    if isinstance(node, Index):
        return [node.operand, node.index]
    if isinstance(node, ListLit):
        return [e for e, _ in node.items]
    if isinstance(node, MapLit):
        return [x for k, v, _ in node.entries for x in (k, v)]
    if isinstance(node, Message):
        return [v for _, v, _ in node.fields]
    if isinstance(node, Unary):
        return [node.operand]
    if isinstance(node, Binary):
        return [node.left, node.right]
    if isinstance(node, Cond):
        return [node.test, node.then, node.other]
    return []

