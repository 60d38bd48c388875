"""``kzgit build`` with misbehaving plugins, through the real CLI in a child process.

A hanging plugin is killed at ``--plugin-timeout`` with its children; SIGINT to kzgit while a
plugin runs exits 130, SIGTERM and SIGHUP (the terminal closing) exit 128+N, and none leaves a
plugin process or a temporary file behind.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict

import pytest

from helpers import PROJECT, default_signals, grant_sandbox, wait_gone, wait_pid_file



HANG = """\
#!/bin/sh
sleep 300 &
echo $$ > "{pidfile}.tmp" && mv "{pidfile}.tmp" "{pidfile}"
echo "plugin is stuck" >&2
sleep 300
"""


def setup_tree(tmp_path: Path) -> Dict[str, str]:
    home = tmp_path / "home"
    plugin = home / "plugin" / "someteam.example.com" / "v1" / "hang" / "Hang"
    plugin.parent.mkdir(parents=True)
    plugin.write_text(HANG.format(pidfile=tmp_path / "pid"))
    plugin.chmod(0o755)
    k = tmp_path / "k"
    k.mkdir()
    (k / "kustomization.yaml").write_text("generators:\n- hang.yaml\n")
    (k / "hang.yaml").write_text("apiVersion: someteam.example.com/v1\nkind: Hang\n"
                                 "metadata:\n  name: h\n")
    tmp = tmp_path / "tmp"   # kzgit's temporary files (the plugin's config file) go here
    tmp.mkdir()
    # the plugin writes its pid file next to the tree: the user's configuration lets the
    # sandbox allow it
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    grant_sandbox(home / ".config", allow_write=[str(tmp_path)])
    env = dict(os.environ, HOME=str(home), KUSTOMIZE_PLUGIN_HOME=str(home / "plugin"),
               TMPDIR=str(tmp), XDG_CONFIG_HOME=str(home / ".config"))
    env["PYTHONPATH"] = os.pathsep.join([str(PROJECT),
                                         env.get("PYTHONPATH", "")])
    return env


def test_hanging_plugin_times_out(tmp_path: Path) -> None:
    env = setup_tree(tmp_path)
    start = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "kzgit", "build", "--enable-alpha-plugins",
                          "--plugin-timeout", "1", str(tmp_path / "k")],
                         capture_output=True, env=env, timeout=60)
    assert res.returncode == 1
    err = res.stderr.decode()
    assert "timed out after 1s" in err and "someteam.example.com/v1/hang/Hang" in err
    assert "plugin is stuck" in err and "Traceback" not in err
    assert time.monotonic() - start < 15
    assert wait_gone(int((tmp_path / "pid").read_text()))


def wait_plugin_started(tmp_path: Path) -> int:
    """The plugin's process group, once it runs."""
    return wait_pid_file(tmp_path / "pid")


@pytest.mark.parametrize("sig, code, said", [(signal.SIGINT, 130, "Interrupted (^C)"),
                                             (signal.SIGTERM, 128 + signal.SIGTERM, "Interrupted (SIGTERM)"),
                                             (signal.SIGHUP, 128 + signal.SIGHUP, "Interrupted (SIGHUP)")])
def test_signal_during_plugin_leaves_no_orphan(tmp_path: Path, sig: signal.Signals, code: int,
                                               said: str) -> None:
    env = setup_tree(tmp_path)
    child = subprocess.Popen([sys.executable, "-m", "kzgit", "build", "--enable-alpha-plugins",
                              str(tmp_path / "k")], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=default_signals)
    try:
        pgid = wait_plugin_started(tmp_path)
        start = time.monotonic()
        child.send_signal(sig)
        out, err = child.communicate(timeout=20)
        assert time.monotonic() - start < 5, "kzgit exits promptly"
        assert child.returncode == code, err.decode()
        assert err.decode().splitlines()[-1] == said and "Traceback" not in err.decode()
        assert out == b""
        assert wait_gone(pgid), "no plugin process outlives kzgit"
        assert os.listdir(tmp_path / "tmp") == [], "no temporary file outlives kzgit"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_terminal_closed_during_plugin_leaves_no_orphan(tmp_path: Path) -> None:
    """kzgit on a terminal that goes away: the hangup unwinds like ^C though stderr is gone."""
    import pty

    env = setup_tree(tmp_path)
    argv = [sys.executable, "-m", "kzgit", "build", "--enable-alpha-plugins", str(tmp_path / "k")]
    pid, master = pty.fork()   # the child is a session leader with the pty as its terminal
    if pid == 0:  # pragma: no cover - the child
        try:
            default_signals()
            os.execve(sys.executable, argv, env)
        finally:
            os._exit(127)
    try:
        pgid = wait_plugin_started(tmp_path)
        start = time.monotonic()
        os.close(master)   # hang up: the kernel sends SIGHUP to the session leader
        master = -1
        status = None
        while time.monotonic() - start < 20:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.02)
        assert status is not None and done, "kzgit did not exit after the hangup"
        assert time.monotonic() - start < 5, "kzgit exits promptly"
        assert os.waitstatus_to_exitcode(status) == 128 + signal.SIGHUP
        pid = 0
        assert wait_gone(pgid), "no plugin process outlives kzgit"
        assert os.listdir(tmp_path / "tmp") == [], "no temporary file outlives kzgit"
    finally:
        if master >= 0:
            os.close(master)
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except ProcessLookupError:
                pass
