"""Output formats of a validation run: text, JSON (versioned), GitHub annotations, JUnit XML,
SARIF 2.1.0 (:mod:`kzgit.sarif`).

Pure functions from a report to a string; the CLI prints them.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, List

from kzgit.validate import ERROR, Finding

if TYPE_CHECKING:  # pragma: no cover
    from typing import Protocol

    class Report(Protocol):
        """What the formats read of a run's report (``kzgit.hooks.validate.Report``, which is
        above this package: named by its shape, not imported)."""
        findings: List[Finding]
        roots: List[str]
        resources: Dict[str, int]
        kubernetes_version: str
        strict: bool
        silenced: int

        @property
        def errors(self) -> List[Finding]: ...

FORMATS = ("text", "json", "github", "junit", "sarif")
JSON_REPORT_VERSION = 1


def text(report: "Report") -> str:
    """One line per finding: ``ROOT: Kind/namespace/name: /path: message (file:line)``; and a
    line counting what ``# kzgit: ignore[...]`` comments silenced, if any."""
    out = "".join(str(f).replace("\n", "\n    ") + "\n" for f in report.findings)
    if report.silenced:
        out += f"{report.silenced} finding{'s' if report.silenced != 1 else ''} silenced by ignore comments\n"
    return out


def _finding_json(f: Finding) -> Dict[str, Any]:
    return {"root": f.root, "severity": f.severity, "code": f.code,
            "resource": {"apiVersion": f.api_version, "kind": f.kind,
                         "namespace": f.namespace, "name": f.name},
            "path": f.path, "message": f.message, "file": f.file, "line": f.line}


def to_json(report: "Report") -> str:
    """The JSON report (``version`` 1; docs/commands/validate.md documents every field)."""
    errors = len(report.errors)
    doc = {
        "version": JSON_REPORT_VERSION,
        "kubernetesVersion": report.kubernetes_version,
        "strict": report.strict,
        "valid": errors == 0,
        "summary": {"roots": len(report.roots), "resources": sum(report.resources.values()),
                    "errors": errors, "warnings": len(report.findings) - errors,
                    "silenced": report.silenced},
        "roots": [{"root": r, "rendered": r in report.resources,
                   "resources": report.resources.get(r, 0)} for r in report.roots],
        "findings": [_finding_json(f) for f in report.findings],
    }
    return json.dumps(doc, indent=2) + "\n"


def _gh_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(s: str) -> str:
    return _gh_data(s).replace(":", "%3A").replace(",", "%2C")


def github(report: "Report") -> str:
    """GitHub Actions workflow commands: an annotation on the source file and line."""
    out = []
    for f in report.findings:
        level = "error" if f.severity == ERROR else "warning"
        props = []
        if f.file:
            props.append(f"file={_gh_prop(f.file)}")
            if f.line:
                props.append(f"line={f.line}")
        props.append(f"title={_gh_prop('kzgit validate: ' + f.root)}")
        where = f"{f.resource}: " if f.kind else ""
        path = f"{f.path}: " if f.path else ""
        out.append(f"::{level} {','.join(props)}::{_gh_data(where + path + f.message)}\n")
    return "".join(out)


def junit(report: "Report") -> str:
    """JUnit XML: a suite per root, a case per resource with findings, failures for errors."""
    from xml.sax.saxutils import escape, quoteattr   # start-up: it imports urllib.request
    suites: List[str] = []
    total = failures = 0
    for root in report.roots:
        mine = [f for f in report.findings if f.root == root]
        cases: Dict[str, List[Finding]] = {}
        for f in mine:
            cases.setdefault(f.resource if f.kind else "render", []).append(f)
        n = max(report.resources.get(root, 0), len(cases)) or 1
        body = []
        failed = 0
        for name, fs in cases.items():
            errs = [f for f in fs if f.severity == ERROR]
            inner = ""
            if errs:
                failed += 1
                msg = "; ".join(f"{f.path}: {f.message}" if f.path else f.message for f in errs)
                detail = "\n".join(str(f) for f in errs)
                inner += f"<failure message={quoteattr(msg)} type=\"validation\">{escape(detail)}</failure>"
            warns = [f for f in fs if f.severity != ERROR]
            if warns:
                inner += f"<system-out>{escape(chr(10).join(str(f) for f in warns))}</system-out>"
            body.append(f"    <testcase classname={quoteattr(root)} name={quoteattr(name)}>{inner}</testcase>\n")
        passed = n - len(cases)
        if passed > 0:
            body.append(f"    <testcase classname={quoteattr(root)} "
                        f"name={quoteattr(f'{passed} other resources valid')}/>\n")
            cases_count = len(cases) + 1
        else:
            cases_count = len(cases)
        total += cases_count
        failures += failed
        suites.append(f"  <testsuite name={quoteattr(root)} tests=\"{cases_count}\" failures=\"{failed}\" "
                      f"errors=\"0\">\n{''.join(body)}  </testsuite>\n")
    return (f"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"kzgit validate\" "
            f"tests=\"{total}\" failures=\"{failures}\">\n{''.join(suites)}</testsuites>\n")


#: What each finding code means, one line (SARIF rule descriptions; docs/commands/validate.md's table).
CODES = {
    "type": "a value of the wrong type", "enum": "a value outside the allowed ones",
    "required": "a required field is missing", "unknown-field": "a field the schema does not declare",
    "oneOf": "matches not exactly one alternative of the schema", "anyOf": "matches no alternative",
    "not": "matches what the schema forbids", "pattern": "a string not matching its pattern",
    "bound": "a value, length or count out of bounds", "multipleOf": "not a multiple of the step",
    "uniqueItems": "a list with duplicate items", "false": "a field the schema forbids",
    "format": "a string not in its format", "duplicate": "a duplicate key in a list-type set or map",
    "not-served": "an API version the Kubernetes release does not serve",
    "unknown-kind": "a kind no schema knows in a group Kubernetes owns",
    "missing-schema": "a kind no schema source knows", "deprecated": "a deprecated API version",
    "build": "a root that does not render", "yaml": "input that is not YAML",
}


def sarif(report: "Report") -> str:
    """A SARIF 2.1.0 log: one result per finding, its rule the finding's code, located on the
    source file and line it points at (else the root's directory)."""
    from kzgit import sarif as s   # start-up: only a SARIF report needs it
    results = []
    for f in report.findings:
        where = f"{f.resource}: " if f.kind else ""
        path = f"{f.path}: " if f.path else ""
        results.append(s.Result(f.code or "invalid", s.level(f.severity),
                                f"{f.root}: {where}{path}{f.message}", f.file or f.root or None,
                                f.line if f.file else None))
    rules = [s.Rule(code, CODES.get(code, f"kzgit validate: {code}"),
                    "warning" if code in ("deprecated", "missing-schema") else "error")
             for code in sorted({r.rule_id for r in results})]
    return s.dumps(s.log("kzgit validate", s.tool_version(), rules, results))


def render(report: "Report", fmt: str) -> str:
    return {"text": text, "json": to_json, "github": github, "junit": junit, "sarif": sarif}[fmt](report)
