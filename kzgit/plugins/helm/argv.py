"""The helm command lines kustomize runs (types.HelmChart.AsHelmArgs,
HelmChartInflationGenerator.pullCommand)."""
from __future__ import annotations

import os
from typing import List

from kzgit.plugins.helm.chart import HelmChart

__all__ = ["go_join", "helm_argv", "pull_argv"]


def go_join(*parts: str) -> str:
    """Go filepath.Join: join non-empty parts with '/', then Clean (an absolute later part does
    *not* restart the path, unlike os.path.join)."""
    kept = [p for p in parts if p]
    if not kept:
        return ""
    return os.path.normpath("/".join(kept)).replace("//", "/")


def helm_argv(chart: HelmChart, abs_chart_home: str, values_path: str) -> List[str]:
    """types.HelmChart.AsHelmArgs, with the temp values file in place of ``valuesFile``."""
    args = ["template"]
    args += [chart.release_name] if chart.release_name else ["--generate-name"]
    if chart.name:
        args.append(go_join(abs_chart_home, chart.name))
    if chart.namespace:
        args += ["--namespace", chart.namespace]
    if chart.name_template:
        args += ["--name-template", chart.name_template]
    if values_path:
        args += ["-f", values_path]
    for f in chart.additional_values_files:
        args += ["-f", f]
    for a in chart.api_versions:
        args += ["--api-versions", a]
    if chart.kube_version:
        args += ["--kube-version", chart.kube_version]
    if chart.include_crds:
        args.append("--include-crds")
    if chart.skip_tests:
        args.append("--skip-tests")
    if chart.skip_hooks:
        args.append("--no-hooks")
    if chart.debug:
        args.append("--debug")
    if chart.devel:   # helmCharts[].devel (5.7, kustomize c5f69b002)
        args.append("--devel")
    return args


def pull_argv(chart: HelmChart, abs_chart_home: str) -> List[str]:
    """HelmChartInflationGenerator.pullCommand."""
    args = ["pull", "--untar", "--untardir", abs_chart_home]
    if chart.repo.startswith("oci://"):
        repo = chart.repo[:-1] if chart.repo.endswith("/") else chart.repo  # strings.TrimSuffix
        args.append(repo + "/" + chart.name)
    else:
        if chart.repo:
            args += ["--repo", chart.repo]
        args.append(chart.name)
    if chart.version:
        args += ["--version", chart.version]
    if chart.devel:   # pre-releases too (5.7, kustomize c5f69b002)
        args.append("--devel")
    return args

