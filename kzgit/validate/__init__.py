"""Validation of rendered resources against Kubernetes and custom resource schemas, offline.

:class:`Validator` holds the schema sources of one run (the bundled Kubernetes
schemas of the pinned release, CRDs, kubeconform-layout schema files), compiles
each schema the first time a kind needs it and checks resources against them:
:meth:`Validator.check` returns :class:`Issue` s (where in the resource, what,
how bad).  :class:`Finding` is an issue placed in the repository (root,
resource, source file and line): :mod:`kzgit.hooks.validate` makes them, the
CLI prints them (:mod:`kzgit.validate.report`).

Order of the sources for a kind: Kubernetes, then CRDs, then
``schema-locations``.  An API removed at or before the pinned release is
``not-served`` whatever is bundled (:mod:`kzgit.validate.deprecations`), and one
deprecated but still served gets a ``deprecated`` warning.  A kind none of the
sources knows is an error of its own when another bundled release serves it
(removed or not yet added APIs, ``not-served``) or when its group is one of
Kubernetes' own (``unknown-kind``: ``apps/v1 Deploymnet`` cannot be a custom
resource), else a missing schema (``missing-schemas``: warn, error or skip).
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

from kzgit.config import ValidatePolicy
from kzgit.errors import UsageError
from kzgit.record import Record
from kzgit.validate.schema import Check, Problem

SKIP_ANNOTATION = "kzgit.io/validate"
ERROR, WARNING = "error", "warning"
#: problems that are warnings: CEL rules not evaluated (transition rules, unsupported functions)
WARNING_CODES = frozenset(("cel-skipped",))


# Records, not dataclasses: a warm validate run reads its findings from the render cache,
# and importing dataclasses (with inspect) would cost it more (kzgit.record).
class Issue(Record):
    """One problem of one resource: ``path`` is a JSON pointer ('' = the whole resource)."""

    __slots__ = ("code", "path", "message", "severity")

    def __init__(self, code: str, path: str, message: str, severity: str = ERROR) -> None:
        self.code = code     # type, enum, required, unknown-field, not-served, missing-schema, ...
        self.path = path
        self.message = message
        self.severity = severity


class Finding(Record):
    """An issue placed in the repository: which root rendered which resource, from which file."""

    __slots__ = ("root", "api_version", "kind", "namespace", "name", "code", "path", "message",
                 "severity", "file", "line")

    def __init__(self, root: str, api_version: str, kind: str, namespace: str, name: str, code: str,
                 path: str, message: str, severity: str = ERROR, file: Optional[str] = None,
                 line: Optional[int] = None) -> None:
        self.root = root                 # the root that rendered the resource
        self.api_version, self.kind, self.namespace, self.name = api_version, kind, namespace, name
        self.code, self.path, self.message, self.severity = code, path, message, severity
        self.file, self.line = file, line  # where it points, once placed

    @property
    def resource(self) -> str:
        """``Kind/namespace/name`` (``Kind/name`` for cluster-scoped or unnamespaced)."""
        parts = [self.kind or "?"] + ([self.namespace] if self.namespace else []) + [self.name or "?"]
        return "/".join(parts)

    @property
    def where(self) -> str:
        """``file:line``, ``file`` or ''."""
        if not self.file:
            return ""
        return f"{self.file}:{self.line}" if self.line else self.file

    def __str__(self) -> str:
        head = f"{self.root}: {self.resource}: " if self.kind or self.name else f"{self.root}: "
        path = f"{self.path}: " if self.path else ""
        warn = "warning: " if self.severity == WARNING else ""
        where = f" ({self.where})" if self.where else ""
        return f"{head}{path}{warn}{self.message}{where}"


def once_per_kind(code: str, path: str, severity: str) -> bool:
    """Whether a finding is listed once per kind rather than per resource: a missing schema, and
    the CEL rules of a CRD that are not evaluated (the same for every resource of the kind)."""
    return severity == WARNING and (code == "missing-schema" or (code == "cel-skipped" and not path))


def _parse_skip(entries: Tuple[str, ...]) -> Tuple[frozenset, frozenset]:
    kinds, gvks = set(), set()
    for e in entries:
        if "/" in e:
            api, _, kind = e.rpartition("/")
            gvks.add((api, kind))
        else:
            kinds.add(e)
    return frozenset(kinds), frozenset(gvks)


class Validator:
    """The schema sources of one run; each schema compiled once and shared by every root."""

    def __init__(self, policy: ValidatePolicy, base: str = ".",
                 names: Optional[Dict[str, str]] = None) -> None:
        from kzgit.validate import kubernetes   # start-up: loaded only by the runs that need it
        from kzgit.validate.sources import CrdSchemas, SchemaLocations   # start-up: loaded only by the runs that need it
        names = names or {}
        self.policy = policy
        self.base = base
        version = policy.kubernetes_version or kubernetes.newest()
        if version is None:
            raise UsageError("no Kubernetes schemas are installed",
                             tip="kzgit's data directory kzgit/validate/k8s is missing: reinstall kzgit")
        self.version = kubernetes.normalize_version(version, names.get("kubernetes-version",
                                                                       "kubernetes-version"))
        self.k8s = kubernetes.KubernetesSchemas(self.version, policy.strict)
        self.crds = CrdSchemas(policy.strict, _ObjectMeta(self.k8s))
        for p in policy.crds:
            self.crds.add_path(os.path.join(base, p), p)
        self.locations = SchemaLocations(list(policy.schema_locations), base, self.version,
                                         policy.strict, names.get("schema-locations", "schema-locations"))
        self.skip_kinds, self.skip_gvks = _parse_skip(policy.skip_kinds)

    def add_crd(self, obj: Dict[str, Any], where: str) -> None:
        """Register a CustomResourceDefinition rendered by a root (``where`` names it); one that
        gives no schema is not an error here (the resource itself is validated like any other)."""
        self.crds.add(obj, where, strict=False)

    def skipped(self, obj: Dict[str, Any]) -> bool:
        """``skip-kinds`` or the resource's own ``kzgit.io/validate: "false"`` annotation."""
        kind, api = obj.get("kind"), obj.get("apiVersion")
        if kind in self.skip_kinds or (api, kind) in self.skip_gvks:
            return True
        md = obj.get("metadata")
        ann = md.get("annotations") if isinstance(md, dict) else None
        return isinstance(ann, dict) and str(ann.get(SKIP_ANNOTATION, "")).lower() == "false"

    def schema_for(self, api_version: str, kind: str) -> Optional[Check]:
        return (self.k8s.check_for(api_version, kind) or self.crds.check_for(api_version, kind)
                or self.locations.check_for(api_version, kind))

    def check(self, obj: Any) -> Optional[List[Issue]]:
        """The issues of one resource; None when it was not validated (skipped)."""
        if not isinstance(obj, dict):
            return [Issue("not-an-object", "", "a resource must be a mapping")]
        if self.skipped(obj):
            return None
        api, kind = obj.get("apiVersion"), obj.get("kind")
        missing = [k for k, v in (("apiVersion", api), ("kind", kind)) if not isinstance(v, str) or not v]
        if missing:
            return [Issue("required", "/" + missing[0], f"required field \"{missing[0]}\" is missing")]
        assert isinstance(api, str) and isinstance(kind, str)
        from kzgit.validate import deprecations   # start-up: loaded with the schemas
        removed = deprecations.removal(api, kind, self.version)
        if removed:   # whatever schemas are bundled: the API server refuses it
            return [Issue("not-served", "/apiVersion", removed)]
        check = self.schema_for(api, kind)
        if check is None:
            why = self.k8s.not_served(api, kind)
            if why:
                return [Issue("not-served", "/apiVersion", why)]
            unknown = self.k8s.unknown_kind(api, kind)
            if unknown:
                return [Issue(*unknown)]
            mode = self.policy.missing_schemas
            if mode == "skip":
                return None
            return [Issue("missing-schema", "", f"no schema for {kind} {api}",
                          ERROR if mode == "error" else WARNING)]
        problems: List[Problem] = []
        check(obj, None, problems)
        secret = kind == "Secret" and api == "v1"
        issues = [Issue(p.code, p.pointer(), _redacted(obj, p) if secret else p.message,
                        WARNING if p.code in WARNING_CODES else ERROR)
                  for p in problems]
        if kind == "CustomResourceDefinition" and api == "apiextensions.k8s.io/v1":
            issues += _crd_rules(obj)
        deprecated = deprecations.deprecation(api, kind, self.version)
        if deprecated:
            issues.append(Issue("deprecated", "/apiVersion", deprecated, WARNING))
        return issues


