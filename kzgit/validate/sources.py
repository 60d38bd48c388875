"""Schemas for custom resources: CustomResourceDefinitions and kubeconform-layout files.

* :class:`CrdSchemas`: the ``openAPIV3Schema`` of every served version of every
  ``apiextensions.k8s.io/v1`` CustomResourceDefinition given (rendered from a
  root of the repository, or read from the ``crds`` files and directories).
* :class:`SchemaLocations`: JSON schema files found through kubeconform's
  ``-schema-location`` templates (local paths only), with its template names:
  ``{{.NormalizedKubernetesVersion}}`` (``v1.29.0``), ``{{.StrictSuffix}}``
  (``-strict`` or empty), ``{{.ResourceKind}}`` (lower-case kind),
  ``{{.ResourceAPIVersion}}`` (``v1``), ``{{.Group}}`` (``apps``; the version for
  the core group, as kubeconform splits ``apiVersion`` on ``/``) and
  ``{{.KindSuffix}}`` (``-apps-v1``: first label of the group, then version).

A source that cannot be used (unreadable or invalid file, a CRD version without
a schema, a template naming no file) is a :class:`~kzgit.errors.UsageError`
naming the file or the setting: a broken schema source must not silently turn
validation off.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any, Callable, Dict, List, Optional, Tuple

from kzgit.sha import sha256
from kzgit.errors import UsageError
from kzgit.validate.cel import Rules, rules_check
from kzgit.validate.schema import Check, Compiler, Problem, SchemaError, defaulter, pointer_get

CRD_API = "apiextensions.k8s.io/v1"


def crd_versions(obj: Dict[str, Any], where: str,
                 strict: bool = True) -> List[Tuple[str, str, Dict[str, Any]]]:
    """(apiVersion, kind, openAPIV3Schema) per served version of a CRD object.

    ``strict`` (a CRD the configuration names): a CRD that gives no schema is a usage error.
    Otherwise (a CRD some root renders, maybe a test fixture) what gives no schema is skipped,
    as kubeconform's CRD converter does: resources of its kinds then have no schema, which
    ``missing-schemas`` decides about."""
    spec = obj.get("spec")
    name = (obj.get("metadata") or {}).get("name", "")
    label = f"{where}: CustomResourceDefinition {name}"
    if not isinstance(spec, dict):
        if not strict:
            return []
        raise UsageError(f"{label}: no spec")
    group = spec.get("group")
    kind = (spec.get("names") or {}).get("kind") if isinstance(spec.get("names"), dict) else None
    if not isinstance(group, str) or not isinstance(kind, str):
        if not strict:
            return []
        raise UsageError(f"{label}: spec.group and spec.names.kind are required")
    out = []
    for v in spec.get("versions") or []:
        if not isinstance(v, dict) or not isinstance(v.get("name"), str):
            if not strict:
                continue
            raise UsageError(f"{label}: spec.versions entries need a name")
        if v.get("served") is False:
            continue
        schema = (v.get("schema") or {}).get("openAPIV3Schema") if isinstance(v.get("schema"), dict) else None
        if not isinstance(schema, dict):
            if not strict:
                continue
            raise UsageError(f"{label}: version {v['name']} has no schema.openAPIV3Schema")
        out.append((f"{group}/{v['name']}", kind, schema))
    return out


class CrdSchemas:
    """Compiled CRD schemas by (apiVersion, kind); metadata checked as Kubernetes ObjectMeta."""

    def __init__(self, strict: bool, object_meta: Optional[Check]) -> None:
        self.strict = strict
        self.object_meta = object_meta
        self._raw: Dict[Tuple[str, str], Tuple[Dict[str, Any], str]] = {}
        self._checks: Dict[Tuple[str, str], Check] = {}

    def add(self, obj: Dict[str, Any], where: str, strict: bool = True) -> None:
        """Register a CRD object read from ``where`` (the first definition of a kind wins);
        ``strict`` as :func:`crd_versions`."""
        for api_version, kind, schema in crd_versions(obj, where, strict):
            self._raw.setdefault((api_version, kind), (schema, where))

    def add_file(self, path: str, shown: str) -> None:
        """Register every CRD in a YAML file (other documents are ignored)."""
        from kzgit.yamlio import load_documents   # start-up: loaded only by the runs that need it
        try:
            with open(path, "rb") as f:
                data = f.read()
            docs = load_documents(data, shown)
        except OSError as e:
            raise UsageError(f"{shown}: cannot read: {e.strerror or e}") from None
        except Exception as e:  # noqa: BLE001 - any parse error is the file's fault
            raise UsageError(f"{shown}: not valid YAML: {e}") from None
        for d in docs:
            if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition":
                if d.get("apiVersion") != CRD_API:
                    raise UsageError(f"{shown}: only {CRD_API} CustomResourceDefinitions are supported")
                self.add(d, shown)

    def add_path(self, path: str, shown: str) -> None:
        """A CRD file, or every ``.yaml``/``.yml``/``.json`` file under a directory."""
        if os.path.isdir(path):
            for d, dirs, files in os.walk(path):
                dirs.sort()
                for f in sorted(files):
                    if f.endswith((".yaml", ".yml", ".json")):
                        full = os.path.join(d, f)
                        self.add_file(full, os.path.join(shown, os.path.relpath(full, path)))
        elif os.path.isfile(path):
            self.add_file(path, shown)
        else:
            raise UsageError(f"crds: {shown}: no such file or directory")

    def fingerprint(self) -> str:
        """Every CRD schema registered and where it came from, as a cache key part."""
        rows = [[list(k), schema, where] for k, (schema, where) in sorted(self._raw.items())]
        return sha256(json.dumps(rows, sort_keys=True, default=str).encode("utf-8")).hexdigest()

    def __contains__(self, key: Tuple[str, str]) -> bool:
        return key in self._raw

    def check_for(self, api_version: str, kind: str) -> Optional[Check]:
        key = (api_version, kind)
        if key not in self._raw:
            return None
        if key not in self._checks:
            schema, where = self._raw[key]
            try:
                body = Compiler(schema, "openapi", self.strict).compile(_without_metadata(schema))
            except SchemaError as e:
                raise UsageError(f"{where}: CustomResourceDefinition for {kind} {api_version}: "
                                 f"bad openAPIV3Schema: {e}") from None
            self._checks[key] = self._with_metadata(body, defaulter(schema), rules_check(schema),
                                                    f"{kind} {api_version}, {where}")
        return self._checks[key]

    def _with_metadata(self, body: Check, default: Optional[Callable[[Any], Any]],
                       rules: Optional[Rules], crd: str = "") -> Check:
        meta = self.object_meta
        cel = rules.check if rules is not None else None
        skipped = rules.skipped() if rules is not None else None
        # a rule that is not valid CEL: the CRD itself is refused (also one from --crd)
        refused = rules.refused(crd) if rules is not None else None

        def check(inst: Any, path: Any, out: List[Any]) -> None:
            if default is not None:   # the API server defaults a custom resource, then validates it
                inst = default(inst)
            n = len(out)
            body(inst, path, out)
            if meta is not None and isinstance(inst, dict) and "metadata" in inst:
                meta(inst["metadata"], (path, "metadata"), out)
            # CEL rules run on a well-typed object only: the API server skips them after a type
            # error (apiextensions-apiserver pkg/registry/customresource/strategy.go, hasBlockingErr)
            if cel is not None and not any(p.code == "type" for p in out[n:]):
                cel(inst, path, out)
            if refused is not None:
                out.append(Problem(path, "cel", refused))
            if skipped is not None:
                out.append(Problem(path, "cel-skipped", skipped))
        return check


def _without_metadata(schema: Dict[str, Any]) -> Dict[str, Any]:
    """The root schema with apiVersion, kind and metadata implicitly allowed (the API server
    validates metadata itself, as ObjectMeta; a CRD may only restrict name and generateName)."""
    props = dict(schema.get("properties") or {})
    props.pop("metadata", None)
    props.setdefault("apiVersion", {"type": "string"})
    props.setdefault("kind", {"type": "string"})
    props["metadata"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    out = dict(schema)
    out["properties"] = props
    out.setdefault("type", "object")
    return out


_VAR_RE = re.compile(r"\{\{\s*\.(\w+)\s*\}\}")
_TEMPLATE_VARS = ("NormalizedKubernetesVersion", "StrictSuffix", "ResourceKind",
                  "ResourceAPIVersion", "Group", "KindSuffix")


def template_values(api_version: str, kind: str, k8s_version: str, strict: bool) -> Dict[str, str]:
    """kubeconform's template data (pkg/registry/registry.go schemaPath)."""
    group_parts = api_version.split("/")
    kind_suffix = "-" + group_parts[0].split(".")[0].lower()
    if len(group_parts) > 1:
        kind_suffix += "-" + group_parts[1].lower()
    return {"NormalizedKubernetesVersion": f"v{k8s_version}.0",
            "StrictSuffix": "-strict" if strict else "",
            "ResourceKind": kind.lower(),
            "ResourceAPIVersion": group_parts[-1],
            "Group": group_parts[0],
            "KindSuffix": kind_suffix}


