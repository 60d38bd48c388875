"""``kzgit localize`` and ``kzgit rebuild``: self-contained copies of kustomizations.

Implements the kustomize "Localize Command" proposal
(``proposals/22-04-localize-command.md``, kubernetes-sigs/kustomize api/v0.18.0)
including what upstream's alpha never shipped (KRM exec binaries, absolute
references, comment-preserving rewrites), plus a provenance lock file and
rebuilding a copy when its original changes.  Library code never prints:
results carry ``warnings`` and ``messages`` for the CLI.
"""
from kzgit.localize._api import LocalizeResult, RebuildResult, find_copies, localize, rebuild
from kzgit.localize.errors import LocalizeError, PinMovedError, VerificationError
from kzgit.localize.lock import LOCK_FILE_NAME, check_copy, read_lock

__all__ = ["localize", "rebuild", "check_copy", "find_copies", "read_lock", "LocalizeResult",
           "RebuildResult", "LocalizeError", "PinMovedError", "VerificationError", "LOCK_FILE_NAME"]
