"""Go's text/template, as Argo CD's ApplicationSet controller runs it with ``goTemplate: true``.

Argo CD renders each string of an ApplicationSet's template (and its ``templatePatch``) with
Go's ``text/template`` and the Sprig function map (argoproj/argo-cd
``applicationset/utils/utils.go``: ``sprig.GenericFuncMap()`` less ``env``, ``expandenv`` and
``getHostByName``, plus ``normalize``, ``slugify``, ``toYaml``, ``fromYaml``,
``fromYamlArray``), with the ApplicationSet's ``goTemplateOptions`` (``missingkey=error``).

This module is an interpreter of the language (Go's ``text/template/parse`` grammar: actions with
trim markers and comments, pipelines, variables, parenthesised pipelines, ``if``/``else
if``/``with``/``range`` with ``else``, ``break``/``continue``); the functions are
:mod:`kzgit.gitops.sprig`'s, the values :mod:`kzgit.gitops.govalues`'. ``define``, ``template``
and ``block`` raise :class:`TemplateError` (the ApplicationSet is then listed as not expanded).
"""
from __future__ import annotations

import json
import re

from kzgit.gitops.govalues import (MAX_STEPS, MAX_TEXT, MISSING, NotSupported, TemplateError,
                                   go_print, sort_key, truth)
from kzgit.gitops.sprig import function

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple

__all__ = ["TemplateError", "parse", "render"]

_MAX_NESTING = 100        # parentheses in one action


# -- lexing ----------------------------------------------------------------------------------

_SPACE = " \t\r\n"
_TOKEN = re.compile(r"""
    (?P<space>[ \t\r\n]+)
  | (?P<raw>`[^`]*`)
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<char>'(?:[^'\\\n]|\\.)+')
  | (?P<declare>:=)
  | (?P<assign>=)
  | (?P<number>[+-]?(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?))
  | (?P<field>(?:\.[A-Za-z_][A-Za-z0-9_]*)+)
  | (?P<dot>\.)
  | (?P<var>\$[A-Za-z0-9_]*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<pipe>\|)
  | (?P<lparen>\()
  | (?P<rparen>\))
  | (?P<comma>,)
""", re.VERBOSE)


def _lex_action(body: str) -> List[Tuple[str, str]]:
    """The tokens of one action's text (between the delimiters and trim markers)."""
    out: List[Tuple[str, str]] = []
    pos = depth = 0
    while pos < len(body):
        m = _TOKEN.match(body, pos)
        if m is None:
            raise TemplateError(f"unexpected {body[pos]!r} in command")
        kind = m.lastgroup or ""
        text = m.group(0)
        pos = m.end()
        if kind == "space":
            continue
        if kind == "lparen":
            depth += 1
            if depth > _MAX_NESTING:
                raise NotSupported("the template nests too deeply for kzgit")
        elif kind == "rparen":
            depth -= 1
        if kind == "field" and out and out[-1][0] == "rparen" and body[m.start() - 1] == ")":
            kind = "chain"   # (pipeline).field
        out.append((kind, text))
    return out


def _segments(text: str) -> Iterator[Tuple[str, str]]:
    """("text", ...) and ("action", ...) pieces of a template, trim markers applied and
    comments dropped (text/template/parse/lex.go: ``{{- `` and `` -}}`` trim the white space
    beside them; the marker needs the space)."""
    pos = 0
    pending_trim = False
    while True:
        start = text.find("{{", pos)
        chunk = text[pos:] if start < 0 else text[pos:start]
        if pending_trim:
            chunk = chunk.lstrip(_SPACE)
        if start < 0:
            if chunk:
                yield "text", chunk
            return
        inner_start = start + 2
        trim_left = text.startswith("- ", inner_start) or text.startswith("-\t", inner_start) \
            or text.startswith("-\n", inner_start) or text.startswith("-\r", inner_start)
        if trim_left:
            chunk = chunk.rstrip(_SPACE)
            inner_start += 1
        if chunk:
            yield "text", chunk
        end = _action_end(text, inner_start)
        if end < 0:
            raise TemplateError("unclosed action")
        inner_end = end
        pending_trim = end >= 1 and text[end - 1] == "-" and end - 2 >= inner_start \
            and text[end - 2] in _SPACE
        if pending_trim:
            inner_end -= 1
        body = text[inner_start:inner_end]
        stripped = body.strip(_SPACE)
        if stripped.startswith("/*"):
            if not stripped.endswith("*/"):
                raise TemplateError("comment ends before closing delimiter")
        else:
            yield "action", body
        pos = end + 2


