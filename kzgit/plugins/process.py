"""The one way kzgit runs an external program (exec plugins, KRM functions, crane plugins, helm).

kustomize runs plugins with ``exec.Command(...).Output()`` (api/internal/plugins/execplugin/
execplugin.go): no timeout, the child inherits the process group, and a plugin that forks a
daemon keeps running after kustomize exits.  kzgit instead:

* starts every program in its own session / process group (``start_new_session``), so one
  ``killpg`` reaches the program and every child it spawned;
* closes stdin unless it feeds it (a plugin that reads stdin sees EOF, never the terminal);
* enforces a wall-clock timeout, then kills the whole group and raises :class:`PluginError`
  saying "timed out" and naming the program;
* caps the size of stdout, so a runaway plugin cannot fill memory;
* kills the group when the program has exited but left children holding its pipes, and on
  *any* exception in the caller's thread (``KeyboardInterrupt`` included: the CLI turns SIGTERM
  into ``KeyboardInterrupt``);
* keeps a registry of live groups so :func:`kill_all` (called by the CLI and at interpreter
  exit) can stop programs started from worker threads.

Library code: nothing here prints.
"""
from __future__ import annotations

import atexit
import dataclasses
import errno
import os
import selectors
import signal
import subprocess
import threading
import time
from typing import Dict, List, Mapping, Optional, Sequence, Set

from kzgit.errors import PluginError

__all__ = ["ProcessResult", "run_process", "kill_all", "stderr_tail", "DEFAULT_MAX_OUTPUT"]

#: Default cap on a program's stdout (bytes).  kustomize outputs of a few hundred MiB exist only
#: in pathological trees; a plugin printing more is treated as runaway.
DEFAULT_MAX_OUTPUT = 256 * 1024 * 1024
#: How much of stderr is kept (the tail): enough for an error message, bounded in memory.
STDERR_KEEP = 64 * 1024
#: After the program exits, how long children may keep its pipes open before being killed.
ORPHAN_GRACE_SECONDS = 0.5
#: Lines of stderr quoted in error messages.
STDERR_TAIL_LINES = 20

_live_lock = threading.Lock()
_live_groups: Set[int] = set()


@dataclasses.dataclass
class ProcessResult:
    """What a program did: its exit status and captured output."""

    argv: List[str]
    returncode: int
    stdout: bytes
    stderr: bytes


def stderr_tail(stderr: bytes, lines: int = STDERR_TAIL_LINES) -> str:
    """The last ``lines`` non-empty lines of ``stderr``, decoded leniently."""
    text = stderr.decode("utf-8", errors="replace")
    kept = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(kept[-lines:])


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    except OSError as e:  # pragma: no cover - ESRCH variants on odd platforms
        if e.errno not in (errno.ESRCH, errno.EPERM):
            raise


def kill_all() -> None:
    """Kill every process group started by :func:`run_process` that is still registered."""
    with _live_lock:
        groups = list(_live_groups)
        _live_groups.clear()
    for pgid in groups:
        _kill_group(pgid)


atexit.register(kill_all)


def _describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = str(-returncode)
        return f"was killed by signal {name}"
    return f"exited with code {returncode}"


