"""Atomic output (temp file in the same directory, then rename), shared by the CLI and the library."""
from __future__ import annotations

import os
import tempfile


def write_atomic(path: str, data: str) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory and rename."""
    d = os.path.dirname(os.path.abspath(path)) or "."
    fd, tmp = tempfile.mkstemp(prefix=".kzgit-", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
