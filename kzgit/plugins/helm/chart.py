"""The helm chart of a kustomization: types.HelmGlobals + types.HelmChart (and the deprecated
types.HelmChartArgs) as kustomize decodes them (api/types/helmchartargs.go,
api/types/kustomization.go FixKustomization)."""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Dict, List

from kzgit.errors import BuildError
from kzgit.konfig.general import HELM_DEFAULT_HOME

if TYPE_CHECKING:  # pragma: no cover
    from kzgit.build.pipeline import Target

__all__ = ["HelmChart", "charts_of", "HELM_DEFAULT_HOME", "KIND", "MERGE_OPTIONS"]

#: HelmChartInflationGenerator.go legalMergeOptions (in the order its error message lists them)
MERGE_OPTIONS = ("merge", "override", "replace")
KIND = "HelmChartInflationGenerator"


# Field types of types.HelmGlobals + types.HelmChart (json names), for the plugin config form.
_STR, _BOOL, _LIST, _MAP = "string", "bool", "[]string", "map[string]interface {}"
_CHART_FIELDS: Dict[str, str] = {
    "chartHome": _STR, "configHome": _STR,
    "name": _STR, "version": _STR, "repo": _STR, "releaseName": _STR, "namespace": _STR,
    "additionalValuesFiles": _LIST, "valuesFile": _STR, "valuesInline": _MAP, "valuesMerge": _STR,
    "includeCRDs": _BOOL, "skipHooks": _BOOL, "apiVersions": _LIST, "kubeVersion": _STR,
    "nameTemplate": _STR, "skipTests": _BOOL, "debug": _BOOL,
}
# types.HelmChartArgs (deprecated helmChartInflationGenerator entries)
_HCA_FIELDS: Dict[str, str] = {
    "chartName": _STR, "chartVersion": _STR, "chartRepoUrl": _STR, "chartHome": _STR,
    "chartRepoName": _STR, "helmBin": _STR, "helmHome": _STR, "values": _STR,
    "valuesLocal": _MAP, "valuesMerge": _STR, "releaseName": _STR, "releaseNamespace": _STR,
    "extraArgs": _LIST,
}


@dataclasses.dataclass
class HelmChart:
    """One configured chart: types.HelmGlobals + types.HelmChart, plus where it was written."""

    name: str = ""
    version: str = ""
    repo: str = ""
    release_name: str = ""
    namespace: str = ""
    additional_values_files: List[str] = dataclasses.field(default_factory=list)
    values_file: str = ""
    values_inline: Dict[str, Any] = dataclasses.field(default_factory=dict)
    values_merge: str = ""
    include_crds: bool = False
    skip_hooks: bool = False
    api_versions: List[str] = dataclasses.field(default_factory=list)
    kube_version: str = ""
    name_template: str = ""
    skip_tests: bool = False
    debug: bool = False
    chart_home: str = ""
    config_home: str = ""
    where: str = ""   # for messages: kustomization file and entry

    @classmethod
    def from_fields(cls, d: Dict[str, Any], where: str) -> "HelmChart":
        """From canonical json field names (already type-checked)."""
        def s(k: str) -> str:
            v = d.get(k)
            return v if isinstance(v, str) else ""
        return cls(
            name=s("name"), version=s("version"), repo=s("repo"), release_name=s("releaseName"),
            namespace=s("namespace"),
            additional_values_files=["" if f is None else f for f in d.get("additionalValuesFiles") or []],
            values_file=s("valuesFile"), values_inline=dict(d.get("valuesInline") or {}),
            values_merge=s("valuesMerge"), include_crds=bool(d.get("includeCRDs")),
            skip_hooks=bool(d.get("skipHooks")),
            api_versions=["" if a is None else a for a in d.get("apiVersions") or []],
            kube_version=s("kubeVersion"), name_template=s("nameTemplate"),
            skip_tests=bool(d.get("skipTests")), debug=bool(d.get("debug")),
            chart_home=s("chartHome"), config_home=s("configHome"), where=where)

    def label(self) -> str:
        return f"{self.where} (chart '{self.name}')" if self.name else self.where


# --------------------------------------------------------------------------- decoding

