"""GitHub Actions forms of a :class:`~kzgit.diff.report.DiffReport`.

:func:`workflow_commands` is what ``kzgit diff --format github`` prints on
stdout: one annotation per root (``::notice`` for a change, ``::error`` for a
root that does not render, ``::warning`` for a stale localized copy) and the
full text diff of each root in a collapsed log group.  An annotation stays
short (GitHub shows about 4 KB): a count and the first few resources, the
rest being in the log group and the job summary.  :func:`markdown` is the
summary for ``$GITHUB_STEP_SUMMARY`` or a pull-request comment.

The head is usually a stranger's pull request, so everything taken from it is
escaped: workflow-command data and properties as the runner expects
(``%``, CR, LF; plus ``:`` and ``,`` in properties -- actions/toolkit
``command.ts``), the raw diff wrapped in ``::stop-commands::`` with a random
token so a line in a manifest cannot issue a command, and the Markdown built
from HTML entities and fences longer than any backtick run in the content.
"""
from __future__ import annotations

import re
import secrets
from typing import Dict, List, Optional

from kzgit.diff.output import root_summary, root_text
from kzgit.diff.report import ERROR, FIXED, UNCHANGED, DiffReport, ResourceChange

# A PR comment holds at most 65536 characters; keep room for a workflow's own words.
SUMMARY_LIMIT = 60000


def escape_data(s: str) -> str:
    """Escape the message part of a workflow command."""
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    """Escape a property value (``file=``, ``title=`` ...) of a workflow command."""
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, properties: Optional[Dict[str, str]] = None) -> str:
    """One workflow command line: ``::name k=v,k=v::message``."""
    props = ",".join(f"{k}={escape_property(v)}" for k, v in (properties or {}).items())
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


# GitHub shows about 4 KB of an annotation; the job summary and the log group hold the rest.
ANNOTATION_LIMIT = 3800
# How many resources a root's notice names before it counts the rest.
FIRST_RESOURCES = 10


def _fits(message: str) -> bool:
    return len(escape_data(message).encode("utf-8")) <= ANNOTATION_LIMIT


def _cut(message: str, more: str) -> str:
    """``message`` if it fits an annotation, else its start and ``more``."""
    if _fits(message):
        return message
    lo, hi = 0, len(message)
    while lo < hi:  # the longest prefix that fits with the ellipsis line
        mid = (lo + hi + 1) // 2
        if _fits(message[:mid] + more):
            lo = mid
        else:
            hi = mid - 1
    return message[:lo] + more


def _listing(lines: List[str], what: str, rest: str) -> str:
    """All of ``lines`` when they fit an annotation, else a count, the first few and where
    the rest is."""
    whole = "\n".join(lines)
    if len(lines) <= FIRST_RESOURCES and _fits(whole):
        return whole
    first = lines[:FIRST_RESOURCES]
    while True:
        msg = "\n".join([f"{len(lines)} {what}; the first {len(first)}:", *first,
                         f"... and {len(lines) - len(first)} more: see {rest}"])
        if _fits(msg) or len(first) <= 1:
            return _cut(msg, "")
        first = first[:-1]


def _resource_line(c: ResourceChange) -> str:
    was = f" (was {c.previous_name})" if c.previous_name else ""
    return f"{c.status} {c.id}{was}"


def workflow_commands(report: DiffReport, token: Optional[str] = None) -> str:
    """Annotations and log groups for the job log (stdout)."""
    token = token or secrets.token_hex(16)
    lines: List[str] = []
    for note in report.notes:
        lines.append(command("notice", note, {"title": "kzgit diff"}))
    for r in report.roots:
        title = f"kzgit diff: {r.root} {root_summary(r)}"
        if r.status == ERROR:
            for e in r.errors:
                lines.append(command("error", _cut(f"{r.root} does not render at {e.revision}:\n{e.message}",
                                                   "... (the rest in the job summary)"),
                                     {"file": r.file, "title": f"kzgit diff: {r.root} does not render"}))
            continue
        if r.status == UNCHANGED:
            continue
        body = _listing([_resource_line(c) for c in r.resources], "resources differ",
                        f"the job summary and the log group '{title}'")
        lines.append(command("notice", body, {"file": r.file, "title": title}))
        lines.append(command("group", title))
        # the diff is the head's content: no line of it may be read as a command
        lines.append(command("stop-commands", token))
        lines.extend(root_text(r).splitlines())
        lines.append(f"::{token}::")
        lines.append("::endgroup::")
    for d in report.drift:
        lock = f"{d.copy}/.kzgit-localize.lock" if d.copy != "." else ".kzgit-localize.lock"
        problems = _listing(d.problems, "problems", "the job summary")
        lines.append(command("warning", _cut(f"{problems}\nrun: {d.rebuild}", ""),
                             {"file": lock, "title": f"kzgit diff: {d.copy}: {d.summary}"}))
    return "".join(line + "\n" for line in lines)


