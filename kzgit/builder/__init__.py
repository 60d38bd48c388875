"""The build: ``build(path, options) -> BuildResult``, kustomize's pipeline as the release
``options.kustomize_version`` selects (:mod:`kzgit.versions`)."""
from __future__ import annotations

from kzgit.options import BuildOptions, BuildResult

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Optional

__all__ = ["BuildOptions", "BuildResult", "build"]


def build(path: str, options: Optional[BuildOptions] = None) -> BuildResult:
    """Render the kustomization at ``path``; raises :class:`kzgit.errors.KzgitError` on bad input."""
    from kzgit.builder.pipeline import run   # cycle: the pipeline imports this package
    return run(path, options or BuildOptions())
