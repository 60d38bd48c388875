"""``kzgit fix``: the migrations of ``kustomize edit fix`` over a tree, proven before written.

* :mod:`kzgit.fix.migrate`: what ``edit fix`` changes in one kustomization file, made as
  edits of its text (:mod:`kzgit.fix._text`) that keep every other byte;
* :mod:`kzgit.fix.proof`: every root reaching a changed file renders the same bytes before
  and after (the changed files shown through an overlay, nothing written);
* this module: which kustomizations (every one below the paths given, components and
  kustomizations no root references included), and the atomic writes of the proven files.

The library never prints; :mod:`kzgit.cli.fix` reports.
"""
from __future__ import annotations

import os
import posixpath

from kzgit.config import glob_match
from kzgit.fix.migrate import FileFix, file_test, migrate, needs_fix
from kzgit.loader import KUSTOMIZATION_FILE_NAMES
from kzgit.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Callable, Dict, List, Optional, Set, Tuple
    from kzgit.options import BuildOptions
    from kzgit.hooks import Workspace
    from kzgit.rendercache import Store

__all__ = ["FixReport", "FileFix", "candidates", "plan", "write"]


class FixReport(Record):
    """What ``kzgit fix`` found and did.

    ``fixes``: each kustomization with a migration made or refused; ``held``: changed files
    the proof holds back (path -> the root and its first differing line); ``proven``: the
    files that may be written; ``written``: those written; ``checked``: the roots rendered."""

    __slots__ = ("fixes", "held", "proven", "written", "checked", "broken")

    def __init__(self, fixes: List[FileFix], held: Dict[str, str], proven: List[str],
                 checked: List[str], broken: Optional[Dict[str, str]] = None) -> None:
        self.fixes = fixes
        self.held = held
        self.proven = proven
        self.written: List[str] = []
        self.checked = checked
        # kustomizations nothing could be proven for because nothing reaching them renders
        # before the fix (a fixture broken on purpose): unchanged, and not left to migrate
        self.broken: Dict[str, str] = {} if broken is None else broken

    @property
    def left(self) -> bool:
        """Whether something is left to migrate (a refusal, or a change held back)."""
        return bool(self.held) or any(f.refused for f in self.fixes)


def candidates(ws: Workspace, targets: Optional[List[str]]) -> List[str]:
    """Repo-relative kustomization files of the workspace, those at or below one of
    ``targets`` (repo-relative directories or files; None: all)."""
    out = []
    for f in ws.files:
        if posixpath.basename(f) not in KUSTOMIZATION_FILE_NAMES:
            continue
        if targets is not None and not any(
                t in (".", "") or f == t or f.startswith(t.rstrip("/") + "/") for t in targets):
            continue
        out.append(f)
    # a directory with several kustomization files does not build: kustomize fails there
    dirs: Dict[str, int] = {}
    for f in out:
        d = posixpath.dirname(f)
        dirs[d] = dirs.get(d, 0) + 1
    return sorted(f for f in out if dirs[posixpath.dirname(f)] == 1)


def _readable(ws: Workspace) -> Callable[[str], bool]:
    def read_ok(rel: str) -> bool:
        p = os.path.join(ws.root, *rel.split("/")) if not posixpath.isabs(rel) else rel
        return os.path.isfile(p) and os.access(p, os.R_OK)
    return read_ok


def _reader(ws: Workspace) -> Callable[[str], Optional[str]]:
    def read(rel: str) -> Optional[str]:
        try:
            with open(ws.path(rel), "rb") as fh:
                return fh.read().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
    return read


def _kustomization_finder(ws: Workspace) -> Callable[[str], Optional[str]]:
    def kustomization_of(rel: str) -> Optional[str]:
        found = [n for n in KUSTOMIZATION_FILE_NAMES if os.path.isfile(ws.path(posixpath.join(rel, n)))]
        return posixpath.join(rel, found[0]) if len(found) == 1 else None
    return kustomization_of


def _unloadable(raw: bytes, where: str) -> Optional[str]:
    """Why the kustomization cannot be read as every other command reads it (the budgeted
    loader: an alias bomb, nesting beyond go-yaml's, bad YAML), or None.  The migrations then
    read it with PyYAML and ruamel.yaml, which expand nothing but leave the expanded tree to
    whoever walks it: a 12-line billion-laughs file hung ``kzgit fix --check`` (issue 32)."""
    from kzgit.errors import YamlError   # start-up: only a file that needs a migration
    from kzgit.yamlio import load_yaml11   # start-up: only a file that needs a migration
    try:
        load_yaml11(raw, where)
    except YamlError as e:
        return str(e)
    return None


