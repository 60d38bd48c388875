"""kzgit: a kustomize-compatible build engine and git hooks that keep kustomizations honest."""
from kzgit.builder import BuildOptions, BuildResult, build
from kzgit.errors import BuildError, KzgitError, UsageError

__all__ = ["build", "BuildOptions", "BuildResult", "KzgitError", "BuildError", "UsageError"]
__version__ = "0.1.0"
