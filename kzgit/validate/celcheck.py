"""The type check the API server applies to a CRD's rules, over the schema's types.

The API server compiles each rule with ``self`` declared by the schema where the rule sits
(k8s.io/apiserver pkg/cel/common/schemas.go ``SchemaDeclType``; the CRD is refused when a rule
does not compile, k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel/compilation.go).
kzgit's runtime compiles rules over dynamic values, so this module checks what that leaves
out, on the AST of :mod:`kzgit.validate.celsyntax`, in cel-go's words:

* a field an object does not declare: ``undefined field 'x'`` (cel-go checker/errors.go).  An
  object's fields are its ``properties`` (with Kubernetes' escaping); a resource root (the
  CRD's and an ``x-kubernetes-embedded-resource``'s) has ``apiVersion``, ``kind`` and
  ``metadata`` with only ``name`` and ``generateName`` (schemas.go WithTypeAndObjectMeta);
  unknown fields (``x-kubernetes-preserve-unknown-fields``) are not declared;
* arithmetic and ordering on operands whose types no overload takes:
  ``found no matching overload for '_+_' applied to '(int, string)'``;
* a rule whose result is no boolean: ``cel expression must evaluate to a bool``
  (compilation.go), a messageExpression whose result is no string: ``messageExpression must
  evaluate to a string``;
* what cel-go's literal validators refuse (cel/validator.go, enabled by base.go from 1.29):
  an invalid ``matches`` pattern, ``duration``/``timestamp`` literal, a list or map literal
  of mixed types.

What it cannot type (a function's result, an index into a value of unknown type, a schema
without a type) is ``dyn``, which the checker accepts everywhere, as cel-go accepts ``dyn``:
the check finds fewer errors than the API server, never one it would not find.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from kzgit.validate.celsyntax import (Binary, Call, Cond, Ident, Index, ListLit, Lit, MapLit, Node, Select,
                                      SyntaxFault, Unary, children, escape, parse)

#: k8s.io/apiserver pkg/cel/limits.go and celconfig: the size bounds of values without
#: maxLength/maxItems/maxProperties come from the largest request (3 MiB)
MAX_REQUEST_SIZE = 3 * 1024 * 1024


class CelType:
    """A declared type: ``kind`` is a CEL type name (``int``, ``string``, ``list``, ``map``,
    ``object``, ``dyn``...); ``elem`` a list's item or a map's value type; ``fields`` an object's;
    ``max_elements`` the size bound (characters, items, properties), ``min_size`` the smallest
    serialized value (both as SchemaDeclType estimates them, for the cost)."""

    __slots__ = ("kind", "elem", "fields", "max_elements", "min_size")

    def __init__(self, kind: str, elem: Optional["CelType"] = None, fields: Optional[Dict[str, "CelType"]] = None,
                 max_elements: int = 0, min_size: int = 0) -> None:
        self.kind, self.elem, self.fields = kind, elem, fields
        self.max_elements, self.min_size = max_elements, min_size

    def name(self) -> str:
        """The type as cel-go's messages print it."""
        if self.kind == "list":
            return f"list({self.elem.name() if self.elem else 'dyn'})"
        if self.kind == "map":
            return f"map(string, {self.elem.name() if self.elem else 'dyn'})"
        return {"timestamp": "google.protobuf.Timestamp", "duration": "google.protobuf.Duration",
                "null": "null_type"}.get(self.kind, self.kind)


DYN = CelType("dyn")
_SIMPLE = {"boolean": ("bool", 4), "number": ("double", 1), "integer": ("int", 1)}


def decl_type(schema: Any, root: bool = False,
              cache: Optional[Dict[Tuple[int, bool], Optional[CelType]]] = None) -> Optional[CelType]:
    """SchemaDeclType: the CEL type of a structural schema (None: not exposed to CEL);
    ``cache`` keeps the types of a schema's nodes for the rules of the nodes below."""
    if not isinstance(schema, dict):
        return None
    if cache is None:
        cache = {}
    key = (id(schema), root)
    if key not in cache:
        cache[key] = _decl_type(schema, root, cache)
    return cache[key]


