"""``kzgit lint``: what kustomize lets pass, as findings with stable rule ids.

The rules are :mod:`kzgit.lint.rules`, one module each (id, default severity, what it finds,
its documentation and its check); ``docs/lint-rules.md`` is generated from them.
:mod:`kzgit.lint.policy` gives each rule its severity in a repository (``[lint]``,
``warnings-as-errors``); a ``# kzgit: ignore[RULE,...]`` comment on a finding's line silences
that finding (:mod:`kzgit.lint.run`).  :mod:`kzgit.lint.kfile` reads kustomization files as
written, :mod:`kzgit.lint.builds` what the builds of the roots observe (through the render
cache), :mod:`kzgit.lint.run` chooses what to check from the dependency graph,
:mod:`kzgit.lint.report` formats the findings.  Nothing here prints.
"""
from __future__ import annotations

from kzgit.lint.rules import ERROR, OFF, WARNING
from kzgit.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, Optional

__all__ = ["ERROR", "OFF", "WARNING", "LintFinding"]


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
