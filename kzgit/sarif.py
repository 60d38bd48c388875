"""SARIF 2.1.0 logs of kzgit's checking commands (``kzgit lint`` and ``kzgit validate``,
``--format sarif``), for GitHub code scanning and other SARIF viewers.

One run per log, whose tool driver lists the rules the results use; each result names its
rule, its level (``error``, ``warning``, ``note``) and a physical location: the source file by
a repository-relative URI (``uriBaseId`` ``%SRCROOT%``, the repository's top, as GitHub's upload
resolves it against the checkout) and its line when known, so that code scanning shows the
finding on the pull request's file.  The shape follows the OASIS SARIF 2.1.0 schema
(``sarif-schema-2.1.0.json``, docs.oasis-open.org/sarif/sarif/v2.1.0); ``tests/test_sarif.py``
validates logs against it.

Pure functions from records to a string; the CLI prints it.
"""
from __future__ import annotations

import json

from kzgit.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, Iterable, List, Optional

VERSION = "2.1.0"
SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
LEVELS = ("error", "warning", "note")


class Rule(Record):
    """A rule of the tool: a stable ``id``, one line saying what it finds, its default level."""

    __slots__ = ("id", "description", "level", "help")

    def __init__(self, id: str, description: str, level: str = "error", help: str = "") -> None:
        self.id = id
        self.description = description
        self.level = level
        self.help = help   # a longer text (markdown-free), when there is one


class Result(Record):
    """One finding: its rule, level, message and where (``uri`` repository-relative)."""

    __slots__ = ("rule_id", "level", "message", "uri", "line")

    def __init__(self, rule_id: str, level: str, message: str, uri: Optional[str] = None,
                 line: Optional[int] = None) -> None:
        self.rule_id = rule_id
        self.level = level
        self.message = message
        self.uri = uri
        self.line = line


def level(severity: str) -> str:
    """SARIF's level for a kzgit severity (``error``, ``warning``; anything else a note)."""
    return severity if severity in ("error", "warning") else "note"


def _uri(path: str) -> str:
    """A repository-relative path as a relative URI reference (RFC 3986: ``%`` and spaces
    escaped, ``/`` kept)."""
    from urllib.parse import quote   # start-up: only a SARIF report needs it
    return quote(path.replace("\\", "/").lstrip("/"), safe="/-._~!$&'()*+,;=:@")


def _result(r: Result, index: Dict[str, int]) -> Dict[str, Any]:
    out: Dict[str, Any] = {"ruleId": r.rule_id, "level": r.level, "message": {"text": r.message or r.rule_id}}
    if r.rule_id in index:
        out["ruleIndex"] = index[r.rule_id]
    if r.uri:
        phys: Dict[str, Any] = {"artifactLocation": {"uri": _uri(r.uri), "uriBaseId": SRCROOT}}
        if r.line and r.line >= 1:
            phys["region"] = {"startLine": r.line}
        out["locations"] = [{"physicalLocation": phys}]
    return out


def log(tool: str, version: str, rules: Iterable[Rule], results: Iterable[Result]) -> Dict[str, Any]:
    """The SARIF log (a JSON-able mapping) of one run of ``tool``: the rules the results use,
    in the order given, rules no result uses left out; a result's rule missing from
    ``rules`` is added with its id as its description."""
    results = list(results)
    used = {r.rule_id for r in results}
    listed: List[Rule] = [r for r in rules if r.id in used]
    known = {r.id for r in listed}
    for res in results:
        if res.rule_id not in known:
            listed.append(Rule(res.rule_id, res.rule_id, res.level))
            known.add(res.rule_id)
    index = {r.id: i for i, r in enumerate(listed)}
    driver_rules = []
    for r in listed:
        rule: Dict[str, Any] = {"id": r.id, "name": _name(r.id),
                                "shortDescription": {"text": r.description},
                                "defaultConfiguration": {"level": level(r.level)}}
        if r.help:
            rule["fullDescription"] = {"text": r.help}
        driver_rules.append(rule)
    run = {
        "tool": {"driver": {"name": tool, "version": version, "semanticVersion": version,
                            "rules": driver_rules}},
        "originalUriBaseIds": {SRCROOT: {"description": {"text": "the top of the git repository"}}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(r, index) for r in results],
    }
    return {"$schema": SCHEMA, "version": VERSION, "runs": [run]}


def _name(rule_id: str) -> str:
    """``patch-matches-nothing`` -> ``PatchMatchesNothing`` (SARIF's rule ``name``: an
    identifier, GitHub shows it beside the id)."""
    return "".join(p[:1].upper() + p[1:] for p in rule_id.replace("_", "-").split("-") if p)


def dumps(doc: Dict[str, Any]) -> str:
    """The log as the file holds it."""
    return json.dumps(doc, indent=2) + "\n"


def tool_version() -> str:
    from kzgit._version import __version__   # start-up: only a SARIF report needs it
    return __version__