def _decl_type(schema: Dict[str, Any], root: bool, cache: Dict[Tuple[int, bool], Optional[CelType]]) \
        -> Optional[CelType]:
    if schema.get("x-kubernetes-int-or-string") is True:
        ml = schema.get("maxLength")
        return CelType("dyn", max_elements=(max(ml, 0) * 4 if isinstance(ml, int) else MAX_REQUEST_SIZE - 2),
                       min_size=1)
    t = schema.get("type")
    if t == "array":
        items = decl_type(schema.get("items"), _embedded(schema.get("items")), cache)
        if items is None:
            return None
        mi = schema.get("maxItems")
        n = max(mi, 0) if isinstance(mi, int) else (MAX_REQUEST_SIZE - 2) // (items.min_size + 1)
        return CelType("list", elem=items, max_elements=n, min_size=2)
    if t == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            value = decl_type(extra, _embedded(extra), cache)
            if value is None:
                return None
            mp = schema.get("maxProperties")
            n = max(mp, 0) if isinstance(mp, int) else (MAX_REQUEST_SIZE - 2) // (value.min_size + 6)
            return CelType("map", elem=value, max_elements=n, min_size=2)
        raw = schema.get("properties")
        props: Dict[str, Any] = raw if isinstance(raw, dict) else {}
        if root:
            props = _with_type_and_object_meta(props)
        required = set(schema.get("required") or []) if isinstance(schema.get("required"), list) else set()
        fields: Dict[str, CelType] = {}
        min_size = 2
        for name, prop in props.items():
            ft = decl_type(prop, _embedded(prop), cache)
            e = escape(name)
            if ft is None:
                # schemas.go leaves a field without a CEL type (preserve-unknown-fields without a
                # type) out of the object; kzgit lets a rule read it as dyn rather than risk
                # refusing a rule the API server accepts
                if e is not None:
                    fields[e] = DYN
                continue
            if e is not None:
                fields[e] = ft
            if name in required and not (isinstance(prop, dict) and "default" in prop):
                min_size += len(name) + ft.min_size + 4
        return CelType("object", fields=fields, min_size=min_size)
    if t == "string":
        fmt = schema.get("format")
        ml = schema.get("maxLength")
        if fmt == "byte":
            return CelType("bytes", max_elements=max(ml, 0) if isinstance(ml, int) else MAX_REQUEST_SIZE - 2,
                           min_size=2)
        if fmt == "duration":
            return CelType("duration", max_elements=32, min_size=3)
        if fmt == "date":
            return CelType("timestamp", max_elements=12, min_size=12)
        if fmt == "date-time":
            return CelType("timestamp", max_elements=32, min_size=21)
        if isinstance(ml, int):
            n = max(ml, 0) * 4
        elif isinstance(schema.get("enum"), list) and schema["enum"]:
            n = max((len(v) for v in schema["enum"] if isinstance(v, str)), default=0)
        else:
            n = MAX_REQUEST_SIZE - 2
        return CelType("string", max_elements=n, min_size=2)
    if isinstance(t, str) and t in _SIMPLE:
        kind, size = _SIMPLE[t]
        return CelType(kind, min_size=size)
    return None


