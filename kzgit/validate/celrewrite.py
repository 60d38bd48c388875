"""Rules that use CEL macros kzgit's runtime lacks, rewritten into CEL it runs.

``cel-expr-python`` takes no macros from Python and refuses a second declaration of a
function it declares, so the pieces of the Kubernetes environment below are written, on the
AST of :mod:`kzgit.validate.celsyntax`, as the macro expansions of cel-go (and of Kubernetes'
libraries) that produce them, with helper functions :mod:`kzgit.validate.cel_k8s` registers
(named ``__kzgit_*``: a rule that names one itself is refused, as the API server would refuse
the undeclared name, so the helpers and the fresh variables cannot be captured):

* two-variable comprehensions (cel-go ext/comprehensions.go, in the API server's base
  environment from Kubernetes 1.33): ``r.all(i, v, p)``, ``exists``, ``existsOne`` /
  ``exists_one``, ``transformList``, ``transformMap``, ``transformMapEntry`` iterate over
  ``__kzgit_pairs(r)`` (``[[index or key, value], ...]``) with ``i`` and ``v`` replaced by the
  pair's items; ``transformMap`` builds its map with ``__kzgit_to_map`` and
  ``transformMapEntry`` merges the entries with ``__kzgit_merge_entries`` ("insert failed: key
  K already exists", as ``cel.@mapInsert``);
* ``existsOne(x, p)``, the one-variable spelling (cel-go parser/macro.go ExistsOneMacroNew):
  ``exists_one``;
* ``l.sortBy(x, key)`` (cel-go ext/lists.go sortByMacro): ``l`` bound once, then
  ``__kzgit_sort_by(l, l.map(x, key))`` (``@sortByAssociatedKeys``);
* ``x.indexOf(y)`` and ``x.lastIndexOf(y)`` (the strings extension's for a string, Kubernetes'
  lists library's for a list, k8s.io/apiserver pkg/cel/library/lists.go): a list goes to
  ``__kzgit_list_index_of(l, [y])`` / ``__kzgit_list_last_index_of`` (the item in a list: a
  function of the runtime dispatches on its arguments' kinds, and the item may be of any),
  anything else to the runtime's own;
* ``string(x)`` where a rule makes IP or CIDR values (pkg/cel/library/ip.go, cidr.go: their
  ``string`` overloads): a map goes to ``__kzgit_net_string``, anything else to ``string``;
* ``type(x) == net.IP`` / ``net.CIDR`` (and ``!=``): ``__kzgit_tag`` of a map;
* the format library (pkg/cel/library/format.go): ``format.named(n)`` gives
  ``optional.of(format)`` or ``optional.none()``, ``f.validate(s)`` the optional list of errors
  of ``__kzgit_format_errors`` (``format.dns1123Label()`` and the other constants are plain
  functions of the environment).

A rule that needs none of these is compiled as written (:data:`NEEDS` decides by its text,
cheaply); a rule that does is rewritten, and its compile and evaluation errors are worded for
the rule as written (:func:`user_words`: no helper name, no position in a text the user
never wrote).
"""
from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Tuple

from kzgit.validate.celsyntax import (Binary, Call, Cond, Ident, Index, ListLit, Lit, MapLit, Message,
                                      Node, Select, SyntaxFault, Unary, parse, unparse)

PREFIX = "__kzgit"

#: a rule whose text matches may use one of the pieces above (then it is parsed)
NEEDS = re.compile(
    r"\.\s*(?:all|exists|exists_one|existsOne)\s*\(\s*[A-Za-z_.][\w.]*\s*,\s*[A-Za-z_.][\w.]*\s*,"
    r"|\.\s*(?:existsOne|transformList|transformMap|transformMapEntry|sortBy|indexOf|lastIndexOf)\s*\("
    r"|\bformat\s*\.|\bnet\s*\.\s*(?:IP|CIDR)\b|" + PREFIX)
#: a rule making IP or CIDR values, whose ``string()`` calls are rewritten
_NET = re.compile(r"\b(?:ip|cidr)\s*\(|\.\s*(?:ip|masked)\s*\(")
_STRING_CALL = re.compile(r"\bstring\s*\(")

