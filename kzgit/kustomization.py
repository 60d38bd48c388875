"""Reading a kustomization file as kustomize v5.5.0 does, with the fields later releases added
(:func:`schema`).

api/types/kustomization.go ``Unmarshal``: YAML (go-yaml v2, YAML 1.1) -> JSON ->
``encoding/json`` with ``DisallowUnknownFields`` (:func:`kzgit.yamlio.gostruct.decode_json`).  Hence: unknown fields are an
error, keys match case-insensitively (Go's JSON field matching), a YAML-1.1
boolean such as ``yes`` in a string field is a type error, and a duplicate key
silently wins last.  ``FixKustomization`` then folds deprecated fields.
"""
from __future__ import annotations

import functools
import os
import re

from kzgit.errors import BuildError
from kzgit.versions import DEFAULT, SUPPORTED, V5_7, V5_8, parse
from kzgit.yamlio import load_yaml11
from kzgit.yamlio.gostruct import (ANY, BOOL, INT, STR, GoDecodeError, ListOf, MapOf, Named, Struct,
                                   decode_json, go_json_kind)

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List, Optional, Tuple

KUSTOMIZATION_KIND = "Kustomization"
KUSTOMIZATION_VERSION = "kustomize.config.k8s.io/v1beta1"
COMPONENT_KIND = "Component"
COMPONENT_VERSION = "kustomize.config.k8s.io/v1alpha1"

MAP_STR = MapOf(STR)
MAP_BOOL = MapOf(BOOL)
LIST_STR = ListOf(STR)


def _list(elem: Any) -> ListOf:
    return ListOf(elem)


# api/types/fieldspec.go (resid.Gvk inline): no apiVersion, name or namespace
GVK = ("group", "version", "kind")            # resid.Gvk, embedded inline
RESID = GVK + ("name", "namespace")          # resid.ResId, embedded inline
FIELDSPEC = Struct("FieldSpec", {"group": STR, "version": STR, "kind": STR, "path": STR,
                                 "create": BOOL}, promoted=GVK)
FSLICE = ListOf(FIELDSPEC, "types.FsSlice")
SELECTOR = Struct("Selector", {"group": STR, "version": STR, "kind": STR, "name": STR,
                               "namespace": STR, "labelSelector": STR, "annotationSelector": STR},
                  promoted=RESID)
GENERATOR_OPTIONS = Struct("GeneratorOptions", {"labels": MAP_STR, "annotations": MAP_STR,
                                                "disableNameSuffixHash": BOOL, "immutable": BOOL})
_GENERATOR_FIELDS = {"namespace": STR, "name": STR, "behavior": STR, "literals": LIST_STR,
                     "files": LIST_STR, "envs": LIST_STR, "env": STR, "options": GENERATOR_OPTIONS}
GENERATOR_ARGS = Struct("ConfigMapArgs", _GENERATOR_FIELDS)
SECRET_ARGS = Struct("SecretArgs", dict(_GENERATOR_FIELDS, type=STR))
PATCH = Struct("Patch", {"path": STR, "patch": STR, "target": SELECTOR, "options": MAP_BOOL})
IMAGE = Struct("Image", {"name": STR, "newName": STR, "tagSuffix": STR, "newTag": STR,
                         "digest": STR})
REPLICA = Struct("Replica", {"name": STR, "count": INT})
LABEL = Struct("Label", {"pairs": MAP_STR, "includeSelectors": BOOL, "includeTemplates": BOOL,
                         "fields": _list(FIELDSPEC)})
VAR = Struct("Var", {"name": STR,
                     "objref": Struct("Target", {"group": STR, "version": STR, "kind": STR,
                                                 "name": STR, "namespace": STR, "apiVersion": STR}),
                     "fieldref": Struct("FieldSelector", {"fieldPath": STR})})
HELM_CHART = Struct("HelmChart", {
    "name": STR, "version": STR, "repo": STR, "releaseName": STR, "namespace": STR,
    "additionalValuesFiles": LIST_STR, "valuesFile": STR, "valuesInline": MapOf(ANY), "valuesMerge": STR,
    "includeCRDs": BOOL, "skipHooks": BOOL, "apiVersions": LIST_STR, "kubeVersion": STR,
    "nameTemplate": STR, "skipTests": BOOL, "debug": BOOL})
SORT_OPTIONS = Struct("SortOptions", {
    "order": STR,
    "legacySortOptions": Struct("LegacySortOptions", {"orderFirst": LIST_STR, "orderLast": LIST_STR})})
