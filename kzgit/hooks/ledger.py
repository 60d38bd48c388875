"""What the hooks of one pre-commit run have already said (issue 33 item 6: a break is reported
once per commit, not by render, validate and lint alike).

pre-commit starts each hook as its own process, one after the other, from the one ``pre-commit``
process of the run (pre_commit/commands/run.py sets ``PRE_COMMIT=1`` in their environment and
runs the hooks serially; ``require_serial`` keeps each of kzgit's building hooks to one process).
So the run is the parent process: its pid and its start time (``/proc/PID/stat`` field 22, so a
reused pid is another run). kzgit-render writes down each root (or application) that does not
render, with the first line of its error; kzgit-validate and kzgit-lint, later in the same run,
then say those in one line that points above instead of repeating them.

The ledger is a directory per run under the user's cache (``hook-runs/``), one file per entry,
created exclusively: no lock, and a hook that cannot read or write it (no /proc, a read-only
cache) says everything, as before. It holds hashed names and the error's first line, which the
render hook printed anyway; runs older than an hour are removed when a new run starts.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import time

from kzgit.cachedir import cache_root

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Optional

#: the hook whose report the others point to: it prints the whole chain of each break
RENDER = "kzgit-render"

_KEEP_SECONDS = 3600


def run_id() -> Optional[str]:
    """The pre-commit run this process is a hook of (None outside one, or without /proc)."""
    if os.environ.get("PRE_COMMIT") != "1":
        return None
    parent = os.getppid()
    try:
        with open(f"/proc/{parent}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: fields after its last ')'
    fields = stat[stat.rfind(b")") + 2:].split()
    if len(fields) < 20:
        return None
    return f"{parent}-{fields[19].decode('ascii', 'replace')}"


class Ledger:
    """The entries of one run, for one repository (two repositories in one run stay apart)."""

    def __init__(self, directory: str, repository: str) -> None:
        self.directory = directory
        self.repository = repository

    @classmethod
    def of_this_run(cls, repository: str) -> Optional["Ledger"]:
        run = run_id()
        if run is None:
            return None
        return cls(os.path.join(cache_root(), "hook-runs", run), repository)

    def _entry(self, name: str) -> str:
        digest = hashlib.sha256(f"{self.repository}\0{name}".encode("utf-8", "surrogateescape"))
        return os.path.join(self.directory, digest.hexdigest()[:32])

    def record(self, name: str, lead: str) -> None:
        """``name`` (a root or an application id) does not render, with ``lead`` (its error's
        first line), as the render hook said; the first record of a name stays."""
        try:
            if not os.path.isdir(self.directory):
                _prune(os.path.dirname(self.directory))
                os.makedirs(self.directory, mode=0o700, exist_ok=True)
            fd = os.open(self._entry(name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError:
            return   # already recorded, or no cache to write to: the others say it in full
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(lead)

    def said(self, name: str, line: str) -> bool:
        """Whether the render hook of this run reported ``name`` not rendering with the lead
        ``line`` holds (a hook's own line adds its words around it: another break of the same
        root is said again)."""
        try:
            with open(self._entry(name), encoding="utf-8", errors="surrogateescape") as f:
                lead = f.read()
        except OSError:
            return False
        return bool(lead) and lead in line


def _prune(runs: str) -> None:
    """Remove the ledgers of runs older than an hour (a run takes seconds to minutes)."""
    try:
        names = os.listdir(runs)
    except OSError:
        return
    old = time.time() - _KEEP_SECONDS
    for name in names:
        path = os.path.join(runs, name)
        try:
            if os.stat(path).st_mtime < old:
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            continue


def lead_of(error: str) -> str:
    """An error's first line, as the ledger keeps it."""
    return error.split("\n", 1)[0]
