"""The registry of ``kzgit lint``'s rules: one module per rule (as yamllint keeps
``yamllint/rules/<rule>.py``), listed here in the order the reports and the docs show them.

Each rule module holds, in one place:

- ``ID``: the rule id (findings, ``[lint]`` keys, ignore comments);
- ``SEVERITY``: its default severity (``error``, ``warning`` or ``off``);
- ``SUMMARY``: one line saying what it finds (SARIF's rule description, the docs' table);
- ``RAISED_BY_WARNINGS_AS_ERRORS``: whether ``warnings-as-errors = true`` raises it to an error
  (the rules that report kustomize's own warnings);
- its docstring: the rule's documentation, with an example (``docs/lint-rules.md`` is generated
  from it by ``scripts/gen_docs.py``);
- the check: ``check(kfile, version, origin)`` for the rules that read a kustomization as written
  (``KIND = "file"``), or the functions that turn what a build observed into findings
  (``KIND = "build"``, called by :mod:`kzgit.lint.run`); ``unreferenced-file`` reads the
  dependency graph (``KIND = "tree"``).

The ``[lint]`` configuration keys, their defaults and the docs' rule reference are derived from
these modules (:mod:`kzgit.lint.policy`); nothing else lists the rules.
"""
from __future__ import annotations

from kzgit.lint.rules import (deprecated_field, duplicate_entry, needs_newer_kustomize,
                              patch_matches_nothing, render_error, replacement_matches_nothing,
                              unpinned_chart, unreferenced_file, warnings)

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from types import ModuleType
    from typing import Dict, Tuple

ERROR, WARNING, OFF = "error", "warning", "off"
SEVERITIES = (ERROR, WARNING, OFF)

#: The rule modules, in the order reports and docs list them.
RULES: Tuple[ModuleType, ...] = (
    deprecated_field, warnings, patch_matches_nothing, replacement_matches_nothing,
    unreferenced_file, unpinned_chart, needs_newer_kustomize, duplicate_entry, render_error,
)
#: Rule id -> its module.
BY_ID: Dict[str, ModuleType] = {m.ID: m for m in RULES}
#: Rule id -> its default severity.
DEFAULTS: Dict[str, str] = {m.ID: m.SEVERITY for m in RULES}
#: Rule id -> what it finds, one line.
SUMMARIES: Dict[str, str] = {m.ID: m.SUMMARY for m in RULES}
#: The rules that read a kustomization file as written, in order.
FILE_RULES: Tuple[ModuleType, ...] = tuple(m for m in RULES if m.KIND == "file")
