"""CEL validation rules of CRD schemas (``x-kubernetes-validations``), evaluated as the API server does.

:func:`rules_check` turns a CRD version's ``openAPIV3Schema`` into a check that walks a
custom resource (already defaulted, see :func:`kzgit.validate.schema.defaulter`) and, at each
value whose schema carries rules, evaluates them with ``self`` bound to that value, as
k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel/validation.go does:

* a rule that evaluates to false is a ``cel`` problem with the rule's ``message``, or its
  ``messageExpression`` (falling back to ``message``, then to "failed rule: RULE"), at the
  value or at its ``fieldPath``; a ``reason`` other than FieldValueInvalid prefixes the
  message as Kubernetes words it ("Forbidden: ", "Required value: ", "Duplicate value: ");
* a rule that cannot be evaluated on this value (no such key, no matching overload) is a
  ``cel`` problem "ERROR evaluating rule: MESSAGE (or RULE)", as the API server reports it;
* transition rules (referring to ``oldSelf``) are not evaluated: git holds no old object.
  They are counted (:attr:`Rules.transition`), and each resource validated against them gets
  one ``cel-transition`` warning;
* rules are not evaluated when the resource has type errors (the API server skips CEL
  validation then: "some validation rules were not checked because the object was invalid");
* property names are escaped as Kubernetes escapes them (k8s.io/apiserver pkg/cel/escaping.go:
  ``namespace`` is ``__namespace__``, ``x-y`` is ``x__dash__y``).

The CEL runtime is ``cel-expr-python`` (Google's C++ runtime, the CEL spec's own; choice and
measurements in docs/cel.md), with its ``optional`` and ``strings`` extensions and, on top,
the Kubernetes libraries in :mod:`kzgit.validate.cel_k8s`.  Rules are compiled once per
schema and kept with the compiled schema (:class:`kzgit.validate.sources.CrdSchemas`).

A rule that does not compile is a finding on the CRD (:func:`crd_rule_errors`, reported where
the CRD is validated as a resource, pointing at the rule); one that uses a function kzgit does
not implement is a warning there instead (a false error would be worse than a rule not run).
"Does not compile" includes the API server's type check over the schema's types
(:mod:`kzgit.validate.celcheck`); the API server's cost limits refuse a CRD too
(:mod:`kzgit.validate.celcost`, :attr:`Rules.refusals`).
"""
from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from kzgit.validate.celsyntax import escape
from kzgit.validate.schema import Check, Path, Problem

__all__ = ["escape", "rules_check", "crd_rule_errors", "Rules", "Rule", "RuleError", "RuleFinding"]

_OLD_SELF = re.compile(r"\boldSelf\b")
# field.ErrorType strings (k8s.io/apimachinery pkg/util/validation/field/errors.go)
_REASONS = {"FieldValueInvalid": "", "FieldValueForbidden": "Forbidden: ",
            "FieldValueRequired": "Required value: ", "FieldValueDuplicate": "Duplicate value: "}


RUNTIME = "cel-expr-python"
NO_RUNTIME = f"the CEL runtime is not installed ({RUNTIME}: no wheel for this Python or platform)"


class RuleError(Exception):
    """A rule that does not compile: ``unsupported`` when it uses what kzgit lacks."""

    def __init__(self, message: str, unsupported: bool) -> None:
        super().__init__(message)
        self.unsupported = unsupported