def _action_end(text: str, pos: int) -> int:
    """Where the action starting at ``pos`` closes (``}}`` outside quotes), -1 if never."""
    i = pos
    while i < len(text):
        c = text[i]
        if c in "\"'`":
            close = text.find(c, i + 1) if c == "`" else _quote_end(text, i)
            if close < 0:
                return -1
            i = close + 1
            continue
        if text.startswith("/*", i) and text[pos:i].strip(_SPACE) == "":
            close = text.find("*/", i + 2)
            if close < 0:
                return -1
            i = close + 2
            continue
        if text.startswith("}}", i):
            return i
        i += 1
    return -1


def _quote_end(text: str, i: int) -> int:
    q = text[i]
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == q:
            return j
        if text[j] == "\n":
            return -1
        j += 1
    return -1


# -- parsing -----------------------------------------------------------------------------------

# nodes: ("text", str) | ("action", pipe) | ("if"|"with", pipe, list, list) |
#        ("range", pipe, list, list) | ("break",) | ("continue",)
# pipe: (declared_vars, assign: bool, [command, ...]); command: [operand, ...]
# operand: ("field", [names]) | ("dot",) | ("var", name, [names]) | ("ident", name) |
#          ("const", value) | ("pipe", pipe, [names]) | ("nil",)

_KEYWORDS = ("if", "else", "end", "range", "with", "define", "template", "block", "break",
             "continue")


def parse(text: str) -> List[Any]:
    """The tree of ``text``; :class:`TemplateError` where Go's parser refuses it (or kzgit
    does not expand a construct)."""
    tokens = [(kind, body) for kind, body in _segments(text)]
    nodes, stop, _ = _parse_list(tokens, 0, top=True)
    return nodes


def _parse_list(items: List[Tuple[str, str]], i: int, top: bool = False,
                loop: bool = False) -> Tuple[List[Any], Tuple[str, List[Tuple[str, str]]], int]:
    """Nodes until ``{{end}}``/``{{else ...}}`` (returned as the stop) or the end of the text."""
    nodes: List[Any] = []
    while i < len(items):
        kind, body = items[i]
        i += 1
        if kind == "text":
            nodes.append(("text", body))
            continue
        toks = _lex_action(body)
        if not toks:
            raise TemplateError("missing value for command")
        head = toks[0]
        if head[0] == "ident" and head[1] in _KEYWORDS:
            word = head[1]
            if word in ("end", "else"):
                if top:
                    raise TemplateError(f"unexpected {{{{{word}}}}}")
                return nodes, (word, toks[1:]), i
            if word in ("define", "template", "block"):
                raise NotSupported(f"{{{{{word}}}}} (named templates) is not expanded by kzgit")
            if word in ("break", "continue"):
                if not loop:
                    raise TemplateError(f"{{{{{word}}}}} outside {{{{range}}}}")
                nodes.append((word,))
                continue
            node, i = _parse_control(word, toks[1:], items, i, loop)
            nodes.append(node)
            continue
        nodes.append(("action", _parse_pipe(toks, declare_ok=True)))
    if not top:
        raise TemplateError("unexpected EOF")
    return nodes, ("eof", []), i


