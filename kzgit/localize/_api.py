"""``localize()`` and ``rebuild()``: argument checks, atomic NEWDIR, lock, verification.

The argument rules are those of ``api/internal/localizer/locloader.go``
``NewLoader`` and ``util.go`` (``establishScope``, ``createNewDir``) at kustomize
api/v0.18.0; the verification step is ``kustomize/commands/localize/localize.go``
with the proposal's wording (``SUCCESS: <target>, <newDir> produce same
kustomize build output``).  Unlike upstream (which creates NEWDIR first and
removes it on failure), NEWDIR is built in a temporary directory beside it and
renamed into place only when everything, verification included, succeeded.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import difflib
import os
import posixpath
import shutil
import tempfile
from kzgit.options import BuildOptions
from typing import Any, Callable, Dict, List, Optional, Tuple

from kzgit.engine import BuiltinEngine, Engine
from kzgit.errors import KzgitError
from kzgit.loader import ROOT_ONLY, Loader, is_within, new_root_loader
from kzgit.localize import _paths, lock as _lock
from kzgit.localize._core import Run, _Localizer
from kzgit.localize._fetch import Cloner, parse_repo_spec
from kzgit.localize.errors import LocalizeError, PinMovedError, VerificationError
from kzgit.walk import tree_files


@dataclass
class LocalizeResult:
    """What a localization did; the CLI prints ``messages`` to stdout, ``warnings`` to stderr."""

    target: str
    new_dir: str
    lock: Dict[str, Any]
    warnings: List[str] = field(default_factory=list)
    messages: List[str] = field(default_factory=list)
    verified: bool = False


@dataclass
class _Target:
    raw: str
    root: str                      # real path of the kustomization root
    scope: str                     # real path of the scope
    remote: bool
    spec: Any = None
    clone: Any = None


def _target_is_remote(target: str) -> bool:
    return not os.path.exists(target) and parse_repo_spec(target) is not None


def _default_new_dir(target: str) -> str:
    spec = parse_repo_spec(target) if _target_is_remote(target) else None
    if spec is not None:
        path = os.path.normpath(spec.path) if spec.path else "."
        if path == ".":
            return _paths.default_new_dir("/r", "/r", spec.org_repo, spec.ref)
        return _paths.default_new_dir("/r/" + path, "/r", spec.org_repo, spec.ref)
    try:
        root = os.path.realpath(target)
    except OSError:  # pragma: no cover
        root = os.path.abspath(target)
    return _paths.default_new_dir(root)


def _establish_target(target: str, scope: Optional[str], cloner: Cloner) -> _Target:
    """locloader.go NewLoader + util.go establishScope."""
    if _target_is_remote(target):
        spec = parse_repo_spec(target)
        assert spec is not None
        if not spec.ref:
            raise LocalizeError(
                f"localize remote root '{spec.redacted()}' missing ref query string parameter: "
                "a remote target needs a version",
                tip="add ?ref=<tag or commit> to the URL")
        if scope:
            raise LocalizeError(f"scope '{scope}' specified for remote localize target "
                                f"'{spec.redacted()}': the repository is the scope of a remote target")
        clone = cloner.clone(spec)
        root = os.path.realpath(os.path.join(clone.dir, spec.path))
        if not is_within(root, clone.dir) or not os.path.isdir(root):
            raise LocalizeError(f"unable to establish localize target '{spec.redacted()}': "
                                f"'{spec.path}' is not a directory in the repository")
        return _Target(target, root, clone.dir, True, spec, clone)
    try:
        ldr = new_root_loader(target, restrictor=ROOT_ONLY)
    except KzgitError as e:
        raise LocalizeError(f"unable to establish localize target '{target}': {e}") from None
    if not scope:
        return _Target(target, ldr.root, ldr.root, False)
    s = os.path.abspath(scope)
    if not os.path.isdir(s):
        raise LocalizeError(f"invalid localize scope '{scope}': not a directory")
    real_scope = os.path.realpath(s)
    if not is_within(ldr.root, real_scope):
        raise LocalizeError(f"invalid localize scope '{scope}': localize scope '{scope}' does not "
                            f"contain target '{target}' at '{ldr.root}'",
                            tip="--scope must be the target or a directory above it")
    return _Target(target, ldr.root, real_scope, False)


def _final_new_dir(new_dir: str, replace: bool, parents: bool = False) -> str:
    """util.go createNewDir: NEWDIR must not exist; its parent must (kustomize's
    TestBadArgs/dst_in_non-existing_dir), unless ``parents`` lets localize create it."""
    abs_new = os.path.abspath(new_dir)
    if os.path.lexists(abs_new) and not replace:
        raise LocalizeError(f"invalid localize destination '{new_dir}': localize destination "
                            f"'{new_dir}' already exists",
                            tip="choose another NEWDIR, or use `kzgit rebuild` to refresh a copy")
    parent = os.path.dirname(abs_new)
    if not os.path.isdir(parent) and not (parents and not os.path.lexists(parent)):
        shown = os.path.dirname(new_dir) or "."
        what = "is not a directory" if os.path.lexists(parent) else "does not exist"
        raise LocalizeError(f"invalid localize destination '{new_dir}': unable to create localize "
                            f"destination directory: parent directory '{shown}' {what}",
                            tip=None if os.path.lexists(parent) else
                            f"pass --parents to create '{shown}' (as mkdir -p does)")
    return os.path.join(os.path.realpath(parent), os.path.basename(abs_new))


def _make_parents(directory: str) -> List[str]:
    """``mkdir -p directory``; returns the directories it created, outermost first."""
    missing: List[str] = []
    d = directory
    while not os.path.lexists(d):
        missing.append(d)
        d = os.path.dirname(d)
    created: List[str] = []
    try:
        for m in reversed(missing):
            os.mkdir(m)
            created.append(m)
    except OSError as e:
        _remove_created(created)
        raise LocalizeError(f"unable to create the parent directories of the localize destination: "
                            f"{e.strerror or e}: '{e.filename}'") from None
    return created


def _remove_created(created: List[str]) -> None:
    """Remove the directories ``_make_parents`` created, innermost first (if still empty)."""
    for d in reversed(created):
        try:
            os.rmdir(d)
        except OSError:
            break


def _rel_or_url(path: str, start: str) -> str:
    return os.path.relpath(path, start).replace(os.sep, "/")


def _make_lock(t: _Target, run: Run, target_in_copy: str, final: str) -> Dict[str, Any]:
    files: Dict[str, Any] = {}
    for rel, rec in sorted(run.files.items()):
        entry: Dict[str, Any] = {"sha256": rec.sha256}
        if rec.url:
            entry["url"] = rec.url
            if rec.commit:
                entry["commit"] = rec.commit
        elif rec.source:
            entry["source"] = _rel_or_url(rec.source, final)
            if rec.source_sha256:
                entry["source_sha256"] = rec.source_sha256
        if rec.executable_stripped:
            entry["executable_stripped"] = True
        files[rel] = entry
    entries = [{"url": r.url, "ref": r.ref, "commit": r.commit, "path": r.path}
               for r in run.remotes.values()]
    if t.remote:
        entries.append({"url": t.spec.redacted(), "ref": t.spec.ref, "commit": t.clone.commit,
                        "path": target_in_copy})
    remotes = sorted(entries, key=lambda r: (r["url"], r["path"]))
    lock: Dict[str, Any] = {
        "version": _lock.LOCK_VERSION,
        "target": t.spec.redacted() if t.remote else _rel_or_url(t.root, final),
        "scope": None if t.remote else _rel_or_url(t.scope, final),
        "target_in_copy": target_in_copy,
        "remotes": remotes,
        "files": files,
    }
    if t.remote:
        lock["target_commit"] = t.clone.commit
        lock["target_ref"] = t.spec.ref
    if run.chart_homes:
        lock["chart_homes"] = {k: _rel_or_url(v, final) for k, v in sorted(run.chart_homes.items())}
    return lock


def _next_steps(run: Run, target: str, new_dir: str) -> List[str]:
    flags = sorted(run.needs_flags)
    why = "; ".join(f"{f} ({run.needs_flags[f]})" for f in flags)
    lines = [f"Verification skipped: building {target} needs {why}, and localize never enables "
             "plugins, exec functions or helm on its own. Next steps:"]
    n = 1
    if run.exec_binaries:
        lines.append(f"  {n}. review the exec binaries in '{new_dir}' "
                     f"({', '.join(sorted(set(run.exec_binaries)))}) and `chmod +x` only those you trust; "
                     "pin each one you keep in [reviewed-executables] of .kzgit.toml (path = \"sha256:...\"), "
                     "or the kzgit-exec-bits hook clears its bit again")
        n += 1
    fl = " ".join(flags)
    lines.append(f"  {n}. run `kzgit build {fl} {target}` and `kzgit build {fl} {new_dir}` "
                 "and compare the outputs")
    return lines


def _verify(engine: Engine, t: _Target, copy_target: str, shown_target: str, shown_new: str,
            fresh_cache: Optional[str], options: Optional[BuildOptions] = None) -> None:
    """Build the target and the copy without any flag and compare (localize.go RunE).

    With remote references, the builtin engine builds the original through a
    fresh, private remote cache: kzgit's cache trusts tags once fetched, and the
    comparison must see the commits this localization just downloaded (a tag
    may have moved, which is what ``kzgit rebuild`` reports).
    """
    # no plugins, no exec, no helm: never enabled by localize; the Kustomize release selected
    opts = options or BuildOptions()
    original = t.root if t.remote else t.raw
    saved = os.environ.get("KZGIT_CACHE_DIR")
    try:
        if fresh_cache and getattr(engine, "name", "") == "builtin":
            os.environ["KZGIT_CACHE_DIR"] = fresh_cache
        a = engine.render(original, opts)
    except KzgitError as e:
        raise LocalizeError(f"verification failed: `kustomize build` of {shown_target} failed: {e}",
                            tip="if the target needs flags to build, rerun with --no-verify and "
                                "compare the builds yourself") from None
    finally:
        if saved is None:
            os.environ.pop("KZGIT_CACHE_DIR", None)
        else:
            os.environ["KZGIT_CACHE_DIR"] = saved
    try:
        b = engine.render(copy_target, opts)
    except KzgitError as e:
        raise VerificationError(f"verification failed: `kustomize build` of the localized copy "
                                f"{shown_new} failed: {e}") from None
    if a != b:
        diff = list(difflib.unified_diff(a.splitlines(), b.splitlines(), shown_target, shown_new,
                                         lineterm="", n=1))
        shown = "\n".join(diff[:40]) + ("\n..." if len(diff) > 40 else "")
        raise VerificationError(f"verification failed: `kustomize build` of {shown_target} and "
                                f"{shown_new} differ after localization:\n{shown}")


def localize(target: str, new_dir: Optional[str] = None, *, scope: Optional[str] = None,
             verify: bool = True, engine: Optional[Engine] = None, parents: bool = False,
             build_options: Optional[BuildOptions] = None, _replace: bool = False,
             _before_commit: Optional[Callable[[Dict[str, Any]], None]] = None) -> LocalizeResult:
    """Make a self-contained copy of ``target`` at ``new_dir`` (``kzgit localize``).

    Raises :class:`~kzgit.localize.errors.LocalizeError` for every error case of the
    proposal; on any failure (or Ctrl-C) nothing is left behind and the target is
    untouched.  ``parents``: create NEWDIR's missing parent directories (removed again when
    localize fails).
    """
    shown_new = new_dir or _default_new_dir(target)
    work = tempfile.mkdtemp(prefix="kzgit-localize-")
    tmp: Optional[str] = None
    created: List[str] = []
    try:
        if _target_is_remote(target):  # fail before cloning
            _final_new_dir(shown_new, _replace, parents)
        cloner = Cloner(work)
        t = _establish_target(target, scope, cloner)
        final = _final_new_dir(shown_new, _replace, parents)
        if parents:
            created = _make_parents(os.path.dirname(final))
        tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(final)}.kzgit-tmp-",
                               dir=os.path.dirname(final))
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp's 0700 is not what a new directory gets
        run = Run(scope=t.scope, new_dir=final, tmp_dir=tmp, cloner=cloner)
        to_dst = os.path.relpath(t.root, t.scope)
        dst = os.path.normpath(os.path.join(tmp, to_dst))
        os.makedirs(dst, exist_ok=True)
        if t.remote:
            ldr = Loader(t.root, None, ROOT_ONLY, repo_root=t.clone.dir, remote_label=t.spec.redacted())
        else:
            ldr = new_root_loader(t.root, restrictor=ROOT_ONLY)
        try:
            _Localizer(run, ldr, dst, local=not t.remote, clone=t.clone).localize()
        except KzgitError as e:
            raise LocalizeError(f"unable to localize target '{target}': {e}") from None
        target_in_copy = to_dst.replace(os.sep, "/")
        lock = _make_lock(t, run, target_in_copy, final)
        with open(os.path.join(tmp, _lock.LOCK_FILE_NAME), "w", encoding="utf-8") as f:
            f.write(_lock.dumps(lock))
        result = LocalizeResult(target=target, new_dir=final, lock=lock, warnings=list(run.warnings))
        if _before_commit is not None:   # rebuild's pin check: before the (slow) verification
            _before_commit(lock)
        if verify:
            if run.needs_flags:
                result.messages.extend(_next_steps(run, target, shown_new))
            else:
                _verify(engine or BuiltinEngine(), t, dst, target, shown_new,
                        os.path.join(work, "cache") if lock["remotes"] else None, build_options)
                result.verified = True
                result.messages.append(f"SUCCESS: {target}, {shown_new} produce same kustomize build output")
        _commit(tmp, final, _replace)
        tmp = None
        created = []
        return result
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        _remove_created(created)
        shutil.rmtree(work, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _commit(tmp: str, final: str, replace: bool) -> None:
    """Rename the finished copy into place; replacing an old copy keeps a backup until done."""
    if not replace or not os.path.lexists(final):
        if os.path.lexists(final):
            raise LocalizeError(f"localize destination '{final}' appeared while localizing; "
                                "nothing was written")
        try:
            os.rename(tmp, final)
        except OSError as e:
            raise LocalizeError(f"unable to move the localized copy into '{final}': {e.strerror or e}") from None
        return
    backup = tempfile.mkdtemp(prefix=f".{os.path.basename(final)}.kzgit-old-", dir=os.path.dirname(final))
    os.rmdir(backup)
    os.rename(final, backup)
    try:
        os.rename(tmp, final)
    except BaseException:
        os.rename(backup, final)
        raise
    shutil.rmtree(backup, ignore_errors=True)


# -- rebuild ------------------------------------------------------------------------------------

@dataclass
class RebuildResult:
    """What ``kzgit rebuild`` changed in one copy."""

    copy_dir: str
    added: List[str] = field(default_factory=list)
    removed: List[str] = field(default_factory=list)
    changed: List[str] = field(default_factory=list)
    moved_pins: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    messages: List[str] = field(default_factory=list)

    @property
    def unchanged(self) -> bool:
        return not (self.added or self.removed or self.changed)


def _pins(lock: Dict[str, Any]) -> Dict[Tuple[str, str], str]:
    pins = {(r["url"], r["ref"]): r["commit"] for r in lock.get("remotes") or []}
    if lock.get("target_commit"):
        pins[(lock["target"], lock.get("target_ref", ""))] = lock["target_commit"]
    return pins


def rebuild(copy_dir: str, *, update_pins: bool = False, verify: bool = True,
            engine: Optional[Engine] = None,
            build_options: Optional[BuildOptions] = None) -> RebuildResult:
    """Re-localize a copy from the original its lock file records, replacing it atomically.

    A ref that now resolves to another commit than the lock records (a moved tag)
    raises :class:`~kzgit.localize.errors.PinMovedError` unless ``update_pins``.
    """
    old = _lock.read_lock(copy_dir)
    copy_abs = os.path.abspath(copy_dir)
    target = old["target"]
    if parse_repo_spec(target) is None or os.path.isabs(target) or os.path.exists(
            os.path.join(copy_abs, target)):
        target = os.path.normpath(os.path.join(copy_abs, target))
        scope = os.path.normpath(os.path.join(copy_abs, old["scope"])) if old.get("scope") else None
    else:
        scope = None
    result = RebuildResult(copy_dir=copy_dir)
    old_pins = _pins(old)

    def check_pins(new_lock: Dict[str, Any]) -> None:
        for key, commit in sorted(_pins(new_lock).items()):
            before = old_pins.get(key)
            if before and before != commit:
                result.moved_pins.append(f"{key[0]} (ref {key[1]}): locked at {before}, now {commit}")
        if result.moved_pins and not update_pins:
            raise PinMovedError(
                f"{copy_dir}: MOVED REF — a ref now resolves to another commit than the lock records:\n  "
                + "\n  ".join(result.moved_pins),
                tip="if the change is expected, accept it with `kzgit rebuild --update-pins`")

    res = localize(target, copy_abs, scope=scope, verify=verify, engine=engine,
                   build_options=build_options, _replace=True,
                   _before_commit=check_pins)
    new_files = res.lock.get("files") or {}
    old_files = old.get("files") or {}
    result.added = sorted(set(new_files) - set(old_files))
    result.removed = sorted(set(old_files) - set(new_files))
    result.changed = sorted(k for k in set(new_files) & set(old_files)
                            if new_files[k].get("sha256") != old_files[k].get("sha256"))
    result.warnings = res.warnings
    result.messages = res.messages
    return result


def find_copies(start: str) -> List[str]:
    """Every localized copy (directory with a lock file) under ``start``, '/'-separated.

    Only among the files that belong to the project (:func:`kzgit.walk.tree_files`: in git,
    tracked or addable; outside git, none under a hidden or ignored directory), so a copy in
    a tool's cache or a sibling checkout is not taken for one of ours.  A copy inside
    another is part of it.
    """
    found = {posixpath.dirname(f) or "." for f in tree_files(start)
             if posixpath.basename(f) == _lock.LOCK_FILE_NAME}
    return sorted(c for c in found
                  if not any(o != c and (o == "." or c.startswith(o + "/")) for o in found))
