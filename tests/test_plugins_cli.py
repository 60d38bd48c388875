"""``kzgit build`` with misbehaving plugins, through the real CLI in a child process.

A hanging plugin is killed at ``--plugin-timeout`` with its children; SIGINT to kzgit while a
plugin runs exits 130 and leaves no plugin process behind.
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


try:
    from kzgit.plugins.builtin import PluginRunner  # noqa: F401
    HAVE_RUNNER = True
except ImportError:  # pragma: no cover
    HAVE_RUNNER = False

pytestmark = pytest.mark.skipif(not HAVE_RUNNER, reason="kzgit build does not run external "
                                                        "plugins yet (kzgit.plugins.builtin)")

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
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not group_alive(pgid):
            return True
        time.sleep(0.02)
    return not group_alive(pgid)


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
    env = dict(os.environ, HOME=str(home), KUSTOMIZE_PLUGIN_HOME=str(home / "plugin"))
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[1]),
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


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_plugin_leaves_no_orphan(tmp_path: Path, sig: signal.Signals) -> None:
    env = setup_tree(tmp_path)
    child = subprocess.Popen([sys.executable, "-m", "kzgit", "build", "--enable-alpha-plugins",
                              str(tmp_path / "k")], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        pidfile = tmp_path / "pid"
        end = time.monotonic() + 30
        while not pidfile.exists() and time.monotonic() < end:
            time.sleep(0.02)
        assert pidfile.exists(), "the plugin did not start"
        pgid = int(pidfile.read_text())
        assert group_alive(pgid)
        child.send_signal(sig)
        _, err = child.communicate(timeout=20)
        assert child.returncode == 130, err.decode()
        assert wait_gone(pgid), "no plugin process outlives kzgit"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