#: cel-go's accumulator name (parser.AccumulatorName), which an iteration variable may not be
_ACCUMULATOR = "__result__"
#: macros binding their first argument in their other arguments (after the rewrite, the only
#: binders left): cel-go parser/macro.go and ext/optional's optMap/optFlatMap
_BINDERS = frozenset(("all", "exists", "exists_one", "existsOne", "map", "filter", "optMap", "optFlatMap"))
_QUANTIFIERS = {"all": "all", "exists": "exists", "exists_one": "exists_one", "existsOne": "exists_one"}
_TRANSFORMS = ("transformList", "transformMap", "transformMapEntry")


class RewriteError(Exception):
    """The rule is not CEL the API server compiles (cel-go's words); ``unsupported``: kzgit
    cannot rewrite it (the rule may be valid)."""

    def __init__(self, message: str, unsupported: bool = False) -> None:
        super().__init__(message)
        self.unsupported = unsupported


def needs_rewrite(source: str) -> bool:
    """Whether ``source`` may use what the runtime lacks (then :func:`rewrite` it)."""
    return bool(NEEDS.search(source)) or bool(_NET.search(source) and _STRING_CALL.search(source))


def rewrite(source: str) -> Optional[str]:
    """``source`` in CEL the runtime runs, or None when it needs no rewrite (or this module
    cannot read it: the runtime's parser then reports it as written).  RewriteError: a misuse
    of a macro cel-go refuses when it parses the rule."""
    try:
        tree = parse(source)
        r = _Rewriter(net=bool(_NET.search(source)), formats=bool(re.search(r"\bformat\s*\.", source)))
        out = r.node(tree)
        return unparse(out) if r.changed else None
    except SyntaxFault:   # a text this parser cannot read: the runtime reports it as written
        return None
    except RecursionError:
        raise RewriteError("the rule is nested too deeply for kzgit to rewrite it", True) from None


def _is_name(node: Node) -> bool:
    return isinstance(node, Ident) and not node.name.startswith(".")


def _at(node: Node, i: int) -> Node:
    return Index(node, Lit(str(i)))


def _bind(value: Node, var: str, body: Node) -> Node:
    """``body`` with ``var`` = ``value`` evaluated once: ``[value].map(var, body)[0]`` (what
    cel-go's ext/bindings.go cel.bind expands to, which Kubernetes' environment lacks: a rule
    may not say it, kzgit's rewrites do)."""
    return _at(Call(ListLit([(value, False)]), "map", [Ident(var), body]), 0)


