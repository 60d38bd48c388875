"""Run a ``kzgit`` command line inside this process, as its own process would run it.

The golden recorder (``scripts/record_fixture.py``) and the mutation engine
(``tests/mutation/engine.py``) build hundreds of cases in one worker process, so that kzgit's
imports are paid once; each build gets the environment and working directory it would have as a
process of its own, byte-backed standard streams (code writing to ``sys.stdout.buffer`` works as
in a real run), and an escape reported as the crash it would be.  No pytest here: the recorder
imports it outside the test run.
"""
from __future__ import annotations

import contextlib
import io
import os
import signal
import traceback
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

#: the exit code of a build stopped by ``timeout`` (no process exits with it)
TIMED_OUT = -1


class _Timeout(BaseException):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


def run_kzgit(argv: List[str], cwd: Path, env: Dict[str, str],
              timeout: Optional[float] = None) -> Tuple[int, str, str]:
    """``kzgit ARGV`` in ``cwd`` with exactly ``env``: (exit code, stdout, stderr).

    The process's environment and working directory are restored afterwards.  An exception
    escaping kzgit gives exit code 3 and its traceback on stderr; a build still running after
    ``timeout`` seconds (SIGALRM: the main thread only) gives :data:`TIMED_OUT` and "timeout".
    """
    from kzgit.cli.main import main as kzgit_main

    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    out_b, err_b = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_b, encoding="utf-8", errors="surrogateescape", newline="")
    err = io.TextIOWrapper(err_b, encoding="utf-8", errors="replace", newline="")
    if timeout is not None:
        previous = signal.signal(signal.SIGALRM, _alarm)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    try:
        if timeout is not None:
            signal.setitimer(signal.ITIMER_REAL, timeout)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = kzgit_main(argv)
    except _Timeout:
        rc = TIMED_OUT
        err.write("timeout")
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 2
    except BaseException:  # noqa: BLE001 - an escape is a crash, reported as one
        rc = 3
        err.write(traceback.format_exc())
    finally:
        if timeout is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    out.flush()
    err.flush()
    return rc, out_b.getvalue().decode("utf-8", "surrogateescape"), err_b.getvalue().decode("utf-8", "replace")