def _copies(ws: Workspace) -> Callable[[str], bool]:
    """Whether a repo-relative file lies in a localized copy: a directory at or above it holds
    a localize lock file, where the configuration lets localized copies live."""
    from kzgit.localize import LOCK_FILE_NAME   # start-up: only a run with a candidate
    files = set(ws.files)

    def in_copy(rel: str) -> bool:
        d = posixpath.dirname(rel)
        while True:
            if posixpath.join(d, LOCK_FILE_NAME) in files and ws.in_localized_area(rel):
                return True
            if not d:
                return False
            d = posixpath.dirname(d)
    return in_copy


def _writable(ws: Workspace) -> Callable[[str], bool]:
    """Whether kzgit fix may write the repo-relative path: inside the repository, symbolic
    links resolved, and tracked by git (outside a work tree: a file of the walk)."""
    from kzgit import gitio   # start-up: only a run with a migration
    from kzgit.walk import in_work_tree
    top = os.path.realpath(ws.root)
    tracked: Set[str] = set(gitio.index_files(ws.root) if in_work_tree(ws.root) else ws.files)

    def ok(rel: str) -> bool:
        norm = posixpath.normpath(rel)
        if posixpath.isabs(norm) or norm == ".." or norm.startswith("../") or norm not in tracked:
            return False
        real = os.path.realpath(ws.path(norm))
        return real.startswith(top.rstrip(os.sep) + os.sep)
    return ok