class _Rewriter:
    def __init__(self, net: bool, formats: bool) -> None:
        self.net = net
        self.formats = formats
        self.changed = False
        self.count = 0

    def fresh(self) -> str:
        self.count += 1
        return f"{PREFIX}_v{self.count}"

    def node(self, n: Node) -> Node:
        n = _rebuild(n, self.node)
        if isinstance(n, Ident) and n.name.lstrip(".").startswith(PREFIX):
            raise RewriteError(f"undeclared reference to '{n.name}'")
        if isinstance(n, Call):
            if n.name.startswith(PREFIX):
                raise RewriteError(f"undeclared reference to '{n.name}'")
            out = self.call(n)
            if out is not n:
                self.changed = True
            return out
        if isinstance(n, Binary) and n.op in ("==", "!="):
            out = self.type_test(n)
            if out is not n:
                self.changed = True
            return out
        return n

    def call(self, n: Call) -> Node:
        t, name, args = n.target, n.name, n.args
        if t is None:
            if name == "string" and self.net and len(args) == 1:
                s = self.fresh()
                return _bind(args[0], s, Cond(_is_type(Ident(s), "map"),
                                              Call(None, f"{PREFIX}_net_string", [_dyn(Ident(s))]),
                                              Call(None, "string", [Call(None, "dyn", [Ident(s)])])))
            return n
        if name in _QUANTIFIERS and len(args) == 3:
            p, body, _ = self.two_vars(args)
            return Call(Call(None, f"{PREFIX}_pairs", [t]), _QUANTIFIERS[name], [Ident(p), body])
        if name == "existsOne" and len(args) == 2:
            return Call(t, "exists_one", args)
        if name in _TRANSFORMS and len(args) in (3, 4):
            return self.transform(t, name, args)
        if name == "sortBy" and len(args) == 2:
            return self.sort_by(t, args)
        if name in ("indexOf", "lastIndexOf") and len(args) == 1:
            s = self.fresh()
            helper = f"{PREFIX}_list_index_of" if name == "indexOf" else f"{PREFIX}_list_last_index_of"
            return _bind(t, s, Cond(_is_type(Ident(s), "list"),
                                    Call(None, helper, [_dyn(Ident(s)), ListLit([(args[0], False)])]),
                                    Call(Call(None, "dyn", [Ident(s)]), name, [Call(None, "dyn", [args[0]])])))
        if self.formats and name == "named" and isinstance(t, Ident) and t.name == "format" and len(args) == 1:
            s = self.fresh()
            return _bind(args[0], s, Cond(Call(None, f"{PREFIX}_format_known", [Ident(s)]),
                                          Call(Ident("optional"), "of", [Call(None, f"{PREFIX}_format", [Ident(s)])]),
                                          Call(Ident("optional"), "none", [])))
        if self.formats and name == "validate" and len(args) == 1:
            e = self.fresh()
            return _bind(Call(None, f"{PREFIX}_format_errors", [t, args[0]]), e,
                         Cond(Binary("==", Call(None, "size", [Ident(e)]), Lit("0")),
                              Call(Ident("optional"), "none", []),
                              Call(Ident("optional"), "of", [Ident(e)])))
        return n

    def two_vars(self, args: List[Node]) -> Tuple[str, Node, Node]:
        """(the pair's variable, the last argument with the two variables replaced by the
        pair's items, the filter or None) after cel-go ext/comprehensions.go extractIterVars."""
        a, b = args[0], args[1]
        for x in (a, b):
            if not _is_name(x):
                raise RewriteError("argument must be a simple name")
        assert isinstance(a, Ident) and isinstance(b, Ident)
        if a.name == b.name:
            raise RewriteError(f"duplicate variable name: {a.name}")
        if _ACCUMULATOR in (a.name, b.name):
            raise RewriteError("iteration variable overwrites accumulator variable")
        p = self.fresh()
        pair = {a.name: _at(Ident(p), 0), b.name: _at(Ident(p), 1)}
        return p, substitute(args[-1], pair), substitute(args[2], pair)

    def transform(self, t: Node, name: str, args: List[Node]) -> Node:
        p, body, first = self.two_vars(args)
        flt = [first] if len(args) == 4 else []
        pairs = Call(None, f"{PREFIX}_pairs", [t])
        if name == "transformList":
            return Call(pairs, "map", [Ident(p)] + flt + [body])
        if name == "transformMap":
            entry = ListLit([(_at(Ident(p), 0), False), (body, False)])
            return Call(None, f"{PREFIX}_to_map", [Call(pairs, "map", [Ident(p)] + flt + [entry])])
        return Call(None, f"{PREFIX}_merge_entries", [Call(pairs, "map", [Ident(p)] + flt + [body])])

    def sort_by(self, t: Node, args: List[Node]) -> Node:
        if isinstance(t, (Lit, MapLit, Message)):
            raise RewriteError("sortBy can only be applied to a list, identifier, comprehension, "
                               "call or select expression")
        if not _is_name(args[0]):
            raise RewriteError("argument is not an identifier")
        s = self.fresh()
        return _bind(t, s, Call(None, f"{PREFIX}_sort_by", [Ident(s), Call(Ident(s), "map", list(args))]))

    def type_test(self, n: Binary) -> Node:
        for call, kind in ((n.left, n.right), (n.right, n.left)):
            if (isinstance(call, Call) and call.target is None and call.name == "type" and len(call.args) == 1
                    and isinstance(kind, Select) and not kind.optional and isinstance(kind.operand, Ident)
                    and kind.operand.name == "net" and kind.field in ("IP", "CIDR")):
                s = self.fresh()
                test: Node = Binary("&&", _is_type(Ident(s), "map"),
                                    Binary("==", Call(None, f"{PREFIX}_tag", [_dyn(Ident(s))]),
                                           Lit(f"'{kind.field.lower()}'")))
                return _bind(call.args[0], s, test if n.op == "==" else Unary("!", test))
        return n


