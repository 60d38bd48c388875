"""What a plugin is handed instead of the build (kustomize api/resmap/resmap.go PluginHelpers):
the loader of the kustomization that configured it, the build's options, that file's path for
messages, and the little state one build shares between its levels."""
from __future__ import annotations

import dataclasses
from typing import List, Optional

from kzgit.build import BuildOptions
from kzgit.loader import Loader

__all__ = ["PluginHelpers", "SharedState"]


@dataclasses.dataclass
class SharedState:
    """State one build shares between its levels."""

    #: helm's --helm-api-versions slice, one for the whole build (see kzgit.plugins.helm.inflate)
    helm_api_versions: Optional[List[str]] = None


@dataclasses.dataclass
class PluginHelpers:
    """resmap.PluginHelpers: what configuring and running a plugin may use."""

    loader: Loader
    options: BuildOptions
    kfile: str
    shared: SharedState
