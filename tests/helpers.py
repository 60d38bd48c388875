"""Helpers shared by the test modules (pre-commit's ``testing/util.py`` is the model).

Where the test data lives; writing a tree of files; running a command or git with an explicit
environment; a git identity for a temporary home; the small repository the hook tests commit
to; and is a process group gone yet?
"""
from __future__ import annotations

import os
import signal
import subprocess
import textwrap
import time
from pathlib import Path
from typing import Dict, List, Mapping, Tuple, Union

StrPath = Union[str, "os.PathLike[str]"]


def default_signals() -> None:
    """``preexec_fn`` for children a test interrupts: SIGINT, SIGTERM and SIGHUP at their defaults.

    A test run started in the background of a non-interactive shell (or under ``nohup``)
    inherits SIGINT/SIGHUP as ignored; Python then installs no ^C handler and kzgit keeps an
    ignored hangup ignored, so the signals the test sends would do nothing.
    """
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


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
    """Poll until no live process of group ``pgid`` is left; False if some outlive ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not group_alive(pgid):
            return True
        time.sleep(0.02)
    return not group_alive(pgid)


#: The tests directory, the project checkout, and the data the tests read.
TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent
FIXTURES = TESTS / "fixtures"
DATA = TESTS / "data"


def write_tree(root: StrPath, files: Mapping[str, str], dedent: bool = False) -> Path:
    """Write ``{relative path: text}`` under ``root`` (parents created); return ``root`` resolved.

    ``dedent`` strips the common indentation of each text, for files written as indented
    triple-quoted strings in a test.
    """
    base = Path(root)
    for rel, text in files.items():
        p = base / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text) if dedent else text)
    return Path(os.path.realpath(base))


def work_dir(tmp_path: StrPath, monkeypatch: "object") -> str:
    """A fresh ``work`` directory under ``tmp_path`` (symlinks resolved), made the current one."""
    work = os.path.join(os.path.realpath(os.fspath(tmp_path)), "work")
    os.makedirs(work)
    monkeypatch.chdir(work)  # type: ignore[attr-defined]
    return work


def deployment(name: str, containers: str) -> str:
    """YAML of an ``apps/v1`` Deployment ``name`` whose pod template runs ``containers``
    (the YAML of the list, written from column 0)."""
    body = textwrap.indent(textwrap.dedent(containers), " " * 6)
    return ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " + name
            + "\nspec:\n  template:\n    spec:\n      containers:\n" + body)


def run(cmd: List[str], cwd: StrPath, env: Dict[str, str], timeout: float = 180.0) -> Tuple[int, str]:
    """Run ``cmd`` with no stdin; return its exit code and its stdout and stderr merged."""
    p = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return p.returncode, p.stdout


def git_run(repo: StrPath, env: Dict[str, str], *args: str) -> str:
    """``git ARGS`` in ``repo`` with ``env``; its output, asserting that it succeeded."""
    rc, out = run(["git", *args], repo, env)
    assert rc == 0, out
    return out


def user_gitconfig(home: Path) -> Path:
    """A global git config in ``home`` with an identity and ``main`` as the first branch
    (point ``GIT_CONFIG_GLOBAL`` at it, with ``GIT_CONFIG_NOSYSTEM=1``)."""
    home.mkdir(parents=True, exist_ok=True)
    gitconfig = home / "gitconfig"
    gitconfig.write_text("[user]\n\tname = T\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n")
    return gitconfig


#: A repository the hook tests commit to: a base and two overlays that render.
HOOKS_REPO: Dict[str, str] = {
    "base/kustomization.yaml": "resources:\n- cm.yaml\n",
    "base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n",
    "overlays/prod/kustomization.yaml": "resources:\n- ../../base\nnamePrefix: prod-\n",
    "overlays/dev/kustomization.yaml": "resources:\n- ../../base\npatches:\n- path: patch.yaml\n",
    "overlays/dev/patch.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: dev\n",
}
