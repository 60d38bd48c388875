"""One lint run over a workspace: what to check, the findings, their severity, silencing.

What is checked comes from the dependency graph (:mod:`kzgit.graph`): the roots given (a commit:
the roots its files reach; ``--all``: every root), each built once through the render cache
(:mod:`kzgit.lint.builds`), and every kustomization those roots reach, read as written
(the file rules of :mod:`kzgit.lint.rules`); with every root, also the components no root includes.

A finding is silenced by a comment on its line naming its rule::

    patchesStrategicMerge:   # kzgit: ignore[deprecated-field]

(several rules: ``ignore[deprecated-field,duplicate-entry]``).  A finding without a line (a
root's warnings, a root that does not render) is silenced on the first line of its file.
"""
from __future__ import annotations


from kzgit.lint import ERROR, OFF, LintFinding
from kzgit.record import Record
from kzgit.ignores import silence

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple
    from kzgit.hooks import Workspace
    from kzgit.hooks.render import RootResult
    from kzgit.lint.kfile import KFile
    from kzgit.rendercache import Store

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
    from kzgit.lint import rules   # start-up: as above
    from kzgit.lint.policy import severities   # start-up: as above
    c = ws.config
    severity = severities(c)
    sel = versions.from_config(c)
    found: List[LintFinding] = []
    kdirs = kustomization_dirs(ws, roots, every)
    kfiles: Dict[str, Optional[KFile]] = {}
    read = ws.read

    def kfile(rel: str) -> Optional[KFile]:
        if rel not in kfiles:
            from kzgit.lint.kfile import read_kfile   # start-up: lint runs only
            data = read(rel)
            kfiles[rel] = None if data is None else read_kfile(rel, data)
        return kfiles[rel]

    file_rules = [m for m in rules.FILE_RULES if severity[m.ID] != OFF]
    if file_rules:
        for d in kdirs:
            node = ws.graph.nodes[d]
            k = kfile(node.file)
            if k is None:
                continue
            for m in file_rules:
                for rule, line, field, message in m.check(k, sel.version, sel.origin):
                    found.append(LintFinding(rule, severity[rule], node.file, line, field, message))
    unreferenced = rules.unreferenced_file
    if severity[unreferenced.ID] != OFF:
        only = None if every else set(kdirs)
        for f, message in unreferenced.check(ws.graph, ws.own_files, only):
            found.append(LintFinding(unreferenced.ID, severity[unreferenced.ID], f, None, "", message))
    renders: List[RootResult] = []
    build_rules = ("warnings", "patch-matches-nothing", "replacement-matches-nothing", "render-error")
    if roots and any(severity[r] != OFF for r in build_rules):
        renders = _builds(ws, roots, severity, found, kfile, store, jobs, offline, on_render)
    if c.exclude:
        # what the configuration tells the hooks to ignore: no finding placed there
        from kzgit.config import glob_match   # start-up: lint runs only
        found = [f for f in found if not glob_match(f.file, c.exclude)]
    found, silenced = silence(found, read, lambda f: {f.rule})
    found.sort(key=lambda f: (f.file, f.line or 0, f.rule, f.message))
    return LintReport(found, list(roots), kdirs, renders, silenced)


