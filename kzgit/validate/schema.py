"""A compiler for the JSON Schema subset Kubernetes schemas use.

``compile_schema(schema, defs)`` turns a schema (a parsed JSON object) into a
:class:`Check`: a tree of small closures that walk an instance once and append a
:class:`Problem` for everything wrong with it.  Compiling is done once per schema
and run (:mod:`kzgit.validate.sources` keeps the compiled checks); running a check
costs one closure call per value, which is what makes validating thousands of
resources cheaper than rendering them (a generic validator such as ``jsonschema``
re-interprets the schema for every value).

Two dialects, one compiler:

* ``json``: the JSON Schema (2020-12) the Kubernetes schemas of the
  ``kubernetes-validate`` package are written in, and kubeconform-layout schema
  files: ``type`` (a name or a list), ``enum``, ``const``, ``$ref`` into ``$defs``
  (or ``definitions``), ``properties``, ``additionalProperties``,
  ``patternProperties``, ``items``, ``required``, ``oneOf``/``anyOf``/``allOf``/``not``,
  and the numeric, length and size bounds.  ``format`` is checked where the API server
  enforces it (``int32``/``int64`` ranges, ``byte`` as base64, ``date-time``, ``date``)
  and an annotation otherwise.
* ``openapi``: a CustomResourceDefinition's ``openAPIV3Schema`` (structural
  schemas, OpenAPI 3.0): the same keywords plus ``nullable``,
  ``x-kubernetes-int-or-string``, ``x-kubernetes-preserve-unknown-fields``,
  ``x-kubernetes-embedded-resource`` and boolean ``exclusiveMinimum``/``Maximum``.
  In both, ``x-kubernetes-list-type`` ``set`` and ``map`` (with
  ``x-kubernetes-list-map-keys``) refuse duplicate items or keys (``duplicate``), as the
  API server does for a custom resource and server-side apply for every resource.
  With ``strict``, an object schema that declares no ``additionalProperties``
  and does not preserve unknown fields refuses fields it does not list: the API
  server prunes them, and refuses them under strict field validation.

Matching ``jsonschema``: an integer is an ``int`` or a ``float`` with no
fraction, a boolean is never a number, ``oneOf`` needs exactly one match.

One module (over 500 lines) on purpose: every keyword handler follows the same
closure convention and shares the compiler's ``$ref`` cells; split apart, each
piece would need the others to be read.
"""
from __future__ import annotations

import base64
import binascii
import difflib
import math
import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple


# A path is a linked list built as the walk goes down: (parent, key) or None at the root.
# Pointers are only spelled out for problems, so a valid value costs no string work.
Path = Optional[Tuple[Any, Any]]


class Problem:
    """One thing wrong with an instance: where (``path``), what (``code``), in words."""

    __slots__ = ("path", "code", "message")

    def __init__(self, path: Path, code: str, message: str) -> None:
        self.path = path
        self.code = code          # type|enum|required|unknown-field|oneOf|bound|...
        self.message = message

    def pointer(self) -> str:
        """The JSON pointer of the value (RFC 6901: ``~`` and ``/`` escaped)."""
        parts: List[str] = []
        p = self.path
        while p is not None:
            p, key = p
            parts.append(str(key).replace("~", "~0").replace("/", "~1"))
        return "".join("/" + k for k in reversed(parts))

    def __repr__(self) -> str:
        return f"Problem({self.pointer()!r}, {self.code!r}, {self.message!r})"


Check = Callable[[Any, Path, List[Problem]], None]


class SchemaError(Exception):
    """A schema kzgit cannot use (a bad keyword value, a dangling ``$ref``)."""


def _ok(inst: Any, path: Path, out: List[Problem]) -> None:
    return None


_TYPE_NAMES = {dict: "object", list: "array", str: "string", bool: "boolean",
               int: "integer", float: "number", type(None): "null"}


def type_name(inst: Any) -> str:
    """The JSON type of a loaded value, as schemas name it."""
    for cls, name in _TYPE_NAMES.items():
        if isinstance(inst, cls) and not (cls is int and isinstance(inst, bool)):
            return name
    return type(inst).__name__


def show(inst: Any, limit: int = 40) -> str:
    """A short rendering of a value for messages."""
    if inst is None:
        return "null"
    if isinstance(inst, bool):
        return "true" if inst else "false"
    if isinstance(inst, str):
        s = '"' + inst.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
        return s if len(s) <= limit else s[:limit - 4] + '..."'
    if isinstance(inst, (int, float)):
        return repr(inst)
    return "an " + type_name(inst) if type_name(inst) in ("object", "array") else type_name(inst)


