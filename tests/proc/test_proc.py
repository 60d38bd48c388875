"""kzgit.proc: timeouts, process groups, output caps, interrupts, death with kzgit — no process outlives kzgit."""
from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from helpers import default_signals, group_alive, wait_gone, wait_pid_file

from kzgit import proc
from kzgit.errors import KzgitError, PluginError
from kzgit.proc import run_process

pytestmark = pytest.mark.usefixtures("isolated_home")   # conftest.py


def script(tmp_path: Path, name: str, body: str) -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(body).lstrip())
    p.chmod(0o755)
    return p


def test_output_and_stdin(tmp_path: Path) -> None:
    res = run_process(["sh", "-c", "cat; echo err >&2"], label="t", input=b"hello\n")
    assert res.stdout == b"hello\n" and res.stderr == b"err\n" and res.returncode == 0
    # stdin is /dev/null unless fed: a reader sees EOF at once instead of the terminal
    res = run_process(["sh", "-c", "cat; echo done"], label="t")
    assert res.stdout == b"done\n"


def test_large_input_and_output(tmp_path: Path) -> None:
    data = b"x" * (3 * 1024 * 1024)
    res = run_process(["cat"], label="t", input=data)
    assert res.stdout == data


def test_hanging_plugin_is_killed_within_timeout(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    p = script(tmp_path, "hang.sh", f"""\
        #!/bin/sh
        echo $$ > {pidfile}
        sleep 300 &
        echo started >&2
        sleep 300
        """)
    start = time.monotonic()
    with pytest.raises(PluginError) as e:
        run_process([str(p)], label=f"plugin {p}", timeout=1.0)
    elapsed = time.monotonic() - start
    assert elapsed < 10, "killed at the 1 s timeout (10x), not after the 300 s sleep"
    msg = str(e.value)
    assert "timed out" in msg and str(p) in msg and "--plugin-timeout" in msg and "started" in msg
    pgid = int(pidfile.read_text())
    assert wait_gone(pgid), "the plugin's whole process group is killed"


def test_children_left_behind_are_killed(tmp_path: Path) -> None:
    """A plugin that exits but leaves a child holding its stdout open does not stall kzgit."""
    pidfile = tmp_path / "pid"
    p = script(tmp_path, "fork.sh", f"""\
        #!/bin/sh
        echo $$ > {pidfile}
        sleep 300 &
        echo out
        """)
    start = time.monotonic()
    res = run_process([str(p)], label="t", timeout=30)
    assert res.stdout == b"out\n" and time.monotonic() - start < 5
    assert wait_gone(int(pidfile.read_text()))


def test_output_cap(tmp_path: Path) -> None:
    with pytest.raises(PluginError, match="wrote more than 1000 bytes"):
        run_process(["sh", "-c", "yes"], label="plugin yes", max_output=1000, timeout=10)


def test_failure_message(tmp_path: Path) -> None:
    with pytest.raises(PluginError) as e:
        run_process(["sh", "-c", "echo bad thing >&2; exit 7"], label="plugin /x/Y")
    assert str(e.value).startswith("plugin /x/Y exited with code 7") and "bad thing" in str(e.value)
    with pytest.raises(PluginError, match="killed by signal SIGTERM"):
        run_process(["sh", "-c", "kill -TERM $$"], label="plugin /x/Y")
    with pytest.raises(PluginError, match="cannot run '/no/such/prog': no such file"):
        run_process(["/no/such/prog"], label="plugin /no/such/prog")
    res = run_process(["sh", "-c", "exit 2"], label="t", check=False)
    assert res.returncode == 2


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_interrupt_kills_plugin_group(tmp_path: Path, sig: signal.Signals) -> None:
    """SIGINT/SIGTERM/SIGHUP to kzgit while a plugin runs: the plugin and its children die too."""
    pidfile = tmp_path / "pid"
    p = script(tmp_path, "hang.sh", f"""\
        #!/bin/sh
        sleep 300 &
        echo $$ > {pidfile}.tmp && mv {pidfile}.tmp {pidfile}
        sleep 300
        """)
    driver = textwrap.dedent(f"""
        import sys
        from kzgit.cli.main import _install_signal_handlers
        from kzgit.proc import run_process
        _install_signal_handlers()  # as kzgit's CLI: SIGTERM and SIGHUP unwind like Ctrl-C
        try:
            run_process([{str(p)!r}], label="plugin", timeout=60)
        except KeyboardInterrupt:
            sys.exit(130)
    """)
    child = subprocess.Popen([sys.executable, "-c", driver], preexec_fn=default_signals)
    try:
        pgid = wait_pid_file(pidfile, 10)
        child.send_signal(sig)
        assert child.wait(timeout=10) == 130
        assert wait_gone(pgid), "no plugin process outlives kzgit"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def _wait_for(path: Path, seconds: float = 10) -> None:
    end = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < end:
        time.sleep(0.02)
    assert path.exists(), f"{path} never appeared"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
@pytest.mark.parametrize("start", [
    "from kzgit.proc import run; run([{p!r}], timeout=60)",
    # a long-lived batch program (git cat-file --batch) as well
    "import time; from kzgit.proc import BatchProcess; b = BatchProcess([{p!r}], timeout=60); time.sleep(60)",
], ids=["run", "batch"])
def test_program_dies_when_kzgit_is_killed(tmp_path: Path, start: str) -> None:
    """kill -9 of kzgit runs no cleanup at all: the kernel still kills the program it started."""
    pidfile = tmp_path / "pid"
    p = script(tmp_path, "hang.sh", f"""\
        #!/bin/sh
        echo $$ > {pidfile}.tmp && mv {pidfile}.tmp {pidfile}
        exec sleep 300
        """)
    driver = start.format(p=str(p))
    child = subprocess.Popen([sys.executable, "-c", driver])
    try:
        _wait_for(pidfile)
        pgid = int(pidfile.read_text())
        assert group_alive(pgid)
        child.kill()
        child.wait(timeout=10)
        assert wait_gone(pgid), "the program outlived a SIGKILLed kzgit"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_run_reports_timeout_and_overflow_without_raising(tmp_path: Path) -> None:
    res = proc.run(["sh", "-c", "echo partial; sleep 30"], timeout=0.5)
    assert res.timed_out and not res.overflowed and res.stdout == b"partial\n"
    res = proc.run(["sh", "-c", "yes"], timeout=10, max_output=4096)
    assert res.overflowed and not res.timed_out
    with pytest.raises(FileNotFoundError):
        proc.run(["/no/such/program"], timeout=5)
    assert proc.live_groups() == []


def test_hook_git_runs_in_its_own_group_and_is_killed_on_timeout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hooks' git (kzgit.gitio) has the same guarantees: a hanging git and its children die."""
    from kzgit import gitio
    pidfile = tmp_path / "pid"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script(bindir, "git", f"""\
        #!/bin/sh
        sleep 300 &
        echo $$ > {pidfile}
        sleep 300
        """)
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    t0 = time.monotonic()
    with pytest.raises(KzgitError, match="timed out after 0.5s"):
        gitio.git(["status"], str(tmp_path), timeout=0.5)
    assert time.monotonic() - t0 < 5
    assert wait_gone(int(pidfile.read_text())), "git's process group outlived the timeout"


def test_git_env_keeps_configuration_choices_and_drops_redirections() -> None:
    env = proc.git_env({"GIT_DIR": "/x/.git", "GIT_INDEX_FILE": "/x/i", "GIT_WORK_TREE": "/x",
                        "GIT_OBJECT_DIRECTORY": "/x/o", "GIT_CONFIG_PARAMETERS": "'a.b'='c'",
                        "GIT_CONFIG_GLOBAL": "/ci/gitconfig", "GIT_CONFIG_SYSTEM": "/ci/sys",
                        "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_COUNT": "1",
                        "GIT_CONFIG_KEY_0": "k", "GIT_CONFIG_VALUE_0": "v",
                        "GIT_SSH_COMMAND": "ssh -i k", "HOME": "/h"})
    assert env == {"GIT_CONFIG_GLOBAL": "/ci/gitconfig", "GIT_CONFIG_SYSTEM": "/ci/sys",
                   "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "k",
                   "GIT_CONFIG_VALUE_0": "v", "GIT_SSH_COMMAND": "ssh -i k", "HOME": "/h"}


# -- BatchProcess: a program kept running to answer requests ----------------------------------
def test_batch_process_answers_requests_in_turn() -> None:
    b = proc.BatchProcess(["sh", "-c", "while read -r x; do echo \"got $x\"; printf 'abc'; done"],
                          timeout=10)
    try:
        assert b.pid in proc.live_groups()
        for word in ("one", "two"):
            b.send(word.encode() + b"\n")
            assert b.read_line() == f"got {word}\n".encode()
            assert b.read_exact(3) == b"abc"
        big = b"x" * (3 * 1024 * 1024)
        c = proc.BatchProcess(["cat"], timeout=10)
        try:
            c.send(big[:60000])    # within a pipe's buffer: no reader needed yet
            assert c.read_exact(60000) == big[:60000]
        finally:
            c.close()
    finally:
        b.close()
    b.close()   # twice is fine
    assert b.closed and b.pid not in proc.live_groups() and wait_gone(b.pid)


def test_batch_process_timeout_and_end_kill_the_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    p = script(tmp_path, "silent.sh", f"""\
        #!/bin/sh
        sleep 300 &
        echo $$ > {pidfile}
        echo oops >&2
        sleep 300
        """)
    b = proc.BatchProcess([str(p)], timeout=0.5)
    t0 = time.monotonic()
    with pytest.raises(TimeoutError):
        b.read_line()
    assert time.monotonic() - t0 < 5
    assert b.closed and wait_gone(b.pid), "the program and its children outlived the timeout"
    assert b"oops" in b.stderr
    e = proc.BatchProcess(["sh", "-c", "echo bye >&2; printf partial"], timeout=10)
    with pytest.raises(EOFError):
        e.read_line()
    assert e.closed and e.pid not in proc.live_groups() and b"bye" in e.stderr
    with pytest.raises(EOFError):
        e.send(b"x\n")


def test_batch_process_is_stopped_by_kill_all() -> None:
    """Ctrl-C: the CLI's kill_all reaches a batch program as any other."""
    b = proc.BatchProcess(["cat"], timeout=10)
    try:
        proc.kill_all()
        with pytest.raises(EOFError):
            b.read_line()
        assert wait_gone(b.pid)
    finally:
        b.close()



def test_exit_status_is_waited_for_without_coarse_sleeps(monkeypatch: pytest.MonkeyPatch) -> None:
    """A program's pipes close as it exits: its status is collected at once, not after a fixed
    sleep (kzgit diff runs git several times; 10 ms each added up)."""
    naps: list = []
    real_sleep = time.sleep

    def sleep(seconds: float) -> None:
        naps.append(seconds)
        real_sleep(seconds)
    monkeypatch.setattr(time, "sleep", sleep)
    for _ in range(5):
        assert proc.run(["sh", "-c", "exec true"], timeout=30).returncode == 0
    assert all(n < 0.005 for n in naps), naps


@pytest.mark.parametrize("starter", ["run", "batch"])
def test_interrupt_while_the_program_starts_still_kills_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, starter: str) -> None:
    """A signal that lands while Popen returns (the child runs, its pid is not known yet) is
    held and raised once the group is listed: the program dies with the interrupt."""
    pidfile = tmp_path / "pid"
    p = script(tmp_path, "hang.sh", f"""\
        #!/bin/sh
        echo $$ > {pidfile}.tmp && mv {pidfile}.tmp {pidfile}
        sleep 300
        """)
    real = subprocess.Popen

    def popen_then_interrupted(*args: object, **kwargs: object) -> "subprocess.Popen[bytes]":
        child = real(*args, **kwargs)  # type: ignore[call-overload]
        wait_pid_file(pidfile, 10)
        signal.raise_signal(signal.SIGINT)   # Ctrl-C before Popen has returned
        return child

    monkeypatch.setattr(proc.subprocess, "Popen", popen_then_interrupted)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            if starter == "run":
                proc.run([str(p)], timeout=60)
            else:
                proc.BatchProcess([str(p)], timeout=60)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert wait_gone(int(pidfile.read_text())), "the program outlived the interrupt"
    assert proc.live_groups() == []


