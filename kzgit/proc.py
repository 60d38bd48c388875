"""The one way kzgit runs a program: engines, git, exec plugins, KRM functions, helm, docker.

kustomize runs plugins with ``exec.Command(...).Output()`` (api/internal/plugins/execplugin/
execplugin.go) and git with a 27 s timeout (api/internal/git/gitrunner.go): the child inherits
the process group, and a program that forks a daemon keeps running after kustomize exits.
Every program kzgit starts goes through :func:`run`, which:

* starts it in its own session and process group, so one ``killpg`` reaches the program and
  every child it spawned, and ssh cannot prompt on the terminal;
* on Linux asks the kernel to SIGKILL it when kzgit dies (``PR_SET_PDEATHSIG``), so not even a
  ``kill -9`` of kzgit leaves it running (``die_with_parent``, the default; see below);
* closes stdin unless it feeds it (a reader sees EOF, never the terminal);
* enforces a wall-clock timeout and caps stdout (a runaway program cannot fill memory);
* kills the whole group when the program exits (children left holding its pipes die after a
  short grace), on timeout, and on *any* exception in the caller's thread:
  ``KeyboardInterrupt`` included, which the CLI raises for SIGINT, SIGTERM and SIGHUP;
* keeps a registry of live groups so :func:`kill_all` (called on interrupt and at interpreter
  exit) stops programs started from worker threads;
* optionally confines the child (``sandbox``: a function run in the child between fork and
  exec, see :mod:`kzgit.sandbox`).

Starting costs what it should: ``PR_SET_PDEATHSIG`` and the sandbox are the only work done
between fork and exec (a ``preexec_fn``), and only for the children that need them.  A
``preexec_fn`` makes CPython fork the whole process (page tables: 3 ms at 40 MB, 21 ms at 200
MB) and run Python code in the child, which is unsafe while other threads hold locks; without
one it uses ``vfork`` (CPython 3.10+), whose cost does not grow with kzgit's memory.  The
session and process group come from ``start_new_session``, which that path supports.  Local
git plumbing (:mod:`kzgit.gitio`: bounded work that ends on its own, and by ``SIGPIPE`` once
nobody reads it) starts with ``die_with_parent=False``; plugins, helm, external engines,
network git and batch readers keep the parent-death signal.

A program kept running to answer requests one after another (``git cat-file --batch``) is a
:class:`BatchProcess`: started the same way, with a timeout on every read, killed by
:func:`kill_all` and by its ``close()``.

:func:`git_env` is the one scrub of git's environment.  This is the only module that creates
sessions or kills process groups.  Library code: nothing here prints.
"""
from __future__ import annotations

import atexit
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Type

from kzgit.errors import KzgitError, PluginError
from kzgit.record import Record

__all__ = ["Result", "run", "run_process", "kill_all", "live_groups", "stderr_tail",
           "failure_message", "git_env", "DEFAULT_MAX_OUTPUT", "BatchProcess"]

#: Default cap on a program's stdout (bytes).  kustomize outputs of a few hundred MiB exist only
#: in pathological trees; a program printing more is treated as runaway.
DEFAULT_MAX_OUTPUT = 256 * 1024 * 1024
#: How much of stderr is kept (the tail): enough for an error message, bounded in memory.
STDERR_KEEP = 64 * 1024
#: After the program exits, how long children may keep its pipes open before being killed.
ORPHAN_GRACE_SECONDS = 0.5
#: Lines of stderr quoted in error messages.
STDERR_TAIL_LINES = 20

_PR_SET_PDEATHSIG = 1

_live_lock = threading.Lock()
_live_groups: Set[int] = set()


class Result(Record):
    """What a program did: its exit status, captured output, and whether kzgit stopped it.

    A :class:`~kzgit.record.Record`: the hooks run git through here, and ``dataclasses``
    (with ``inspect``) would cost it more than running git does.
    """

    __slots__ = ("argv", "returncode", "stdout", "stderr", "timed_out", "overflowed", "hint")

    def __init__(self, argv: List[str], returncode: int, stdout: bytes, stderr: bytes,
                 timed_out: bool = False, overflowed: bool = False, hint: Optional[str] = None) -> None:
        self.argv = argv
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.timed_out = timed_out
        #: stdout passed ``max_output``; the program was killed
        self.overflowed = overflowed
        #: for a failure: what the caller should add to its message (the sandbox's allowances)
        self.hint = hint


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