def _is_integer(v: Any) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_PREDICATES: Dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": _is_integer,
    "number": _is_number,
    "null": lambda v: v is None,
}
# The exact Python classes each type accepts without further thought (the fast path).
_EXACT: Dict[str, Tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "integer": (int,), "number": (int, float), "null": (type(None),),
}


def _join(words: Sequence[str]) -> str:
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


class Compiler:
    """Compiles the schemas of one document once each, recursive ``$ref``s included."""

    def __init__(self, root: Any = None, dialect: str = "json", strict: bool = False,
                 resolve: Optional[Callable[[str, str], Check]] = None,
                 self_names: Sequence[str] = ()) -> None:
        self.root = root if root is not None else {}   # the document "#/..." refs point into
        self.dialect = dialect
        self.strict = strict
        self.resolve = resolve        # (document, fragment) -> Check, for refs to other files
        self.self_names = frozenset(self_names)   # names by which refs denote this document
        self._refs: Dict[str, Check] = {}

    # -- entry points ----------------------------------------------------------------------
    def compile(self, schema: Any) -> Check:
        """The check for ``schema`` (a dict, or a boolean schema)."""
        if schema is True or schema == {}:
            return _ok
        if schema is False:
            return lambda inst, path, out: out.append(Problem(path, "false", "no value is allowed here"))
        if not isinstance(schema, dict):
            raise SchemaError(f"a schema must be an object, not {type_name(schema)}")
        checks: List[Check] = []
        ref = schema.get("$ref")
        if ref is not None:
            checks.append(self._ref(ref))
        type_check, types = self._type(schema)
        object_checks = self._object(schema, types)
        array_checks = self._array(schema)
        scalar_checks = self._scalar(schema)
        checks += self._combinators(schema)
        checks += self._applicators(schema)
        if "enum" in schema:
            checks.append(self._enum(schema["enum"]))
        if "const" in schema:
            checks.append(self._enum([schema["const"]], const=True))
        body = self._typed(object_checks, array_checks, scalar_checks)
        if type_check is None:
            if body is not None:
                checks.insert(0, body)
        else:
            checks.insert(0, type_check if body is None else self._then(type_check, body))
        if not checks:
            return _ok
        if len(checks) == 1:
            return checks[0]
        tup = tuple(checks)

        def all_of(inst: Any, path: Path, out: List[Problem]) -> None:
            for c in tup:
                c(inst, path, out)
        return all_of

    # -- pieces ----------------------------------------------------------------------------
    def _ref(self, ref: Any) -> Check:
        if not isinstance(ref, str):
            raise SchemaError(f"$ref must be a string, not {show(ref)}")
        if ref in self._refs:
            return self._refs[ref]
        doc, _, frag = ref.partition("#")
        if doc and doc not in self.self_names:
            if self.resolve is None:
                raise SchemaError(f"$ref {ref!r}: only references inside the schema's own file are supported")
            return self.resolve(doc, frag)
        target = pointer_get(self.root, frag, ref)
        # A cell filled after compiling lets recursive definitions refer to themselves.
        cell: List[Check] = []

        def deref(inst: Any, path: Path, out: List[Problem]) -> None:
            cell[0](inst, path, out)
        self._refs[ref] = deref
        cell.append(self.compile(target))
        self._refs[ref] = cell[0]
        return cell[0]

    def _type(self, schema: Dict[str, Any]) -> Tuple[Optional[Check], Optional[Tuple[str, ...]]]:
        t = schema.get("type")
        openapi = self.dialect == "openapi"
        if openapi and schema.get("x-kubernetes-int-or-string"):
            t = ["integer", "string"]
        if t is None:
            return None, None
        names = (t,) if isinstance(t, str) else tuple(t) if isinstance(t, list) else None
        if names is None or any(n not in _PREDICATES for n in names):
            raise SchemaError(f"bad type {t!r}")
        if openapi and schema.get("nullable") and "null" not in names:
            names = names + ("null",)
        exact = frozenset(c for n in names for c in _EXACT[n])
        preds = tuple(_PREDICATES[n] for n in names)
        wanted = _join([n for n in names if n != "null"] or ["null"])

        def check_type(inst: Any, path: Path, out: List[Problem]) -> None:
            if type(inst) in exact:
                return
            for p in preds:
                if p(inst):
                    return
            got = type_name(inst)
            shown = "" if got in ("object", "array", "null") else " " + show(inst)
            out.append(Problem(path, "type", f"expected {wanted}, got {got}{shown}"))
        check_type.names = names  # type: ignore[attr-defined]
        return check_type, names

    def _then(self, type_check: Check, body: Check) -> Check:
        def typed(inst: Any, path: Path, out: List[Problem]) -> None:
            n = len(out)
            type_check(inst, path, out)
            if len(out) == n:
                body(inst, path, out)
        return typed

    def _typed(self, obj: List[Check], arr: List[Check], scalar: List[Check]) -> Optional[Check]:
        """Keyword checks that apply to one JSON type only, dispatched once on the type."""
        if not (obj or arr or scalar):
            return None
        o, a, s = tuple(obj), tuple(arr), tuple(scalar)

        def body(inst: Any, path: Path, out: List[Problem]) -> None:
            if isinstance(inst, dict):
                for c in o:
                    c(inst, path, out)
            elif isinstance(inst, list):
                for c in a:
                    c(inst, path, out)
            else:
                for c in s:
                    c(inst, path, out)
        return body

    def _object(self, schema: Dict[str, Any], types: Optional[Tuple[str, ...]]) -> List[Check]:
        checks: List[Check] = []
        props = schema.get("properties")
        if props is not None and not isinstance(props, dict):
            raise SchemaError("properties must be an object")
        props = props or {}
        compiled = {k: self.compile(v) for k, v in props.items()}
        pattern = schema.get("patternProperties") or {}
        patterns = [(_regex(k), self.compile(v)) for k, v in pattern.items()]
        openapi = self.dialect == "openapi"
        extra_schema = schema.get("additionalProperties")
        preserve = openapi and bool(schema.get("x-kubernetes-preserve-unknown-fields"))
        closed = extra_schema is False
        if (openapi and self.strict and extra_schema is None and not preserve
                and (types == ("object",) or props)):
            closed = True
        embedded = openapi and bool(schema.get("x-kubernetes-embedded-resource"))
        extra: Optional[Check] = None
        if isinstance(extra_schema, dict):
            extra = self.compile(extra_schema)
        known = tuple(props)
        if compiled or patterns or closed or extra is not None:
            items = tuple(compiled.items())

            def check_props(inst: Dict[str, Any], path: Path, out: List[Problem]) -> None:
                for k, v in inst.items():
                    c = compiled.get(k)
                    if c is not None:
                        c(v, (path, k), out)
                        continue
                    matched = False
                    for rx, pc in patterns:
                        if rx.test(k):
                            matched = True
                            pc(v, (path, k), out)
                    if matched:
                        continue
                    if extra is not None:
                        extra(v, (path, k), out)
                    elif closed and not (embedded and k in ("apiVersion", "kind", "metadata")):
                        out.append(Problem((path, k), "unknown-field", _unknown(k, known)))
            del items
            checks.append(check_props)
        req = schema.get("required")
        if req:
            if not isinstance(req, list):
                raise SchemaError("required must be a list")
            required = tuple(req)

            def check_required(inst: Dict[str, Any], path: Path, out: List[Problem]) -> None:
                for k in required:
                    if k not in inst:
                        out.append(Problem((path, k), "required", f"required field \"{k}\" is missing"))
            checks.append(check_required)
        for key, op in (("minProperties", "ge"), ("maxProperties", "le")):
            if key in schema:
                checks.append(_size(schema[key], op, "field", lambda v: len(v)))
        return checks

    def _array(self, schema: Dict[str, Any]) -> List[Check]:
        checks: List[Check] = []
        items = schema.get("items")
        if isinstance(items, dict) or isinstance(items, bool):
            item = self.compile(items)
            # 2020-12: with prefixItems, items covers only the items after them
            skip = len(schema["prefixItems"]) if isinstance(schema.get("prefixItems"), list) else 0
            if item is not _ok:
                def check_items(inst: List[Any], path: Path, out: List[Problem]) -> None:
                    for i in range(skip, len(inst)):
                        item(inst[i], (path, i), out)
                checks.append(check_items)
        elif isinstance(items, list):  # draft-4 tuple form
            tup = tuple(self.compile(s) for s in items)

            def check_tuple(inst: List[Any], path: Path, out: List[Problem]) -> None:
                for i, (c, v) in enumerate(zip(tup, inst)):
                    c(v, (path, i), out)
            checks.append(check_tuple)
        for key, op in (("minItems", "ge"), ("maxItems", "le")):
            if key in schema:
                checks.append(_size(schema[key], op, "item", lambda v: len(v)))
        list_type = schema.get("x-kubernetes-list-type")
        if list_type == "set":
            checks.append(_check_set)
        elif list_type == "map":
            checks.append(self._list_map(schema))
        elif list_type not in (None, "atomic"):
            raise SchemaError(f"x-kubernetes-list-type must be atomic, set or map, not {show(list_type)}")
        if schema.get("uniqueItems"):
            def check_unique(inst: List[Any], path: Path, out: List[Problem]) -> None:
                seen: List[Any] = []
                for v in inst:
                    if any(_json_equal(v, s) for s in seen):
                        out.append(Problem(path, "uniqueItems", f"items must be unique; {show(v)} repeats"))
                        return
                    seen.append(v)
            checks.append(check_unique)
        return checks

    def _list_map(self, schema: Dict[str, Any]) -> Check:
        """``x-kubernetes-list-type: map``: no two items with the same values of the
        ``x-kubernetes-list-map-keys`` (a key an item leaves out takes its schema default, as
        the API server defaults it before comparing: Service ports keyed by port and protocol)."""
        keys = schema.get("x-kubernetes-list-map-keys")
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
            raise SchemaError("x-kubernetes-list-type map needs x-kubernetes-list-map-keys, a list of names")
        item = schema.get("items")
        name = ""
        for _ in range(8):   # follow the item schema's $refs to its properties
            if not (isinstance(item, dict) and isinstance(item.get("$ref"), str)
                    and item["$ref"].startswith("#") and "properties" not in item):
                break
            name = item["$ref"].rpartition("/")[2]
            item = pointer_get(self.root, item["$ref"][1:], item["$ref"])
        props = item.get("properties") if isinstance(item, dict) else None
        defaults = {k: props[k]["default"] for k in keys
                    if isinstance(props, dict) and isinstance(props.get(k), dict) and "default" in props[k]}
        for k in keys:
            if (name, k) in _GO_DEFAULTS:
                defaults.setdefault(k, _GO_DEFAULTS[(name, k)])
        names = tuple(keys)

        def check_map_keys(inst: List[Any], path: Path, out: List[Problem]) -> None:
            seen: Dict[str, int] = {}
            for i, v in enumerate(inst):
                if not isinstance(v, dict):
                    continue
                key = ", ".join(f"{k}={_go_quote(v.get(k, defaults.get(k)))}" for k in names)
                if key in seen:
                    out.append(Problem((path, i), "duplicate",
                                       f"duplicate entries for key [{key}]: item {i} repeats item {seen[key]}"))
                else:
                    seen[key] = i
        return check_map_keys

    def _scalar(self, schema: Dict[str, Any]) -> List[Check]:
        checks: List[Check] = []
        fmt = schema.get("format")
        if fmt in _FORMATS:
            checks.append(_FORMATS[fmt])
        elif self.dialect == "openapi" and fmt in _CRD_FORMATS:
            checks.append(_CRD_FORMATS[fmt])
        for key, op in (("minLength", "ge"), ("maxLength", "le")):
            if key in schema:
                checks.append(_string_size(schema[key], op))
        if "pattern" in schema:
            rx = _regex(schema["pattern"])
            shown = schema["pattern"]

            def check_pattern(inst: Any, path: Path, out: List[Problem]) -> None:
                if isinstance(inst, str) and not rx.test(inst):
                    out.append(Problem(path, "pattern", f"{show(inst)} does not match '{shown}'"))
            checks.append(check_pattern)
        openapi = self.dialect == "openapi"
        for key, op in (("minimum", ">="), ("maximum", "<=")):
            if key in schema:
                excl = schema.get("exclusiveMinimum" if op == ">=" else "exclusiveMaximum")
                checks.append(_bound(schema[key], op, openapi and excl is True))
        for key, op in (("exclusiveMinimum", ">"), ("exclusiveMaximum", "<")):
            v = schema.get(key)
            if _is_number(v):
                checks.append(_bound(v, op[0] + "=", True))
        if "multipleOf" in schema:
            m = schema["multipleOf"]
            if not _is_number(m) or m <= 0:
                raise SchemaError(f"bad multipleOf {m!r}")

            def check_multiple(inst: Any, path: Path, out: List[Problem]) -> None:
                if _is_number(inst):
                    q = inst / m
                    if isinstance(q, float) and not (math.isfinite(q) and q.is_integer()):
                        out.append(Problem(path, "multipleOf", f"{show(inst)} is not a multiple of {m}"))
            checks.append(check_multiple)
        return checks

    def _applicators(self, schema: Dict[str, Any]) -> List[Check]:
        """The later drafts' keywords (2019-09, 2020-12) that user schemas may carry:
        ``prefixItems``, ``contains`` (with ``minContains``/``maxContains``),
        ``propertyNames``, ``dependentRequired``, ``dependentSchemas`` (and draft 4's
        ``dependencies``), ``if``/``then``/``else``.  Keywords kzgit does not implement are
        refused, naming them: a schema silently half-applied would pass invalid data."""
        refused = [k for k in _UNIMPLEMENTED if k in schema]
        if refused:
            raise SchemaError(f"uses {', '.join(refused)}, which kzgit does not implement")
        checks: List[Check] = []
        if "prefixItems" in schema:
            subs = schema["prefixItems"]
            if not isinstance(subs, list):
                raise SchemaError("prefixItems must be a list of schemas")
            tup = tuple(self.compile(x) for x in subs)

            def check_prefix(inst: Any, path: Path, out: List[Problem]) -> None:
                if isinstance(inst, list):
                    for i, (c, v) in enumerate(zip(tup, inst)):
                        c(v, (path, i), out)
            checks.append(check_prefix)
        if "contains" in schema:
            has = self.compile(schema["contains"])
            low, high = schema.get("minContains", 1), schema.get("maxContains")

            def check_contains(inst: Any, path: Path, out: List[Problem]) -> None:
                if not isinstance(inst, list):
                    return
                n = 0
                for i, v in enumerate(inst):
                    probe: List[Problem] = []
                    has(v, (path, i), probe)
                    n += not probe
                if n < low or (high is not None and n > high):
                    want = f"at least {low}" + (f" and at most {high}" if high is not None else "")
                    out.append(Problem(path, "contains", f"{n} items match 'contains', {want} must"))
            checks.append(check_contains)
        if "propertyNames" in schema:
            names = self.compile(schema["propertyNames"])

            def check_names(inst: Any, path: Path, out: List[Problem]) -> None:
                if isinstance(inst, dict):
                    for k in inst:
                        probe: List[Problem] = []
                        names(k, (path, k), probe)
                        if probe:
                            out.append(Problem((path, k), "propertyNames",
                                               f"property name {show(k)}: {probe[0].message}"))
            checks.append(check_names)
        deps: Dict[str, Any] = {}
        for key in ("dependencies", "dependentRequired", "dependentSchemas"):
            d = schema.get(key)
            if d is not None:
                if not isinstance(d, dict):
                    raise SchemaError(f"{key} must be an object")
                deps.update(d)
        if deps:
            required = {k: tuple(v) for k, v in deps.items() if isinstance(v, list)}
            subs = {k: self.compile(v) for k, v in deps.items() if not isinstance(v, list)}

            def check_deps(inst: Any, path: Path, out: List[Problem]) -> None:
                if not isinstance(inst, dict):
                    return
                for k, need in required.items():
                    if k in inst:
                        for n in need:
                            if n not in inst:
                                out.append(Problem(path, "required",
                                                   f"{show(n)} is required when {show(k)} is present"))
                for k, c in subs.items():
                    if k in inst:
                        c(inst, path, out)
            checks.append(check_deps)
        if "if" in schema:
            cond = self.compile(schema["if"])
            then = self.compile(schema.get("then", True))
            other = self.compile(schema.get("else", True))

            def check_if(inst: Any, path: Path, out: List[Problem]) -> None:
                probe: List[Problem] = []
                cond(inst, path, probe)
                (other if probe else then)(inst, path, out)
            checks.append(check_if)
        return checks

    def _combinators(self, schema: Dict[str, Any]) -> List[Check]:
        # In a structural schema (a CRD's) allOf/anyOf/oneOf/not are value validations over the
        # fields the structural part declares: a branch that lists properties does not close
        # the object (k8s.io/apiextensions-apiserver pkg/apiserver/schema: "value validations"
        # may not specify types or additionalProperties; pruning, hence unknown fields, follows
        # the structural part only).  Gateway API's address oneOf relies on it.
        strict = self.strict
        if self.dialect == "openapi":
            self.strict = False
        try:
            return self._combinator_checks(schema)
        finally:
            self.strict = strict

    def _combinator_checks(self, schema: Dict[str, Any]) -> List[Check]:
        checks: List[Check] = []
        for key in ("allOf", "anyOf", "oneOf"):
            subs = schema.get(key)
            if subs is None:
                continue
            if not isinstance(subs, list) or not subs:
                raise SchemaError(f"{key} must be a non-empty list")
            compiled = tuple(self.compile(s) for s in subs)
            if key == "allOf":
                def check_all(inst: Any, path: Path, out: List[Problem], cs: Tuple[Check, ...] = compiled) -> None:
                    for c in cs:
                        c(inst, path, out)
                checks.append(check_all)
            else:
                checks.append(_one_or_any(key, compiled, subs))
        if "not" in schema:
            neg = self.compile(schema["not"])

            def check_not(inst: Any, path: Path, out: List[Problem]) -> None:
                tmp: List[Problem] = []
                neg(inst, path, tmp)
                if not tmp:
                    out.append(Problem(path, "not", f"{show(inst)} is not allowed here"))
            checks.append(check_not)
        return checks

    def _enum(self, values: Any, const: bool = False) -> Check:
        if not isinstance(values, list):
            raise SchemaError("enum must be a list")
        vals = tuple(values)
        hashable = frozenset((type(v) is bool, v) for v in vals if isinstance(v, (str, int, float, bool)))
        allowed = ", ".join(show(v) for v in vals[:8]) + (", ..." if len(vals) > 8 else "")

        def check_enum(inst: Any, path: Path, out: List[Problem]) -> None:
            if isinstance(inst, (str, int, float, bool)) and (type(inst) is bool, inst) in hashable:
                return
            if any(_json_equal(inst, v) for v in vals):
                return
            if const:
                out.append(Problem(path, "enum", f"must be {allowed}, got {show(inst)}"))
            else:
                out.append(Problem(path, "enum", f"must be one of {allowed}; got {show(inst)}"))
        return check_enum