# -- Markdown ----------------------------------------------------------------------------------
# Markup characters anywhere in a line; text always sits mid-line here, so line-start markup
# (# - + . !) needs no escape.
_MD_SPECIAL = set("\\`*_{}[]()<>|~&\"'")


def md_text(s: str) -> str:
    """Literal text in Markdown: punctuation as numeric entities, so nothing is markup."""
    return "".join(f"&#{ord(ch)};" if ch in _MD_SPECIAL else ch for ch in s).replace("\n", " ")


def md_code(s: str) -> str:
    return f"<code>{md_text(s)}</code>"


def _fence(body: str, lang: str = "diff") -> str:
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{body}{'' if body.endswith(chr(10)) else chr(10)}{fence}\n"


def _short(commit: Optional[str]) -> str:
    return f" ({md_code(commit[:12])})" if commit else ""


def markdown(report: DiffReport, limit: int = SUMMARY_LIMIT) -> str:
    """The summary: a table of roots, each changed resource's diff in a collapsed block."""
    base, head = report.base, report.head
    out = ["## kzgit diff\n",
           f"Rendered kustomizations at {md_code(base.label)}{_short(base.commit)} compared with "
           f"{md_code(head.label)}{_short(head.commit)}.\n"]
    for note in report.notes:
        out.append(f"> **Note:** {md_text(note)}\n")
    if not report.roots and not report.drift:
        out.append("No kustomization root is affected by the change.\n")
        return "\n".join(out)
    if report.roots:
        rows = ["| root | result |", "| --- | --- |"]
        rows += [f"| {md_code(r.root)} | {md_text(root_summary(r))} |" for r in report.roots]
        out.append("\n".join(rows) + "\n")
    for r in report.roots:
        was = "did not render" if r.status == FIXED else "does not render"
        for e in r.errors:
            out.append(f"**{md_code(r.root)} {was} at {md_code(e.revision)}:**\n\n"
                       + _fence(e.message, "text"))
    for d in report.drift:
        problems = "".join(f"- {md_text(p)}\n" for p in d.problems)
        out.append(f"**Localized copy {md_code(d.copy)}:** {md_text(d.summary)}; run "
                   f"{md_code(d.rebuild)}.\n\n{problems}")
    size = sum(len(x) + 1 for x in out)
    left_out: List[str] = []   # "root: status id" of each resource whose diff did not fit
    # When not every diff fits, a quarter of the room is kept to name the ones left out.
    everything = size + sum(len(c.diff) + 200 for r in report.roots for c in r.resources)
    diff_limit = limit if everything <= limit else limit - limit // 4
    for r in report.roots:
        if not r.resources:
            continue
        header = f"### {md_code(r.root)}\n"
        blocks = []
        for c in r.resources:
            was = f" (was {md_code(c.previous_name)})" if c.previous_name else ""
            block = (f"<details><summary>{md_text(c.status)} {md_code(c.id)}{was}</summary>\n\n"
                     f"{_fence(c.diff)}\n</details>\n")
            if size + len(header) + len(block) > diff_limit:
                left_out.append(f"- {md_code(r.root)}: {md_text(c.status)} {md_code(c.id)}{was}")
                continue
            size += len(block) + 1
            blocks.append(block)
        if blocks:
            size += len(header) + 1
            out.append(header)
            out.extend(blocks)
    if left_out:
        n = len(left_out)
        tail = (f"_{n} more resource diff{'s' if n != 1 else ''} left out to keep "
                "this summary short; the job log has the full diff._\n")
        # name the left-out resources too, as many as the limit allows (the annotations
        # send readers here for the ones they could not list)
        intro = "Resources whose diff is left out:\n"
        names: List[str] = []
        room = limit - size - len(tail) - len(intro) - 64
        for line in left_out:
            if len(line) + 1 > room:
                break
            room -= len(line) + 1
            names.append(line)
        if names:
            rest = n - len(names)
            more = f"- ... and {rest} more\n" if rest else ""
            out.append(intro + "\n".join(names) + "\n" + more)
        out.append(tail)
    return "\n".join(out)
