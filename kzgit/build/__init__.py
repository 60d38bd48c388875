"""The build: ``build(path, options) -> BuildResult``, kustomize v5.5.0's pipeline."""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, List, Optional

from kzgit.loader import ROOT_ONLY, FileSystem
from kzgit.resource import Resource

if TYPE_CHECKING:  # pragma: no cover
    from kzgit.build.cache import BuildCache
    from kzgit.config import SandboxSettings


@dataclasses.dataclass
class BuildOptions:
    """The knobs of ``kustomize build`` that kzgit honours."""

    load_restrictor: str = ROOT_ONLY
    reorder: Optional[str] = None            # "legacy" | "none" | None (kustomization decides)
    enable_alpha_plugins: bool = False
    enable_exec: bool = False
    enable_helm: bool = False
    helm_command: str = "helm"
    # --helm-api-versions / --helm-kube-version / --helm-debug override every chart's own
    # settings (HelmChartInflationGenerator.go Config)
    helm_api_versions: List[str] = dataclasses.field(default_factory=list)
    helm_kube_version: str = ""
    helm_debug: bool = False
    # container functions run as the invoking uid:gid instead of nobody (runfn.go getUIDGID)
    as_current_user: bool = False
    enable_managedby_label: bool = False
    plugin_timeout: float = 60.0
    network: bool = False
    env: List[str] = dataclasses.field(default_factory=list)
    mounts: List[str] = dataclasses.field(default_factory=list)
    offline: bool = False
    fs: Optional[FileSystem] = None          # default: the disk
    # shared by the builds of one run to reuse bases (kzgit.build.cache); None: no reuse
    cache: Optional["BuildCache"] = None
    # how exec plugins, KRM exec functions and helm are confined (kzgit.sandbox); None: defaults
    sandbox: Optional["SandboxSettings"] = None


@dataclasses.dataclass
class BuildResult:
    resources: List[Resource]
    warnings: List[str] = dataclasses.field(default_factory=list)

    def to_yaml(self) -> str:
        from kzgit.yamlio import dump_documents
        return dump_documents([r.obj for r in self.resources])


def build(path: str, options: Optional[BuildOptions] = None) -> BuildResult:
    """Render the kustomization at ``path``; raises :class:`kzgit.errors.KzgitError` on bad input."""
    from kzgit.build.pipeline import run
    return run(path, options or BuildOptions())