def plan(ws: Workspace, targets: Optional[List[str]], options: BuildOptions, jobs: int = 0,
         store: Optional[Store] = None, vars_mode: bool = False) -> FixReport:
    """Migrate every candidate kustomization in memory and prove the result; nothing written.
    ``vars_mode``: also ``vars`` to ``replacements`` (``edit fix --vars``)."""
    read_ok = _readable(ws)
    read, kustomization_of = _reader(ws), _kustomization_finder(ws)
    fixes: List[FileFix] = []
    in_copy = _copies(ws)
    for rel in candidates(ws, targets):
        if in_copy(rel) or glob_match(rel, ws.config.exclude):
            # a localized copy's only writer is `kzgit rebuild` (the localized-sync hook would
            # see it drift from its source); an excluded file is nobody's to check
            continue
        try:
            with open(ws.path(rel), "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            fixes.append(FileFix(rel, "", "", [], ["not UTF-8 text: not migrated"]))
            continue
        if not needs_fix(text):
            continue
        bad = _unloadable(raw, ws.path(rel))
        if bad:
            fixes.append(FileFix(rel, "", "", [], [f"not migrated: {bad}"]))
            continue
        fix = migrate(rel, text, file_test(read_ok, posixpath.dirname(rel) or "."),
                      vars_mode, read, kustomization_of)
        if fix.changed or fix.refused or fix.notes:
            fixes.append(fix)

    def without_vars(fix: FileFix, why: str) -> FileFix:
        """The file's other migrations alone, the vars conversion reported as left undone."""
        alone = migrate(fix.path, fix.old, file_test(read_ok, posixpath.dirname(fix.path) or "."))
        alone.refused = [r for r in fix.refused if not r.startswith("vars -> ")] + alone.refused + [why]
        return alone

    # two conversions writing placeholders into one resource file cannot be proven apart: the
    # later one is left for a run of its own
    claimed: Dict[str, str] = {}
    for n, fix in enumerate(fixes):
        clash = sorted(p for p in fix.others if p in claimed)
        if clash:
            kdir = posixpath.dirname(fix.path) or "."
            fixes[n] = without_vars(fix, f"vars -> replacements: not migrated in this run: {clash[0]} "
                                         f"is also rewritten for the vars of {claimed[clash[0]]}; convert "
                                         f"one at a time (kzgit fix --vars {kdir})")
            continue
        for p in fix.others:
            claimed[p] = fix.path
    # kzgit fix writes only the repository's own files: a vars conversion follows resources:
    # ../shared out of it (or a symbolic link), and an untracked file is not the user's to
    # have rewritten unasked (issue 32)
    writable = _writable(ws)
    for n, fix in enumerate(fixes):
        if not fix.changed:
            continue
        refused = sorted(p for p in fix.files() if not writable(p))
        if fix.path in refused:
            fixes[n] = FileFix(fix.path, fix.old, fix.old, [], [
                f"not migrated: {fix.path} is not a tracked file of the repository at {ws.root}"])
        elif refused:
            fixes[n] = without_vars(fix, f"vars -> replacements: not migrated: {refused[0]} is outside "
                                         f"the repository at {ws.root} or not tracked by git; kzgit "
                                         "fix writes only the repository's tracked files")
    units = {f.path: f.files() for f in fixes if f.changed}
    if not units:
        return FixReport(fixes, {}, [], [])
    from kzgit.fix.proof import prove   # start-up: a clean tree renders nothing
    verdict = prove(ws, units, options, jobs, store)
    held, proven, checked = dict(verdict.held), list(verdict.proven), list(verdict.checked)
    broken = dict(verdict.broken)
    # a vars conversion that changes a rendering holds back the file's other migrations with
    # it: prove those again without it
    retry: Dict[str, FileFix] = {}
    for n, fix in enumerate(fixes):
        if fix.path in held and any(d.startswith("vars -> ") for d in fix.done):
            alone = without_vars(fix, f"vars -> replacements: left undone: {held[fix.path]}")
            fixes[n] = alone
            del held[fix.path]
            if alone.changed:
                retry[fix.path] = alone
    if retry:
        again = prove(ws, {p: f.files() for p, f in retry.items()}, options, jobs, store)
        held.update(again.held)
        broken.update(again.broken)
        proven += again.proven
        checked = sorted(set(checked) | set(again.checked))
    return FixReport(fixes, held, sorted(proven), checked, broken)


def write(ws: Workspace, report: FixReport) -> None:
    """Write the proven changes: one transaction, every file written or none.

    Each file goes to a temporary file beside it first (its mode kept), and each existing file
    is kept under a second name (a hard link); then the renames run with SIGINT and SIGTERM
    held back, so Ctrl-C finds the run either not begun or done.  A rename that fails midway
    (a read-only directory, a file replaced by a directory) puts back every file already
    renamed and raises; nothing is left half migrated (issue 32: a failed rename used to
    leave some files new and some old)."""
    files: Dict[str, str] = {}
    for rel in report.proven:
        files.update(next(f for f in report.fixes if f.path == rel).files())
    if files:
        _write_all(ws, files)
    report.written.extend(report.proven)


def _write_all(ws: Workspace, files: Dict[str, str]) -> None:
    import signal   # start-up: only a run that writes
    from kzgit.atomic import OutputError, new_file_mode, new_temp_file, os_error_reason   # start-up: as above
    staged: List[Tuple[str, str, Optional[str]]] = []   # (temporary file, path, kept original)
    done: List[Tuple[str, Optional[str]]] = []          # (path, kept original) renamed so far
    try:
        for rel, text in sorted(files.items()):
            path = ws.path(rel)
            mode = new_file_mode(path)
            try:
                fd, tmp = new_temp_file(os.path.dirname(path), ".kzgit-")
            except OSError as e:
                raise OutputError(path, os_error_reason(path, e)) from None
            staged.append((tmp, path, None))
            try:
                with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                    f.write(text)
                    os.fchmod(f.fileno(), mode)
                kept = _keep(path)
            except OSError as e:
                raise OutputError(path, os_error_reason(path, e)) from None
            staged[-1] = (tmp, path, kept)
        held = {signal.SIGINT, signal.SIGTERM}
        old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
        try:
            for tmp, path, kept in staged:
                try:
                    os.replace(tmp, path)
                except OSError as e:
                    _roll_back(done)
                    raise OutputError(path, os_error_reason(path, e) + "; no file was changed") from None
                done.append((path, kept))
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
    finally:
        renamed = {p for p, _ in done}
        for tmp, path, kept in staged:
            leftovers = [] if path in renamed else [tmp]
            if kept is not None:
                leftovers.append(kept)
            for leftover in leftovers:
                try:
                    os.unlink(leftover)
                except OSError:
                    pass


def _keep(path: str) -> Optional[str]:
    """A second name for the file at ``path`` (None when there is none yet), to put back."""
    if not os.path.lexists(path):
        return None
    for n in range(100):
        kept = os.path.join(os.path.dirname(path), f".kzgit-keep-{os.getpid()}-{n}-{os.path.basename(path)}")
        try:
            os.link(path, kept)
            return kept
        except FileExistsError:
            continue
    raise FileExistsError(path)


def _roll_back(done: List[Tuple[str, Optional[str]]]) -> None:
    """Put back the files renamed so far (newest first): the originals kept, the new removed."""
    for path, kept in reversed(done):
        try:
            if kept is None:
                os.unlink(path)
            else:
                os.link(kept, path + ".kzgit-restore")
                os.replace(path + ".kzgit-restore", path)
        except OSError:
            pass
