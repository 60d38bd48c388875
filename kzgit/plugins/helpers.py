"""What a plugin is handed instead of the build (kustomize api/resmap/resmap.go PluginHelpers):
the loader of the kustomization that configured it, the build's options, that file's path for
messages, and the little state one build shares between its levels."""
from __future__ import annotations


from kzgit.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import List, Optional
    from kzgit.options import BuildOptions
    from kzgit.loader import Loader

__all__ = ["PluginHelpers", "SharedState"]


class SharedState(Record):
    """State one build shares between its levels."""

    __slots__ = ("helm_api_versions",)

    def __init__(self, helm_api_versions: Optional[List[str]] = None) -> None:
        #: helm's --helm-api-versions slice, one for the whole build (see kzgit.plugins.helm.inflate)
        self.helm_api_versions = helm_api_versions


class PluginHelpers(Record):
    """resmap.PluginHelpers: what configuring and running a plugin may use."""

    __slots__ = ("loader", "options", "kfile", "shared")

    def __init__(self, loader: Loader, options: BuildOptions, kfile: str, shared: SharedState) -> None:
        self.loader = loader
        self.options = options
        self.kfile = kfile
        self.shared = shared
