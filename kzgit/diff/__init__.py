"""``kzgit diff``: the rendered difference a change makes, root by root.

:func:`diff` renders every kustomization root the change between two
revisions affects, at both (from git objects; the working tree from the
disk), and returns a :class:`DiffReport`; :mod:`kzgit.diff.output` prints it
as text or JSON, :mod:`kzgit.diff.github` as GitHub workflow commands and a
Markdown summary.  Nothing here prints or writes into the repository.
"""
from kzgit.diff.compare import DiffOptions, diff
from kzgit.diff.report import (DiffReport, Drift, RenderError, ResourceChange, RootDiff,
                               Side)

__all__ = ["diff", "DiffOptions", "DiffReport", "Drift", "RenderError", "ResourceChange",
           "RootDiff", "Side"]