def _int_range(bits: int) -> Check:
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def check_int(inst: Any, path: Path, out: List[Problem]) -> None:
        if _is_integer(inst) and not low <= inst <= high:
            out.append(Problem(path, "format", f"{show(inst)} does not fit in an int{bits}"))
    return check_int


def _check_byte(inst: Any, path: Path, out: List[Problem]) -> None:
    # encoding/json decodes a []byte field with base64.StdEncoding (padding required; CR and
    # LF ignored): a Secret's data that is not base64 is refused when the API server decodes it
    if isinstance(inst, str):
        try:
            base64.b64decode(inst.replace("\r", "").replace("\n", ""), validate=True)
        except (binascii.Error, ValueError):
            # the value is not quoted: a Secret's data never reaches a report
            out.append(Problem(path, "format", "the value is not base64 (format byte)"))


# metav1.Time decodes with time.RFC3339 (fractional seconds allowed, a zone required); a CRD's
# date-time (go-openapi strfmt) accepts more spellings, all of which this pattern admits too
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _pattern_format(rx: "re.Pattern[str]", name: str) -> Check:
    def check_format(inst: Any, path: Path, out: List[Problem]) -> None:
        if isinstance(inst, str) and not rx.fullmatch(inst):
            out.append(Problem(path, "format", f"{show(inst)} is not a {name}"))
    return check_format


