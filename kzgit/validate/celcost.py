"""The API server's estimated cost of a CRD's rules, and the limits it refuses a CRD by.

When a CRD is created the API server estimates each rule's worst-case cost with cel-go's
static estimator (checker/cost.go) over the schema's size bounds (``maxLength``,
``maxItems``, ``maxProperties``, else what a 3 MiB request could hold: see
:func:`kzgit.validate.celcheck.decl_type`), multiplies it by the number of times the rule
can run (the product of the ``maxItems``/``maxProperties`` of the arrays and maps above it,
else what a request could hold of the rule's value), and refuses (k8s.io/apiextensions-apiserver
pkg/apis/apiextensions/validation/validation.go):

* a rule over ``StaticEstimatedCostLimit`` (10,000,000): "estimated rule cost exceeds budget
  by factor of F (try simplifying the rule, or adding maxItems, maxProperties, and maxLength
  where arrays, maps, and strings are declared)"; a messageExpression likewise, without the
  multiplication ("estimated messageExpression cost ...");
* a schema whose rules add up to over ``StaticEstimatedCRDCostLimit`` (100,000,000):
  "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds
  budget by factor of F (...)".

:func:`estimate` reproduces the estimator for what rules are made of: literals, fields,
indexing, the operators, ``size``, ``has``, the string functions ``startsWith``,
``endsWith``, ``contains``, ``matches``, ``lowerAscii``, ``upperAscii``, ``trim``,
``substring``, ``split``, ``indexOf``, ``lastIndexOf``, ``join``, the lists library's
``isSorted``, ``sum``, ``min``, ``max``, Kubernetes' quantity, semver, IP, CIDR and URL
functions, ``dyn``, the conversions and the comprehensions (``all``,
``exists``, ``exists_one``/``existsOne``, ``map``, ``filter``, and the two-variable
``all``/``exists``/``existsOne``), each as cel-go expands and costs it.  A rule using anything
else is not estimated (None): it is never refused on a guess; nor is one whose cost depends
on the size of a value without a bound (``string(x)`` of a value, an index into a list a
function made: cel-go takes such a size as the largest, which refuses ``'x: ' + string(self.x)``
if it has none, and kzgit cannot tell that it has none).
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Tuple

from kzgit.validate.celcheck import DYN, MAX_REQUEST_SIZE, CelType, literal_type
from kzgit.validate.celsyntax import (Binary, Call, Cond, Ident, Index, ListLit, Lit, MapLit, Node, Select,
                                      SyntaxFault, Unary, parse)

RULE_LIMIT = 10_000_000        # validation.go StaticEstimatedCostLimit
CRD_LIMIT = 100_000_000        # validation.go StaticEstimatedCRDCostLimit
MAX = 2 ** 64 - 1              # cel-go's saturated uint64 (an unknown size)
_TRAVERSAL = 0.1               # common.StringTraversalCostFactor
_REGEX = 0.25                  # common.RegexStringLengthCostFactor


class NotEstimated(Exception):
    """A construct this estimator does not model."""


def _add(*xs: int) -> int:
    total = 0
    for x in xs:
        total = MAX if x > MAX - total else total + x   # addUint64NoOverflow
    return total


def _mul(x: int, y: int) -> int:
    return MAX if y and x > MAX // y else x * y   # multiplyUint64NoOverflow


def _factor(x: int, f: float) -> int:
    """checker/cost.go multiplyByCostFactor: ceil(x * f), saturated."""
    xf = float(x)
    if xf > 0 and xf > MAX / f:
        return MAX
    c = math.ceil(xf * f)
    return MAX if c >= 2.0 ** 64 else int(c)


class _Val:
    """An expression's estimate: its cost, the largest size of its value (None: unknown), its
    type and the largest size of its items (a list or map: None when the type tells)."""

    __slots__ = ("cost", "size", "type", "item")

    def __init__(self, cost: int, size: Optional[int], type_: CelType = DYN, item: Optional[int] = None) -> None:
        self.cost, self.size, self.type, self.item = cost, size, type_, item

    def sz(self) -> int:
        """The size's maximum.  cel-go takes an unknown size as the largest (sizeOrUnknown), so
        a cost that depends on one is in the billions; kzgit does not refuse a rule on that
        (an unknown size here may be one cel-go knows, as of a conversion's result):
        NotEstimated."""
        if self.size is None:
            raise NotEstimated("a cost that depends on a size with no bound")
        return self.size

    def item_size(self) -> Optional[int]:
        if self.item is not None:
            return self.item
        if self.type.kind in ("list", "map") and self.type.elem is not None:
            return self.type.elem.max_elements
        return None


def _schema(t: Optional[CelType]) -> _Val:
    """A value read from the object along the schema: its size is its declared bound
    (compilation.go sizeEstimator: the DeclType's MaxElements, 0 for scalars)."""
    t = t or DYN
    return _Val(0, t.max_elements if t is not DYN else None, t)


def estimate(source: str, self_type: Optional[CelType], tree: Optional[Node] = None) -> Optional[int]:
    """The estimated maximum cost of ``source`` with ``self`` (and ``oldSelf``) of
    ``self_type``, or None when it uses what this estimator does not model (or it cannot be
    read); ``tree``: the expression already parsed."""
    try:
        value = _schema(self_type)
        env = {"self": value, "oldSelf": value}
        return _Estimator(env).val(tree if tree is not None else parse(source)).cost
    except (NotEstimated, SyntaxFault, RecursionError):
        return None


def cardinality_of_children(schema: object) -> Optional[int]:
    """cel_validation.go extractMaxElements: how many values of a child schema one value of
    ``schema`` holds (None: unbounded)."""
    if not isinstance(schema, dict):
        return 1
    t = schema.get("type")
    if t == "object":
        if schema.get("additionalProperties") is not None and schema.get("additionalProperties") is not False:
            mp = schema.get("maxProperties")
            return max(mp, 0) if isinstance(mp, int) else None
        return 1
    if t == "array":
        mi = schema.get("maxItems")
        return max(mi, 0) if isinstance(mi, int) else None
    return 1


def rule_cost(cost: int, cardinality: Optional[int], self_type: Optional[CelType]) -> int:
    """validation.go getExpressionCost: a rule's cost times the number of times it can run
    (the bound of the arrays and maps above it, else compilation.go maxCardinality)."""
    if cardinality is None:
        cardinality = MAX_REQUEST_SIZE // ((self_type.min_size if self_type else 0) + 1)
    return 0 if cost == 0 else _mul(cost, cardinality)


def exceeds(name: str, cost: int, limit: int) -> str:
    """validation.go getCostErrorMessage."""
    f = cost / limit
    if f > 100.0:
        factor = "more than 100x"
    elif f < 1.5:
        factor = f"{f:f}x"
    else:
        factor = f"{f:.1f}x"
    return (f"{name} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, "
            "maxProperties, and maxLength where arrays, maps, and strings are declared)")


_SCALARS = frozenset(("bool", "int", "uint", "double", "duration", "timestamp"))
_CONVERSIONS = frozenset(("string", "int", "uint", "double", "bytes", "bool", "timestamp", "duration", "type"))
_STRING_RESULT = frozenset(("lowerAscii", "upperAscii", "trim", "substring"))


def _literal_size(text: str) -> int:
    """computeExprSize of a literal: a string's characters, a bytes' bytes, 1 for a scalar."""
    if text in ("true", "false", "null"):
        return 1
    i = 0
    while i < 2 and text[i:i + 1] in ("r", "R", "b", "B"):
        i += 1
    if text[i:i + 1] not in ("'", '"'):
        return 1
    body = text[i + 3:-3] if text[i:i + 3] in ("'''", '"""') else text[i + 1:-1]
    if "\\" in body and "r" not in text[:i].lower():
        raise NotEstimated("an escape sequence")   # its decoded length is not modelled
    return len(body.encode("utf-8")) if "b" in text[:i].lower() else len(body)


class _Estimator:
    def __init__(self, env: Dict[str, _Val]) -> None:
        self.scopes: List[Dict[str, _Val]] = [env]

    def var(self, name: str) -> _Val:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        raise NotEstimated(f"an unknown name {name}")

    def scoped(self, scope: Dict[str, _Val], n: Node) -> _Val:
        self.scopes.append(scope)
        try:
            return self.val(n)
        finally:
            self.scopes.pop()

    def val(self, n: Node) -> _Val:
        if isinstance(n, Lit):
            return _Val(0, _literal_size(n.text), literal_type(n.text))
        if isinstance(n, Unary) and n.op == "-" and isinstance(n.operand, Lit):
            return _Val(0, 1, literal_type(n.operand.text))   # the parser folds a negative literal
        if isinstance(n, Ident):
            v = self.var(n.name)
            return _Val(1, v.size, v.type, v.item)   # selectAndIdentCost
        if isinstance(n, Select):
            base = self.val(n.operand)
            if n.optional:   # _?._(operand, 'field'): a function of cost 1
                return _Val(_add(base.cost, 1), None, DYN)
            field = _field(base.type, n.field)
            extra = 1 if base.type.kind in ("object", "map") else 0
            return _Val(_add(base.cost, extra), *_sized(field))
        if isinstance(n, Index):
            base, idx = self.val(n.operand), self.val(n.index)
            cost = _add(1, base.cost, idx.cost)
            if n.optional:
                return _Val(cost, None, DYN)
            elem = base.type.elem if base.type.kind in ("list", "map") else None
            if elem is not None:
                return _Val(cost, *_sized(elem))
            return _Val(cost, base.item, DYN)
        if isinstance(n, ListLit):
            items = [self.val(e) for e, opt in n.items]
            if any(opt for _, opt in n.items):
                raise NotEstimated("an optional list entry")
            return _Val(_add(10, *(i.cost for i in items)), len(items), CelType("list"),
                        max((i.sz() for i in items), default=0))
        if isinstance(n, MapLit):
            parts = [self.val(x) for k, v, _ in n.entries for x in (k, v)]
            return _Val(_add(30, *(p.cost for p in parts)), len(n.entries), CelType("map"),
                        max((p.sz() for p in parts[1::2]), default=0))
        if isinstance(n, Unary):
            inner = self.val(n.operand)
            return _Val(_add(1, inner.cost), 1, CelType("bool") if n.op == "!" else inner.type)
        if isinstance(n, Binary):
            return self.binary(n)
        if isinstance(n, Cond):
            c, a, b = self.val(n.test), self.val(n.then), self.val(n.other)
            size = None if a.size is None or b.size is None else max(a.size, b.size)
            return _Val(_add(c.cost, max(a.cost, b.cost)), size, a.type if a.type.kind == b.type.kind else DYN)
        if isinstance(n, Call):
            return self.call(n)
        raise NotEstimated(type(n).__name__)

    def binary(self, n: Binary) -> _Val:
        a, b = self.val(n.left), self.val(n.right)
        args = _add(a.cost, b.cost)
        op = n.op
        if op in ("&&", "||"):
            return _Val(args, 1, CelType("bool"))
        kinds = {a.type.kind, b.type.kind}
        if op in ("==", "!="):
            if op == "==" and a.type.kind == b.type.kind and a.type.kind in _K8S_CONSTANT_EQUALITY:
                return _Val(_add(args, 1), 1, CelType("bool"))   # cost.go "_==_": O(1) types
            return _Val(_add(args, _factor(min(a.sz(), b.sz()), _TRAVERSAL)), 1, CelType("bool"))
        if "dyn" in kinds:
            raise NotEstimated("an operator on a dynamic value")   # its overload is not known
        if op in ("<", "<=", ">", ">="):
            if kinds & {"string", "bytes"}:
                return _Val(_add(args, _factor(min(a.sz(), b.sz()), _TRAVERSAL)), 1, CelType("bool"))
            return _Val(_add(args, 1), 1, CelType("bool"))
        if op == "in":
            if b.type.kind == "list":
                return _Val(_add(args, b.sz()), 1, CelType("bool"))
            return _Val(_add(args, 1), 1, CelType("bool"))
        if op == "+" and a.type.kind in ("string", "bytes", "list"):
            size = _add(a.sz(), b.sz())
            if a.type.kind == "list":
                item = None if a.item_size() is None or b.item_size() is None else max(a.item_size() or 0,
                                                                                       b.item_size() or 0)
                return _Val(_add(args, 1), size, CelType("list"), item)
            return _Val(_add(args, _factor(size, _TRAVERSAL)), size, a.type)
        kind = a.type.kind if a.type.kind == b.type.kind else "dyn"
        return _Val(_add(args, 1), 1 if kind in _SCALARS else None, CelType(kind))

    def call(self, n: Call) -> _Val:
        name, args = n.name, n.args
        if n.target is None:
            if name == "has" and len(args) == 1 and isinstance(args[0], Select):
                base = self.val(args[0].operand)   # PresenceTestHasCost(false): a test costs 0
                return _Val(base.cost, 1, CelType("bool"))
            vals = [self.val(a) for a in args]
            cost = _add(*(v.cost for v in vals))
            if name == "dyn" and len(vals) == 1:
                return _Val(_add(cost, 1), vals[0].size, DYN, vals[0].item)
            if name == "size" and len(vals) == 1:
                return _Val(_add(cost, 1), 1, CelType("int"))
            if name in _CONVERSIONS and len(vals) == 1:
                return _Val(_add(cost, 1), 1 if name in _SCALARS else None, CelType(name))
            if name in _PARSERS and len(vals) == 1:
                # k8s.io/apiserver pkg/cel/library/cost.go: the string's size x 0.1 (0.2 for
                # ip.isCanonical); the constructors make a value of a Kubernetes type
                f = 2 * _TRAVERSAL if name == "ip.isCanonical" else _TRAVERSAL
                kind = _PARSERS[name]
                return _Val(_add(cost, _factor(vals[0].sz(), f)), 1 if kind == "bool" else None, CelType(kind))
            raise NotEstimated(f"the function {name}")
        if isinstance(n.target, Ident) and n.target.name == "ip" and name == "isCanonical":
            return self.call(Call(None, "ip.isCanonical", args))
        names = [a.name if isinstance(a, Ident) else None for a in args]
        if name in ("all", "exists", "exists_one", "existsOne", "map", "filter") and names[0] is not None \
                and len(args) in (2, 3):
            return self.comprehension(n)
        target = self.val(n.target)
        vals = [self.val(a) for a in args]
        cost = _add(target.cost, *(v.cost for v in vals))
        if name == "size" and not vals:
            return _Val(_add(cost, 1), 1, CelType("int"))
        if target.type.kind == "dyn":
            raise NotEstimated("a function of a dynamic value")
        kind = target.type.kind
        if kind in _K8S_KINDS:
            return self.k8s_member(target, name, vals, cost)
        if name in ("indexOf", "lastIndexOf") and len(vals) == 1 and kind == "string":
            return _Val(_add(cost, _factor(target.sz(), _TRAVERSAL)), 1, CelType("int"))
        if name in ("isSorted", "sum", "min", "max", "indexOf", "lastIndexOf") and kind == "list":
            # cost.go: the list's size x (1, plus 0.1 x a string item's size)
            item = 1
            elem = target.type.elem
            if elem is not None and elem.kind in ("string", "bytes"):
                item = _add(1, _factor(_need(target.item_size()), _TRAVERSAL))
            result = CelType("bool") if name == "isSorted" else (
                CelType("int") if name.endswith("ndexOf") else (elem or DYN))
            return _Val(_add(cost, _mul(target.sz(), item)), 1 if result.kind in _SCALARS else None, result)
        if name == "join" and kind == "list" and len(vals) <= 1:
            # cost.go: the result's size (items x their size, plus the separators) x 0.1
            size = _mul(target.sz(), _need(target.item_size()))
            if vals:
                size = _add(size, _mul(vals[0].sz(), max(target.sz() - 1, 0)))
            return _Val(_add(cost, _factor(size, _TRAVERSAL)), size, CelType("string"))
        if name in ("startsWith", "endsWith") and len(vals) == 1:
            return _Val(_add(cost, _factor(vals[0].sz(), _TRAVERSAL)), 1, CelType("bool"))
        if name == "contains" and len(vals) == 1 and target.type.kind == "string":
            return _Val(_add(cost, _mul(_factor(target.sz(), _TRAVERSAL), _factor(vals[0].sz(), _TRAVERSAL))), 1,
                        CelType("bool"))
        if name == "matches" and len(vals) == 1:
            text = _factor(_add(target.sz(), 1), _TRAVERSAL)
            return _Val(_add(cost, _mul(text, _factor(vals[0].sz(), _REGEX))), 1, CelType("bool"))
        if name == "split" and target.type.kind == "string" and len(vals) in (1, 2):
            # cost.go: the string's size x 0.2; at most as many parts as characters (or the limit)
            limit = target.sz()
            if len(vals) == 2:
                lit = args[1]
                if not isinstance(lit, Lit) or not lit.text.isdigit():
                    raise NotEstimated("split with a computed limit")
                limit = int(lit.text)
            return _Val(_add(cost, _factor(target.sz(), 2 * _TRAVERSAL)), limit, CelType("list"))
        if name in _STRING_RESULT and target.type.kind == "string":
            # k8s.io/apiserver pkg/cel/library/cost.go: the string's size x 0.1, its size kept
            return _Val(_add(cost, _factor(target.sz(), _TRAVERSAL)), target.size, target.type)
        raise NotEstimated(f"the function {name}")

    def k8s_member(self, target: _Val, name: str, vals: List[_Val], cost: int) -> _Val:
        """The member functions of Kubernetes' types (cost.go: 1 each, containsIP and
        containsCIDR by an address's size, a string argument's size x 0.1)."""
        kind = target.type.kind
        if (kind, name) in _K8S_RESULTS:
            fixed = 1
            if name in ("containsIP", "containsCIDR"):
                fixed = _factor(32, _TRAVERSAL) + (_factor(16, _TRAVERSAL) + 1 if name == "containsCIDR" else 0)
                if vals and vals[0].type.kind == "string":
                    fixed = _add(fixed, _factor(vals[0].sz(), _TRAVERSAL))
            result = _K8S_RESULTS[(kind, name)]
            return _Val(_add(cost, fixed), 1 if result in _SCALARS else None, CelType(result))
        raise NotEstimated(f"the function {name} of a {kind}")

    def comprehension(self, n: Call) -> _Val:
        """cel-go parser/macro.go's expansions (and ext/comprehensions.go's), costed as
        checker/cost.go costComprehension: range + init + result + n x (step + condition)."""
        assert n.target is not None
        name, args = n.name, n.args
        rng = self.val(n.target)
        count = rng.sz()
        two = len(args) == 3 and name in ("all", "exists", "exists_one", "existsOne") \
            and isinstance(args[1], Ident)
        if rng.type.kind not in ("list", "map"):
            raise NotEstimated("a comprehension over a value of unknown kind")
        item = rng.item_size()
        elem_type = rng.type.elem or DYN
        if rng.type.kind == "list":
            # an index's size: @indices has no bound, an int's size is 1 (computeTypeSize)
            first = _Val(0, item, elem_type) if not two else _Val(0, 1, CelType("int"))
            second = _Val(0, item, elem_type)
        else:   # a map's keys (@keys: the key type's bound, 0), its values
            first = _Val(0, 0, CelType("string"))
            second = _Val(0, item, elem_type)
        assert isinstance(args[0], Ident)
        scope = {args[0].name: first}
        if two:
            assert isinstance(args[1], Ident)
            scope[args[1].name] = second
            body_args = args[2:]
        else:
            body_args = args[1:]
        body = [self.scoped(scope, a) for a in body_args]
        if name in ("all", "exists", "exists_one", "existsOne"):
            pred = body[0].cost
            if name == "all":        # init true; cond @not_strictly_false(accu); step accu && p
                init, cond, step, result = 0, 2, _add(1, pred), 1
            elif name == "exists":   # cond @not_strictly_false(!accu); step accu || p
                init, cond, step, result = 0, 3, _add(1, pred), 1
            else:                    # init 0; step p ? accu + 1 : accu; result accu == 1
                init, cond, step, result = 0, 0, _add(pred, 2), 2
            cost = _add(rng.cost, init, result, _mul(count, _add(step, cond)))
            return _Val(cost, 1, CelType("bool"))
        if name == "map":            # init []; step accu + [t] (or f ? accu + [t] : accu)
            t = body[-1]
            step = _add(t.cost, 12, body[0].cost if len(body) == 2 else 0)
            out_item: Optional[int] = t.size
        else:                        # filter: step p ? accu + [x] : accu
            step = _add(body[0].cost, 13)
            out_item = item
        cost = _add(rng.cost, 10, 1, _mul(count, step))
        return _Val(cost, count, CelType("list"), out_item)


def _need(size: Optional[int]) -> int:
    if size is None:
        raise NotEstimated("a cost that depends on a size with no bound")
    return size


#: Kubernetes' constructors and predicates over a string (k8s.io/apiserver pkg/cel/library):
#: the kind of what they make
_PARSERS = {"quantity": "quantity", "isQuantity": "bool", "semver": "semver", "isSemver": "bool",
            "ip": "ip", "isIP": "bool", "cidr": "cidr", "isCIDR": "bool", "ip.isCanonical": "bool",
            "url": "url", "isURL": "bool"}
_K8S_KINDS = frozenset(("quantity", "semver", "ip", "cidr", "url"))
#: cost.go's equality of O(1) cost
_K8S_CONSTANT_EQUALITY = frozenset(("quantity", "semver", "ip", "cidr"))
#: the member functions of Kubernetes' types cost.go costs 1, and their results' kinds
_K8S_RESULTS: Dict[Tuple[str, str], str] = {
    **{("quantity", f): k for f, k in (("sign", "int"), ("asInteger", "int"), ("isInteger", "bool"),
                                        ("asApproximateFloat", "double"), ("isGreaterThan", "bool"),
                                        ("isLessThan", "bool"), ("compareTo", "int"), ("add", "quantity"),
                                        ("sub", "quantity"))},
    **{("semver", f): k for f, k in (("isGreaterThan", "bool"), ("isLessThan", "bool"), ("compareTo", "int"),
                                      ("major", "int"), ("minor", "int"), ("patch", "int"))},
    **{("ip", f): "bool" for f in ("isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast",
                                   "isGlobalUnicast")},
    ("ip", "family"): "int",
    ("cidr", "ip"): "ip", ("cidr", "masked"): "cidr", ("cidr", "prefixLength"): "int",
    ("cidr", "containsIP"): "bool", ("cidr", "containsCIDR"): "bool",
    **{("url", f): "string" for f in ("getScheme", "getHostname", "getHost", "getPort", "getEscapedPath")},
}


def _field(t: CelType, name: str) -> Optional[CelType]:
    if name.startswith("`"):
        raise NotEstimated("a field in backquotes")
    if t.kind == "object" and t.fields is not None:
        return t.fields.get(name) or t.fields.get(f"__{name}__")
    if t.kind == "map":
        return t.elem
    return None


def _sized(t: Optional[CelType]) -> Tuple[Optional[int], CelType]:
    if t is None or t is DYN:
        return None, DYN
    return t.max_elements, t