# api/types/replacement.go and replacementfield.go: the inline resid.ResId / Replacement fields
# are flattened into the structs that embed them, as encoding/json does
FIELD_OPTIONS = Struct("FieldOptions", {"delimiter": STR, "index": Named(INT, "int"), "encoding": STR,
                                        "create": BOOL}, go="*types.FieldOptions")
SELECTOR_PTR = Struct("Selector", dict(SELECTOR), go="*types.Selector", promoted=RESID)
SOURCE_SELECTOR = Struct("SourceSelector", {
    "group": STR, "version": STR, "kind": STR, "name": STR, "namespace": STR, "fieldPath": STR,
    "options": FIELD_OPTIONS}, go="*types.SourceSelector", promoted=RESID)
TARGET_SELECTOR = Struct("TargetSelector", {
    "select": SELECTOR_PTR, "reject": ListOf(SELECTOR_PTR, "[]*types.Selector"),
    "fieldPaths": LIST_STR, "options": FIELD_OPTIONS}, go="*types.TargetSelector")
_REPLACEMENT_FIELDS = {"source": SOURCE_SELECTOR,
                       "targets": ListOf(TARGET_SELECTOR, "[]*types.TargetSelector")}
#: a replacement read from a ``replacements: [{path: FILE}]`` file
REPLACEMENT = Struct("Replacement", _REPLACEMENT_FIELDS)
#: a ``replacements:`` entry: a replacement, or the path of a file of them
REPLACEMENT_FIELD = Struct("ReplacementField", dict(_REPLACEMENT_FIELDS, path=STR))
METADATA = Struct("ObjectMeta", {"name": STR, "namespace": STR, "labels": MAP_STR,
                                 "annotations": MAP_STR})

# api/types/kustomization.go: field name -> type (order is the struct's order)
KUSTOMIZATION = Struct("Kustomization", {
    "kind": STR, "apiVersion": STR, "metadata": METADATA,
    "openapi": MAP_STR, "namePrefix": STR, "nameSuffix": STR, "namespace": STR,
    "commonLabels": MAP_STR, "labels": _list(LABEL), "commonAnnotations": MAP_STR,
    "patchesStrategicMerge": ListOf(Named(STR, "types.PatchStrategicMerge")),
    "patchesJson6902": _list(PATCH), "patches": _list(PATCH),
    "images": _list(IMAGE), "imageTags": _list(IMAGE),
    "replacements": _list(REPLACEMENT_FIELD), "replicas": _list(REPLICA),
    "vars": _list(VAR), "sortOptions": SORT_OPTIONS, "resources": LIST_STR, "components": LIST_STR,
    "crds": LIST_STR, "bases": LIST_STR, "configMapGenerator": _list(GENERATOR_ARGS),
    "secretGenerator": _list(SECRET_ARGS),
    "helmGlobals": Struct("HelmGlobals", {"chartHome": STR, "configHome": STR}),
    "helmCharts": _list(HELM_CHART),
    "helmChartInflationGenerator": ListOf(ANY, "[]types.HelmChartArgs"),
    "generatorOptions": GENERATOR_OPTIONS, "configurations": LIST_STR, "generators": LIST_STR,
    "transformers": LIST_STR, "validators": LIST_STR, "buildMetadata": LIST_STR,
})

class KustomizationError(BuildError):
    """A kustomization that does not decode; ``needs`` is (the field, the first release that
    knows it) when the selected release does not know a field a later one does."""

    def __init__(self, message: str,
                 needs: Optional[Tuple[str, Tuple[int, int, int]]] = None) -> None:
        super().__init__(message)
        self.needs = needs


# api/types/patchargs.go (5.8): patches[].options, a struct where it was a map[string]bool
PATCH_ARGS = Struct("PatchArgs", {"allowNameChange": BOOL, "allowKindChange": BOOL},
                    go="*types.PatchArgs")


@functools.lru_cache(maxsize=None)
def schema(version: Tuple[int, int, int]) -> Dict[str, Struct]:
    """``Kustomization``, ``Replacement`` (a ``path:`` file's) and ``HelmChart`` as the release
    declares them: the 5.5.0 structs above plus the fields each later release added."""
    replacement = dict(_REPLACEMENT_FIELDS)
    helm = dict(HELM_CHART)
    patch = PATCH
    if version >= V5_7:
        # Replacement.SourceValue (kustomize 6c2797001), HelmChart.Devel (c5f69b002)
        replacement["sourceValue"] = STR
        helm["devel"] = BOOL
    if version >= V5_8:
        # Patch.Options becomes *types.PatchArgs: unknown options are errors (9043c223d)
        patch = Struct("Patch", dict(PATCH, options=PATCH_ARGS))
    helm_chart = Struct("HelmChart", helm)
    kust = Struct("Kustomization", dict(
        KUSTOMIZATION, patchesJson6902=_list(patch), patches=_list(patch),
        replacements=_list(Struct("ReplacementField", dict(replacement, path=STR))),
        helmCharts=_list(helm_chart)))
    return {"Kustomization": kust, "Replacement": Struct("Replacement", replacement),
            "HelmChart": helm_chart}