# The formats the API server enforces by decoding (int32/int64 fields, []byte, metav1.Time) or
# by CRD validation (date): other format names are annotations here, as in jsonschema without
# a format checker.
_FORMATS: Dict[str, Check] = {
    "int32": _int_range(32), "int64": _int_range(64), "byte": _check_byte,
    "date-time": _pattern_format(_DATE_TIME, "date-time (RFC 3339)"),
    "date": _pattern_format(_DATE, "date (YYYY-MM-DD)"),
}


def _regex(pattern: Any) -> Any:
    """A ``pattern`` (or ``patternProperties`` key) with Go's meaning: the API server and
    kubeconform match them with Go's regexp, run by RE2 in linear time (:mod:`kzgit.gore`)."""
    from kzgit import gore   # start-up: RE2 loads with the first schema that has a pattern
    if not isinstance(pattern, str):
        raise SchemaError(f"a pattern must be a string, not {show(pattern)}")
    try:
        return gore.compile(pattern)
    except gore.RegexError as e:
        raise SchemaError(f"pattern {pattern!r}: {e}") from None


def _ip(v: str, dot: bool) -> bool:
    # k8s.io/kube-openapi pkg/validation/strfmt default.go: IsIPv4/IsIPv6 are
    # netutils.ParseIPSloppy (leading zeros allowed in IPv4) plus "contains '.'" / "':'"
    if "%" in v:
        return False   # Go's ParseIP refuses zones, Python's ipaddress accepts them
    if dot and ":" not in v:
        parts = v.split(".")
        return len(parts) == 4 and all(p.isdigit() and p.isascii() and len(p) <= 3 and int(p) <= 255
                                       for p in parts)
    import ipaddress   # start-up: only a CRD with an IPv6 format needs it
    try:
        ipaddress.IPv6Address(v)
    except ValueError:
        return False
    return ("." in v) if dot else True


