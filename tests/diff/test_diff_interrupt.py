"""SIGTERM stops a parallel ``kzgit diff`` within 2 s: queued renders dropped, no worker or
plugin process left behind, the revisions' exports removed."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from gitserver import GitRepo, isolate
from helpers import default_signals, group_alive, hanging_plugin_roots, wait_gone

import pytest


def test_sigterm_stops_a_parallel_diff(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(monkeypatch, tmp_path)
    repo = GitRepo.create(str(tmp_path / "repo"))
    env = hanging_plugin_roots(Path(repo.path), 16, tmp_path / "pids")
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com", TMPDIR=str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    repo.commit({})
    repo.tag("c0")
    repo.commit({f"r{i:02d}/hang.yaml": "apiVersion: someteam.example.com/v1\nkind: Hang\n"
                 "metadata:\n  name: changed\n" for i in range(16)})
    child = subprocess.Popen([sys.executable, "-m", "kzgit", "diff", "--base", "c0", "--head", "HEAD",
                              "--enable-alpha-plugins", "-j", "2"], cwd=repo.path, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=default_signals,
                             start_new_session=True)
    pids = tmp_path / "pids"
    try:
        end = time.monotonic() + 60
        # count only finished pid files: a plugin writes "<pid>.tmp", then renames it
        while (len([p for p in pids.iterdir() if p.name.isdigit()]) < 2
               and time.monotonic() < end):
            time.sleep(0.05)
        started = [int(p.name) for p in pids.iterdir() if p.name.isdigit()]
        assert len(started) == 2
        begin = time.monotonic()
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=30)
        # the plugins sleep 300 s: 20 s (10x a stop on an idle machine) tells a stop from a wait
        assert time.monotonic() - begin < 20, "kzgit diff stops long before its plugins would end"
        assert child.returncode == 128 + signal.SIGTERM, err.decode()
        time.sleep(0.3)
        assert len([p for p in pids.iterdir() if p.name.isdigit()]) == 2, "queued renders were dropped"
        assert all(wait_gone(pid) for pid in started) and not group_alive(child.pid)
        assert os.listdir(tmp_path / "tmp") == [], "the exports are removed"
    finally:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        child.wait()
