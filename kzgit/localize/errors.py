"""Errors of ``kzgit localize`` and ``kzgit rebuild``; ``str()`` is the user's message."""
from __future__ import annotations

from kzgit.errors import BuildError


class LocalizeError(BuildError):
    """Localization refused or failed (the proposal's error cases, exit code 1)."""


class VerificationError(LocalizeError):
    """``kustomize build`` of the target and of the copy differ (the proposal's last error case)."""


class PinMovedError(LocalizeError):
    """``kzgit rebuild``: a ref now resolves to another commit than the lock file records."""
