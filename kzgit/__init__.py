"""kzgit: a kustomize-compatible build engine and git hooks that keep kustomizations honest."""
from kzgit._version import __version__
from kzgit.builder import BuildOptions, BuildResult, build
from kzgit.errors import BuildError, KzgitError, UsageError

__all__ = ["__version__", "build", "BuildOptions", "BuildResult", "KzgitError", "BuildError", "UsageError"]