def _cidr(v: str) -> bool:
    addr, slash, bits = v.partition("/")
    if not slash or not bits.isdigit() or not bits.isascii():
        return False
    if ":" in addr:
        return _ip(addr, False) and int(bits) <= 128
    return _ip(addr, True) and int(bits) <= 32


def _predicate_format(ok: Callable[[str], bool], name: str) -> Check:
    def check_format(inst: Any, path: Path, out: List[Problem]) -> None:
        if isinstance(inst, str) and not ok(inst):
            out.append(Problem(path, "format", f"{show(inst)} is not a {name}"))
    return check_format


# go-openapi strfmt's uuid (dashes optional, any version)
_UUID = re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}")

# The formats a CRD's schema enforces beyond _FORMATS (kube-openapi strfmt's registry, as the
# apiextensions validator uses it): the network and uuid ones, which real CRDs use (Gateway API's
# addresses); the others of that registry (hostname, email, uri, isbn...) stay annotations here.
_CRD_FORMATS: Dict[str, Check] = {
    "ipv4": _predicate_format(lambda v: _ip(v, True), "IPv4 address"),
    "ipv6": _predicate_format(lambda v: _ip(v, False), "IPv6 address"),
    "cidr": _predicate_format(_cidr, "CIDR"),
    "uuid": _pattern_format(_UUID, "UUID"),
}


