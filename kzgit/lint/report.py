"""Output formats of a lint run: text, JSON (versioned), GitHub annotations, SARIF 2.1.0.

Pure functions from a report to a string; the CLI prints them.
"""
from __future__ import annotations

import json

from kzgit.lint import ERROR

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict
    from kzgit.lint.run import LintReport

FORMATS = ("text", "json", "github", "sarif")
JSON_REPORT_VERSION = 1


def text(report: LintReport) -> str:
    """One line per finding: ``file:line: severity: field: message [rule]``."""
    return "".join(str(f) + "\n" for f in report.findings)


def summary(report: LintReport) -> str:
    """One line counting the findings (text output, when there are any, or any was silenced:
    a run that silenced findings says so rather than nothing)."""
    errors = len(report.errors)
    warnings = len(report.findings) - errors
    kusts, roots = len(report.kustomizations), len(report.roots)
    silenced = f", {report.silenced} silenced" if report.silenced else ""
    return (f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning"
            f"{'s' if warnings != 1 else ''}{silenced} in {kusts} kustomization{'s' if kusts != 1 else ''} "
            f"({roots} root{'s' if roots != 1 else ''} built)\n")


def to_json(report: LintReport) -> str:
    """The JSON report (``version`` 1; docs/commands/lint.md documents every field)."""
    errors = len(report.errors)
    doc: Dict[str, Any] = {
        "version": JSON_REPORT_VERSION,
        "ok": errors == 0,
        "summary": {"roots": len(report.roots), "kustomizations": len(report.kustomizations),
                    "errors": errors, "warnings": len(report.findings) - errors,
                    "silenced": report.silenced},
        "findings": [f.to_json() for f in report.findings],
    }
    return json.dumps(doc, indent=2) + "\n"


def _gh_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(s: str) -> str:
    return _gh_data(s).replace(":", "%3A").replace(",", "%2C")


def github(report: LintReport) -> str:
    """GitHub Actions workflow commands: an annotation on the file and line."""
    out = []
    for f in report.findings:
        level = "error" if f.severity == ERROR else "warning"
        props = [f"file={_gh_prop(f.file)}"] + ([f"line={f.line}"] if f.line else [])
        props.append(f"title={_gh_prop('kzgit lint: ' + f.rule)}")
        field = f"{f.field}: " if f.field else ""
        out.append(f"::{level} {','.join(props)}::{_gh_data(field + f.message)}\n")
    return "".join(out)


def sarif(report: LintReport) -> str:
    """A SARIF 2.1.0 log (:mod:`kzgit.sarif`): every rule, one result per finding."""
    from kzgit import sarif as s   # start-up: only a SARIF report needs it
    from kzgit.lint.rules import RULES   # start-up: as above
    rules = [s.Rule(m.ID, m.SUMMARY, m.SEVERITY) for m in RULES]
    results = [s.Result(f.rule, s.level(f.severity),
                        (f"{f.field}: " if f.field else "") + f.message, f.file, f.line)
               for f in report.findings]
    return s.dumps(s.log("kzgit lint", s.tool_version(), rules, results))


def render(report: LintReport, fmt: str) -> str:
    return {"text": text, "json": to_json, "github": github, "sarif": sarif}[fmt](report)
