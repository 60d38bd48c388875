"""Git access for the hooks: the repository's files, the staged content, index modes.

Reading what is *being committed* honours git's own environment (a hook runs
with ``GIT_INDEX_FILE`` set when ``git commit -a`` or ``git commit FILE`` uses a
temporary index), so these helpers keep ``GIT_*`` variables, unlike the
engines, which strip them before kustomize clones anything
(:func:`kzgit.proc.git_env`).  git runs under :mod:`kzgit.proc` (timeout, own
session, killed with kzgit); git itself reads and edits the index and, in
:mod:`kzgit.gitio.objects`, a commit's objects.
"""
from __future__ import annotations

import os
from typing import Dict, Iterable, List, Optional, Tuple

from kzgit import proc
from kzgit.errors import KzgitError, UsageError

GIT_TIMEOUT = 120.0
MODE_EXECUTABLE = 0o100755
MODE_BLOB = 0o100644
ZERO_SHA = "0" * 40


def git(args: List[str], cwd: str, env: Optional[Dict[str, str]] = None,
        timeout: float = GIT_TIMEOUT, input: Optional[bytes] = None) -> bytes:
    """Run ``git ARGS`` in ``cwd`` (``input`` on its stdin) and return its stdout; a failure is
    a :class:`KzgitError`."""
    try:
        # local plumbing ends on its own (and by SIGPIPE once kzgit is gone): no parent-death
        # signal, so no preexec_fn, so CPython's vfork path (kzgit.proc's docstring)
        res = proc.run(["git", *args], cwd=cwd, env=env, timeout=timeout, input=input,
                       die_with_parent=False)
    except FileNotFoundError:
        raise UsageError("git is not installed (not found on PATH)") from None
    except OSError as e:
        raise KzgitError(f"cannot run git {' '.join(args[:2])}: {e.strerror or e}") from None
    if res.timed_out or res.overflowed:
        why = f"timed out after {timeout:g}s" if res.timed_out else "printed too much"
        raise KzgitError(f"git {' '.join(args[:2])} {why}")
    if res.returncode != 0:
        msg = res.stderr.decode("utf-8", "replace").strip()
        raise KzgitError(f"git {' '.join(args[:2])} failed: {msg}")
    return res.stdout


def _z(out: bytes) -> List[str]:
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def repo_root(cwd: str = ".") -> str:
    """The top of the work tree containing ``cwd``: :func:`kzgit.paths.discover`'s answer
    where git's own discovery can be read without git, else ``git rev-parse``'s."""
    from kzgit.paths import discover   # start-up: as light as os; gitio loads with git
    found = discover(cwd)
    if found is not None:
        return found[0]
    try:
        return git(["rev-parse", "--show-toplevel"], cwd).decode().strip()
    except KzgitError:
        raise UsageError(f"'{os.path.abspath(cwd)}' is not inside a git work tree") from None


def worktree_files(root: str) -> List[str]:
    """Tracked and untracked-but-not-ignored files of the work tree, repo-relative."""
    return _z(git(["ls-files", "-z", "--cached", "--others", "--exclude-standard"], root))


def index_files(root: str) -> List[str]:
    """Files in the index (the staged state), repo-relative."""
    return _z(git(["ls-files", "-z", "--cached"], root))


def staged_changes(root: str) -> List[str]:
    """Paths whose staged content differs from HEAD (added, modified, deleted, renamed both ends)."""
    return _z(git(["diff", "--cached", "--name-only", "-z", "--no-renames", "--no-ext-diff"], root))


def staged_deletions(root: str) -> List[str]:
    """Paths the index deletes relative to HEAD, a rename's old path included (pre-commit
    passes no deleted file names)."""
    return _z(git(["diff", "--cached", "--name-only", "-z", "--no-renames", "--no-ext-diff",
                   "--diff-filter=D"], root))


def deleted_between(root: str, old: str, new: str) -> List[str]:
    """Paths deleted (or renamed away) from the merge base of ``old`` and ``new`` to ``new``:
    the range ``pre-commit run --from-ref OLD --to-ref NEW`` passes the files of (its
    ``git.get_changed_files``, whose two-dot fallback is kept for unrelated histories)."""
    args = ["diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--diff-filter=D"]
    try:
        return _z(git([*args, f"{old}...{new}", "--"], root))
    except KzgitError:
        return _z(git([*args, f"{old}..{new}", "--"], root))


def changed_between(root: str, old: Optional[str], new: str) -> Optional[List[str]]:
    """Paths changed from ``old`` to ``new``; None when there is no ``old`` (everything is new)."""
    if not old or old == ZERO_SHA:
        return None
    return _z(git(["diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", old, new], root))


def worktree_changes(root: str, rev: str) -> List[str]:
    """Paths whose work-tree content differs from commit ``rev`` (staged or not), plus
    untracked files that are not ignored (a new overlay counts before ``git add``)."""
    tracked = _z(git(["diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", rev, "--"], root))
    untracked = _z(git(["ls-files", "-z", "--others", "--exclude-standard"], root))
    return sorted(set(tracked) | set(untracked))


def resolve_commit(root: str, rev: str) -> str:
    """Full id of the commit ``rev`` names; a :class:`UsageError` naming ``rev`` otherwise."""
    return resolve_commits(root, [rev])[0]