def defaulter(schema: Any) -> Optional[Callable[[Any], Any]]:
    """A function applying a structural schema's ``default`` s to a value, as the API server
    does before validating a custom resource (k8s.io/apiextensions-apiserver pkg/apiserver/
    schema/defaulting/algorithm.go ``Default``: a missing field, or a null one that is not
    nullable, takes its default; then every field, item and additional property is defaulted
    in turn).  It returns the value itself when nothing changes and a copy of what changes
    otherwise (the rendered resource is not touched); None when the schema has no default."""
    if not isinstance(schema, dict):
        return None
    props = schema.get("properties")
    fields: List[Tuple[str, bool, Any, Optional[Callable[[Any], Any]]]] = []
    if isinstance(props, dict):
        for k, sub in props.items():
            if not isinstance(sub, dict):
                continue
            inner = defaulter(sub)
            if "default" in sub or inner is not None:
                fields.append((k, "default" in sub and not sub.get("nullable"), sub.get("default", _NO),
                               inner))
    extra = defaulter(schema.get("additionalProperties"))
    items = defaulter(schema.get("items"))
    if not fields and extra is None and items is None:
        return None

    def apply(inst: Any) -> Any:
        if isinstance(inst, dict):
            new: Optional[Dict[str, Any]] = None
            for k, null_defaults, default, inner in fields:
                v = inst.get(k, _NO)
                if default is not _NO and (v is _NO or (v is None and null_defaults)):
                    v = _json_copy(default)
                    if new is None:
                        new = dict(inst)
                    new[k] = v
                if inner is not None and v is not _NO:
                    w = inner(v)
                    if w is not v:
                        if new is None:
                            new = dict(inst)
                        new[k] = w
            if extra is not None:
                for k, v in inst.items():
                    if not (isinstance(props, dict) and k in props):
                        w = extra(v)
                        if w is not v:
                            if new is None:
                                new = dict(inst)
                            new[k] = w
            return inst if new is None else new
        if isinstance(inst, list) and items is not None:
            out = [items(v) for v in inst]
            return inst if all(a is b for a, b in zip(out, inst)) else out
        return inst
    return apply


