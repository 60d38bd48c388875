"""``kzgit lint``: what kustomize lets pass, as findings with stable rule ids.

The rules (each documented in the README, section Lint, with an example):

- ``deprecated-field``: a field kustomize warns about as deprecated, in kustomize's words, with
  the ``kzgit fix`` that migrates it;
- ``warnings``: anything else a build of a root warns about;
- ``patch-matches-nothing``: a ``patches``/``patchesJson6902`` target selecting no resource;
- ``replacement-matches-nothing``: a ``replacements`` target ``select`` selecting no resource;
- ``unreferenced-file``: a YAML file in a kustomization's tree that nothing references;
- ``unpinned-chart``: a ``helmCharts`` entry with a repository and no version (or a range);
- ``needs-newer-kustomize``: a field the pinned ``kustomize-version`` does not read;
- ``duplicate-entry``: a resource, component or patch listed twice;
- ``render-error``: a root that does not render (nothing else can be checked there).

Each rule has a default severity (:data:`kzgit.config.LINT_RULES`) that ``[lint]`` in the
configuration changes or turns ``off``; a ``# kzgit: ignore[RULE,...]`` comment on a finding's
line silences that finding (:mod:`kzgit.lint.run`).  :mod:`kzgit.lint.files` checks
kustomization files as written, :mod:`kzgit.lint.builds` what the builds of the roots
observe (through the render cache), :mod:`kzgit.lint.run` chooses what to check from the
dependency graph, :mod:`kzgit.lint.report` formats the findings.  Nothing here prints.
"""
from __future__ import annotations

from kzgit.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, Optional

ERROR, WARNING, OFF = "error", "warning", "off"

#: Rule id -> what it finds, one line (the README and SARIF rules say the same).
RULES: Dict[str, str] = {
    "deprecated-field": "a kustomization field kustomize deprecates (its own warning)",
    "warnings": "a warning kustomize prints while building a root",
    "patch-matches-nothing": "a patch target that selects no resource",
    "replacement-matches-nothing": "a replacement target that selects no resource",
    "unreferenced-file": "a YAML file in a kustomization's tree that no kustomization references",
    "unpinned-chart": "a helm chart from a repository without a pinned version",
    "needs-newer-kustomize": "a field the pinned Kustomize release does not support",
    "duplicate-entry": "the same resource, component or patch listed twice",
    "render-error": "a root that does not render",
}


class LintFinding(Record):
    """One finding: ``file`` repo-relative, ``line`` 1-based (None: the whole file), ``field``
    the kustomization field it concerns (``patches[2].target``), ``root`` the root whose build
    observed it (rules that read files alone: '')."""

    __slots__ = ("rule", "severity", "file", "line", "field", "message", "root")

    def __init__(self, rule: str, severity: str, file: str, line: Optional[int], field: str,
                 message: str, root: str = "") -> None:
        self.rule = rule
        self.severity = severity
        self.file = file
        self.line = line
        self.field = field
        self.message = message
        self.root = root

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file

    def __str__(self) -> str:
        field = f"{self.field}: " if self.field else ""
        msg = self.message.replace("\n", "\n    ")
        return f"{self.where}: {self.severity}: {field}{msg} [{self.rule}]"

    def to_json(self) -> Dict[str, Any]:
        return {"rule": self.rule, "severity": self.severity, "file": self.file, "line": self.line,
                "field": self.field, "message": self.message, "root": self.root}

    def key(self) -> Any:
        """What makes two findings the same one (several roots observing one patch)."""
        return (self.rule, self.file, self.line, self.field, self.message)