def needs_release(raw: Dict[str, Any], error: str, version: Tuple[int, int, int]
                  ) -> Optional[Tuple[str, Tuple[int, int, int]]]:
    """When ``error`` is an unknown field that a later release knows: (the field, the first
    release whose kustomization reads ``raw``)."""
    m = re.search(r'unknown field "([^"]*)"', error)
    if m is None:
        return None
    for release in SUPPORTED:
        later = parse(release)
        if later <= version:
            continue
        try:
            decode_json(raw, schema(later)["Kustomization"], strict=True)
        except GoDecodeError:
            continue
        return m.group(1), later
    return None


def decode_kustomization(raw: Dict[str, Any],
                         version: Tuple[int, int, int] = parse(DEFAULT)) -> Dict[str, Any]:
    """Check a kustomization mapping as ``types.Kustomization`` ``Unmarshal`` does.

    ``raw`` is the YAML-1.1 mapping of a kustomization file.  Field names are
    matched case-insensitively and returned in their canonical spelling; an
    unknown field or a value of the wrong type raises :class:`BuildError` with
    encoding/json's message (the caller adds the file name).  No defaults are
    filled in and deprecated fields are not folded: that is
    :func:`parse_kustomization`'s job.
    """
    try:
        data: Dict[str, Any] = decode_json(raw, schema(version)["Kustomization"], strict=True)
    except GoDecodeError as e:
        raise KustomizationError(f"invalid Kustomization: {e}",
                                 needs_release(raw, str(e), version)) from None
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


def parse_kustomization(content: bytes, path: str,
                        version: Tuple[int, int, int] = parse(DEFAULT)) -> Kustomization:
    """Parse, validate and fix a kustomization file (kusttarget.go Load)."""
    if not content.strip():
        raise BuildError(f"kustomization.yaml is empty ({path})")
    raw = load_yaml11(content, path)
    if raw is None:
        raise BuildError(f"kustomization.yaml is empty ({path})")
    if not isinstance(raw, dict):
        raise BuildError(f"invalid Kustomization: json: cannot unmarshal {go_json_kind(raw)} into Go value of type types.Kustomization ({path})")
    try:
        data = decode_kustomization(raw, version)
    except KustomizationError as e:
        raise KustomizationError(f"{e} (in {path})", e.needs) from None
    k = Kustomization(data, path)
    for field, msg in DEPRECATIONS:
        if data.get(field) is not None:
            k.warnings.append(msg)
    _fix(data)
    # kusttarget.go Load: FixKustomization defaults kind and apiVersion, then CheckEmpty,
    # then EnforceFields reports every problem under the directory's name.
    if not data.get("kind"):
        data["kind"] = KUSTOMIZATION_KIND
    if not data.get("apiVersion"):
        data["apiVersion"] = COMPONENT_VERSION if data["kind"] == COMPONENT_KIND else KUSTOMIZATION_VERSION
    if not any(v is not None and v != "" for f, v in data.items() if f not in ("kind", "apiVersion")):
        # a kustomization equal to its bare TypeMeta is "empty" (CheckEmpty: reflect.DeepEqual
        # with a zero Kustomization, where an empty string is zero but an empty list or map,
        # unlike null, is not)
        raise BuildError(f"kustomization.yaml is empty ({path})")
    errs = []
    if data["kind"] not in (KUSTOMIZATION_KIND, COMPONENT_KIND):
        errs.append(f"kind should be {KUSTOMIZATION_KIND} or {COMPONENT_KIND}")
    # types/kustomization.go EnforceFields: v1beta1 for a Kustomization, v1alpha1 for a Component
    required = COMPONENT_VERSION if data["kind"] == COMPONENT_KIND else KUSTOMIZATION_VERSION
    if data["apiVersion"] != required:
        errs.append(f"apiVersion for {data['kind']} should be {required}")
    if errs:
        raise BuildError(f"Failed to read kustomization file under {os.path.dirname(path)}:\n"
                         + "\n".join(errs))
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
