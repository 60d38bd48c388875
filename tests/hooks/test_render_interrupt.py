"""^C, SIGTERM and SIGHUP stop a parallel ``kzgit hook render --all`` within 2 s: queued roots
are not rendered, and no worker or plugin process outlives kzgit."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import pytest
from helpers import default_signals, grant_user, group_alive, hanging_plugin_roots, wait_gone

ROOTS = 24


def setup(tmp_path: Path) -> "tuple[Path, dict[str, str]]":
    repo = tmp_path / "repo"
    env = hanging_plugin_roots(repo, ROOTS, tmp_path / "pids")
    config = repo / ".kzgit.toml"   # holds the [sandbox] table; top-level keys go first
    config.write_text("enable-alpha-plugins = true\n" + config.read_text())
    grant_user(env["XDG_CONFIG_HOME"], enable_alpha_plugins=True)   # the user grants it
    env["KZGIT_CACHE_DIR"] = str(tmp_path / "cache")
    for git in (["init", "-q"], ["add", "-A"]):   # the hooks check a git repository
        subprocess.run(["git", *git], cwd=repo, check=True, capture_output=True, timeout=60)
    return repo, env


def started(tmp_path: Path) -> List[int]:
    return [int(p.name) for p in (tmp_path / "pids").iterdir() if p.name.isdigit()]


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 128 + signal.SIGTERM),
                                       (signal.SIGHUP, 128 + signal.SIGHUP)])
def test_signal_stops_queued_and_running_renders(tmp_path: Path, sig: signal.Signals, code: int) -> None:
    repo, env = setup(tmp_path)
    # its own session, as a terminal job: ^C reaches kzgit and its workers (one process group)
    child = subprocess.Popen([sys.executable, "-m", "kzgit", "hook", "render", "--all", "-j", "2"],
                             cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             preexec_fn=default_signals, start_new_session=True)
    try:
        end = time.monotonic() + 60
        while len(started(tmp_path)) < 2 and time.monotonic() < end:
            time.sleep(0.05)
        assert len(started(tmp_path)) == 2, "two workers run a plugin each"
        begin = time.monotonic()
        if sig == signal.SIGINT:
            os.killpg(child.pid, sig)   # the terminal's ^C goes to the whole group
        else:
            child.send_signal(sig)
        out, err = child.communicate(timeout=30)
        # the plugins sleep 300 s: 20 s (10x a stop on an idle machine) tells a stop from a wait
        assert time.monotonic() - begin < 20, "kzgit stops long before its plugins would end"
        assert child.returncode == code, err.decode()
        assert "Traceback" not in err.decode()
        time.sleep(0.3)
        assert len(started(tmp_path)) == 2, "queued roots were not rendered"
        assert all(wait_gone(pid) for pid in started(tmp_path)), "no plugin outlives kzgit"
        assert not group_alive(child.pid), "no worker outlives kzgit"
    finally:
        try:
            os.killpg(child.pid, signal.SIGKILL)   # kzgit and its workers, if the test failed
        except (ProcessLookupError, PermissionError):
            pass
        child.wait()
        for pid in started(tmp_path):
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
