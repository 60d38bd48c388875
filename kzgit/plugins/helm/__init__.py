"""HelmChartInflationGenerator: ``helmCharts`` / ``helmGlobals`` and the builtin plugin config.

kustomize v5.5.0 (api/v0.18.0) sources reproduced here:

* ``api/internal/builtins/HelmChartInflationGenerator.go`` — Config (validateArgs), Generate;
* ``api/types/helmchartargs.go`` — the fields, ``AsHelmArgs`` (the ``helm template`` argv) and
  ``SplitHelmParameters`` (the deprecated ``helmChartInflationGenerator`` field);
* ``api/types/kustomization.go FixKustomization`` — deprecated entries are appended to
  ``helmCharts``; their chart/config homes fill ``helmGlobals`` only when it is absent;
* ``api/internal/target/kusttarget_configplugin.go`` — one generator per ``helmCharts`` entry,
  configured with ``helmGlobals`` + the entry; all of a level's charts are configured before any
  of them runs.

For every chart, in a fresh ``$TMPDIR/kustomize-helm-*`` directory (removed afterwards):

1. ``helm version -c --short`` must report major version 3;
2. when ``<chartHome>/<name>`` is not a directory and ``repo`` is set:
   ``helm pull --untar --untardir <dir> (oci://repo/name | --repo R name) [--version V]``
   (kustomize's ``<dir>`` is the chart home, ``<chartHome>/<name>-<version>`` with both
   ``version`` and ``repo``; kzgit's is a directory in the temp dir, see below);
3. the values file (the chart's ``values.yaml`` unless ``valuesFile``) is read through the load
   restrictor, merged with ``valuesInline`` (``valuesMerge``: override | merge | replace) and
   written to ``<tmp>/<name>-kustomize-values.yaml``;
4. ``helm template <release|--generate-name> <chartHome>/<name> [--namespace N]
   [--name-template T] -f <tmp values> [-f <root>/<additional>...] [--api-versions A...]
   [--kube-version K] [--include-crds] [--skip-tests] [--no-hooks] [--debug]``;
5. its stdout is read as resources.

Every helm process runs with ``HELM_CONFIG_HOME=<configHome>`` (default ``<tmp>/helm``),
``HELM_CACHE_HOME=<configHome>/.cache``, ``HELM_DATA_HOME=<configHome>/.data`` added to the
inherited environment, in kzgit's working directory (kustomize sets no ``cmd.Dir``), under
:mod:`kzgit.proc` (own process group, the plugin timeout, killed with kzgit) —
kustomize itself has no timeout.

Deliberate differences (all make kzgit refuse or contain something kustomize would do):

* a chart ``name`` containing ``/`` is refused: kustomize joins it into the temp values path,
  which fails for ``a/b`` and escapes the temp directory for ``../x``;
* a chart missing from ``chartHome`` is pulled into the build's temp directory, not into
  ``chartHome``: a build never writes into the source tree (kustomize writes the chart there,
  or wherever an absolute ``chartHome`` points), and a remote base's clone is a shared cache;
* a file system other than the disk (``kzgit diff`` reading git objects) is refused: helm reads
  charts by path.

Known difference: when the values
embed Kubernetes objects (an ``apiVersion``/``kind`` with a schema), kyaml merges their
associative lists appending new elements, kzgit's merge prepends them.
"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

from kzgit.kustomization import Kustomization
from kzgit.loader import mark_uncacheable
from kzgit.plugins.helm.argv import helm_argv, pull_argv
from kzgit.versions import V5_8
from kzgit.plugins.helm.chart import KIND, HelmChart, chart_plugin, charts_of, decode_chart
from kzgit.plugins.helm.inflate import Inflation
from kzgit.plugins.helpers import PluginHelpers
from kzgit.resource import Resource


__all__ = ["HelmChart", "Inflation", "generate", "generate_from_config", "charts_of", "helm_argv",
           "pull_argv"]


def _shared_api_versions(h: PluginHelpers) -> List[str]:
    """The build's one copy of --helm-api-versions (kustomize's HelmConfig.ApiVersions slice)."""
    shared = h.shared.helm_api_versions
    if shared is None:
        shared = list(h.options.helm_api_versions)
        h.shared.helm_api_versions = shared
    return shared


def _run_all(charts: List[HelmChart], h: PluginHelpers) -> List[Tuple[HelmChart, List[Resource]]]:
    # a chart's output depends on helm and on what it pulls, none of it content-addressed:
    # this build (only this one: enable-helm leaves every other root cached) is not stored
    if charts:
        mark_uncacheable(f"{h.kfile} renders a helm chart")
    # configureBuiltinGenerators configures every chart of the level before any of them runs
    shared = _shared_api_versions(h)
    inflations = [Inflation(c, h.loader, h.options, shared) for c in charts]
    for inf in inflations:
        inf.configure()
    out = [(inf.c, inf.generate()) for inf in inflations]
    if h.options.kustomize_version >= V5_8:
        # markHelmGeneratedResources (kustomize 4e75138d2): the NamespaceTransformer skips them
        for _chart, resources in out:
            for r in resources:
                r.helm_generated = True
    return out


def generate(k: Kustomization, kfile: str, h: PluginHelpers, default_namespace: str = ""
             ) -> List[Resource]:
    """The resources of the ``helmCharts`` (and deprecated ``helmChartInflationGenerator``)
    entries of one kustomization, chart after chart; a chart without a namespace renders into
    ``default_namespace`` when one is given (5.8)."""
    charts = charts_of(k, kfile)
    for c in charts:
        if not c.namespace and default_namespace:
            # kusttarget_configplugin.go: the kustomization's namespace, else the nearest
            # ancestor's (kustomize 4e75138d2, 7e4579927; 5.8.1)
            c.namespace = default_namespace
    out: List[Resource] = []
    for _chart, resources in _run_all(charts, h):
        out.extend(resources)
    return out


def generate_from_config(cfg: Dict[str, Any], h: PluginHelpers) -> List[Resource]:
    """A ``kind: HelmChartInflationGenerator`` config from ``generators:`` (apiVersion builtin).

    The config's own fields are the chart's and ``chartHome``/``configHome`` (yaml.Unmarshal
    into the plugin: case-insensitive, unknown fields ignored); the kustomization's
    ``helmGlobals`` do not apply.
    """
    md = cfg.get("metadata") if isinstance(cfg.get("metadata"), dict) else {}
    where = f"{h.kfile}: generator {KIND} '{(md or {}).get('name', '')}'"
    fields = {k: v for k, v in cfg.items() if k not in ("apiVersion", "kind", "metadata")}
    chart = HelmChart.from_fields(decode_chart(fields, chart_plugin(h.options.kustomize_version),
                                               where, False), where)
    return _run_all([chart], h)[0][1]