def _embedded(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("x-kubernetes-embedded-resource") is True


_STRING_SCHEMA = {"type": "string"}


def _with_type_and_object_meta(props: Dict[str, Any]) -> Dict[str, Any]:
    """schemas.go WithTypeAndObjectMeta: a resource root's kind, apiVersion and metadata (name,
    generateName), unless the schema already declares them all."""
    raw = props.get("metadata")
    meta: Dict[str, Any] = raw if isinstance(raw, dict) else {}
    mprops = meta.get("properties") if isinstance(meta.get("properties"), dict) else None
    if (_is(props.get("kind"), "string") and _is(props.get("apiVersion"), "string") and _is(meta, "object")
            and mprops is not None and _is(mprops.get("name"), "string") and _is(mprops.get("generateName"), "string")):
        return props
    out = dict(props)
    out["kind"] = out["apiVersion"] = _STRING_SCHEMA
    # apiextensions-apiserver pkg/apiserver/schema/cel/model/schemas.go: name capped at 253
    # characters (DNS1123SubdomainMaxLength), generateName at 252, or the schema's own maxLength
    out["metadata"] = {"type": "object", "properties": {
        "name": _capped(mprops, "name", 253), "generateName": _capped(mprops, "generateName", 252)}}
    return out


def _capped(props: Optional[Dict[str, Any]], name: str, limit: int) -> Dict[str, Any]:
    own = props.get(name) if props else None
    ml = own.get("maxLength") if isinstance(own, dict) else None
    return {"type": "string", "maxLength": ml if isinstance(ml, int) and ml < limit else limit}


def _is(schema: Any, t: str) -> bool:
    return isinstance(schema, dict) and schema.get("type") == t


class CheckError(Exception):
    """A rule the API server's compiler refuses (cel-go's words)."""


_NUMERIC = frozenset(("int", "uint", "double"))
#: arithmetic overloads (cel-go common/overloads): (operator, left, right) -> result
_ARITH: Dict[Tuple[str, str, str], str] = {}
for _k in ("int", "uint", "double"):
    for _op in ("+", "-", "*", "/"):
        _ARITH[(_op, _k, _k)] = _k
_ARITH.update({("%", "int", "int"): "int", ("%", "uint", "uint"): "uint",
               ("+", "string", "string"): "string", ("+", "bytes", "bytes"): "bytes",
               ("+", "timestamp", "duration"): "timestamp", ("+", "duration", "timestamp"): "timestamp",
               ("+", "duration", "duration"): "duration", ("-", "timestamp", "timestamp"): "duration",
               ("-", "timestamp", "duration"): "timestamp", ("-", "duration", "duration"): "duration"})
#: the kinds ordering compares; numbers compare across kinds (the API server enables
#: cel.CrossTypeNumericComparisons, k8s.io/apiserver pkg/cel/environment/base.go)
_ORDERED = frozenset(("int", "uint", "double", "string", "bytes", "bool", "timestamp", "duration"))
#: the kinds this check reasons about; anything else (list, map, object, dyn, null) is left alone
_PRIMITIVE = frozenset(("int", "uint", "double", "string", "bytes", "bool", "timestamp", "duration"))
_OPERATOR_NAMES = {"+": "_+_", "-": "_-_", "*": "_*_", "/": "_/_", "%": "_%_",
                   "<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_"}
#: macros binding their first argument to the range's items (cel-go parser/macro.go, ext)
_ONE_VAR = frozenset(("all", "exists", "exists_one", "existsOne", "map", "filter", "sortBy"))
_TWO_VAR = frozenset(("all", "exists", "exists_one", "existsOne", "transformList", "transformMap",
                      "transformMapEntry"))


def check_rule(source: str, self_type: Optional[CelType], message_expression: str = "",
               tree: Optional[Node] = None, old_self: Optional[CelType] = None) -> Optional[str]:
    """The API server's compile error for a rule (and its messageExpression) over
    ``self_type``, or None when this check finds none (or cannot read the rule); ``tree``:
    the rule already parsed; ``old_self``: oldSelf's type in a transition rule."""
    return check(source, self_type, message_expression, tree, old_self)[0]


def check(source: str, self_type: Optional[CelType], message_expression: str = "",
          tree: Optional[Node] = None, old_self: Optional[CelType] = None) -> Tuple[Optional[str], Optional[str]]:
    """:func:`check_rule`'s error, and the first field of a timestamp or duration type (a
    string of format date, date-time or duration) the rule reads: kzgit's runtime binding takes
    no such values, so it would see the string where the API server has a timestamp."""
    env = {"self": self_type or DYN}
    if old_self is not None:
        env["oldSelf"] = old_self
    checker = _Checker(env)
    try:
        t = checker.type(tree if tree is not None else parse(source))
        if t.kind in _PRIMITIVE and t.kind != "bool" or t.kind in ("list", "map", "object"):
            return "cel expression must evaluate to a bool", None
        if message_expression:
            m = _Checker(env).type(parse(message_expression))
            if m.kind in _PRIMITIVE and m.kind != "string" or m.kind in ("list", "map", "object"):
                return "messageExpression must evaluate to a string", None
    except CheckError as e:
        return str(e), None
    except (SyntaxFault, RecursionError):
        return None, None   # the runtime's compiler reads it (and words its errors)
    return None, checker.times[0] if checker.times else None


def literal_type(text: str) -> CelType:
    """The type of a literal as written."""
    if text in ("true", "false"):
        return CelType("bool")
    if text == "null":
        return CelType("null")
    prefix = ""
    for c in text[:2]:
        if c not in "rRbB":
            break
        prefix += c.lower()
    if text[len(prefix):len(prefix) + 1] in ("'", '"'):
        return CelType("bytes" if "b" in prefix else "string")
    if text[-1] in "uU":
        return CelType("uint")
    if not text.lower().startswith("0x") and any(c in text for c in ".eE"):
        return CelType("double")
    return CelType("int")


class _Checker:
    def __init__(self, env: Dict[str, CelType]) -> None:
        self.scopes: List[Dict[str, CelType]] = [env]
        self.times: List[str] = []   # the fields read of a timestamp or duration type
        self.exempt = 0   # within a format() call: literals may mix types

    def lookup(self, name: str) -> CelType:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return DYN

    def type(self, n: Node) -> CelType:
        if isinstance(n, Lit):
            return literal_type(n.text)
        if isinstance(n, Ident):
            return self.lookup(n.name)
        if isinstance(n, Select):
            return self.select(self.type(n.operand), n.field, n.optional)
        if isinstance(n, Index):
            base = self.type(n.operand)
            self.type(n.index)
            if n.optional:
                return DYN
            if base.kind in ("list", "map") and base.elem is not None:
                return base.elem
            return DYN
        if isinstance(n, Call):
            return self.call(n)
        if isinstance(n, ListLit):
            self.homogeneous([self.type(e) for e, _ in n.items])
            return DYN
        if isinstance(n, MapLit):
            keys, values = [], []
            for k, v, _ in n.entries:
                keys.append(self.type(k))
                values.append(self.type(v))
            self.homogeneous(keys)
            self.homogeneous(values)
            return DYN
        if isinstance(n, Unary):
            inner = self.type(n.operand)
            if n.op == "!":
                return CelType("bool")
            return inner if inner.kind in ("int", "double", "duration") else DYN
        if isinstance(n, Binary):
            return self.binary(n)
        if isinstance(n, Cond):
            self.type(n.test)
            a, b = self.type(n.then), self.type(n.other)
            return a if a.kind == b.kind and a.kind in _PRIMITIVE else DYN
        for child in children(n):   # a message literal
            self.type(child)
        return DYN

    def select(self, base: CelType, field: str, optional: bool) -> CelType:
        if field.startswith("`"):
            return DYN   # a field in backquotes: its name as written, which escaping does not map
        if base.kind == "object" and base.fields is not None and not optional:
            if field in base.fields:
                t = base.fields[field]
                if t.kind in ("timestamp", "duration"):
                    self.times.append(field)
                return t
            if f"__{field}__" in base.fields:   # a reserved word as a field name (Kubernetes 1.32)
                return base.fields[f"__{field}__"]
            # cel-go checker/checker.go checkSelect: a field the object type does not declare
            raise CheckError(f"undefined field '{field}'")
        if base.kind == "map" and base.elem is not None and not optional:
            return base.elem
        return DYN

    def binary(self, n: Binary) -> CelType:
        a, b = self.type(n.left), self.type(n.right)
        op = n.op
        if op in ("==", "!="):
            # cel-go's _==_ takes two values of one type (compilation_test.go "self == 10" on an
            # object); numbers of different kinds and null are left to the runtime
            kinds = _PRIMITIVE | {"list", "map", "object"}
            if a.kind in kinds and b.kind in kinds and a.kind != b.kind \
                    and not (a.kind in _NUMERIC and b.kind in _NUMERIC):
                raise CheckError(f"found no matching overload for '_{op}_' applied to '({a.name()}, {b.name()})'")
            return CelType("bool")
        if op in ("&&", "||", "in"):
            return CelType("bool")
        if a.kind not in _PRIMITIVE or b.kind not in _PRIMITIVE:
            return CelType("bool") if op in ("<", "<=", ">", ">=") else DYN
        if op in ("<", "<=", ">", ">="):
            if a.kind == b.kind or (a.kind in _NUMERIC and b.kind in _NUMERIC):
                if a.kind in _ORDERED:
                    return CelType("bool")
            raise CheckError(f"found no matching overload for '{_OPERATOR_NAMES[op]}' applied to "
                             f"'({a.name()}, {b.name()})'")
        result = _ARITH.get((op, a.kind, b.kind))
        if result is None:
            raise CheckError(f"found no matching overload for '{_OPERATOR_NAMES[op]}' applied to "
                             f"'({a.name()}, {b.name()})'")
        return CelType(result)

    def homogeneous(self, types: List[CelType]) -> None:
        """cel.ValidateHomogeneousAggregateLiterals (the API server's from Kubernetes 1.29): a
        list's items, a map's keys and its values are all of the first one's type.  Only the
        types this check knows are compared (an unknown one may be dyn to cel-go, or not);
        literals within a ``format`` call are exempt."""
        if self.exempt or not types or types[0].kind not in _EXACT:
            return
        for t in types[1:]:
            if t.kind not in _EXACT:
                return
            if t.kind != types[0].kind:
                raise CheckError(f"expected type '{types[0].name()}' but found '{t.name()}'")

    def call(self, n: Call) -> CelType:
        args = n.args
        _literal_arguments(n)
        if n.name == "format" and n.target is not None:   # exempt from the homogeneity check
            target = self.type(n.target)
            self.exempt += 1
            try:
                for a in args:
                    self.type(a)
            finally:
                self.exempt -= 1
            return CelType("string") if target.kind == "string" else DYN
        if n.target is None:
            if n.name == "has" and len(args) == 1 and isinstance(args[0], Select):
                # checker.go checkSelect: a presence test resolves the field too
                self.select(self.type(args[0].operand), args[0].field, False)
                return CelType("bool")
            for a in args:
                self.type(a)
            if n.name == "size":
                return CelType("int")
            if n.name in _PRIMITIVE and len(args) == 1:   # a conversion: string(x), int(x)...
                return CelType(n.name)
            return DYN
        target = self.type(n.target)
        names = [a.name if isinstance(a, Ident) else None for a in args]
        if n.name in _TWO_VAR and len(args) in (3, 4) and names[0] and names[1]:
            key, value = _iteration(target, two=True)
            scope = {names[0]: key, names[1]: value}
            for a in args[2:]:
                self.scoped(scope, a)
            return CelType("bool") if n.name in ("all", "exists", "exists_one", "existsOne") else DYN
        if n.name in _ONE_VAR and len(args) in (2, 3) and names[0]:
            item, _ = _iteration(target, two=False)
            for a in args[1:]:
                self.scoped({names[0]: item}, a)
            if n.name in ("all", "exists", "exists_one", "existsOne"):
                return CelType("bool")
            return target if n.name in ("filter", "sortBy") else DYN
        if n.name in ("optMap", "optFlatMap") and len(args) == 2 and names[0]:
            self.scoped({names[0]: DYN}, args[1])
            return DYN
        kinds = [self.type(a) for a in args]
        if n.name == "size" and not args:
            return CelType("int")
        overloads = _STRING_METHODS.get(n.name)
        if overloads is not None and target.kind == "string":
            if all(k.kind in _EXACT for k in kinds):
                for params, result in overloads:
                    if tuple(k.kind for k in kinds) == params:
                        return _result(result)
                # cel-go checker/errors.go noMatchingOverload, a member function's signature
                raise CheckError(f"found no matching overload for '{n.name}' applied to "
                                 f"'string.({', '.join(k.name() for k in kinds)})'")
            results = {r for _, r in overloads}
            return _result(results.pop()) if len(results) == 1 else DYN
        return DYN

    def scoped(self, scope: Dict[str, CelType], n: Node) -> CelType:
        self.scopes.append(scope)
        try:
            return self.type(n)
        finally:
            self.scopes.pop()


#: the member functions of a string, by their arguments' kinds: the standard ones and the
#: strings extension's version 2 (cel-go ext/strings.go), Kubernetes' regex library's
#: (k8s.io/apiserver pkg/cel/library/regex.go); ``format`` is checked apart
_STRING_METHODS: Dict[str, List[Tuple[Tuple[str, ...], str]]] = {
    "startsWith": [(("string",), "bool")], "endsWith": [(("string",), "bool")],
    "contains": [(("string",), "bool")], "matches": [(("string",), "bool")],
    "charAt": [(("int",), "string")],
    "indexOf": [(("string",), "int"), (("string", "int"), "int")],
    "lastIndexOf": [(("string",), "int"), (("string", "int"), "int")],
    "lowerAscii": [((), "string")], "upperAscii": [((), "string")], "trim": [((), "string")],
    "replace": [(("string", "string"), "string"), (("string", "string", "int"), "string")],
    "split": [(("string",), "list(string)"), (("string", "int"), "list(string)")],
    "substring": [(("int",), "string"), (("int", "int"), "string")],
    "find": [(("string",), "string")],
    "findAll": [(("string",), "list(string)"), (("string", "int"), "list(string)")],
}


def _result(name: str) -> CelType:
    if name == "list(string)":
        return CelType("list", elem=CelType("string"))
    return CelType(name)


#: the types whose equivalence this check can tell (FormatCELType: null is null_type)
_EXACT = _PRIMITIVE | {"null"}


def _literal_arguments(n: Call) -> None:
    """cel-go's literal validators the API server enables (base.go, from Kubernetes 1.29:
    cel.ValidateRegexLiterals, ValidateDurationLiterals, ValidateTimestampLiterals): a literal
    first argument of ``matches``, ``duration`` or ``timestamp`` must be valid ("invalid
    matches argument", as cel/validator.go formatValidator reports it)."""
    if n.name not in ("matches", "duration", "timestamp") or not n.args or not isinstance(n.args[0], Lit):
        return
    if n.name != "matches" and n.target is not None:
        return
    text = _string_literal(n.args[0].text)
    if text is None:
        return
    if n.name == "matches":
        from kzgit import gore   # start-up: RE2 loads with the first rule that needs it
        try:
            gore.compile(text)
        except gore.RegexError:
            raise CheckError("invalid matches argument") from None
    elif n.name == "duration" and not _GO_DURATION.fullmatch(text):
        raise CheckError("invalid duration argument")
    elif n.name == "timestamp" and not _valid_timestamp(text):
        raise CheckError("invalid timestamp argument")


#: Go's time.ParseDuration, which cel-go's duration() calls: a sign, then numbers with units
_GO_DURATION = re.compile(r"[-+]?(?:0|(?:(?:\d+\.?\d*|\.\d+)(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h))+)")
_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|([+-])(\d{2}):(\d{2}))")