class Rule:
    """One compiled ``x-kubernetes-validations`` entry."""

    __slots__ = ("rule", "message", "message_expression", "field_path", "reason", "program",
                 "message_program", "error", "transition", "tree")

    def __init__(self, spec: Dict[str, Any], self_type: Any = None) -> None:
        self.rule = _text(spec, "rule")
        self.message = _text(spec, "message")
        self.message_expression = _text(spec, "messageExpression")
        self.field_path = _text(spec, "fieldPath")
        self.reason = _text(spec, "reason")
        self.transition = bool(_OLD_SELF.search(self.rule)) or bool(spec.get("optionalOldSelf"))
        self.tree: Any = False   # the rule's AST (celsyntax), parsed once for the check and the cost
        self.program: Any = None
        self.message_program: Any = None
        self.error: Optional[RuleError] = None
        if self.transition:
            # not run (git holds no old object), but the API server compiles it all the same:
            # the type check, with oldSelf of self's type (an optional with optionalOldSelf)
            from kzgit.validate import celcheck   # start-up: loaded with the rules
            old = None if spec.get("optionalOldSelf") is True else self_type
            refused = celcheck.check_rule(self.rule, self_type, self.message_expression, self._tree(),
                                          old_self=old or celcheck.DYN)
            if refused is not None:
                self.error = RuleError(refused, False)
            return
        try:
            from kzgit.validate import cel_k8s   # start-up: the CEL runtime loads with the first rule
        except ImportError:
            self.error = RuleError(NO_RUNTIME, True)
            return
        try:
            self.program = cel_k8s.compile_expression(self.rule)
            if self.message_expression:
                self.message_program = cel_k8s.compile_expression(self.message_expression)
        except cel_k8s.CompileError as e:
            self.error = RuleError(str(e), e.unsupported)
            return
        # the runtime compiles over dynamic values: the type check over the schema's types
        # (undefined fields, operands no overload takes) is kzgit.validate.celcheck's
        from kzgit.validate import celcheck   # start-up: loaded with the rules
        tree = self._tree()
        refused, timed = celcheck.check(self.rule, self_type, self.message_expression, tree) \
            if tree is not None else (None, None)
        if refused is not None:
            self.program = self.message_program = None
            self.error = RuleError(refused, False)
            return
        if timed is not None:
            # the API server gives the rule a timestamp or duration (its schema's format);
            # the runtime's binding takes neither, so it would see the string: not evaluated
            self.program = self.message_program = None
            self.error = RuleError(f"the rule reads '{timed}', a date, date-time or duration the API server "
                                   "gives CEL as a timestamp or duration, which kzgit's CEL runtime cannot "
                                   "take", True)

    def _tree(self) -> Any:
        """The rule's AST, or None when kzgit's parser cannot read it (the runtime words why)."""
        if self.tree is False:
            from kzgit.validate.celsyntax import SyntaxFault, parse   # start-up: with the rules
            try:
                self.tree = parse(self.rule)
            except (SyntaxFault, RecursionError):
                self.tree = None
        return self.tree

    def failure(self, value: Any, bound: Any = None) -> Optional[Tuple[str, Tuple[Any, ...]]]:
        """None when the rule holds for ``value``, else (message, field path keys); ``bound``:
        the value already bound as ``self`` (cel_k8s.bind), shared by the rules of a value."""
        from kzgit.validate import cel_k8s   # start-up: loaded with the rule
        ok, err = cel_k8s.evaluate(self.program, value, bound)
        if err is not None:   # worded as the API server words it (validation.go, ruleErrorString)
            return f"{err} evaluating rule: {(self.message or self.rule).strip()}", ()
        if ok is True:
            return None
        if ok is not False:
            return f"rule {self.rule!r}: evaluates to {ok!r}, not a boolean", ()
        msg = ""
        if self.message_program is not None:
            text, err = cel_k8s.evaluate(self.message_program, value, bound)
            if err is None and isinstance(text, str) and text.strip() and "\n" not in text:
                msg = text
        msg = msg or self.message or f"failed rule: {self.rule}"
        return _REASONS.get(self.reason, "") + msg, _field_path(self.field_path)


# validation.go supportedValidationReason
_SUPPORTED_REASONS = ("FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired")
_NEWLINES = re.compile(r"[\n\r]+")   # validation.go newlineMatcher


