"""kzgit.hooks.ledger: what the render hook of one pre-commit run said, for the hooks after it."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kzgit.hooks.ledger import Ledger, lead_of, run_id


def test_no_run_outside_pre_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PRE_COMMIT", raising=False)
    assert run_id() is None
    assert Ledger.of_this_run("/repo") is None


def _child_run_id(env: dict) -> str:
    code = "from kzgit.hooks.ledger import run_id; print(run_id())"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True, timeout=60).stdout.strip()


def test_the_run_is_the_parent_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two hooks started by one pre-commit process share a run; another parent is another."""
    env = {**os.environ, "PRE_COMMIT": "1"}
    first, second = _child_run_id(env), _child_run_id(env)
    assert first == second and first.startswith(f"{os.getpid()}-"), (first, second)
    # a hook started by another process (another pre-commit run) is in another run
    code = ("import subprocess, sys; print(subprocess.run([sys.executable, '-c', "
            "'from kzgit.hooks.ledger import run_id; print(run_id())'], capture_output=True, "
            "text=True, timeout=60).stdout.strip())")
    other = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           check=True, timeout=60).stdout.strip()
    assert other != first and other != "None", other


def test_record_and_said(tmp_path: Path) -> None:
    ledger = Ledger(str(tmp_path / "run"), "/repo")
    lead = "base/kustomization.yaml:2: resources: 'cm.yaml' does not exist"
    assert not ledger.said("overlays/dev", "does not render: " + lead)
    ledger.record("overlays/dev", lead)
    assert ledger.said("overlays/dev", "does not render: " + lead + " (as x, above)")
    # another break of the same root is said again; another root was not said
    assert not ledger.said("overlays/dev", "does not render: overlays/dev/kustomization.yaml:3: x")
    assert not ledger.said("overlays/prod", "does not render: " + lead)
    # the first record stays
    ledger.record("overlays/dev", "something else")
    assert ledger.said("overlays/dev", lead)
    # another repository in the same run is apart
    assert not Ledger(str(tmp_path / "run"), "/other").said("overlays/dev", lead)


def test_old_runs_are_removed(tmp_path: Path) -> None:
    runs = tmp_path / "hook-runs"
    old, recent = runs / "1-100", runs / "2-200"
    for d in (old, recent):
        d.mkdir(parents=True)
        (d / "entry").write_text("lead")
    two_hours_ago = time.time() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    Ledger(str(runs / "3-300"), "/repo").record("root", "lead")
    assert not old.exists() and recent.exists() and (runs / "3-300").is_dir()


def test_lead_of() -> None:
    assert lead_of("a: b\n    chain") == "a: b"
    assert lead_of("one line") == "one line"
