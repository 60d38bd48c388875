"""Helpers shared by the test modules: where the test data lives, and is a process group gone yet?"""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def default_signals() -> None:
    """``preexec_fn`` for children a test interrupts: SIGINT, SIGTERM and SIGHUP at their defaults.

    A test run started in the background of a non-interactive shell (or under ``nohup``)
    inherits SIGINT/SIGHUP as ignored; Python then installs no ^C handler and kzgit keeps an
    ignored hangup ignored, so the signals the test sends would do nothing.
    """
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


def group_alive(pgid: int) -> bool:
    """True while a non-zombie process of group ``pgid`` exists.

    ``os.killpg(pgid, 0)`` also succeeds for zombies waiting to be reaped by PID 1 (slow in
    containers), so on Linux /proc is consulted to ignore them.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover
        return True
    if not os.path.isdir("/proc/self"):
        return True  # pragma: no cover
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def wait_gone(pgid: int, seconds: float = 3.0) -> bool:
    """Poll until no live process of group ``pgid`` is left; False if some outlive ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not group_alive(pgid):
            return True
        time.sleep(0.02)
    return not group_alive(pgid)


#: The tests directory, the project checkout, and the data the tests read.
TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent
FIXTURES = TESTS / "fixtures"
DATA = TESTS / "data"