# Signals that unwind kzgit (the CLI turns SIGTERM and SIGHUP into KeyboardInterrupt too)
_HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _start(argv: List[str], pending: List[int], **popen: Any) -> "subprocess.Popen[bytes]":
    """Start ``argv`` in its own session and list its group in ``_live_groups``, with the
    unwinding signals held meanwhile.

    An interrupt raised inside ``Popen`` (the child already running, its pid not yet returned)
    or before the group is listed would leave the program behind with nobody to kill it.  In
    the main thread (the only one Python's handlers run in) the handlers are swapped for ones
    that note the signal in ``pending``; the caller calls :func:`_redeliver` once it can clean
    up, which sends it again with the original handlers back.
    """
    held: Dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in _HELD:
            old = signal.getsignal(sig)
            if old in (signal.SIG_IGN, None):
                continue
            signal.signal(sig, lambda signum, frame: pending.append(signum))
            held[sig] = old
    try:
        try:
            proc = subprocess.Popen(argv, start_new_session=True, close_fds=True, **popen)
        except subprocess.SubprocessError as e:  # the preexec_fn failed in the child
            raise OSError(f"cannot set the process up: {e}") from None
        with _live_lock:
            _live_groups.add(proc.pid)
    except BaseException:
        _restore(held)
        _redeliver(pending)   # nothing started: an interrupt that came meanwhile goes first
        raise
    _restore(held)
    return proc


def _restore(held: Dict[int, Any]) -> None:
    for signum, handler in held.items():
        signal.signal(signum, handler)


def _redeliver(pending: List[int]) -> None:
    """Send again the signals :func:`_start` held (to the handlers kzgit had before)."""
    for signum in dict.fromkeys(pending):
        signal.raise_signal(signum)


def kill_all() -> None:
    """Kill every process group started by :func:`run` that is still running.

    Only the signal: the thread that started each program reaps it.
    """
    with _live_lock:
        groups = list(_live_groups)
    for pgid in groups:
        _kill_group(pgid)


def live_groups() -> List[int]:
    """Process groups of the programs running now (their leaders' pids)."""
    with _live_lock:
        return sorted(_live_groups)


atexit.register(kill_all)


# --------------------------------------------------------------------------- the child side

_prctl: Optional[Callable[..., int]] = None
_prctl_loaded = False


def _load_prctl() -> Optional[Callable[..., int]]:
    """libc's ``prctl``, resolved once in the parent (the child must not load libraries)."""
    global _prctl, _prctl_loaded
    if not _prctl_loaded:
        _prctl_loaded = True
        if sys.platform.startswith("linux"):
            try:
                import ctypes  # here, not at import time: only a process start needs it
                _prctl = ctypes.CDLL(None, use_errno=True).prctl
            except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
                _prctl = None
    return _prctl


def _child_setup(sandbox: Optional[Callable[[], None]],
                 die_with_parent: bool = True) -> Optional[Callable[[], None]]:
    """The ``preexec_fn``: die with kzgit, then enter the sandbox.  Runs after ``setsid``.

    None (CPython's fast ``vfork`` path) when there is nothing to do in the child.
    """
    prctl = _load_prctl() if die_with_parent else None
    if prctl is None and sandbox is None:
        return None
    parent = os.getpid()

    def setup() -> None:  # pragma: no cover - runs in the child
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            # kzgit died between fork and prctl: the signal will never come
            if os.getppid() != parent:
                os.kill(os.getpid(), signal.SIGKILL)
        if sandbox is not None:
            sandbox()
    return setup


# --------------------------------------------------------------------------- running

