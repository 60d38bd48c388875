"""Reading a kustomization file as kustomize v5.5.0 does.

api/types/kustomization.go ``Unmarshal``: YAML (go-yaml v2, YAML 1.1) -> JSON ->
``encoding/json`` with ``DisallowUnknownFields``.  Hence: unknown fields are an
error, keys match case-insensitively (Go's JSON field matching), a YAML-1.1
boolean such as ``yes`` in a string field is a type error, and a duplicate key
silently wins last.  ``FixKustomization`` then folds deprecated fields.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from kzgit.errors import BuildError
from kzgit.yamlio import load_yaml11

KUSTOMIZATION_KIND = "Kustomization"
KUSTOMIZATION_VERSION = "kustomize.config.k8s.io/v1beta1"
COMPONENT_KIND = "Component"
COMPONENT_VERSION = "kustomize.config.k8s.io/v1alpha1"

# Go type names used in json decode errors.
STR, BOOL, INT, ANY = "string", "bool", "int64", "any"
MAP_STR = "map[string]string"
LIST_STR = "[]string"

FIELDSPEC = {"group": STR, "version": STR, "kind": STR, "path": STR, "create": BOOL,
             "apiVersion": STR, "name": STR, "namespace": STR}
SELECTOR = {"group": STR, "version": STR, "kind": STR, "name": STR, "namespace": STR,
            "labelSelector": STR, "annotationSelector": STR}
GENERATOR_OPTIONS = {"labels": MAP_STR, "annotations": MAP_STR, "disableNameSuffixHash": BOOL,
                     "immutable": BOOL}
GENERATOR_ARGS = {"namespace": STR, "name": STR, "behavior": STR, "literals": LIST_STR,
                  "files": LIST_STR, "envs": LIST_STR, "env": STR, "options": GENERATOR_OPTIONS}
SECRET_ARGS = dict(GENERATOR_ARGS, type=STR)
PATCH = {"path": STR, "patch": STR, "target": SELECTOR, "options": "map[string]bool"}
IMAGE = {"name": STR, "newName": STR, "tagSuffix": STR, "newTag": STR, "digest": STR}
REPLICA = {"name": STR, "count": INT}
LABEL = {"pairs": MAP_STR, "includeSelectors": BOOL, "includeTemplates": BOOL, "fields": [FIELDSPEC]}
VAR = {"name": STR, "objref": {"group": STR, "version": STR, "kind": STR, "name": STR,
                               "namespace": STR, "apiVersion": STR},
       "fieldref": {"fieldPath": STR}}
HELM_CHART = {"name": STR, "version": STR, "repo": STR, "releaseName": STR, "namespace": STR,
              "additionalValuesFiles": LIST_STR, "valuesFile": STR, "valuesInline": ANY,
              "valuesMerge": STR, "includeCRDs": BOOL, "skipHooks": BOOL, "apiVersions": LIST_STR,
              "kubeVersion": STR, "nameTemplate": STR, "skipTests": BOOL, "debug": BOOL}
SORT_OPTIONS = {"order": STR, "legacySortOptions": {"orderFirst": LIST_STR, "orderLast": LIST_STR}}
METADATA = {"name": STR, "namespace": STR, "labels": MAP_STR, "annotations": MAP_STR}

# api/types/kustomization.go: field name -> type (order is the struct's order)
KUSTOMIZATION: Dict[str, Any] = {
    "kind": STR, "apiVersion": STR, "metadata": METADATA,
    "openapi": MAP_STR, "namePrefix": STR, "nameSuffix": STR, "namespace": STR,
    "commonLabels": MAP_STR, "labels": [LABEL], "commonAnnotations": MAP_STR,
    "patchesStrategicMerge": LIST_STR, "patchesJson6902": [PATCH], "patches": [PATCH],
    "images": [IMAGE], "imageTags": [IMAGE], "replacements": [ANY], "replicas": [REPLICA],
    "vars": [VAR], "sortOptions": SORT_OPTIONS, "resources": LIST_STR, "components": LIST_STR,
    "crds": LIST_STR, "bases": LIST_STR, "configMapGenerator": [GENERATOR_ARGS],
    "secretGenerator": [SECRET_ARGS], "helmGlobals": {"chartHome": STR, "configHome": STR},
    "helmCharts": [HELM_CHART], "helmChartInflationGenerator": [ANY],
    "generatorOptions": GENERATOR_OPTIONS, "configurations": LIST_STR, "generators": LIST_STR,
    "transformers": LIST_STR, "validators": LIST_STR, "buildMetadata": LIST_STR,
}

_GO_JSON_KIND = {bool: "bool", int: "number", float: "number", str: "string", list: "array",
                 dict: "object", type(None): "null"}


def _jkind(v: Any) -> str:
    return _GO_JSON_KIND.get(type(v), "value")


def _decode(value: Any, typ: Any, path: str) -> Any:
    """Check ``value`` against ``typ`` as encoding/json would; return it with canonical keys."""
    if value is None:
        return None  # JSON null leaves Go zero values
    if typ == ANY:
        return value
    if typ == STR:
        if not isinstance(value, str):
            raise BuildError(f"invalid Kustomization: json: cannot unmarshal {_jkind(value)} into Go struct field {path} of type string")
        return value
    if typ == BOOL:
        if not isinstance(value, bool):
            raise BuildError(f"invalid Kustomization: json: cannot unmarshal {_jkind(value)} into Go struct field {path} of type bool")
        return value
    if typ == INT:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float) and not value.is_integer()):
            raise BuildError(f"invalid Kustomization: json: cannot unmarshal {_jkind(value)} into Go struct field {path} of type int64")
        return int(value)
    if typ in (MAP_STR, "map[string]bool"):
        want = str if typ == MAP_STR else bool
        if not isinstance(value, dict):
            raise BuildError(f"invalid Kustomization: json: cannot unmarshal {_jkind(value)} into Go struct field {path} of type {typ}")
        for k, v in value.items():
            if v is not None and not isinstance(v, want) or (want is str and isinstance(v, bool)):
                raise BuildError(f"invalid Kustomization: json: cannot unmarshal {_jkind(v)} into Go struct field {path} of type {'string' if want is str else 'bool'}")
        return {str(k): v for k, v in value.items()}
    if typ == LIST_STR:
        if not isinstance(value, list):
            raise BuildError(f"invalid Kustomization: json: cannot unmarshal {_jkind(value)} into Go struct field {path} of type []string")
        for v in value:
            if v is not None and not isinstance(v, str):
                raise BuildError(f"invalid Kustomization: json: cannot unmarshal {_jkind(v)} into Go struct field {path} of type string")
        return ["" if v is None else v for v in value]
    if isinstance(typ, list):
        if not isinstance(value, list):
            raise BuildError(f"invalid Kustomization: json: cannot unmarshal {_jkind(value)} into Go struct field {path} of type []")
        return [_decode(v, typ[0], path) for v in value]
    if isinstance(typ, dict):
        if not isinstance(value, dict):
            raise BuildError(f"invalid Kustomization: json: cannot unmarshal {_jkind(value)} into Go struct field {path} of type struct")
        out: Dict[str, Any] = {}
        folded = {k.lower(): k for k in typ}
        for k, v in value.items():
            key = str(k)
            canon = key if key in typ else folded.get(key.lower())
            if canon is None:
                raise BuildError(f'invalid Kustomization: json: unknown field "{key}"')
            out[canon] = _decode(v, typ[canon], f"{path.split('.')[0]}.{canon}" if path else canon)
        return out
    raise AssertionError(typ)


def decode_kustomization(raw: Dict[str, Any]) -> Dict[str, Any]:
    """Check a kustomization mapping as ``types.Kustomization`` ``Unmarshal`` does.

    ``raw`` is the YAML-1.1 mapping of a kustomization file.  Field names are
    matched case-insensitively and returned in their canonical spelling; an
    unknown field or a value of the wrong type raises :class:`BuildError` with
    encoding/json's message (the caller adds the file name).  No defaults are
    filled in and deprecated fields are not folded: that is
    :func:`parse_kustomization`'s job.
    """
    data: Dict[str, Any] = _decode(raw, KUSTOMIZATION, "")
    return data


class Kustomization:
    """A parsed, fixed kustomization (or component)."""

    def __init__(self, data: Dict[str, Any], path: str) -> None:
        self.data = data
        self.path = path
        self.warnings: List[str] = []

    def get(self, field: str, default: Any = None) -> Any:
        v = self.data.get(field)
        return default if v is None else v

    @property
    def kind(self) -> str:
        return self.data.get("kind") or KUSTOMIZATION_KIND

    def is_component(self) -> bool:
        return self.kind == COMPONENT_KIND


DEPRECATIONS = [
    ("bases", "# Warning: 'bases' is deprecated. Please use 'resources' instead. Run 'kustomize edit fix' to update your Kustomization automatically."),
    ("commonLabels", "# Warning: 'commonLabels' is deprecated. Please use 'labels' instead. Run 'kustomize edit fix' to update your Kustomization automatically."),
    ("imageTags", "# Warning: 'imageTags' is deprecated. Please use 'images' instead. Run 'kustomize edit fix' to update your Kustomization automatically."),
    ("patchesJson6902", "# Warning: 'patchesJson6902' is deprecated. Please use 'patches' instead. Run 'kustomize edit fix' to update your Kustomization automatically."),
    ("patchesStrategicMerge", "# Warning: 'patchesStrategicMerge' is deprecated. Please use 'patches' instead. Run 'kustomize edit fix' to update your Kustomization automatically."),
    ("vars", "# Warning: 'vars' is deprecated. Please use 'replacements' instead. [EXPERIMENTAL] Run 'kustomize edit fix' to update your Kustomization automatically."),
]


def parse_kustomization(content: bytes, path: str) -> Kustomization:
    """Parse, validate and fix a kustomization file (kusttarget.go Load)."""
    if not content.strip():
        raise BuildError(f"kustomization.yaml is empty ({path})")
    raw = load_yaml11(content, path)
    if raw is None:
        raise BuildError(f"kustomization.yaml is empty ({path})")
    if not isinstance(raw, dict):
        raise BuildError(f"invalid Kustomization: json: cannot unmarshal {_jkind(raw)} into Go value of type types.Kustomization ({path})")
    try:
        data = decode_kustomization(raw)
    except BuildError as e:
        raise BuildError(f"{e} (in {path})") from None
    k = Kustomization(data, path)
    for field, msg in DEPRECATIONS:
        if data.get(field) is not None:
            k.warnings.append(msg)
    _fix(data)
    kind = data.get("kind") or ""
    if kind not in ("", KUSTOMIZATION_KIND, COMPONENT_KIND):
        raise BuildError(f"Failed to read kustomization file {path}: kind should be Kustomization or Component")
    if not any(v is not None for f, v in data.items() if f not in ("kind", "apiVersion")):
        # kusttarget.go Load: a kustomization equal to its bare TypeMeta is "empty"
        raise BuildError(f"kustomization.yaml is empty ({path})")
    if kind == "":
        data["kind"] = KUSTOMIZATION_KIND
    required = COMPONENT_VERSION if data["kind"] == COMPONENT_KIND else KUSTOMIZATION_VERSION
    if not data.get("apiVersion"):
        data["apiVersion"] = required
    elif data["apiVersion"] != required:
        # types/kustomization.go EnforceFields: a set apiVersion must be the one
        # of the (defaulted) kind: v1beta1 for a Kustomization, v1alpha1 for a
        # Component.
        raise BuildError(f"Failed to read kustomization file {path}: "
                         f"apiVersion for {data['kind']} should be {required}")
    return k


def _fix(d: Dict[str, Any]) -> None:
    """types.FixKustomization: fold deprecated fields into their replacements."""
    if d.get("bases"):
        d["resources"] = list(d.get("resources") or []) + list(d["bases"])
    d.pop("bases", None)
    if d.get("imageTags"):
        d["images"] = list(d.get("images") or []) + list(d["imageTags"])
    d.pop("imageTags", None)
    for gen in ("configMapGenerator", "secretGenerator"):
        for g in d.get(gen) or []:
            if g and g.get("env"):
                g["envs"] = list(g.get("envs") or []) + [g["env"]]
            if g is not None:
                g.pop("env", None)