def _builds(ws: Workspace, roots: List[str], severity: Dict[str, str], found: List[LintFinding],
            kfile: Callable[[str], Optional[KFile]], store: Optional[Store], jobs: int,
            offline: bool, on_render: Optional[Callable[[RootResult], None]]) -> List[RootResult]:
    """Build each root for lint; the findings its build observed join ``found``."""
    from kzgit.engine import get_engine   # start-up: lint runs only
    from kzgit.hooks.render import RootResult, options_for, render_each   # start-up: as above
    from kzgit.lint.builds import look_up, lint_one   # start-up: as above
    from kzgit.lint.kfile import locate_target   # start-up: as above
    from kzgit.lint.rules import (deprecated_field, needs_newer_kustomize, patch_matches_nothing,
                                  render_error, replacement_matches_nothing, warnings)
    from kzgit.versions import V5_8, from_config   # start-up: as above
    sel = from_config(ws.config)
    version, origin = sel.version, sel.origin
    deprecations = deprecated_field.kustomize_messages()
    engine = get_engine("builtin")
    options = options_for(ws, offline)

    def result(r: str, outcome: Any) -> RootResult:
        status, seconds, err, _ = outcome
        return RootResult(r, status, seconds, ws.relative_message(err) if err is not None else None)
    hear = None if on_render is None else (lambda r, outcome: on_render(result(r, outcome)))
    outcomes = render_each(ws, engine, roots, options, jobs, store, render_one=lint_one,
                           look_up=look_up, on_done=hear)
    seen: Dict[Any, LintFinding] = {}
    broken: Dict[Tuple[str, Optional[int], str], Tuple[LintFinding, List[str]]] = {}
    for r in roots:
        status, seconds, err, got = outcomes[r]
        root_file = ws.graph.nodes[r].file if r in ws.graph.nodes else r
        if err is not None:
            if "needs Kustomize " in err and severity[needs_newer_kustomize.ID] != OFF:
                continue   # needs-newer-kustomize names the field, at its line
            if severity[render_error.ID] != OFF:
                lead = ws.relative_message(err).split("\n", 1)[0]
                file, line, field, message = render_error.place(r, root_file, lead, kfile)
                shared = broken.get((file, line, lead))
                if shared is not None:
                    # a shared base breaks every root above it: one finding where the lead
                    # points, naming the roots it breaks (issue 33 item 6: not one per root)
                    shared[1].append(r)
                    n = len(shared[1])
                    shared[0].message = (f"{shared[1][0]} and {n - 1} other root{'s' if n > 2 else ''} "
                                         f"({', '.join(shared[1][1:])}) do not render: {lead}")
                    continue
                f = LintFinding(render_error.ID, severity[render_error.ID], file, line, field, message, r)
                broken[(file, line, lead)] = (f, [r])
                found.append(f)
            continue
        observed, unmatched = got
        if severity[warnings.ID] != OFF:
            for w in observed:
                if w in deprecations:
                    continue   # deprecated-field reports them at their field
                for file, line, field, message in warnings.place(ws, r, root_file, kfile,
                                                                 ws.relative_message(w)):
                    _add(seen, found, LintFinding(warnings.ID, severity[warnings.ID], file, line,
                                                  field, message, r))
        for field, kpath, selector in unmatched:
            rule = (replacement_matches_nothing.ID if field == "replacements"
                    else patch_matches_nothing.ID)
            rel = ws.relative(kpath) or kpath
            line, where = locate_target(kfile(rel), field, selector)
            regex = (needs_newer_kustomize.regex_fields(selector)
                     if field == "replacements" and version < V5_8 else [])
            if regex and severity[needs_newer_kustomize.ID] != OFF:
                _add(seen, found, LintFinding(
                    needs_newer_kustomize.ID, severity[needs_newer_kustomize.ID], rel, line, where,
                    needs_newer_kustomize.regex_message(regex, version, origin, r), r))
                continue
            if severity[rule] == OFF:
                continue
            what = "select" if field == "replacements" else "target"
            _add(seen, found, LintFinding(rule, severity[rule], rel, line, where,
                                          patch_matches_nothing.message(what, selector, r), r))
    return [result(r, outcomes[r]) for r in roots]


def _add(seen: Dict[Any, LintFinding], found: List[LintFinding], f: LintFinding) -> None:
    """Add ``f`` unless another root observed the same (the first root names it)."""
    key = (f.rule, f.file, f.line, f.field, f.message.replace(f"when {f.root} is built", ""))
    if key in seen:
        return
    seen[key] = f
    found.append(f)