def run_process(argv: Sequence[str], *, label: str, input: Optional[bytes] = None,
                cwd: Optional[str] = None, env: Optional[Mapping[str, str]] = None,
                timeout: Optional[float] = 60.0, max_output: int = DEFAULT_MAX_OUTPUT,
                check: bool = True) -> ProcessResult:
    """Run ``argv`` to completion under kzgit's process rules and return its output.

    ``label`` names the program in every error (for plugins: ``plugin /path/to/Kind``).
    ``input`` is written to stdin, which is otherwise ``/dev/null``.  ``timeout`` of ``None`` or
    ``<= 0`` disables the time bound.  With ``check`` a non-zero exit raises
    :class:`PluginError` with the exit status and the last lines of stderr.
    """
    argv = [str(a) for a in argv]
    try:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=dict(env) if env is not None else None,
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True, close_fds=True)
    except FileNotFoundError:
        raise PluginError(f"{label}: cannot run '{argv[0]}': no such file") from None
    except PermissionError:
        raise PluginError(f"{label}: cannot run '{argv[0]}': permission denied "
                          f"(is it executable?)") from None
    except OSError as e:
        raise PluginError(f"{label}: cannot run '{argv[0]}': {e.strerror or e}") from None
    pgid = proc.pid  # start_new_session: the child leads its own group
    with _live_lock:
        _live_groups.add(pgid)
    try:
        out, err, why = _communicate(proc, input, timeout, max_output)
    except BaseException:
        _kill_group(pgid)
        proc.wait()
        raise
    finally:
        # Whatever happened, nothing of this program survives: children that detached from the
        # pipes but stayed in the group die here.
        _kill_group(pgid)
        with _live_lock:
            _live_groups.discard(pgid)
        for f in (proc.stdin, proc.stdout, proc.stderr):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass
    if why == "timeout":
        proc.wait()
        msg = f"{label} timed out after {timeout:g}s and was killed"
        tail = stderr_tail(err)
        raise PluginError(msg + (f"; last lines of its stderr:\n{tail}" if tail else ""),
                          tip="raise the limit with --plugin-timeout SECONDS if the plugin is "
                              "just slow")
    if why == "too-much-output":
        proc.wait()
        raise PluginError(f"{label} wrote more than {max_output} bytes to stdout and was killed")
    rc = proc.wait()
    result = ProcessResult(argv, rc, out, err)
    if check and rc != 0:
        raise PluginError(failure_message(label, result))
    return result


def failure_message(label: str, result: ProcessResult) -> str:
    """``<label> exited with code N`` plus the tail of its stderr."""
    msg = f"{label} {_describe_exit(result.returncode)}"
    tail = stderr_tail(result.stderr)
    if tail:
        msg += f"; last lines of its stderr:\n{tail}"
    return msg


def _communicate(proc: "subprocess.Popen[bytes]", input: Optional[bytes],
                 timeout: Optional[float], max_output: int) -> "tuple[bytes, bytes, str]":
    """Feed stdin, collect stdout/stderr; return (stdout, stderr, "" | "timeout" | "too-much-output")."""
    deadline = time.monotonic() + timeout if timeout and timeout > 0 else None
    sel = selectors.DefaultSelector()
    out_chunks: List[bytes] = []
    out_size = 0
    err_buf = bytearray()
    to_write = memoryview(input) if input is not None else None
    written = 0
    assert proc.stdout is not None and proc.stderr is not None
    fds: Dict[int, str] = {}
    for f, name in ((proc.stdout, "out"), (proc.stderr, "err")):
        os.set_blocking(f.fileno(), False)
        sel.register(f.fileno(), selectors.EVENT_READ)
        fds[f.fileno()] = name
    if proc.stdin is not None:
        if to_write is not None and len(to_write):
            os.set_blocking(proc.stdin.fileno(), False)
            sel.register(proc.stdin.fileno(), selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
    exited_at: Optional[float] = None
    try:
        while sel.get_map():
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                return b"".join(out_chunks), bytes(err_buf), "timeout"
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > ORPHAN_GRACE_SECONDS:
                break  # the program is gone; its children keep the pipes open: kill them
            wait = 0.1
            if deadline is not None:
                wait = max(0.0, min(wait, deadline - now))
            for key, events in sel.select(wait):
                fd = key.fd
                if events & selectors.EVENT_WRITE:
                    assert proc.stdin is not None and to_write is not None
                    try:
                        n = os.write(fd, to_write[written:written + 65536])
                        written += n
                    except BlockingIOError:
                        continue
                    except (BrokenPipeError, OSError):
                        written = len(to_write)  # the program stopped reading; that's its business
                    if written >= len(to_write):
                        sel.unregister(fd)
                        proc.stdin.close()
                    continue
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not data:
                    sel.unregister(fd)
                    continue
                if fds[fd] == "out":
                    out_size += len(data)
                    if out_size > max_output:
                        return b"".join(out_chunks), bytes(err_buf), "too-much-output"
                    out_chunks.append(data)
                else:
                    err_buf += data
                    if len(err_buf) > STDERR_KEEP:
                        del err_buf[:len(err_buf) - STDERR_KEEP]
    finally:
        sel.close()
    # Wait for the exit status within the deadline (the pipes are closed or abandoned).
    while proc.poll() is None:
        if deadline is not None and time.monotonic() >= deadline:
            return b"".join(out_chunks), bytes(err_buf), "timeout"
        time.sleep(0.01)
    return b"".join(out_chunks), bytes(err_buf), ""