_NO = object()   # no value (None is JSON null)


def _json_copy(v: Any) -> Any:
    """A copy of a JSON value (copy.deepcopy costs ten times more; scalars are not copied)."""
    if isinstance(v, dict):
        return {k: _json_copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_json_copy(x) for x in v]
    return v


# Keywords of the JSON Schema drafts that kzgit does not implement: a schema using one is
# refused (SchemaError names it) rather than checked in part.  Annotations (title, examples,
# readOnly, x-... extensions) and unknown words are ignored, as JSON Schema says.
_UNIMPLEMENTED = ("unevaluatedProperties", "unevaluatedItems", "additionalItems", "$dynamicRef",
                  "$recursiveRef")


# List-map key fields that the API server defaults in Go code, not in the OpenAPI schema
# (kubernetes pkg/apis/core/v1/defaults.go: SetDefaults_ServicePort, SetDefaults_ContainerPort
# and the EndpointPort/ServicePort protocol defaults all set "TCP"), so that a port written
# without a protocol and one written with TCP are one key, as the API server sees them.
_GO_DEFAULTS = {
    ("io.k8s.api.core.v1.ServicePort", "protocol"): "TCP",
    ("io.k8s.api.core.v1.ContainerPort", "protocol"): "TCP",
}


def _go_quote(v: Any) -> str:
    """A key value as Kubernetes prints it in a duplicate-entries error (strings quoted)."""
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if v is None:
        return "<none>"
    return show(v)