def _crd_rules(crd: Dict[str, Any]) -> List[Issue]:
    """The CEL rules of a CRD that do not compile: an error (the API server refuses the CRD),
    or a warning when the rule uses what kzgit's CEL environment lacks."""
    from kzgit.validate.cel import NO_RUNTIME, crd_rule_errors   # start-up: only a CRD needs it
    out = []
    errors = crd_rule_errors(crd)
    if errors and all(f.message.startswith(NO_RUNTIME) for f in errors):   # one warning, not one per rule
        return [Issue("cel-skipped", "", f"{len(errors)} CEL rules not evaluated: {errors[0][1]}", WARNING)]
    for f in errors:
        if f.unsupported:
            out.append(Issue("cel-skipped", f.pointer, f"kzgit cannot evaluate this CEL rule: {f.message}", WARNING))
        elif f.compiles:   # refused for its estimated cost (kzgit.validate.celcost)
            out.append(Issue("cel", f.pointer, f"the API server refuses this CustomResourceDefinition: {f.message}"))
        else:
            out.append(Issue("cel", f.pointer, f"the CEL rule does not compile: {f.message}"))
    return out


_SECRET_FIELDS = ("/data", "/stringData")


def _redacted(obj: Dict[str, Any], p: Problem) -> str:
    """A Secret's problem without the value it is about (findings are printed in CI logs and
    pull requests, as ``kzgit diff`` is: see :mod:`kzgit.diff.redact`)."""
    pointer = p.pointer()
    if not any(pointer == f or pointer.startswith(f + "/") for f in _SECRET_FIELDS):
        return p.message
    from kzgit.validate.schema import show   # start-up: only a Secret's problem needs it
    value: Any = obj
    for key in pointer.split("/")[1:]:
        key = key.replace("~1", "/").replace("~0", "~")
        value = value.get(key) if isinstance(value, dict) else None
    if isinstance(value, (dict, list)):
        return p.message
    return p.message.replace(show(value), "<redacted>")


class _ObjectMeta:
    """The check of Kubernetes ObjectMeta (a custom resource's metadata), compiled when first
    used: building it reads the release's definitions (kzgit.validate.kubernetes)."""

    def __init__(self, k8s: Any) -> None:
        self.k8s = k8s
        self._check: Optional[Check] = None

    def __call__(self, inst: Any, path: Any, out: List[Any]) -> None:
        if self._check is None:
            from kzgit.validate.kubernetes import OBJECT_META   # start-up: loaded with the schemas
            self._check = self.k8s.definition(OBJECT_META)
        self._check(inst, path, out)