def resolve_commits(root: str, revs: List[str]) -> List[str]:
    """Full ids of the commits ``revs`` name, in one git run; a :class:`UsageError` naming the
    first that names none.

    ``git cat-file --batch-check`` resolves each line as ``rev-parse --verify`` does (a name
    it cannot resolve, or that peels to no commit, is "missing", an ambiguous short id
    "ambiguous"); unlike ``rev-parse --verify`` it takes several at once.
    """
    for rev in revs:
        if not rev or rev.startswith("-") or "\n" in rev:   # a line of input each
            raise UsageError(f"'{rev}' is not a revision")
    out = git(["cat-file", "--batch-check"], root,
              input="".join(f"{rev}^{{commit}}\n" for rev in revs).encode("utf-8", "surrogateescape"))
    lines = out.decode("utf-8", "surrogateescape").splitlines()
    commits: List[str] = []
    for rev, line in zip(revs, lines + [""] * len(revs)):
        fields = line.split()
        if len(fields) != 3 or fields[1] != "commit":
            raise UsageError(f"unknown revision '{rev}' (not a commit in {root})")
        commits.append(fields[0])
    return commits


def tags_with_dates(root: str) -> List[Tuple[str, float]]:
    """Each tag's short name and the committer date (Unix seconds) of the commit it names,
    peeled through an annotated tag (what source-controller orders tags of one version by);
    tags of other objects are left out."""
    fmt = "%(refname:strip=2)%00%(objecttype)%00%(*objecttype)%00%(committerdate:unix)%00%(*committerdate:unix)"
    out = git(["for-each-ref", f"--format={fmt}", "refs/tags"], root)
    tags: List[Tuple[str, float]] = []
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        name, kind, peeled, date, peeled_date = (line.split("\0") + [""] * 5)[:5]
        if kind == "commit" and date:
            tags.append((name, float(date)))
        elif kind == "tag" and peeled == "commit" and peeled_date:
            tags.append((name, float(peeled_date)))
    return tags


def is_partial_clone(root: str) -> bool:
    """Whether objects may be missing and fetched on demand (``clone --filter``): ``kzgit diff``
    then exports a revision, git fetching what it lacks at once, rather than reading objects
    one by one (each missing one a fetch of its own)."""
    try:
        out = git(["config", "--get-regexp", r"^(remote\..*\.promisor|extensions\.partialclone)$"], root)
    except KzgitError:   # exit status 1: no such key
        return False
    return any(line.split(" ", 1)[-1].strip().lower() not in ("", "false")
               for line in out.decode("utf-8", "replace").splitlines())


def export_index(root: str, dest: str) -> None:
    """Write the staged content (modes and symlinks included) into the directory ``dest``."""
    git(["checkout-index", "--all", "--quiet", f"--prefix={dest.rstrip('/')}/"], root)


def export_rev(root: str, rev: str, dest: str) -> None:
    """Write the tree of commit ``rev`` into ``dest`` through a throw-away index."""
    import tempfile   # start-up: tempfile imports shutil and random; a warm hook exports nothing
    with tempfile.TemporaryDirectory(prefix="kzgit-index-") as tmp:
        env = dict(os.environ, GIT_INDEX_FILE=os.path.join(tmp, "index"))
        git(["read-tree", rev], root, env=env)
        git(["checkout-index", "--all", "--quiet", f"--prefix={dest.rstrip('/')}/"], root, env=env)


def rev_files(root: str, rev: str) -> List[str]:
    """Files in the tree of ``rev``."""
    return _z(git(["ls-tree", "-r", "-z", "--name-only", rev], root))


def _index_env() -> Optional[Dict[str, str]]:
    """The environment for git reading or editing the index: kzgit's, with a relative
    ``GIT_INDEX_FILE`` (git commit -a / git commit FILE: git's temporary index) made absolute
    from kzgit's directory, where git ran the hook."""
    env_index = os.environ.get("GIT_INDEX_FILE")
    if env_index and not os.path.isabs(env_index):
        return dict(os.environ, GIT_INDEX_FILE=os.path.abspath(env_index))
    return None


def _index_entries(root: str) -> Dict[str, Tuple[int, str]]:
    """(mode, object id) of each entry of the index (merged ones: stage 0), by path."""
    out: Dict[str, Tuple[int, str]] = {}
    for record in git(["ls-files", "--stage", "-z"], root, env=_index_env()).split(b"\0"):
        meta, _, path = record.partition(b"\t")
        fields = meta.split(b" ")
        if len(fields) == 3 and fields[2] == b"0":
            out[path.decode("utf-8", "surrogateescape")] = (int(fields[0], 8), fields[1].decode("ascii"))
    return out


def index_modes(root: str, paths: Optional[Iterable[str]] = None) -> Dict[str, int]:
    """Mode of each index entry (all of them when ``paths`` is None)."""
    want = None if paths is None else set(paths)
    return {p: mode for p, (mode, _) in _index_entries(root).items() if want is None or p in want}


def clear_exec_bits_in_index(root: str, paths: Iterable[str]) -> List[str]:
    """Set mode 100644 on the index entries of ``paths`` that are 100755; return those changed.

    Only the mode changes: the entry keeps its blob id, so the staged content is untouched.
    ``git update-index --index-info`` sets each entry from its line alone, where ``--chmod``
    would add the work tree's content again (a partially staged file's unstaged part with it).
    """
    entries = _index_entries(root)
    changed = [p for p in paths if p in entries and entries[p][0] == MODE_EXECUTABLE]
    if changed:
        info = b"".join(b"%o %s\t%s\0" % (MODE_BLOB, entries[p][1].encode("ascii"),
                                          p.encode("utf-8", "surrogateescape")) for p in changed)
        git(["update-index", "-z", "--index-info"], root, env=_index_env(), input=info)
    return changed
