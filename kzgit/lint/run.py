"""One lint run over a workspace: what to check, the findings, their severity, silencing.

What is checked comes from the dependency graph (:mod:`kzgit.graph`): the roots given (a commit:
the roots its files reach; ``--all``: every root), each built once through the render cache
(:mod:`kzgit.lint.builds`), and every kustomization those roots reach, read as written
(:mod:`kzgit.lint.files`); with every root, also the components no root includes.

A finding is silenced by a comment on its line naming its rule::

    patchesStrategicMerge:   # kzgit: ignore[deprecated-field]

(several rules: ``ignore[deprecated-field,duplicate-entry]``).  A finding without a line (a
root's warnings, a root that does not render) is silenced on the first line of its file.
"""
from __future__ import annotations

import json
import re

from kzgit.config import LINT_RULES
from kzgit.lint import ERROR, OFF, LintFinding
from kzgit.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple
    from kzgit.hooks import Workspace
    from kzgit.hooks.render import RootResult
    from kzgit.lint.files import KFile
    from kzgit.rendercache import Store

_IGNORE = re.compile(r"#\s*kzgit:\s*ignore\[([^\]]*)\]")


class LintReport(Record):
    """The findings of a run (sorted by file and line), the roots built and the
    kustomizations read."""

    __slots__ = ("findings", "roots", "kustomizations", "renders", "silenced")

    def __init__(self, findings: List[LintFinding], roots: List[str], kustomizations: List[str],
                 renders: List[RootResult], silenced: int = 0) -> None:
        self.findings = findings
        self.roots = roots
        self.kustomizations = kustomizations
        self.renders = renders
        self.silenced = silenced   # findings an ignore comment silenced

    @property
    def errors(self) -> List[LintFinding]:
        return [f for f in self.findings if f.severity == ERROR]


def ignored_rules(line_text: str) -> Set[str]:
    """The rules an ignore comment on this line names."""
    m = _IGNORE.search(line_text)
    if m is None:
        return set()
    return {r.strip() for r in m.group(1).split(",") if r.strip()}


def kustomization_dirs(ws: Workspace, roots: Sequence[str], every: bool) -> List[str]:
    """The kustomization directories the roots reach (in the repository, parsed), sorted;
    ``every``: all of the repository's, unincluded components too."""
    g = ws.graph
    if every:
        dirs = set(g.nodes)
    else:
        dirs = set()
        for r in roots:
            dirs |= g.reach(r).kustomization_dirs
        if ws.changed is not None:
            dirs |= set(g.unincluded_components(ws.changed))
    return sorted(d for d in dirs if d in g.nodes)


def run(ws: Workspace, roots: List[str], every: bool, store: Optional[Store] = None, jobs: int = 0,
        offline: bool = False, on_render: Optional[Callable[[RootResult], None]] = None) -> LintReport:
    """Lint ``roots`` of the workspace and the kustomizations they reach (``every``: the whole
    repository; then ``roots`` are all of its roots)."""
    from kzgit import versions   # start-up: lint runs only
    c = ws.config
    policy = c.lint
    severity: Dict[str, str] = {r: policy.severity(r, c.warnings_as_errors) for r in LINT_RULES}
    sel = versions.from_config(c)
    found: List[LintFinding] = []
    kdirs = kustomization_dirs(ws, roots, every)
    kfiles: Dict[str, Optional[KFile]] = {}
    read = ws.read

    def kfile(rel: str) -> Optional[KFile]:
        if rel not in kfiles:
            from kzgit.lint.files import read_kfile   # start-up: lint runs only
            data = read(rel)
            kfiles[rel] = None if data is None else read_kfile(rel, data)
        return kfiles[rel]

    file_rules = [r for r in ("deprecated-field", "unpinned-chart", "needs-newer-kustomize",
                              "duplicate-entry") if severity[r] != OFF]
    if file_rules:
        from kzgit.lint.files import check   # start-up: lint runs only
        for d in kdirs:
            node = ws.graph.nodes[d]
            k = kfile(node.file)
            if k is None:
                continue
            for rule, line, field, message in check(k, sel.version, sel.origin):
                if rule in file_rules:
                    found.append(LintFinding(rule, severity[rule], node.file, line, field, message))
    if severity["unreferenced-file"] != OFF:
        from kzgit.lint.files import unreferenced_files   # start-up: lint runs only
        files = ws.own_files
        only = None if every else set(kdirs)
        for f, owner in unreferenced_files(ws.graph, files, only):
            found.append(LintFinding("unreferenced-file", severity["unreferenced-file"], f, None, "",
                                     f"no kustomization references this file (nearest: "
                                     f"{ws.graph.nodes[owner].file}); list it in resources, or "
                                     "remove it"))
    renders: List[RootResult] = []
    build_rules = ("warnings", "patch-matches-nothing", "replacement-matches-nothing", "render-error")
    if roots and any(severity[r] != OFF for r in build_rules):
        renders = _builds(ws, roots, severity, found, kfile, store, jobs, offline, on_render)
    if c.exclude:
        # what the configuration tells the hooks to ignore: no finding placed there
        from kzgit.config import glob_match   # start-up: lint runs only
        found = [f for f in found if not glob_match(f.file, c.exclude)]
    found, silenced = _silence(found, read)
    found.sort(key=lambda f: (f.file, f.line or 0, f.rule, f.message))
    return LintReport(found, list(roots), kdirs, renders, silenced)


