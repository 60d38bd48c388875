"""The proof that a migration changes no rendering, made before anything is written.

Every root that reaches a changed file is rendered twice with kzgit's own engine, at the
repository's ``kustomize-version``: from the disk as it is, and through an
:class:`OverlayFS` that shows the migrated files in place of the old ones (nothing is
written into the source tree for it, as ``kzgit diff`` renders a git tree without a
checkout).  A kustomization no root reaches is rendered as its own root; a component no
root includes is rendered through a throw-away kustomization that lists it, a file
that exists only in the overlay, beside the component's directory.

``kustomize edit fix`` builds before and after too (``kustomize/commands/edit/fix/fix.go``
RunFix), but only the directory it runs in, after writing, and then only warns.
"""
from __future__ import annotations

import posixpath

from kzgit.errors import full_message
from kzgit.loader.overlay import OverlayFS  # noqa: F401 - moved there; imported from here
from kzgit.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, Iterable, List, Optional, Set, Tuple
    from kzgit.options import BuildOptions
    from kzgit.engine import Engine
    from kzgit.hooks import Workspace
    from kzgit.rendercache import Store

# The directory name of the throw-away kustomization that renders a component (made beside
# it, never inside: a kustomization directory inside the component would be a load cycle).
PROBE_PREFIX = ".kzgit-fix-probe-"
_PROBE_TEXT = ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
               "components:\n- ../{name}\n")


def probe_dir(component: str) -> str:
    """The repo-relative directory of the throw-away kustomization for ``component``."""
    parent, name = posixpath.split(component)
    return posixpath.join(parent, PROBE_PREFIX + name)


def probe_file(ws: Workspace, component: str) -> Tuple[str, bytes]:
    """(absolute path, bytes) of the throw-away kustomization listing ``component``."""
    name = posixpath.basename(component)
    path = ws.build_path(posixpath.join(probe_dir(component), "kustomization.yaml"))
    return path, _PROBE_TEXT.format(name=name).encode("utf-8")


class Rendered(Record):
    """One root's rendering: its YAML, or the error's message."""

    __slots__ = ("yaml", "error")

    def __init__(self, yaml: Optional[str], error: Optional[str]) -> None:
        self.yaml = yaml
        self.error = error


def _render_text(engine: Engine, path: str, options: BuildOptions, store: Optional[Store]) -> Any:
    """A worker's render of one root, its YAML as the outcome's payload."""
    from kzgit.rendercache import FAILED, render_yaml   # start-up: loaded only by the runs that render
    try:
        got = render_yaml(path, options, store, looked=True)
    except OSError as e:
        # a file-system error below the build (a remote cache's directory taken away by a
        # concurrent run) is a failed render here: the proof then holds the change back
        # rather than the whole run stopping
        return FAILED, 0.0, f"{type(e).__name__}: {e}", None
    if got.error is not None:
        return got.status, got.seconds, full_message(got.error), None
    return got.status, got.seconds, None, got.yaml


def _look_up_text(path: str, options: BuildOptions, store: Store, checker: Any) -> Any:
    from kzgit.rendercache import lookup_yaml   # start-up: loaded only by the runs that render
    hit = lookup_yaml(path, options, store, checker)
    if hit is None:
        return None
    if hit.error is not None:
        return hit.status, hit.seconds, full_message(hit.error), None
    return hit.status, hit.seconds, None, hit.yaml


def render(ws: Workspace, roots: Iterable[str], options: BuildOptions, jobs: int,
           store: Optional[Store]) -> Dict[str, Rendered]:
    """Render repo-relative ``roots`` (in parallel when there are many)."""
    from kzgit.engine import BuiltinEngine   # start-up: loaded only by the runs that render
    from kzgit.hooks.render import render_each   # start-up: as above
    todo = sorted(set(roots))
    if not todo:
        return {}
    outcomes = render_each(ws, BuiltinEngine(), todo, options, jobs, store,
                           render_one=_render_text, look_up=_look_up_text)
    return {r: Rendered(o[3], o[2]) for r, o in outcomes.items()}


