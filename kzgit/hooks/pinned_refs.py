"""``kzgit-pinned-refs``: every remote reference in a changed kustomization carries a version.

Checks the kustomization files among the changed files (all of them with
``--all``), plus plugin config files they name: remote resources, bases,
components, generators/transformers/validators, KRM function exec paths and
images, helm charts.  Reports file, line and URL.
"""
from __future__ import annotations

import dataclasses
from typing import List

from kzgit.config import RefPolicy
from kzgit.hooks import Finding, Workspace
from kzgit.policy.pinned_refs import check_refs


def run(ws: Workspace, require_sha: bool = False) -> List[Finding]:
    """Findings for unpinned references in the changed kustomizations."""
    policy = ws.config.refs
    if require_sha:
        policy = dataclasses.replace(policy, require_sha=True)
    return check(ws, policy)


def check(ws: Workspace, policy: RefPolicy) -> List[Finding]:
    """Apply ``policy`` to the remote references of the changed kustomizations."""
    out: List[Finding] = []
    for node in sorted(ws.graph.nodes.values(), key=lambda n: n.file):
        if not ws.is_changed(node.file) and not any(ws.is_changed(f) for f in node.files):
            continue
        for p in check_refs(node.remotes, policy):
            out.append(Finding(p.file, f"{p.value}: {p.reason}", p.line))
    return out
