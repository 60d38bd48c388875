"""The worker pool of a parallel render (:func:`render_pool`), whose workers stop when kzgit stops.

A process pool keeps working after its parent is interrupted: queued renders
already handed to a worker, and the one it is running, finish first (half a
minute and more on large trees), and a killed worker would orphan the plugin
processes it started (they run in their own sessions, out of reach of the
terminal's ^C).  So workers ignore SIGINT (the terminal sends it to the whole
process group; the parent decides), and on SIGTERM or SIGHUP kill the process
groups they started, unwind the render under way (its ``finally`` blocks remove
its temporary files) and exit without taking another; :func:`stop_workers`
sends them SIGTERM and, after a short grace period, SIGKILL.  Tasks go through
:func:`guarded` (``pool.submit(guarded, fn, *args)``).
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
import signal
import sys
import time
from typing import TYPE_CHECKING, Any, Callable, Iterator, TypeVar

if TYPE_CHECKING:  # pragma: no cover
    from kzgit.engine import Engine

T = TypeVar("T")

# How long the parent waits for workers to clean up before killing them outright.
GRACE_SECONDS = 1.0
# Modules whose kill_all() kills the process groups a worker started (plugins, helm, git):
# every program kzgit runs goes through kzgit.proc.
_CHILD_REGISTRIES = ("kzgit.proc",)


class _Stop(BaseException):
    """Unwinds a worker's task when the parent stops the pool (not an error of the task)."""


_stopping = 0     # the signal that stops this worker, once one came
_in_task = False


def guarded(fn: "Callable[..., T]", *args: Any) -> T:
    """Run a task in a worker; exit the worker, once the task has unwound, if it is stopping."""
    global _in_task
    if _stopping:
        os._exit(128 + _stopping)
    _in_task = True
    try:
        return fn(*args)
    except _Stop:
        os._exit(128 + _stopping)
    finally:
        _in_task = False


def init_worker() -> None:
    """``initializer`` of a render pool's worker processes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, _stop)


def _stop(signum: int, frame: Any) -> None:
    global _stopping
    if _stopping:
        return
    _stopping = signum
    for name in _CHILD_REGISTRIES:
        kill_all = getattr(sys.modules.get(name), "kill_all", None)
        if callable(kill_all):
            try:
                kill_all()
            except Exception:  # noqa: BLE001,S110 - exiting anyway; the parent kills what is left
                pass
    if _in_task:
        raise _Stop()
    os._exit(128 + signum)


def stop_workers(pool: concurrent.futures.Executor, grace: float = GRACE_SECONDS) -> None:
    """Stop a process pool's workers now: SIGTERM, then SIGKILL after ``grace`` seconds (call it
    before ``shutdown()``, which forgets the workers).

    For a thread pool this does nothing (threads end when the processes they wait for are
    killed).
    """
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for p in processes:
        try:
            os.kill(p.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError, TypeError):
            pass
    deadline = time.monotonic() + grace
    for p in processes:
        p.join(max(0.0, deadline - time.monotonic()))
    for p in processes:
        if p.is_alive():
            p.kill()
            p.join(1.0)


@contextlib.contextmanager
def render_pool(engine: Engine, workers: int) -> Iterator[concurrent.futures.Executor]:
    """An executor for renders with ``engine``: processes for the builtin engine (CPU-bound
    Python), threads for external binaries (processes already).

    On ^C / SIGTERM queued renders are dropped and external renders in flight are killed:
    they run in their own process groups, which the terminal's signal does not reach.
    """
    # loaded before the pool starts, as it always was: an interrupt then finds its registry
    # of programs to kill, and (measured) the pool's shutdown at exit stays clean
    from kzgit import proc
    pool: concurrent.futures.Executor
    if engine.name == "builtin":
        # import the pipeline once here, so forked workers inherit it instead of each
        # importing it again
        import kzgit.builder.pipeline  # noqa: F401
        # a plugin a worker runs unconfined is reported by the command (kzgit.cli.main)
        from kzgit.sandbox import share_record
        share_record()
        # "fork", said explicitly: the workers inherit the imported pipeline (and Python 3.14
        # makes "forkserver" the default on Linux, which would import it again in each)
        pool = concurrent.futures.ProcessPoolExecutor(
            max_workers=workers, initializer=init_worker, mp_context=multiprocessing.get_context("fork"))
    else:
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers)
    try:
        yield pool
    except BaseException:
        stop_workers(pool)   # queued and running renders too, and what they started
        pool.shutdown(wait=False, cancel_futures=True)
        proc.kill_all()
        raise
    pool.shutdown()