def _parse_control(word: str, toks: List[Tuple[str, str]], items: List[Tuple[str, str]], i: int,
                   loop: bool) -> Tuple[Any, int]:
    pipe = _parse_pipe(toks, declare_ok=True, range_vars=(word == "range"))
    body, stop, i = _parse_list(items, i, loop=loop or word == "range")
    other: List[Any] = []
    if stop[0] == "else":
        rest = stop[1]
        if rest and rest[0] == ("ident", "if") and word == "if" \
                or rest and rest[0] == ("ident", "with") and word == "with":
            # {{else if ...}}: an if nested in the else, sharing this {{end}}
            node, i = _parse_control(word, rest[1:], items, i, loop)
            other = [node]
            return (word, pipe, body, other), i
        if rest:
            raise TemplateError(f"unexpected {rest[0][1]!r} in else")
        other, stop, i = _parse_list(items, i, loop=loop)
        if stop[0] != "end":
            raise TemplateError("expected end; found {{else}}")
    if stop[1]:
        raise TemplateError(f"unexpected {stop[1][0][1]!r} in end")
    return (word, pipe, body, other), i


def _parse_pipe(toks: List[Tuple[str, str]], declare_ok: bool = False,
                range_vars: bool = False) -> Tuple[List[str], bool, List[List[Any]]]:
    names: List[str] = []
    assign = False
    # "$x :=" / "$x =" / "$i, $v :=" (range)
    j = 0
    while j < len(toks) and toks[j][0] == "var" and declare_ok:
        if j + 1 < len(toks) and toks[j + 1][0] in ("declare", "assign"):
            names.append(toks[j][1])
            assign = toks[j + 1][0] == "assign"
            j += 2
            break
        if range_vars and j + 1 < len(toks) and toks[j + 1][0] == "comma" and not names:
            names.append(toks[j][1])
            j += 2
            continue
        break
    if names and (j == 0 or toks[j - 1][0] not in ("declare", "assign")):
        names, j = [], 0   # "$x, ..." not followed by a declaration: plain operands
    cmds: List[List[Any]] = []
    cur: List[Any] = []
    k = j
    while k < len(toks):
        kind, text = toks[k]
        if kind == "pipe":
            if not cur:
                raise TemplateError("missing command")
            cmds.append(cur)
            cur = []
            k += 1
            continue
        if kind == "lparen":
            depth, end = 1, k + 1
            while end < len(toks) and depth:
                depth += {"lparen": 1, "rparen": -1}.get(toks[end][0], 0)
                end += 1
            if depth:
                raise TemplateError("unclosed left paren")
            inner = _parse_pipe(toks[k + 1:end - 1])
            chain: List[str] = []
            if end < len(toks) and toks[end][0] == "chain":
                chain = toks[end][1].split(".")[1:]
                end += 1
            cur.append(("pipe", inner, chain))
            k = end
            continue
        if kind == "rparen":
            raise TemplateError("unexpected right paren")
        cur.append(_operand(kind, text))
        k += 1
    if cur:
        cmds.append(cur)
    elif cmds:
        raise TemplateError("missing command")
    if not cmds:
        raise TemplateError("missing value for command")
    return names, assign, cmds


def _operand(kind: str, text: str) -> Any:
    if kind == "field":
        return ("field", text.split(".")[1:])
    if kind == "dot":
        return ("dot",)
    if kind == "var":
        name, _, rest = text.partition(".")
        return ("var", name, rest.split(".") if rest else [])
    if kind == "ident":
        if text in ("true", "false"):
            return ("const", text == "true")
        if text == "nil":
            return ("nil",)
        return ("ident", text)
    if kind in ("str", "raw"):
        return ("const", _unquote(text))
    if kind == "char":
        value = _unquote('"' + text[1:-1].replace('"', '\\"') + '"')
        if len(value) != 1:
            raise TemplateError(f"malformed character constant: {text}")
        return ("const", ord(value))
    if kind == "number":
        return ("const", _number(text))
    raise TemplateError(f"unexpected {text!r} in command")


def _unquote(text: str) -> str:
    if text.startswith("`"):
        return text[1:-1]
    try:
        value = json.loads(re.sub(r"\\([abfvx0-7'])", _escape_to_json, text))
    except ValueError:
        raise TemplateError(f"invalid syntax: {text}") from None
    return str(value)


def _escape_to_json(m: "re.Match[str]") -> str:
    c = m.group(1)
    table = {"a": "\\u0007", "b": "\\b", "f": "\\f", "v": "\\u000b", "'": "'"}
    if c in table:
        return table[c]
    return m.group(0)   # \x.. and octal: left for json to refuse (rare in templates)


