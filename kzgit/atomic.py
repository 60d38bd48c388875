"""Atomic output (temp file in the same directory, then rename), shared by the CLI and the library.

The result looks like a plain write: a new file gets ``0666 & ~umask`` and an existing
file keeps its mode, as ``kubectl kustomize -o`` (Go's ``os.Create``) leaves them; a
temp file from :func:`tempfile.mkstemp` alone would be 0600.  An ``OSError`` on the
user's path becomes a :class:`~kzgit.errors.KzgitError` naming the path (exit 1).
"""
from __future__ import annotations

import errno
import os
import stat

from kzgit.errors import KzgitError

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Optional


def current_umask() -> int:
    """The process umask, read without changing it where the OS allows (other threads may write)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def new_file_mode(path: str) -> int:
    """The mode a plain write to ``path`` leaves: the existing file's, else ``0666 & ~umask``."""
    try:
        st = os.stat(path)
    except OSError:
        return 0o666 & ~current_umask()
    if stat.S_ISREG(st.st_mode):
        return stat.S_IMODE(st.st_mode)
    return 0o666 & ~current_umask()


def new_dir_mode() -> int:
    """The mode ``mkdir`` gives a new directory: ``0777 & ~umask`` (``mkdtemp`` gives 0700)."""
    return 0o777 & ~current_umask()


class OutputError(KzgitError):
    """A user's output path cannot be written; ``reason`` says what is wrong with it."""

    def __init__(self, path: str, reason: str, verb: str = "write") -> None:
        super().__init__(f"cannot {verb} '{path}': {reason}")
        self.path = path
        self.reason = reason


def os_error_reason(path: str, e: OSError) -> str:
    """What is wrong with ``path``, given the ``OSError`` an operation on it raised."""
    parent = os.path.dirname(os.path.abspath(path))
    reason = e.strerror or str(e)
    if e.errno == errno.ENOENT and not os.path.isdir(parent):
        reason = f"directory '{os.path.dirname(path) or parent}' does not exist"
    elif e.errno == errno.ENOTDIR:
        reason = "a component of the path is not a directory"
    elif e.errno == errno.EISDIR or os.path.isdir(path):
        reason = "it is a directory"
    elif e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        reason = f"permission denied ({reason})"
    return reason


def new_temp_file(directory: str, prefix: str) -> tuple[int, str]:
    """A new file in ``directory`` that no one else opened: its descriptor and path.

    ``tempfile.mkstemp``'s guarantee (created with ``O_EXCL``, mode 0600, a random name)
    without importing ``tempfile``, which imports ``shutil`` and ``random``: a cold
    ``kzgit build`` writes its render cache entry through here on every run.
    """
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    while True:
        path = os.path.join(directory, prefix + os.urandom(6).hex())
        try:
            return os.open(path, flags, 0o600), path
        except FileExistsError:
            continue


def write_atomic(path: str, data: str, mode: Optional[int] = None) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory and rename: a reader
    sees the old file or the new one, and nothing is left behind on failure or Ctrl-C.
    ``mode``: the new file's permissions (default: those of the file replaced, else 0666 less
    the umask, as a plain ``open`` would give).

    Raises :class:`OutputError` naming ``path`` when it cannot be written.
    """
    if os.path.isdir(path):
        raise OutputError(path, "it is a directory")
    d = os.path.dirname(os.path.abspath(path)) or "."
    mode = new_file_mode(path) if mode is None else mode
    try:
        fd, tmp = new_temp_file(d, ".kzgit-")
    except OSError as e:
        raise OutputError(path, os_error_reason(path, e)) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(data)
            os.fchmod(f.fileno(), mode)
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise OutputError(path, os_error_reason(path, e)) from None
        raise