def _check_set(inst: List[Any], path: Path, out: List[Problem]) -> None:
    """``x-kubernetes-list-type: set``: no item twice (the API server's "Duplicate value")."""
    seen: List[Any] = []
    for i, v in enumerate(inst):
        for j, s in enumerate(seen):
            if _json_equal(v, s):
                out.append(Problem((path, i), "duplicate",
                                   f"duplicate value {show(v)}: item {i} repeats item {j} of a set"))
                break
        else:
            seen.append(v)


def _unknown(key: str, known: Sequence[str]) -> str:
    msg = f"unknown field \"{key}\""
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.75)
    if close:
        msg += f" (did you mean \"{close[0]}\"?)"
    return msg


def _json_equal(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0, but true != 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    return type_name(a) == type_name(b) and bool(a == b)


def _size(limit: Any, op: str, noun: str, size: Callable[[Any], int]) -> Check:
    if not _is_integer(limit):
        raise SchemaError(f"bad size bound {limit!r}")
    n = int(limit)

    def check_size(inst: Any, path: Path, out: List[Problem]) -> None:
        got = size(inst)
        if (op == "ge" and got < n) or (op == "le" and got > n):
            word = "at least" if op == "ge" else "at most"
            out.append(Problem(path, "bound", f"must have {word} {n} {noun}{'s' if n != 1 else ''}, has {got}"))
    return check_size


def _string_size(limit: Any, op: str) -> Check:
    if not _is_integer(limit):
        raise SchemaError(f"bad length bound {limit!r}")
    n = int(limit)

    def check_len(inst: Any, path: Path, out: List[Problem]) -> None:
        if isinstance(inst, str):
            got = len(inst)
            if (op == "ge" and got < n) or (op == "le" and got > n):
                word = "at least" if op == "ge" else "at most"
                out.append(Problem(path, "bound", f"must be {word} {n} characters long, is {got}"))
    return check_len


def _bound(limit: Any, op: str, exclusive: bool) -> Check:
    if not _is_number(limit):
        raise SchemaError(f"bad numeric bound {limit!r}")
    low = op.startswith(">")

    def check_bound(inst: Any, path: Path, out: List[Problem]) -> None:
        if not _is_number(inst):
            return
        bad = (inst < limit or (exclusive and inst == limit)) if low else \
              (inst > limit or (exclusive and inst == limit))
        if bad:
            rel = ("greater than" if exclusive else "at least") if low else \
                  ("less than" if exclusive else "at most")
            out.append(Problem(path, "bound", f"must be {rel} {limit}, got {show(inst)}"))
    return check_bound


def _one_or_any(key: str, compiled: Tuple[Check, ...], subs: List[Any]) -> Check:
    # When every branch is a bare type (IntOrString, Quantity) say which types fit.
    names: List[str] = []
    for s in subs:
        t = s.get("type") if isinstance(s, dict) and set(s) <= {"type", "description"} else None
        for n in ((t,) if isinstance(t, str) else tuple(t) if isinstance(t, list) else ()):
            if n != "null" and n not in names:
                names.append(n)
    described = f"expected {_join(names)}" if names else "matches none of the allowed forms"
    one = key == "oneOf"

    def check_choice(inst: Any, path: Path, out: List[Problem]) -> None:
        matched = 0
        for c in compiled:
            tmp: List[Problem] = []
            c(inst, path, tmp)
            if not tmp:
                matched += 1
                if not one or matched > 1:
                    break
        if matched == 0:
            got = type_name(inst)
            if names:
                shown = "" if got in ("object", "array", "null") else " " + show(inst)
                out.append(Problem(path, key, f"{described}, got {got}{shown}"))
            else:
                out.append(Problem(path, key, f"{show(inst)} {described} ({key})"))
        elif one and matched > 1:
            out.append(Problem(path, key, f"{show(inst)} matches more than one of the allowed forms (oneOf)"))
    return check_choice


def pointer_get(doc: Any, fragment: str, ref: str) -> Any:
    """The value at JSON pointer ``fragment`` in ``doc`` (SchemaError naming ``ref`` if none)."""
    cur = doc
    for part in [p for p in fragment.split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            raise SchemaError(f"$ref {ref!r} points at nothing")
    return cur


def compile_schema(schema: Any, root: Any = None, *, dialect: str = "json", strict: bool = False) -> Check:
    """Compile one schema whose ``#/...`` refs point into ``root`` (default: the schema itself)."""
    return Compiler(schema if root is None else root, dialect, strict).compile(schema)