def _number(text: str) -> Any:
    t = text.replace("_", "")
    try:
        if re.fullmatch(r"[+-]?0[xX][0-9a-fA-F]+|[+-]?0[bB][01]+|[+-]?0[oO][0-7]+", t):
            return int(t, 0)
        if re.fullmatch(r"[+-]?\d+", t):
            return int(t, 8) if len(t.lstrip("+-")) > 1 and t.lstrip("+-").startswith("0") else int(t)
        return float(t)
    except ValueError:
        raise TemplateError(f"illegal number syntax: {text!r}") from None


# -- execution ---------------------------------------------------------------------------------

class _Break(Exception):
    pass


class _Continue(Exception):
    pass


def render(text: str, data: Any, options: Sequence[str] = ()) -> str:
    """``text`` executed with ``data`` as dot (``options``: Go's ``Option`` strings, e.g.
    ``missingkey=error``)."""
    missing = "default"
    for o in options:
        if o in ("missingkey=default", "missingkey=invalid"):
            missing = "default"
        elif o == "missingkey=zero":
            missing = "zero"
        elif o == "missingkey=error":
            missing = "error"
        else:
            raise TemplateError(f"unrecognized option: {o}")
    run = _Run(missing)
    out: List[str] = []
    try:
        run.nodes(parse(text), data, [("$", data)], out)
    except RecursionError:
        raise NotSupported("the template nests too deeply for kzgit") from None
    return "".join(out)


