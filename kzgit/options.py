"""The build's options and result: ``BuildOptions`` (the knobs of ``kustomize build``) and
``BuildResult``.

They sit below both the builder and the plugins (the plugins receive the options), as kustomize
keeps its option types (``api/krusty/options.go``, ``api/types``) below ``krusty`` and
``internal/plugins``; ``kzgit.builder`` and ``kzgit`` re-export them.
"""
from __future__ import annotations

from kzgit.loader import ROOT_ONLY
from kzgit.record import Record
from kzgit.versions import DEFAULT, parse

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, List, Optional, Tuple
    from kzgit.config import SandboxSettings
    from kzgit.loader import FileSystem
    from kzgit.resource import Resource


class BuildOptions(Record):
    """The knobs of ``kustomize build`` that kzgit honours.

    A :class:`~kzgit.record.Record`, not a dataclass: every ``kzgit build`` makes one.
    """

    __slots__ = ("load_restrictor", "reorder", "enable_alpha_plugins", "enable_exec",
                 "enable_helm", "helm_command", "helm_api_versions", "helm_kube_version",
                 "helm_debug", "as_current_user", "enable_managedby_label", "plugin_timeout",
                 "network", "env", "mounts", "offline", "fs", "cache", "sandbox",
                 "kustomize_version", "kustomize_version_origin")

    def __init__(
        self,
        load_restrictor: str = ROOT_ONLY,
        reorder: Optional[str] = None,            # "legacy" | "none" | None (kustomization decides)
        enable_alpha_plugins: bool = False,
        enable_exec: bool = False,
        enable_helm: bool = False,
        helm_command: str = "helm",
        # --helm-api-versions / --helm-kube-version / --helm-debug override every chart's own
        # settings (HelmChartInflationGenerator.go Config)
        helm_api_versions: Optional[List[str]] = None,
        helm_kube_version: str = "",
        helm_debug: bool = False,
        # container functions run as the invoking uid:gid instead of nobody (runfn.go getUIDGID)
        as_current_user: bool = False,
        enable_managedby_label: bool = False,
        plugin_timeout: float = 60.0,
        network: bool = False,
        env: Optional[List[str]] = None,
        mounts: Optional[List[str]] = None,
        offline: bool = False,
        fs: Optional[FileSystem] = None,            # default: the disk
        # shared by the builds of one run to reuse bases: a kzgit.builder.cache.BuildCache,
        # named here only in words since these options sit below the builder; None: no reuse
        cache: Optional[Any] = None,
        # how exec plugins, KRM exec functions and helm are confined (kzgit.sandbox); None: defaults
        sandbox: Optional[SandboxSettings] = None,
        # the Kustomize release to render as, (5, 8, 1); and where that choice came from, for
        # the line an error leads with when a field is newer than it (kzgit.versions)
        kustomize_version: Optional[Tuple[int, int, int]] = None,
        kustomize_version_origin: str = "the default",
    ) -> None:
        # grouped as the flags are: what may be loaded and how the output is ordered
        self.load_restrictor, self.reorder = load_restrictor, reorder
        # which plugins may run, and for how long
        self.enable_alpha_plugins, self.enable_exec, self.enable_helm = (
            enable_alpha_plugins, enable_exec, enable_helm)
        self.plugin_timeout, self.sandbox = plugin_timeout, sandbox
        # helm (a list default is fresh per instance, as a dataclass's default_factory)
        self.helm_command, self.helm_kube_version, self.helm_debug = helm_command, helm_kube_version, helm_debug
        self.helm_api_versions: List[str] = [] if helm_api_versions is None else helm_api_versions
        # functions: their user, network, environment and mounts
        self.as_current_user, self.network = as_current_user, network
        self.env: List[str] = [] if env is None else env
        self.mounts: List[str] = [] if mounts is None else mounts
        # the rest: the label, remote references, where files are read, bases shared in a run
        self.enable_managedby_label, self.offline, self.fs, self.cache = (
            enable_managedby_label, offline, fs, cache)
        self.kustomize_version = parse(DEFAULT) if kustomize_version is None else kustomize_version
        self.kustomize_version_origin = kustomize_version_origin


class BuildResult(Record):
    """The resources a build emits, in output order, its warnings, and its notes (what ran
    how, which ``kzgit build -v`` prints)."""

    __slots__ = ("resources", "warnings", "notes")

    def __init__(self, resources: List[Resource], warnings: Optional[List[str]] = None,
                 notes: Optional[List[str]] = None) -> None:
        self.resources = resources
        self.warnings: List[str] = [] if warnings is None else warnings
        self.notes: List[str] = [] if notes is None else notes

    def to_yaml(self) -> str:
        from kzgit.yamlio import dump_documents   # start-up: only the builds that need it pay for it
        return dump_documents([r.obj for r in self.resources])