def _short(error: str, relative: Callable[[str], str], limit: int = 240) -> str:
    """An error's first line, paths in the repository relative to its top (as the hooks name
    files), its innermost cause kept when it is long (kustomize's errors chain every level:
    "accumulating resources: ... : <the cause>"), cut where a level or a word starts, never
    inside a path or a word."""
    line = relative(error.splitlines()[0] if error else "")
    if len(line) <= limit:
        return line
    tail = line[-limit:]
    if line[-limit - 1] != " ":   # the cut fell inside a word: start at the next level or word
        at = tail.find(": ")
        at = at + 2 if 0 <= at < limit // 2 else tail.find(" ") + 1
        tail = tail[at:] if 0 < at < limit // 2 else tail
    return "... " + tail


def first_difference(before: Rendered, after: Rendered,
                     relative: Callable[[str], str] = lambda m: m) -> str:
    """The first line where two renderings part, as ``line N: -old / +new``; ``relative``
    writes an error's paths as the hooks do (:meth:`Workspace.relative_message`)."""
    if before.error is not None:
        if after.error is None or after.error == before.error:
            return "does not render: " + _short(before.error, relative)
        return "fails differently: " + _short(after.error, relative)
    if after.error is not None:
        return "would no longer render: " + _short(after.error, relative)
    a = (before.yaml or "").splitlines()
    b = (after.yaml or "").splitlines()
    for n in range(max(len(a), len(b))):
        old = a[n] if n < len(a) else "<end>"
        new = b[n] if n < len(b) else "<end>"
        if old != new:
            return f"line {n + 1} of its output: -{old.strip() or old} +{new.strip() or new}"
    return "the output differs"


class Verdict(Record):
    """The proof's outcome: the changed files it lets through, and why each other one is held
    back (repo-relative path -> the root and its first differing line)."""

    __slots__ = ("proven", "held", "checked", "broken")

    def __init__(self, proven: List[str], held: Dict[str, str], checked: List[str],
                 broken: Optional[Dict[str, str]] = None) -> None:
        self.proven = proven
        self.held = held
        self.checked = checked   # the roots (and component probes) rendered
        # changes nothing could prove because nothing reaching them renders now (a broken
        # fixture kept on purpose): left as they are, and not a migration left to do
        self.broken: Dict[str, str] = {} if broken is None else broken