class _Run:
    def __init__(self, missing: str) -> None:
        self.missing = missing
        self.steps = 0
        self.size = 0

    def step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise NotSupported(f"the template takes more than {MAX_STEPS} steps: beyond "
                               "kzgit's bound (a repository's template may not stall it)")

    def emit(self, out: List[str], text: str) -> None:
        self.size += len(text)
        if self.size > MAX_TEXT:
            raise NotSupported(f"the template's result exceeds {MAX_TEXT} characters: beyond "
                               "kzgit's bound")
        out.append(text)

    def nodes(self, nodes: List[Any], dot: Any, scope: List[Tuple[str, Any]], out: List[str]) -> None:
        for n in nodes:
            self.step()
            kind = n[0]
            if kind == "text":
                self.emit(out, n[1])
            elif kind == "action":
                value = self.pipe(n[1], dot, scope)
                if not n[1][0]:   # a declaration prints nothing
                    self.emit(out, go_print(value))
            elif kind in ("if", "with"):
                mark = len(scope)
                value = self.pipe(n[1], dot, scope)
                if truth(value):
                    self.nodes(n[2], value if kind == "with" else dot, scope, out)
                else:
                    self.nodes(n[3], dot, scope, out)
                del scope[mark:]
            elif kind == "range":
                self.range(n, dot, scope, out)
            elif kind == "break":
                raise _Break()
            elif kind == "continue":
                raise _Continue()

    def range(self, n: Any, dot: Any, scope: List[Tuple[str, Any]], out: List[str]) -> None:
        names, _, cmds = n[1]
        mark = len(scope)
        value = self.pipe(([], False, cmds), dot, scope)
        if isinstance(value, dict):
            pairs: List[Tuple[Any, Any]] = [(k, value[k]) for k in sorted(value, key=sort_key)]
        elif isinstance(value, list):
            pairs = list(enumerate(value))
        elif isinstance(value, int) and not isinstance(value, bool):
            pairs = [(i, i) for i in range(value)]
        elif value is None or value is MISSING:
            pairs = []
        else:
            raise TemplateError(f"range can't iterate over {go_print(value)}")
        if not pairs:
            self.nodes(n[3], dot, scope, out)
            return
        for k, v in pairs:
            self.step()
            del scope[mark:]
            if len(names) == 1:
                scope.append((names[0], v))
            elif len(names) == 2:
                scope += [(names[0], k), (names[1], v)]
            try:
                self.nodes(n[2], v, scope, out)
            except _Break:
                break
            except _Continue:
                continue
        del scope[mark:]

    def pipe(self, pipe: Any, dot: Any, scope: List[Tuple[str, Any]]) -> Any:
        names, assign, cmds = pipe
        value: Any = None
        first = True
        for cmd in cmds:
            value = self.command(cmd, dot, scope, None if first else (value,))
            first = False
        for name in names[:1]:
            if assign:
                for i in range(len(scope) - 1, -1, -1):
                    if scope[i][0] == name:
                        scope[i] = (name, value)
                        break
                else:
                    raise TemplateError(f"undefined variable: {name}")
            else:
                scope.append((name, value))
        return value

    def command(self, cmd: List[Any], dot: Any, scope: List[Tuple[str, Any]],
                piped: Optional[Tuple[Any]]) -> Any:
        self.step()
        head = cmd[0]
        if head[0] == "ident":
            fn = function(head[1])
            if head[1] in ("and", "or"):
                return self.logic(head[1], cmd[1:], dot, scope, piped)
            args = [self.operand(a, dot, scope) for a in cmd[1:]] + list(piped or ())
            return self.call(head[1], fn, args)
        if len(cmd) > 1 or piped is not None:
            raise TemplateError(f"can't give argument to non-function {_describe(head)}")
        return self.operand(head, dot, scope)

    def call(self, name: str, fn: Callable[..., Any], args: List[Any]) -> Any:
        try:
            got = fn(*args)
        except TemplateError:
            raise
        except TypeError as e:
            if "positional argument" in str(e):
                raise TemplateError(f"wrong number of args for {name}: got {len(args)}") from None
            raise TemplateError(f"error calling {name}: {e}") from None
        except (ValueError, KeyError, IndexError, ZeroDivisionError, AttributeError,
                OverflowError) as e:
            raise TemplateError(f"error calling {name}: {e}") from None
        if isinstance(got, (str, list)) and len(got) > MAX_TEXT:
            raise NotSupported(f"error calling {name}: a result of more than {MAX_TEXT} "
                               "characters or items: beyond kzgit's bound")
        return got

    def logic(self, name: str, args: List[Any], dot: Any, scope: List[Tuple[str, Any]],
              piped: Optional[Tuple[Any]]) -> Any:
        """``and``/``or`` stop at the first argument that decides (Go 1.18)."""
        if not args and not piped:
            raise TemplateError(f"wrong number of args for {name}: want at least 1 got 0")
        value: Any = None
        for a in args:
            value = self.operand(a, dot, scope)
            if truth(value) != (name == "and"):
                return value
        if piped:
            value = piped[0]
        return value

    def operand(self, op: Any, dot: Any, scope: List[Tuple[str, Any]]) -> Any:
        kind = op[0]
        if kind == "const":
            return op[1]
        if kind == "nil":
            raise TemplateError("nil is not a command")
        if kind == "dot":
            return dot
        if kind == "field":
            return self.fields(dot, op[1])
        if kind == "var":
            for name, value in reversed(scope):
                if name == op[1]:
                    return self.fields(value, op[2])
            raise TemplateError(f"undefined variable: {op[1]}")
        if kind == "pipe":
            return self.fields(self.pipe(op[1], dot, scope), op[2])
        if kind == "ident":
            if op[1] in ("and", "or"):
                raise TemplateError(f"wrong number of args for {op[1]}: want at least 1 got 0")
            return self.call(op[1], function(op[1]), [])
        raise TemplateError(f"can't evaluate {op!r}")

    def fields(self, value: Any, names: List[str]) -> Any:
        for name in names:
            if isinstance(value, dict):
                if name in value:
                    value = value[name]
                elif self.missing == "error":
                    raise TemplateError(f'map has no entry for key "{name}"')
                else:
                    value = MISSING
            elif value is None or value is MISSING:
                raise TemplateError(f"nil pointer evaluating interface {{}}.{name}")
            else:
                # Argo CD's parameters are map[string]any: a value's static type is interface {}
                raise TemplateError(f"can't evaluate field {name} in type interface {{}}")
        return value

def _describe(op: Any) -> str:
    if op[0] == "field":
        return "." + ".".join(op[1])
    if op[0] == "var":
        return op[1]
    if op[0] == "const":
        return go_print(op[1])
    return op[0]