def _go_type(v: Any) -> str:
    return {bool: "bool", int: "number", float: "number", str: "string", list: "array",
            dict: "object"}.get(type(v), "value")


def _decode_fields(raw: Dict[str, Any], fields: Dict[str, str], where: str, strict: bool,
                   struct: str) -> Dict[str, Any]:
    """Check ``raw`` as encoding/json would decode it into a Go struct with ``fields``.

    Keys match case-insensitively; with ``strict`` (kustomization files are read with
    UnmarshalStrict) an unknown key is an error, otherwise it is ignored (plugin configs).
    """
    folded = {k.lower(): k for k in fields}
    out: Dict[str, Any] = {}
    for key, v in raw.items():
        canon = folded.get(str(key).lower())
        if canon is None:
            if strict:
                raise BuildError(f'{where}: invalid Kustomization: json: unknown field "{key}"')
            continue
        typ = fields[canon]
        if v is None:
            continue
        bad = ((typ == _STR and not isinstance(v, str))
               or (typ == _BOOL and not isinstance(v, bool))
               or (typ == _MAP and not isinstance(v, dict))
               or (typ == _LIST and (not isinstance(v, list)
                                     or any(i is not None and not isinstance(i, str) for i in v))))
        if bad:
            raise BuildError(f"{where}: json: cannot unmarshal {_go_type(v)} into Go struct field "
                             f"{struct}.{canon} of type {typ}")
        if typ == _MAP:
            v = {str(k): x for k, x in v.items()}
        out[canon] = v
    return out


def charts_of(t: "Target") -> List[HelmChart]:
    """The charts of a kustomization: ``helmCharts`` then the deprecated entries (FixKustomization)."""
    k = t.k
    globals_ = k.get("helmGlobals")
    deprecated = k.get("helmChartInflationGenerator") or []
    if not isinstance(deprecated, list):
        raise BuildError(f"{t.kfile}: invalid Kustomization: json: cannot unmarshal "
                         f"{_go_type(deprecated)} into Go struct field "
                         "Kustomization.helmChartInflationGenerator of type []types.HelmChartArgs")
    old: List[Dict[str, Any]] = []
    for i, e in enumerate(deprecated):
        where = f"{t.kfile}: helmChartInflationGenerator entry {i}"
        if e is None:
            e = {}
        if not isinstance(e, dict):
            raise BuildError(f"{where}: json: cannot unmarshal {_go_type(e)} into Go value of "
                             "type types.HelmChartArgs")
        old.append(_decode_fields(e, _HCA_FIELDS, where, True, "HelmChartArgs"))
    # SplitHelmParameters: the last non-empty helmHome / chartHome win; used only when the
    # kustomization has no helmGlobals at all.
    if globals_ is None:
        g: Dict[str, str] = {}
        for o in old:
            if o.get("helmHome"):
                g["configHome"] = o["helmHome"]
            if o.get("chartHome"):
                g["chartHome"] = o["chartHome"]
        globals_ = g or None
    gdict: Dict[str, Any] = dict(globals_ or {})
    out: List[HelmChart] = []
    for i, entry in enumerate(k.get("helmCharts") or []):
        entry = entry or {}
        vi = entry.get("valuesInline")
        if vi is not None and not isinstance(vi, dict):
            raise BuildError(f"{t.kfile}: invalid Kustomization: json: cannot unmarshal "
                             f"{_go_type(vi)} into Go struct field HelmChart.helmCharts.valuesInline "
                             "of type map[string]interface {}")
        out.append(HelmChart.from_fields({**gdict, **entry}, f"{t.kfile}: helmCharts entry {i}"))
    for i, o in enumerate(old):
        # makeHelmChartFromHca: releaseNamespace, extraArgs, helmBin, chartRepoName are dropped
        fields = {"name": o.get("chartName"), "version": o.get("chartVersion"),
                  "repo": o.get("chartRepoUrl"), "valuesFile": o.get("values"),
                  "valuesInline": o.get("valuesLocal"), "valuesMerge": o.get("valuesMerge"),
                  "releaseName": o.get("releaseName")}
        out.append(HelmChart.from_fields({**gdict, **fields},
                                         f"{t.kfile}: helmChartInflationGenerator entry {i}"))
    return out