def prove(ws: Workspace, units: Dict[str, Dict[str, str]], options: BuildOptions, jobs: int = 0,
          store: Optional[Store] = None) -> Verdict:
    """Which changes can be written without changing any rendering.

    ``units``: each kustomization's change (its repo-relative path -> the files it rewrites,
    path -> new text: the kustomization itself, and for ``--vars`` the resources whose
    ``$(VAR)`` become placeholders), written all or nothing.

    The targets rendered for a unit are the roots that reach one of its files.  When none of
    those renders now (a remote base out of reach, say), the kustomizations between them and
    the files are rendered as roots of their own, down to the unit's kustomization; a
    component's through a probe.  A unit is proven when at least one of its targets renders
    and every target renders the same bytes after the changes (or, not rendering, fails with
    the same message); otherwise it is held back with the first differing line."""
    g = ws.graph
    accepted = sorted(units)
    held: Dict[str, str] = {}
    broken: Dict[str, str] = {}
    probes: Dict[str, str] = {}   # component dir -> the probe's directory
    probe_files: Dict[str, bytes] = {}
    failed: Set[str] = set()   # targets that do not render before the change
    base_fs = options.fs
    if base_fs is None:
        from kzgit.loader import DiskFS   # start-up: loaded only by the runs that render
        base_fs = DiskFS()

    def is_component(kdir: str) -> bool:
        node = g.nodes.get(kdir)
        if node is not None:
            return node.component
        own = [u for u in units if (posixpath.dirname(u) or ".") == kdir]
        return bool(own) and _is_component(units[own[0]].get(own[0], ""))

    def add_probe(kdir: str) -> None:
        if kdir not in probes:
            probes[kdir] = probe_dir(kdir)
            path, data = probe_file(ws, kdir)
            probe_files[path] = data

    def reaches(t: str, unit: str) -> bool:
        for path in units[unit]:
            if t in g.nodes:
                if g.reach(t).touches(path):
                    return True
            elif (posixpath.dirname(path) or ".") == t:
                return True
        return False

    def run(changes: List[str], which: List[str]) -> Dict[str, Rendered]:
        files = dict(probe_files)
        for u in changes:
            for path, text in units[u].items():
                files[ws.build_path(path)] = text.encode("utf-8")
        paths = {t: probes.get(t, t) for t in which}
        if not changes:
            # the roots as they are, in parallel and through the render cache (a commit's
            # render hook has just rendered them); only what renders is taken from there: what
            # fails (and the probes) is rendered again, fresh and one at a time, since an error
            # replayed from the cache, or met by parallel fetches of one remote, need not read
            # as the same error, and "fails the same way" compares the messages
            plain = [t for t in which if t not in probes]
            got = render(ws, [paths[t] for t in plain], options, jobs, store)
            out = {t: got[paths[t]] for t in plain if got[paths[t]].error is None}
            rest = [t for t in which if t not in out]
            if rest:
                out.update(_fresh(rest))
            return out
        fs = OverlayFS(base_fs, files)
        # what failed before is rendered again one at a time: those failures are mostly remote
        # bases out of reach, and parallel fetches of one remote can fail each other in other
        # words (kzgit.remote's cache directory), which would read as "fails differently"
        serial = [t for t in which if t in failed]
        got = render(ws, [paths[t] for t in which if t not in failed], options.replace(fs=fs), jobs, None)
        got.update(render(ws, [paths[t] for t in serial], options.replace(fs=fs), 1, None))
        return {t: got[paths[t]] for t in which}

    def _fresh(which: List[str]) -> Dict[str, Rendered]:
        fs = OverlayFS(base_fs, dict(probe_files))
        paths = {t: probes.get(t, t) for t in which}
        got = render(ws, paths.values(), options.replace(fs=fs), 1, None)
        out = {t: got[paths[t]] for t in which}
        failed.update(t for t, r in out.items() if r.error is not None)
        return out

    # first the roots reaching each unit; a unit no root reaches is its own target
    targets: Set[str] = set()
    for unit in accepted:
        reached = [r for r in g.roots if reaches(r, unit)]
        if reached:
            targets.update(reached)
            continue
        kdir = posixpath.dirname(unit) or "."
        if is_component(kdir):
            add_probe(kdir)
        targets.add(kdir)
    before = run([], sorted(targets))
    # then, for the units no rendering target reaches, every kustomization that reaches them
    more: Set[str] = set()
    for unit in accepted:
        if any(before[t].error is None for t in targets if reaches(t, unit)):
            continue
        for kdir in g.nodes:
            if kdir not in targets and reaches(kdir, unit):
                if is_component(kdir):
                    add_probe(kdir)
                more.add(kdir)
    if more:
        before.update(run([], sorted(more)))
        targets |= more
    for unit in list(accepted):
        mine = sorted(t for t in targets if reaches(t, unit))
        if mine and all(before[t].error is not None for t in mine):
            broken[unit] = (f"nothing that reaches it renders now; {mine[0]} "
                            f"{first_difference(before[mine[0]], before[mine[0]], ws.relative_message)}")
            accepted.remove(unit)
    checked = sorted(targets)
    while accepted:
        live = [t for t in checked if any(reaches(t, u) for u in accepted)]
        after = run(accepted, live)
        bad = [t for t in live if not equal(after[t], before[t])]
        if not bad:
            break
        suspects = [u for u in accepted if any(reaches(t, u) for t in bad)]
        guilty: Dict[str, str] = {}
        for s in suspects:
            mine = [t for t in bad if reaches(t, s)]
            alone = run([s], mine)
            for t in mine:
                if not equal(alone[t], before[t]):
                    guilty[s] = (f"would change the output of {t}: "
                                 f"{first_difference(before[t], alone[t], ws.relative_message)}")
                    break
        if not guilty:   # only together do they differ: hold back all of them
            t = bad[0]
            guilty = {s: f"would change the output of {t} (together with other migrations): "
                         f"{first_difference(before[t], after[t], ws.relative_message)}" for s in suspects}
        for s, why in guilty.items():
            held[s] = why
            accepted.remove(s)
    return Verdict(accepted, held, checked, broken)


def _is_component(text: str) -> bool:
    from kzgit.fix.migrate import load_data   # start-up: the migrations' module loaded it already
    try:
        data = load_data(text)
    except Exception:   # noqa: BLE001 - any parse failure: not a component
        return False
    return isinstance(data, dict) and data.get("kind") == "Component"


def equal(a: Rendered, b: Rendered) -> bool:
    return a.yaml == b.yaml and a.error == b.error