def _valid_timestamp(text: str) -> bool:
    """cel-go's timestamp(): time.Parse(time.RFC3339, ...) within years 1 to 9999."""
    m = _RFC3339.fullmatch(text)
    if not m:
        return False
    import datetime   # start-up: only a rule with a timestamp literal
    y, mo, d, h, mi, sec = (int(x) for x in m.groups()[:6])
    if y < 1 or h > 23 or mi > 59 or sec > 59:
        return False
    if m.group(8) and (int(m.group(8)) > 23 or int(m.group(9)) > 59):
        return False
    try:
        datetime.date(y, mo, d)
    except ValueError:
        return False
    return True


def _string_literal(text: str) -> Optional[str]:
    """The value of a plain string literal ('...', "...", r'...'), or None for another form
    (an escape sequence, a triple-quoted or bytes literal: not checked)."""
    raw = text[:1] in ("r", "R")
    body = text[1:] if raw else text
    if len(body) < 2 or body[0] not in ("'", '"') or body[-1] != body[0] or body[:3] in ("'''", '"""'):
        return None
    inner = body[1:-1]
    if not raw and "\\" in inner:
        return None
    return inner


def _iteration(t: CelType, two: bool) -> Tuple[CelType, CelType]:
    """(first variable, second variable) of a comprehension over a value of type ``t``."""
    if t.kind == "list":
        return (CelType("int"), t.elem or DYN) if two else (t.elem or DYN, DYN)
    if t.kind == "map":
        return CelType("string"), t.elem or DYN
    return DYN, DYN