def _dyn(node: Node) -> Node:
    return Call(None, "dyn", [node])


def _is_type(node: Node, name: str) -> Node:
    return Binary("==", Call(None, "type", [node]), Ident(name))


def substitute(node: Node, names: Dict[str, Node]) -> Node:
    """``node`` with each free identifier of ``names`` replaced (a macro that binds one of
    them hides it in its body: the replacement is capture-safe)."""
    if isinstance(node, Ident):
        return names.get(node.name, node)
    if (isinstance(node, Call) and node.target is not None and node.name in _BINDERS
            and len(node.args) in (2, 3) and _is_name(node.args[0])):
        assert isinstance(node.args[0], Ident)
        bound = node.args[0].name
        inner = {k: v for k, v in names.items() if k != bound}
        return Call(substitute(node.target, names), node.name,
                    [node.args[0]] + [substitute(a, inner) for a in node.args[1:]])
    return _rebuild(node, lambda c: substitute(c, names))


def _rebuild(n: Node, f: Callable[[Node], Node]) -> Node:
    """``n`` with ``f`` applied to each direct sub-expression."""
    if isinstance(n, Select):
        return Select(f(n.operand), n.field, n.optional)
    if isinstance(n, Call):
        return Call(f(n.target) if n.target is not None else None, n.name, [f(a) for a in n.args])
    if isinstance(n, Index):
        return Index(f(n.operand), f(n.index), n.optional)
    if isinstance(n, ListLit):
        return ListLit([(f(e), o) for e, o in n.items])
    if isinstance(n, MapLit):
        return MapLit([(f(k), f(v), o) for k, v, o in n.entries])
    if isinstance(n, Message):
        return Message(n.name, [(k, f(v), o) for k, v, o in n.fields])
    if isinstance(n, Unary):
        return Unary(n.op, f(n.operand))
    if isinstance(n, Binary):
        return Binary(n.op, f(n.left), f(n.right))
    if isinstance(n, Cond):
        return Cond(f(n.test), f(n.then), f(n.other))
    return n


#: helper names as the rule's author knows them, for messages
_USER_NAMES = {"pairs": "a two-variable comprehension", "to_map": "transformMap",
               "merge_entries": "transformMapEntry", "sort_by": "sortBy", "list_index_of": "indexOf",
               "list_last_index_of": "lastIndexOf", "net_string": "string", "tag": "type",
               "format_known": "format.named", "format": "format.named", "format_errors": "validate"}
_RANGE = re.compile(r"found no matching overload for '" + PREFIX + r"_pairs' applied to '\((.*)\)'")


def user_words(message: str) -> str:
    """A compile or evaluation error of a rewritten rule, worded for the rule as written:
    no position (it would point into the rewritten text), helpers by the user's names."""
    message = re.sub(r"^\d+:\d+: ", "", message)
    # a two-variable comprehension over what is no list or map, at run time: the runtime's
    # words for a one-variable comprehension over it
    message = re.sub(r"No matching overloads found : " + PREFIX + r"_pairs\([^)]*\)",
                     "No matching overloads found : <iter_range>", message)
    m = _RANGE.search(message)
    if m:   # cel-go's checker (checker/checker.go checkComprehension)
        return (f"expression of type '{m.group(1)}' cannot be range of a comprehension "
                "(must be list, map, or dynamic)")
    return re.sub(PREFIX + r"_(v\d+|[a-z_]+)",
                  lambda x: _USER_NAMES.get(x.group(1), "a variable of kzgit's rewrite"), message)
