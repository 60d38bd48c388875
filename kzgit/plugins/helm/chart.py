"""The helm chart of a kustomization: types.HelmGlobals + types.HelmChart (and the deprecated
types.HelmChartArgs) as kustomize decodes them (api/types/helmchartargs.go,
api/types/kustomization.go FixKustomization)."""
from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING, Any, Dict, List, Tuple

from kzgit.errors import BuildError
from kzgit.konfig.general import HELM_DEFAULT_HOME
from kzgit.kustomization import schema
from kzgit.yamlio.gostruct import (ANY, STR, GoDecodeError, ListOf, MapOf, Struct, decode_json,
                                   go_json_kind)

if TYPE_CHECKING:  # pragma: no cover
    from kzgit.kustomization import Kustomization

__all__ = ["HelmChart", "charts_of", "HELM_DEFAULT_HOME", "KIND", "MERGE_OPTIONS"]

#: HelmChartInflationGenerator.go legalMergeOptions (in the order its error message lists them)
MERGE_OPTIONS = ("merge", "override", "replace")
KIND = "HelmChartInflationGenerator"


# types.HelmGlobals + types.HelmChart, the struct of the builtin plugin config
@functools.lru_cache(maxsize=None)
def chart_plugin(version: Tuple[int, int, int]) -> Struct:
    """The builtin plugin config's struct in Kustomize ``version``: it embeds types.HelmChart,
    so the fields a release adds there (``devel`` in 5.7, kustomize c5f69b002) are the
    config's too."""
    return Struct("HelmChartInflationGeneratorPlugin",
                  {"chartHome": STR, "configHome": STR, **schema(version)["HelmChart"]})
# types.HelmChartArgs (deprecated helmChartInflationGenerator entries)
HELM_CHART_ARGS = Struct("HelmChartArgs", {
    "chartName": STR, "chartVersion": STR, "chartRepoUrl": STR, "chartHome": STR,
    "chartRepoName": STR, "helmBin": STR, "helmHome": STR, "values": STR,
    "valuesLocal": MapOf(ANY), "valuesMerge": STR, "releaseName": STR, "releaseNamespace": STR,
    "extraArgs": ListOf(STR),
})


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
    devel: bool = False   # 5.7 (kustomize c5f69b002): a release kustomization before it refuses it
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
            devel=bool(d.get("devel")),
            chart_home=s("chartHome"), config_home=s("configHome"), where=where)

    def label(self) -> str:
        return f"{self.where} (chart '{self.name}')" if self.name else self.where


# --------------------------------------------------------------------------- decoding

def decode_chart(raw: Dict[str, Any], struct: Struct, where: str, in_kustomization: bool
                 ) -> Dict[str, Any]:
    """``raw`` decoded into ``struct``: strictly as part of the kustomization file, or as a
    plugin config (sigs.k8s.io/yaml.Unmarshal: unknown fields ignored)."""
    try:
        out: Dict[str, Any] = decode_json(raw, struct, strict=in_kustomization,
                                          to_target=not in_kustomization)
    except GoDecodeError as e:
        raise BuildError(f"{where}: {'invalid Kustomization: ' if in_kustomization else ''}{e}"
                         ) from None
    return out


def charts_of(k: "Kustomization", kfile: str) -> List[HelmChart]:
    """The charts of a kustomization: ``helmCharts`` then the deprecated entries (FixKustomization)."""
    globals_ = k.get("helmGlobals")
    deprecated = k.get("helmChartInflationGenerator") or []
    if not isinstance(deprecated, list):
        raise BuildError(f"{kfile}: invalid Kustomization: json: cannot unmarshal "
                         f"{go_json_kind(deprecated)} into Go struct field "
                         "Kustomization.helmChartInflationGenerator of type []types.HelmChartArgs")
    old: List[Dict[str, Any]] = []
    for i, e in enumerate(deprecated):
        where = f"{kfile}: helmChartInflationGenerator entry {i}"
        if e is None:
            e = {}
        if not isinstance(e, dict):
            raise BuildError(f"{where}: json: cannot unmarshal {go_json_kind(e)} into Go value of "
                             "type types.HelmChartArgs")
        old.append(decode_chart(e, HELM_CHART_ARGS, where, True))
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
        entry = entry or {}   # checked with the kustomization (kzgit.kustomization.HELM_CHART)
        out.append(HelmChart.from_fields({**gdict, **entry}, f"{kfile}: helmCharts entry {i}"))
    for i, o in enumerate(old):
        # makeHelmChartFromHca: releaseNamespace, extraArgs, helmBin, chartRepoName are dropped
        fields = {"name": o.get("chartName"), "version": o.get("chartVersion"),
                  "repo": o.get("chartRepoUrl"), "valuesFile": o.get("values"),
                  "valuesInline": o.get("valuesLocal"), "valuesMerge": o.get("valuesMerge"),
                  "releaseName": o.get("releaseName")}
        out.append(HelmChart.from_fields({**gdict, **fields},
                                         f"{kfile}: helmChartInflationGenerator entry {i}"))
    return out