class SchemaLocations:
    """Local kubeconform-layout schema files, compiled once each."""

    def __init__(self, templates: List[str], base: str, k8s_version: str, strict: bool,
                 source: str = "schema-locations") -> None:
        self.base = base
        self.k8s_version = k8s_version
        self.strict = strict
        self.templates = []
        for t in templates:
            names = _VAR_RE.findall(t)
            bad = [n for n in names if n not in _TEMPLATE_VARS]
            if bad:
                raise UsageError(f"{source}: {t!r}: unknown template name {{{{.{bad[0]}}}}}",
                                 tip="known: " + ", ".join(f"{{{{.{n}}}}}" for n in _TEMPLATE_VARS))
            if "://" in t:
                raise UsageError(f"{source}: {t!r}: only local paths are supported (kzgit validates offline)")
            fixed = os.path.join(base, t)
            if not names:
                if os.path.isdir(fixed) or not os.path.isfile(fixed):
                    raise UsageError(f"{source}: {t!r} names no schema file",
                                     tip="use kubeconform's template names, e.g. "
                                         "schemas/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json")
            else:
                head = os.path.dirname(_VAR_RE.split(t)[0]) or "."
                if not os.path.isdir(os.path.join(base, head)):
                    raise UsageError(f"{source}: {t!r}: directory {head!r} does not exist")
            self.templates.append(t)
        self._files: Dict[str, Any] = {}
        self._compilers: Dict[str, Compiler] = {}
        self._checks: Dict[Tuple[str, str], Optional[Check]] = {}

    def find(self, api_version: str, kind: str) -> Optional[str]:
        values = template_values(api_version, kind, self.k8s_version, self.strict)
        for t in self.templates:
            path = os.path.join(self.base, _VAR_RE.sub(lambda m: values[m.group(1)], t))
            if os.path.isfile(path):
                return path
        return None

    def check_for(self, api_version: str, kind: str) -> Optional[Check]:
        key = (api_version, kind)
        if key not in self._checks:
            path = self.find(api_version, kind)
            self._checks[key] = None if path is None else self._compile_file(path, "")
        return self._checks[key]

    def _load(self, path: str) -> Any:
        if path not in self._files:
            shown = os.path.relpath(path, self.base)
            try:
                with open(path, "rb") as f:
                    text = f.read()
            except OSError as e:
                raise UsageError(f"{shown}: cannot read schema: {e.strerror or e}") from None
            try:
                self._files[path] = json.loads(text)
            except ValueError:
                from kzgit.yamlio import load_documents  # kubeconform reads YAML schemas too
                try:
                    docs = load_documents(text, shown)
                except Exception as e:  # noqa: BLE001
                    raise UsageError(f"{shown}: not a JSON or YAML schema: {e}") from None
                self._files[path] = docs[0] if len(docs) == 1 else None
            if not isinstance(self._files[path], dict):
                raise UsageError(f"{shown}: a schema file must hold one JSON object")
        return self._files[path]

    def _compile_file(self, path: str, fragment: str) -> Check:
        doc = self._load(path)
        comp = self._compilers.get(path)
        if comp is None:
            def resolve(other: str, frag: str, here: str = path) -> Check:
                return self._compile_file(os.path.normpath(os.path.join(os.path.dirname(here), other)), frag)
            comp = self._compilers[path] = Compiler(doc, "json", False, resolve=resolve)
        try:
            pointer_get(doc, fragment, f"{os.path.basename(path)}#{fragment}")
            # through a $ref, so files referring to each other compile each definition once
            return comp.compile({"$ref": "#" + fragment})
        except SchemaError as e:
            raise UsageError(f"{os.path.relpath(path, self.base)}: bad schema: {e}") from None
