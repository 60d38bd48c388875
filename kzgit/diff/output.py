"""The text and JSON forms of a :class:`~kzgit.diff.report.DiffReport`.

Text starts with a one-line summary, then reads like ``git diff``, one block per root::

    1 root affected (1 changed); resources: 1 added, 0 removed, 1 changed
    root overlays/prod: 1 changed, 1 added
    changed ConfigMap/prod/app-hk9c2m7b5d (was app-7b4mf2dt6g)
    --- a/overlays/prod ConfigMap/prod/app-7b4mf2dt6g
    +++ b/overlays/prod ConfigMap/prod/app-hk9c2m7b5d
    @@ -1,6 +1,6 @@
    ...

JSON is the stable machine-readable report documented in docs/commands/diff.md
(``"version": 1``; fields are only ever added).
"""
from __future__ import annotations

import json
from typing import Any, Dict, List

from kzgit.diff.report import ADDED, CHANGED, ERROR, FIXED, REMOVED, UNCHANGED, DiffReport, RootDiff

JSON_VERSION = 1


def root_summary(r: RootDiff) -> str:
    """``1 changed, 2 added``-style counts, or the root's status."""
    if r.status == ERROR:
        return "does not render"
    if r.status in (ADDED, REMOVED, FIXED):
        n = len(r.resources)
        return f"{r.status} ({n} resource{'s' if n != 1 else ''})"
    counts = [f"{r.count(s)} {s}" for s in (CHANGED, ADDED, REMOVED) if r.count(s)]
    return ", ".join(counts) or "unchanged"


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def root_text(r: RootDiff) -> str:
    """The text block of one root."""
    word = "app" if r.app else "root"
    lines = [f"{word} {r.root}: {root_summary(r)}"] if not r.errors or r.status == FIXED else []
    for e in r.errors:
        was = "did not render" if r.status == FIXED else "does not render"
        lines.append(f"{word} {r.root}: {was} at {e.revision}:")
        lines.append(_indent(e.message))
    out = "\n".join(lines) + "\n"
    for c in r.resources:
        was = f" (was {c.previous_name})" if c.previous_name else ""
        out += f"{c.status} {c.id}{was}\n" + c.diff
    return out


NOTHING_AFFECTED = "no kustomization root or localized copy is affected by the change"


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def report_summary(report: DiffReport) -> str:
    """One line a reviewer reads first: roots by outcome, resources by change, stale copies."""
    if not report.roots and not report.drift:
        return NOTHING_AFFECTED
    parts = []
    if report.roots:
        by_status = [(s, sum(1 for r in report.roots if r.status == s))
                     for s in (CHANGED, ADDED, REMOVED, UNCHANGED, FIXED, ERROR)]
        words = {ERROR: "not rendering"}
        outcome = ", ".join(f"{n} {words.get(s, s)}" for s, n in by_status if n)
        resources = [(s, sum(r.count(s) for r in report.roots)) for s in (ADDED, REMOVED, CHANGED)]
        apps = sum(1 for r in report.roots if r.app)
        roots = len(report.roots) - apps
        what = ", ".join(([_n(roots, "root")] if roots or not apps else [])
                         + ([_n(apps, "application")] if apps else []))
        parts.append(f"{what} affected ({outcome}); resources: "
                     + ", ".join(f"{n} {s}" for s, n in resources))
    if report.drift:
        parts.append(_n(len(report.drift), "stale localized copy").replace("copys", "copies"))
    return "; ".join(parts)


def text(report: DiffReport) -> str:
    """The whole report as text, headed by :func:`report_summary` (which alone says when the
    change affects no root and no copy)."""
    out = report_summary(report) + "\n"
    out += "".join(f"note: {n}\n" for n in report.notes)
    out += "".join(root_text(r) for r in report.roots)
    for d in report.drift:
        out += f"localized copy {d.copy}: {d.summary}\n"
        out += "".join(f"    {p}\n" for p in d.problems)
        out += f"    run: {d.rebuild}\n"
    return out


def to_dict(report: DiffReport) -> Dict[str, Any]:
    """The JSON report as plain data."""
    def side(s: Any) -> Dict[str, Any]:
        return {"rev": s.rev, "commit": s.commit, "label": s.label}

    roots: List[Dict[str, Any]] = []
    for r in report.roots:
        roots.append({
            "root": r.root,
            "file": r.file,
            "status": r.status,
            "errors": [{"side": e.side, "revision": e.revision, "message": e.message} for e in r.errors],
            "resources": [{
                "status": c.status,
                "api_version": c.api_version,
                "kind": c.kind,
                "namespace": c.namespace,
                "name": c.name,
                "previous_name": c.previous_name,
                "diff": c.diff,
            } for c in r.resources],
            # the Argo CD Application or Flux Kustomization id (kzgit.gitops); None for a root
            "app": r.app,
        })
    return {
        "version": JSON_VERSION,
        "base": side(report.base),
        "head": side(report.head),
        "changed": report.changed,
        "failed": report.failed,
        "roots": roots,
        "localized": [{"copy": d.copy, "original": d.original, "status": d.status,
                       "problems": d.problems, "rebuild": d.rebuild} for d in report.drift],
        "notes": report.notes,
        "shard": {"index": report.shard[0], "count": report.shard[1]} if report.shard else None,
        "fingerprint": report.fingerprint,
    }


def to_json(report: DiffReport) -> str:
    """The JSON report, keys in a fixed order, one trailing newline."""
    return json.dumps(to_dict(report), indent=2, ensure_ascii=False) + "\n"