def run(argv: Sequence[str], *, input: Optional[bytes] = None, cwd: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None, timeout: Optional[float],
        max_output: int = DEFAULT_MAX_OUTPUT,
        sandbox: Optional[Callable[[], None]] = None, die_with_parent: bool = True) -> Result:
    """Run ``argv`` to completion under kzgit's process rules and return what it did.

    ``input`` is written to stdin, which is otherwise ``/dev/null``.  ``timeout`` of ``None`` or
    ``<= 0`` disables the time bound.  ``env`` of ``None`` inherits kzgit's environment.  A
    program that cannot be started raises :class:`OSError` (the caller words it); a timeout or
    too much output is reported in the result, the group already killed.
    ``die_with_parent=False`` drops ``PR_SET_PDEATHSIG`` for a program that ends on its own
    (local git): without a sandbox it then starts on CPython's fast path (no ``preexec_fn``).
    """
    argv = [str(a) for a in argv]
    pending: List[int] = []
    proc = _start(argv, pending, cwd=cwd, env=dict(env) if env is not None else None,
                  stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                  preexec_fn=_child_setup(sandbox, die_with_parent))
    pgid = proc.pid  # start_new_session: the child leads its own group
    try:
        _redeliver(pending)
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
    rc = proc.wait()
    return Result(argv, rc, out, err, timed_out=why == "timeout", overflowed=why == "overflow")