def _rule_fields(spec: Dict[str, Any], where: str, schema: Dict[str, Any]) -> List[Tuple[str, str]]:
    """What k8s.io/apiextensions-apiserver pkg/apis/apiextensions/validation/validation.go
    refuses in a rule's fields (before compiling it), in its words (field.Error's)."""
    out: List[Tuple[str, str]] = []
    rule, message = _text(spec, "rule"), _text(spec, "message")
    trimmed_rule, trimmed_msg = rule.strip(), message.strip()
    if not trimmed_rule:
        out.append((f"{where}/rule", "Required value: rule is not specified"))
    elif message and not trimmed_msg:
        out.append((f"{where}/message", f"Invalid value: {_go_quote(message)}: must be non-empty if specified"))
    elif _NEWLINES.search(trimmed_msg):
        out.append((f"{where}/message", f"Invalid value: {_go_quote(message)}: must not contain line breaks"))
    elif _NEWLINES.search(trimmed_rule) and not trimmed_msg:
        out.append((f"{where}/message", "Required value: message must be specified if rule contains line breaks"))
    expr = _text(spec, "messageExpression")
    if expr and not expr.strip():
        out.append((f"{where}/messageExpression", "Required value: messageExpression must be non-empty if specified"))
    reason = spec.get("reason")
    if isinstance(reason, str) and reason not in _SUPPORTED_REASONS:
        out.append((f"{where}/reason", f"Unsupported value: {_go_quote(reason)}: supported values: "
                                       + ", ".join(_go_quote(r) for r in _SUPPORTED_REASONS)))
    fp = _text(spec, "fieldPath")
    if fp and not fp.strip():
        out.append((f"{where}/fieldPath", f"Invalid value: {_go_quote(fp)}: must be non-empty if specified"))
    if _NEWLINES.search(fp):
        out.append((f"{where}/fieldPath", f"Invalid value: {_go_quote(fp)}: must not contain line breaks"))
    if fp and not _valid_field_path(fp, schema):
        out.append((f"{where}/fieldPath", f"Invalid value: {_go_quote(fp)}: must be a valid path"))
    return out


def _go_quote(s: str) -> str:
    """Go's %q of a string (field.Error prints a value so)."""
    import json   # start-up: only a refused rule's field needs it
    return json.dumps(s, ensure_ascii=False)


def _valid_field_path(path: str, schema: Any) -> bool:
    """k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel/validation.go ValidFieldPath:
    ``.name`` and ``['name']`` steps through properties (or a map's keys), no list index."""
    tokens: List[str] = []
    i = 0
    while i < len(path):   # its scanner: '.', '[' and ']' alone, a quoted string, else a name
        c = path[i]
        if c in ".[]":
            tokens.append(c)
            i += 1
        elif c == "'":
            j = i + 1
            while j < len(path) and not (path[j] == "'" and path[j - 1] != "\\"):
                j += 1
            tokens.append(path[i:j + 1])
            i = j + 1
        else:
            j = i
            while j < len(path) and path[j] not in ".[]":
                j += 1
            tokens.append(path[i:j])
            i = j
    at = schema

    def step(name: str) -> bool:
        nonlocal at
        props = at.get("properties") if isinstance(at, dict) else None
        extra = at.get("additionalProperties") if isinstance(at, dict) else None
        if isinstance(props, dict) and props:
            if name not in props:
                return False
            at = props[name]
        elif isinstance(extra, dict):
            at = extra
        else:
            return False
        return True

    k = 0
    while k < len(tokens):
        tok = tokens[k]
        if tok == "[":
            quoted = tokens[k + 1] if k + 1 < len(tokens) else ""
            if len(quoted) < 2 or quoted[0] != "'" or quoted[-1] != "'":
                return False
            if not step(re.sub(r"\\(.)", r"\1", quoted[1:-1])):
                return False
            if k + 2 >= len(tokens) or tokens[k + 2] != "]":
                return False
            k += 3
        elif tok == ".":
            if k + 1 >= len(tokens) or not step(tokens[k + 1]):
                return False
            k += 2
        else:
            return False
    return True


def _text(spec: Dict[str, Any], key: str) -> str:
    v = spec.get(key)
    return v if isinstance(v, str) else ""


def _field_path(fp: str) -> Tuple[Any, ...]:
    """``.spec.a['b.c'][0]`` as keys (Kubernetes' fieldPath: a relative JSON path)."""
    keys: List[Any] = []
    for m in re.finditer(r"\.([^.\[]+)|\[\s*'((?:[^'\\]|\\.)*)'\s*\]|\[\s*\"((?:[^\"\\]|\\.)*)\"\s*\]|\[(\d+)\]", fp):
        dot, sq, dq, idx = m.groups()
        keys.append(int(idx) if idx is not None else dot if dot is not None else sq if sq is not None else dq)
    return tuple(keys)