def _builds(ws: Workspace, roots: List[str], severity: Dict[str, str], found: List[LintFinding],
            kfile: Callable[[str], Optional[KFile]], store: Optional[Store], jobs: int,
            offline: bool, on_render: Optional[Callable[[RootResult], None]]) -> List[RootResult]:
    """Build each root for lint; the findings its build observed join ``found``."""
    from kzgit.engine import get_engine   # start-up: lint runs only
    from kzgit.hooks.render import RootResult, options_for, render_each   # start-up: as above
    from kzgit.kustomization import DEPRECATIONS   # start-up: as above
    from kzgit.lint.builds import look_up, lint_one   # start-up: as above
    from kzgit.versions import V5_8, from_config, needs   # start-up: as above
    sel = from_config(ws.config)
    version, origin = sel.version, sel.origin
    deprecations = {msg for _, msg in DEPRECATIONS}
    engine = get_engine("builtin")
    options = options_for(ws, offline)

    def result(r: str, outcome: Any) -> RootResult:
        status, seconds, err, _ = outcome
        return RootResult(r, status, seconds, ws.relative_message(err) if err is not None else None)
    hear = None if on_render is None else (lambda r, outcome: on_render(result(r, outcome)))
    outcomes = render_each(ws, engine, roots, options, jobs, store, render_one=lint_one,
                           look_up=look_up, on_done=hear)
    seen: Dict[Any, LintFinding] = {}
    for r in roots:
        status, seconds, err, got = outcomes[r]
        root_file = ws.graph.nodes[r].file if r in ws.graph.nodes else r
        if err is not None:
            if "needs Kustomize " in err and severity["needs-newer-kustomize"] != OFF:
                continue   # needs-newer-kustomize names the field, at its line
            if severity["render-error"] != OFF:
                lead = ws.relative_message(err).split("\n", 1)[0]
                file, field, line = root_file, "", None
                m = _LEAD.match(lead)
                named = kfile(m.group(1)) if m is not None else None
                if m is not None and named is not None:
                    # the build's one-line lead names the kustomization and field nearest the
                    # problem (kzgit.builder.leads): the finding goes there
                    file, field = m.group(1), m.group(3)
                    parts = re.match(r"(\w+)(?:\[(\d+)\])?(?:\.(\w+))?", field)
                    if m.group(2):
                        line = int(m.group(2))
                    elif parts is not None:
                        index = int(parts.group(2)) if parts.group(2) is not None else None
                        line = named.line(parts.group(1), index, parts.group(3))
                found.append(LintFinding("render-error", severity["render-error"], file, line, field,
                                         f"{r} does not render: {lead}", r))
            continue
        warnings, unmatched = got
        if severity["warnings"] != OFF:
            for w in warnings:
                if w in deprecations:
                    continue   # deprecated-field reports them at their field
                for file, line, field, message in _place_warning(ws, r, root_file, kfile,
                                                                 ws.relative_message(w)):
                    _add(seen, found, LintFinding("warnings", severity["warnings"], file, line, field,
                                                  message, r))
        for field, kpath, selector in unmatched:
            rule = "replacement-matches-nothing" if field == "replacements" else "patch-matches-nothing"
            rel = ws.relative(kpath) or kpath
            line, where = _locate(kfile(rel), field, selector)
            regex = _regex_fields(selector) if field == "replacements" and version < V5_8 else []
            if regex and severity["needs-newer-kustomize"] != OFF:
                # kustomize 7c04cbb23 (PR #5863, 5.8): select and reject fields are anchored
                # regular expressions; before, compared as written, so this selects nothing
                _add(seen, found, LintFinding(
                    "needs-newer-kustomize", severity["needs-newer-kustomize"], rel, line, where,
                    needs(f"a regular expression in a replacement's select ({', '.join(regex)})",
                          V5_8, version, origin) + "; this release compares select fields as "
                    f"written, so it selects no resource when {r} is built", r))
                continue
            if severity[rule] == OFF:
                continue
            what = "select" if field == "replacements" else "target"
            shown = json.dumps(selector, sort_keys=True, default=str, separators=(", ", ": "))
            _add(seen, found, LintFinding(
                rule, severity[rule], rel, line, where,
                f"{what} {shown} selects no resource when {r} is built; kustomize applies it to "
                "nothing, silently", r))
    return [result(r, outcomes[r]) for r in roots]