def _spy_popen(monkeypatch: pytest.MonkeyPatch) -> "list[dict[str, object]]":
    seen: "list[dict[str, object]]" = []
    real = subprocess.Popen

    def spy(*a: object, **k: object) -> "subprocess.Popen[bytes]":
        seen.append(dict(k))
        return real(*a, **k)  # type: ignore[call-overload,no-any-return]

    monkeypatch.setattr(subprocess, "Popen", spy)
    return seen


def test_local_git_starts_on_the_fast_path_in_its_own_session(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 24, item 4: a ``preexec_fn`` turns off CPython's vfork path (the whole process is
    forked, page tables and all) and runs Python in the child.  The hooks' git needs nothing
    done in the child: it starts without one, still leading its own session and group."""
    from kzgit import gitio
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    seen = _spy_popen(monkeypatch)
    gitio.git(["rev-parse", "--git-dir"], str(tmp_path))
    assert [k.get("preexec_fn") for k in seen] == [None]
    assert seen[0].get("start_new_session") is True
    res = proc.run([sys.executable, "-c", "import os; print(os.getsid(0), os.getpgid(0), os.getpid())"],
                   timeout=30, die_with_parent=False)
    sid, pgid, pid = res.stdout.split()
    assert sid == pgid == pid, "not the leader of its own session and group"


def test_programs_that_need_the_child_side_keep_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Plugins (run_process) and batch readers keep PR_SET_PDEATHSIG (Linux): a preexec_fn."""
    seen = _spy_popen(monkeypatch)
    run_process(["true"], label="plugin", timeout=30)
    b = proc.BatchProcess(["cat"], timeout=30)
    b.close()
    expected = sys.platform.startswith("linux")
    assert [k.get("preexec_fn") is not None for k in seen] == [expected, expected]