def describe_exit(returncode: int) -> str:
    """``exited with code N`` or ``was killed by signal SIGNAME``."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = str(-returncode)
        return f"was killed by signal {name}"
    return f"exited with code {returncode}"


def failure_message(label: str, result: Result) -> str:
    """``<label> exited with code N`` plus the tail of its stderr."""
    msg = f"{label} {describe_exit(result.returncode)}"
    tail = stderr_tail(result.stderr)
    if tail:
        msg += f"; last lines of its stderr:\n{tail}"
    return msg


def run_process(argv: Sequence[str], *, label: str, input: Optional[bytes] = None,
                cwd: Optional[str] = None, env: Optional[Mapping[str, str]] = None,
                timeout: Optional[float] = 60.0, max_output: int = DEFAULT_MAX_OUTPUT,
                check: bool = True, sandbox: Optional[Callable[[], None]] = None,
                error: Type[KzgitError] = PluginError,
                timeout_tip: Optional[str] = "raise the limit with --plugin-timeout SECONDS if "
                                             "the plugin is just slow",
                hint: Optional[str] = None) -> Result:
    """:func:`run`, with every way of failing raised as ``error`` (a :class:`PluginError`).

    ``label`` names the program in every message (for plugins: ``plugin /path/to/Kind``).
    With ``check`` a non-zero exit raises with the exit status and the last lines of stderr.
    ``hint`` is the tip of a failure the program's confinement may explain (a non-zero exit, a
    refused start); it is also :attr:`Result.hint` of a failed result.
    """
    argv = [str(a) for a in argv]
    try:
        res = run(argv, input=input, cwd=cwd, env=env, timeout=timeout, max_output=max_output,
                  sandbox=sandbox)
    except FileNotFoundError:
        raise error(f"{label}: cannot run '{argv[0]}': no such file") from None
    except PermissionError:
        raise error(f"{label}: cannot run '{argv[0]}': permission denied "
                    f"(is it executable?)", tip=hint) from None
    except OSError as e:
        raise error(f"{label}: cannot run '{argv[0]}': {e.strerror or e}") from None
    if res.timed_out:
        tail = stderr_tail(res.stderr)
        raise error(f"{label} timed out after {timeout:g}s and was killed"
                    + (f"; last lines of its stderr:\n{tail}" if tail else ""), tip=timeout_tip)
    if res.overflowed:
        raise error(f"{label} wrote more than {max_output} bytes to stdout and was killed")
    if res.returncode != 0:
        res.hint = hint
        if check:
            raise error(failure_message(label, res), tip=hint)
    return res


def _communicate(proc: "subprocess.Popen[bytes]", input: Optional[bytes],
                 timeout: Optional[float], max_output: int) -> "tuple[bytes, bytes, str]":
    """Feed stdin, collect stdout/stderr; return (stdout, stderr, "" | "timeout" | "overflow")."""
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
                    except OSError:
                        written = len(to_write)  # the program stopped reading; its business
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
                        return b"".join(out_chunks), bytes(err_buf), "overflow"
                    out_chunks.append(data)
                else:
                    err_buf += data
                    if len(err_buf) > STDERR_KEEP:
                        del err_buf[:len(err_buf) - STDERR_KEEP]
    finally:
        sel.close()
    # Wait for the exit status within the deadline (the pipes are closed or abandoned).  A
    # program closes its pipes as it exits: Popen.wait's first polls come within a millisecond,
    # where a fixed 10 ms sleep cost every git call 10 ms.
    try:
        proc.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return b"".join(out_chunks), bytes(err_buf), "timeout"
    return b"".join(out_chunks), bytes(err_buf), ""


# --------------------------------------------------------------------------- git's environment

#: ``GIT_*`` variables that carry the user's transport and configuration choices, kept in the
#: environment of every git kzgit (or an external kustomize) runs: credentials, proxies, CA
#: files, the ``GIT_CONFIG_KEY_n``/``VALUE_n`` pairs of ``git -c``, and which configuration
#: files git reads (CI systems point ``GIT_CONFIG_GLOBAL`` at a file holding insteadOf mirrors
#: and credential helpers, exactly as ``$HOME/.gitconfig`` would).
GIT_ENV_KEPT = frozenset({
    "GIT_EXEC_PATH", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_SSL_CAINFO",
    "GIT_SSL_CAPATH", "GIT_SSL_NO_VERIFY", "GIT_HTTP_PROXY_AUTHMETHOD", "GIT_ASKPASS",
    "GIT_CONFIG_COUNT", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM",
})


def git_env(env: Optional[Mapping[str, str]] = None, keep_also: Sequence[str] = ()) -> Dict[str, str]:
    """The environment without the ``GIT_*`` variables that redirect what git acts on.

    Inside a hook git exports GIT_DIR, GIT_INDEX_FILE, GIT_WORK_TREE... for the repository being
    committed to; inherited by a ``git clone`` or ``git fetch`` for a remote base they would
    fetch into the user's repository instead of the cache (pre-commit/pre-commit#300,
    pre_commit/git.py ``no_git_env``).  Every other ``GIT_*`` variable (object directories,
    alternates, ``GIT_CONFIG_PARAMETERS`` of an outer ``git -c``, trace and pager settings) is
    dropped too; :data:`GIT_ENV_KEPT` and ``keep_also`` are kept.
    """
    src: Mapping[str, Any] = os.environ if env is None else env
    keep = GIT_ENV_KEPT.union(keep_also)
    return {k: v for k, v in src.items()
            if not k.startswith("GIT_") or k in keep
            or k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))}


# --------------------------------------------------------------------------- long-lived programs

class BatchProcess:
    """A program kept running to answer requests, one after another (``git cat-file --batch``).

    Started as :func:`run` starts a program (own session and process group, killed with kzgit,
    listed for :func:`kill_all`), but fed and read a piece at a time: :meth:`send` writes a
    request, :meth:`read_line` and :meth:`read_exact` read the answer, each within ``timeout``
    seconds.  A timeout raises :class:`TimeoutError` and the end of its output :class:`EOFError`;
    either way the program's group is killed first.  :meth:`close` kills it and reaps it (a batch
    program only reads: there is nothing to lose).  The pipes belong to the process that started
    it: a forked child must start its own (callers key their instances by ``os.getpid()``).
    """

    def __init__(self, argv: Sequence[str], *, cwd: Optional[str] = None,
                 env: Optional[Mapping[str, str]] = None, timeout: float) -> None:
        self.argv = [str(a) for a in argv]
        self.timeout = timeout
        pending: List[int] = []
        self._proc = _start(self.argv, pending, cwd=cwd, env=dict(env) if env is not None else None,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_child_setup(None))
        self.pid = self._proc.pid   # start_new_session: the child leads its own group
        self.owner = os.getpid()
        assert self._proc.stdin is not None and self._proc.stdout is not None \
            and self._proc.stderr is not None
        self._in, self._out, self._err = (self._proc.stdin.fileno(), self._proc.stdout.fileno(),
                                          self._proc.stderr.fileno())
        for fd in (self._in, self._out, self._err):
            os.set_blocking(fd, False)
        self._buf = bytearray()
        self._stderr = bytearray()
        self._closed = False
        try:
            _redeliver(pending)
        except BaseException:
            self.close()
            raise

    @property
    def stderr(self) -> bytes:
        """The tail of what the program wrote to stderr so far."""
        return bytes(self._stderr)

    def send(self, data: bytes) -> None:
        """Write ``data`` to the program's stdin (BrokenPipeError when it stopped reading)."""
        view = memoryview(data)
        deadline = time.monotonic() + self.timeout
        while view:
            try:
                n: int = self._when_ready(selectors.EVENT_WRITE, deadline, os.write, self._in, view)
            except BrokenPipeError:
                self.close()
                raise
            view = view[n:]

    def read_line(self) -> bytes:
        """The next line of output, its newline included."""
        deadline = time.monotonic() + self.timeout
        start = 0
        while True:
            end = self._buf.find(b"\n", start)
            if end >= 0:
                line = bytes(self._buf[:end + 1])
                del self._buf[:end + 1]
                return line
            start = len(self._buf)
            self._fill(deadline, 65536)

    def read_exact(self, size: int) -> bytes:
        """The next ``size`` bytes of output."""
        deadline = time.monotonic() + self.timeout
        while len(self._buf) < size:
            self._fill(deadline, max(65536, min(size - len(self._buf), 16 * 1024 * 1024)))
        data = bytes(self._buf[:size])
        del self._buf[:size]
        return data

    def close(self) -> None:
        """Kill the program's group and reap it; closing twice is fine."""
        if self._closed:
            return
        self._closed = True
        if self.owner != os.getpid():   # a forked child's copy: the process is not ours
            return
        self._drain_stderr()   # what a program that ended had to say, for the caller's message
        _kill_group(self.pid)
        with _live_lock:
            _live_groups.discard(self.pid)
        for f in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass
        self._proc.wait()

    @property
    def closed(self) -> bool:
        return self._closed

    def _drain_stderr(self) -> None:
        for _ in range(64):   # bounded: a program still writing does not hold the close up
            try:
                data = os.read(self._err, 65536)
            except (BlockingIOError, OSError):
                return
            if not data:
                return
            self._stderr += data
            del self._stderr[:max(0, len(self._stderr) - STDERR_KEEP)]

    def _check_open(self) -> None:
        if self._closed:
            raise EOFError(f"{self.argv[0]} was stopped")

    def _fill(self, deadline: float, chunk: int) -> None:
        """Read more of stdout into the buffer (stderr's tail kept on the way)."""
        data: bytes = self._when_ready(selectors.EVENT_READ, deadline, os.read, self._out, chunk)
        if not data:
            self.close()
            raise EOFError(f"{self.argv[0]} ended its output")
        self._buf += data

    def _when_ready(self, event: int, deadline: float, op: Callable[..., Any], fd: int,
                    arg: Any) -> Any:
        """``op(fd, arg)`` (a non-blocking read or write), retried once ``fd`` is ready."""
        while True:
            self._check_open()
            try:
                return op(fd, arg)
            except BlockingIOError:
                self._wait(event, fd, deadline)

    def _wait(self, event: int, fd: int, deadline: float) -> None:
        """Until ``fd`` is ready for ``event`` (stderr drained meanwhile); TimeoutError after
        ``deadline``."""
        with selectors.DefaultSelector() as sel:
            sel.register(fd, event)
            sel.register(self._err, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    self.close()
                    raise TimeoutError(f"{self.argv[0]} did not answer within {self.timeout:g}s")
                for key, _ in sel.select(left):
                    if key.fd != self._err:
                        return
                    try:
                        data = os.read(self._err, 65536)
                    except BlockingIOError:
                        continue
                    if not data:
                        sel.unregister(self._err)
                        continue
                    self._stderr += data
                    if len(self._stderr) > STDERR_KEEP:
                        del self._stderr[:len(self._stderr) - STDERR_KEEP]