# a lead (kzgit.builder.leads): "base/kustomization.yaml:3: resources: 'x.yaml' does not exist"
_LEAD = re.compile(r"^([^\s:]*(?:kustomization\.ya?ml|Kustomization))(?::(\d+))?: "
                   r"([A-Za-z]+(?:\[\d+\])?(?:\.[A-Za-z]+)?): ")

# what no Kubernetes name, kind, group or version holds (a '.' does: not counted)
_REGEX = re.compile(r"[*+?()|\[\]{}^$\\]")


def _regex_fields(selector: Any) -> List[str]:
    """``field: value`` of a select's id fields that can only be regular expressions."""
    if not isinstance(selector, dict):
        return []
    return [f"{k}: {v}" for k, v in selector.items()
            if k in ("group", "version", "kind", "name", "namespace") and isinstance(v, str)
            and _REGEX.search(v)]


_UNUSED_VARS = "well-defined vars that were never replaced: "


def _place_warning(ws: Workspace, root: str, root_file: str, kfile: Callable[[str], Optional[KFile]],
                   warning: str) -> List[Tuple[str, Optional[int], str, str]]:
    """Where a build's warning belongs: each var never replaced at the ``vars`` entry that
    declares it (in the kustomizations the root reaches; refvartransformer.go names the vars
    only), anything else on the root's kustomization."""
    if not warning.startswith(_UNUSED_VARS):
        return [(root_file, None, "", warning)]
    names = [n for n in warning[len(_UNUSED_VARS):].split(",") if n]
    out: List[Tuple[str, Optional[int], str, str]] = []
    g = ws.graph
    for name in names:
        placed = False
        for d in sorted(g.reach(root).kustomization_dirs):
            node = g.nodes.get(d)
            k = kfile(node.file) if node is not None else None
            entries = k.value("vars") if k is not None else None
            for i, v in enumerate(entries if isinstance(entries, list) else []):
                if k is not None and node is not None and isinstance(v, dict) and v.get("name") == name:
                    out.append((node.file, k.line("vars", i), f"vars[{i}]",
                                f"var '{name}' is never replaced: no $({name}) in a field vars apply "
                                f"to when {root} is built (kustomize: \"{_UNUSED_VARS}...\")"))
                    placed = True
        if not placed:
            out.append((root_file, None, "", f"{_UNUSED_VARS}{name}"))
    return out


def _add(seen: Dict[Any, LintFinding], found: List[LintFinding], f: LintFinding) -> None:
    """Add ``f`` unless another root observed the same (the first root names it)."""
    key = (f.rule, f.file, f.line, f.field, f.message.replace(f"when {f.root} is built", ""))
    if key in seen:
        return
    seen[key] = f
    found.append(f)


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def _locate(k: Optional[KFile], field: str, selector: Any) -> Tuple[Optional[int], str]:
    """The line and field of the entry whose target is ``selector`` in the kustomization."""
    if k is None:
        return None, field
    entries = k.value(field)
    if isinstance(entries, list):
        for i, e in enumerate(entries):
            if not isinstance(e, dict):
                continue
            if field != "replacements":
                if _same(e.get("target"), selector):
                    return k.line(field, i, "target"), f"{field}[{i}].target"
                continue
            for j, t in enumerate(e.get("targets") or []):
                if isinstance(t, dict) and _same(t.get("select"), selector):
                    return (k.path_line(field, i, "targets", j, "select"),
                            f"{field}[{i}].targets[{j}].select")
            if e.get("path"):
                # a replacements file: the entry that names it
                return k.line(field, i, "path"), f"{field}[{i}].path ({e['path']})"
    return k.line(field), field


def _silence(found: List[LintFinding], read: Callable[[str], Optional[bytes]]
             ) -> Tuple[List[LintFinding], int]:
    """``found`` without the findings an ignore comment silences, and how many it silenced."""
    lines: Dict[str, List[str]] = {}
    kept: List[LintFinding] = []
    for f in found:
        if f.file not in lines:
            data = read(f.file)
            lines[f.file] = [] if data is None else data.decode("utf-8", "replace").splitlines()
        text = lines[f.file]
        n = (f.line or 1) - 1
        if 0 <= n < len(text) and f.rule in ignored_rules(text[n]):
            continue
        kept.append(f)
    return kept, len(found) - len(kept)

