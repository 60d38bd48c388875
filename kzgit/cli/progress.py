"""A progress line on a terminal's stderr for long runs (``hook render``, ``validate``, ``diff``).

``kzgit hook render: 3/40 rendered, overlays/prod``, rewritten in place and erased at the end.
Only when stderr is a terminal (pre-commit's output is not one: no progress there) and only
once a run has taken :attr:`Progress.DELAY` seconds, so short runs stay silent; ``-v``, which
lists each root as it finishes, replaces it.
"""
from __future__ import annotations

import sys
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Optional, TextIO

__all__ = ["Progress", "for_terminal"]


class Progress:
    """``__call__(done, total, what)`` shows a state; :meth:`step` counts one more of ``total``."""

    DELAY = 0.5   # seconds: short runs stay silent

    def __init__(self, stream: "TextIO", command: str, total: int = 0) -> None:
        self.stream = stream
        self.command = command
        self.total = total
        self.done = 0
        self.start = time.monotonic()
        self.shown = False

    def __call__(self, done: int, total: int, what: str) -> None:
        if done >= total:
            self.close()
            return
        if not self.shown and time.monotonic() - self.start < self.DELAY:
            return
        self.shown = True
        self.stream.write(f"\r\x1b[K{self.command}: {done}/{total} rendered, {what}"[:200])
        self.stream.flush()

    def step(self, what: str) -> None:
        self.done += 1
        if self.done < self.total:
            self(self.done, self.total, what)

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


def for_terminal(command: str, total: int = 0) -> "Optional[Progress]":
    """A :class:`Progress` on stderr when it is a terminal, else None."""
    return Progress(sys.stderr, command, total) if sys.stderr.isatty() else None