class Rules:
    """The rules of one CRD schema: a check over custom resources, and counts."""

    def __init__(self, schema: Any) -> None:
        self.total = 0
        self.transition = 0
        self.unsupported = 0   # rules not evaluated: they use what kzgit's CEL lacks
        self.invalid: List[Tuple[str, Rule]] = []   # rules the API server refuses: not CEL
        self.errors: List[Tuple[str, Rule]] = []   # (JSON pointer of the rule in the schema, rule)
        self._types: Dict[Any, Any] = {}   # celcheck.decl_type's, by schema node
        # the API server's cost limits (kzgit.validate.celcost): (JSON pointer, estimated cost)
        # of every rule and messageExpression estimated; the refusals of the CRD that are not a
        # rule's compile error (a cost over a limit, a rule's fields as validation.go checks them)
        self.costs: List[Tuple[str, int]] = []
        self.refusals: List[Tuple[str, str]] = []
        self.check: Optional[Check] = self._walker(schema, "", 1)
        self._total_cost()

    def _walker(self, schema: Any, where: str, cardinality: Optional[int]) -> Optional[Check]:
        if not isinstance(schema, dict):
            return None
        rules: List[Rule] = []
        specs = schema.get("x-kubernetes-validations")
        if isinstance(specs, list):
            self_type = None
            if any(isinstance(spec, dict) for spec in specs):
                from kzgit.validate import celcheck   # start-up: loaded with the rules
                self_type = celcheck.decl_type(schema, where == "" or
                                               schema.get("x-kubernetes-embedded-resource") is True,
                                               self._types)
            for i, spec in enumerate(specs):
                if not isinstance(spec, dict):
                    continue
                r = Rule(spec, self_type)
                self.refusals += _rule_fields(spec, f"{where}/x-kubernetes-validations/{i}", schema)
                self._cost(r, f"{where}/x-kubernetes-validations/{i}", self_type, cardinality)
                self.total += 1
                if r.transition and r.error is None:
                    self.transition += 1
                elif r.error is not None:
                    self.errors.append((f"{where}/x-kubernetes-validations/{i}/rule", r))
                    if r.error.unsupported:
                        self.unsupported += 1
                    else:
                        self.invalid.append(self.errors[-1])
                else:
                    rules.append(r)
        props: Dict[str, Check] = {}
        raw_props = schema.get("properties")
        # cel_validation.go childContext: how many times a child's rules can run
        below = _times(cardinality, schema)
        if isinstance(raw_props, dict):
            for k, sub in raw_props.items():
                w = self._walker(sub, f"{where}/properties/{_ptr(k)}", below)
                if w is not None:
                    props[k] = w
        extra = self._walker(schema.get("additionalProperties"), f"{where}/additionalProperties", below)
        items = self._walker(schema.get("items"), f"{where}/items", below)
        if not rules and not props and extra is None and items is None:
            return None
        convert = _converter(schema) if rules else None
        here = tuple(rules)
        if here:
            from kzgit.validate import cel_k8s   # start-up: loaded with the rules

        def walk(inst: Any, path: Path, out: List[Problem]) -> None:
            if inst is None:
                return   # rules do not run on null (or absent) values
            if isinstance(inst, dict):
                for k, v in inst.items():
                    c = props.get(k)
                    if c is not None:
                        c(v, (path, k), out)
                    elif extra is not None and not (isinstance(raw_props, dict) and k in raw_props):
                        extra(v, (path, k), out)
            elif isinstance(inst, list) and items is not None:
                for i, v in enumerate(inst):
                    items(v, (path, i), out)
            if here:
                value = convert(inst) if convert is not None else inst
                bound = cel_k8s.bind(value) if len(here) > 1 else None
                for r in here:
                    bad = r.failure(value, bound)
                    if bad is not None:
                        at = path
                        for key in bad[1]:
                            at = (at, key)
                        out.append(Problem(at, "cel", bad[0]))
        return walk


    def _cost(self, r: Rule, where: str, self_type: Any, cardinality: Optional[int]) -> None:
        """The rule's and its messageExpression's estimated costs, refused over the limit as
        validation.go refuses them (a rule's cost times the times it can run)."""
        tree = r._tree()
        if tree is None or (r.error is not None and not r.error.unsupported):
            return   # a rule that does not compile has no cost (compilation.go stops before it)
        from kzgit.validate import celcost   # start-up: loaded with the rules
        cost = celcost.estimate(r.rule, self_type, tree)
        if cost is not None:
            cost = celcost.rule_cost(cost, cardinality, self_type)
            self.costs.append((f"{where}/rule", cost))
            if cost > celcost.RULE_LIMIT:
                self.refusals.append((f"{where}/rule", celcost.exceeds("estimated rule cost", cost,
                                                                            celcost.RULE_LIMIT)))
        if r.message_expression:
            cost = celcost.estimate(r.message_expression, self_type)
            if cost is not None:
                self.costs.append((f"{where}/messageExpression", cost))
                if cost > celcost.RULE_LIMIT:
                    self.refusals.append((f"{where}/messageExpression", celcost.exceeds(
                        "estimated messageExpression cost", cost, celcost.RULE_LIMIT)))

    def _total_cost(self) -> None:
        """validation.go: the schema's rules together over StaticEstimatedCRDCostLimit; the four
        most expensive of them (1% of the limit or more) are named as contributing."""
        if not self.costs:
            return
        from kzgit.validate import celcost   # start-up: loaded with the rules
        total = 0
        for _, c in self.costs:
            total = min(total + c, celcost.MAX)
        if total <= celcost.CRD_LIMIT:
            return
        expensive = sorted((c for c in self.costs if c[1] >= celcost.CRD_LIMIT // 100), key=lambda c: -c[1])[:4]
        for where, _ in expensive:
            self.refusals.append((where, "contributed to estimated rule cost total exceeding cost limit "
                                              "for entire OpenAPIv3 schema"))
        self.refusals.append(("", celcost.exceeds(
            "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema", total,
            celcost.CRD_LIMIT)))

    def skipped(self) -> Optional[str]:
        """Why some rules of this schema are not evaluated (a warning), or None."""
        why = []
        if self.transition:
            why.append(f"{self.transition} transition rule{'s' * (self.transition > 1)} "
                       "(oldSelf: git holds no old object)")
        missing = sum(1 for _, r in self.errors if r.error is not None and str(r.error) == NO_RUNTIME)
        if missing:
            why.append(f"{missing} rule{'s' * (missing > 1)}: {NO_RUNTIME}")
        if self.unsupported > missing:
            n = self.unsupported - missing
            why.append(f"{n} rule{'s' * (n > 1)} using what kzgit's CEL does not implement "
                       "(see the CustomResourceDefinition's findings)")
        if not why:
            return None
        n = self.transition + self.unsupported
        return f"{n} of {self.total} CEL rule{'s' * (self.total > 1)} not evaluated: " + "; ".join(why)


    def refused(self, crd: str) -> Optional[str]:
        """An error for the custom resources of a CRD (``crd`` names it) holding a rule that
        is not valid CEL: the API server refuses such a CRD, so none of them can be created;
        None when every rule compiles or uses only what kzgit lacks."""
        if not self.invalid:
            if not self.refusals:
                return None
            where, message = self.refusals[-1]   # the total, when it is refused, else a rule's
            return (f"the API server refuses its CustomResourceDefinition ({crd}): at "
                    f"openAPIV3Schema{where}: {message}")
        where, rule = self.invalid[0]
        more = len(self.invalid) - 1
        return (f"the API server refuses its CustomResourceDefinition ({crd}): the CEL rule at "
                f"openAPIV3Schema{where} does not compile: {rule.error}"
                + (f" (and {more} more rule{'s' * (more > 1)})" if more else ""))


def _times(cardinality: Optional[int], schema: Dict[str, Any]) -> Optional[int]:
    """How many times the rules of a child of ``schema`` can run (None: unbounded)."""
    if cardinality is None:
        return None
    t = schema.get("type")
    if t != "array" and (t != "object" or schema.get("additionalProperties") in (None, False)):
        return cardinality   # a property of an object, or a scalar: 1 each
    from kzgit.validate.celcost import MAX, cardinality_of_children   # start-up: with the rules
    n = cardinality_of_children(schema)
    return None if n is None else min(cardinality * n, MAX)


def _ptr(k: str) -> str:
    return k.replace("~", "~0").replace("/", "~1")


def _converter(schema: Dict[str, Any]) -> Optional[Callable[[Any], Any]]:
    """A function giving a value the property names CEL sees, and a string of format byte
    the bytes it holds (None: every name is plain and nothing is converted)."""
    if schema.get("type") == "string" and schema.get("format") == "byte":
        return _decoded   # k8s.io/apiserver pkg/cel/common/schemas.go: CEL's bytes
    props = schema.get("properties")
    fields: Dict[str, Tuple[Optional[str], Optional[Callable[[Any], Any]]]] = {}
    renamed = False
    if isinstance(props, dict):
        for k, sub in props.items():
            e = escape(k)
            inner = _converter(sub) if isinstance(sub, dict) else None
            if e != k or inner is not None:
                renamed = True
            fields[k] = (e, inner)
    extra = _converter(schema["additionalProperties"]) if isinstance(schema.get("additionalProperties"), dict) else None
    items = _converter(schema["items"]) if isinstance(schema.get("items"), dict) else None
    if not renamed and extra is None and items is None:
        return None

    def convert(inst: Any) -> Any:
        if isinstance(inst, dict):
            out: Dict[str, Any] = {}
            for k, v in inst.items():
                if k in fields:
                    e, inner = fields[k]
                    if e is None:
                        continue   # not accessible from CEL
                    out[e] = inner(v) if inner is not None else v
                else:
                    out[k] = extra(v) if extra is not None else v
            return out
        if isinstance(inst, list) and items is not None:
            return [items(v) for v in inst]
        return inst
    return convert


def _decoded(inst: Any) -> Any:
    """A base64 string as its bytes (encoding/json's []byte: StdEncoding, CR and LF ignored);
    a value that is none is left as it is (the schema's format check reports it)."""
    if not isinstance(inst, str):
        return inst
    import base64   # start-up: only a rule over a field of format byte
    import binascii
    try:
        return base64.b64decode(inst.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return inst


class RuleFinding(NamedTuple):
    """A rule of a CRD the API server refuses (or kzgit cannot evaluate: ``unsupported``):
    ``compiles`` is False for a rule that does not compile, True for one refused for its
    estimated cost (``pointer`` is then the rule, its messageExpression or the schema)."""

    pointer: str
    message: str
    unsupported: bool
    compiles: bool = False


def crd_rule_errors(crd: Dict[str, Any]) -> List[RuleFinding]:
    """A finding for every rule of a CRD that does not compile or that the API server refuses
    for its cost; the CRD object as written (``spec.versions[].schema.openAPIV3Schema``)."""
    out: List[RuleFinding] = []
    spec = crd.get("spec")
    versions = spec.get("versions") if isinstance(spec, dict) else None
    if not isinstance(versions, list):
        return out
    for i, v in enumerate(versions):
        schema = v.get("schema") if isinstance(v, dict) else None
        root = schema.get("openAPIV3Schema") if isinstance(schema, dict) else None
        if not _has_rules(root):
            continue
        rules = Rules(root)
        base = f"/spec/versions/{i}/schema/openAPIV3Schema"
        for where, r in rules.errors:
            assert r.error is not None
            out.append(RuleFinding(base + where, str(r.error), r.error.unsupported))
        out += [RuleFinding(base + where, message, False, True) for where, message in rules.refusals]
    return out


def _has_rules(schema: Any) -> bool:
    if isinstance(schema, dict):
        return "x-kubernetes-validations" in schema or any(_has_rules(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_has_rules(v) for v in schema)
    return False


def rules_check(schema: Any) -> Optional[Rules]:
    """The rules of a CRD version's schema (None when it has none: no CEL is loaded)."""
    if not _has_rules(schema):
        return None
    return Rules(schema)
