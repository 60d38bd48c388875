"""One pre-commit hook environment for the whole test session: a snapshot of this checkout
committed to a repository, and ``pre-commit install-hooks`` run once against it (one pip
install of kzgit and its dependencies). The ``session`` fixture (tests/conftest.py) hands it
to every test that drives the real pre-commit tool."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest

from helpers import PROJECT, git_run as git, run, user_gitconfig, write_tree as write

HOOK_IDS = ["kzgit-exec-bits", "kzgit-pinned-refs", "kzgit-render", "kzgit-localized-sync"]
SNAPSHOT_PATHS = ["pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml", "kzgit", "hooks"]


def _user_pip_config() -> str:
    """The pip user config file in force before HOME is changed ('' if none)."""
    if os.environ.get("PIP_CONFIG_FILE"):
        return os.environ["PIP_CONFIG_FILE"]
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    for cand in (os.path.join(xdg, "pip", "pip.conf"), os.path.expanduser("~/.pip/pip.conf")):
        if os.path.isfile(cand):
            return cand
    return ""


def _clean_env(home: Path, pc_home: Path) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT", "VIRTUAL_ENV"))}
    pip_conf = _user_pip_config()
    if pip_conf:
        env["PIP_CONFIG_FILE"] = pip_conf
    gitconfig = user_gitconfig(home)
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"),
               XDG_DATA_HOME=str(home / ".local/share"), GIT_CONFIG_GLOBAL=str(gitconfig),
               GIT_CONFIG_NOSYSTEM="1", PRE_COMMIT_HOME=str(pc_home), PRE_COMMIT_COLOR="never")
    return env


class Session:
    """The snapshot repo, its commit, and the environment sharing one pre-commit store."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.env = _clean_env(root / "home", root / "pre-commit-home")
        self.snapshot = root / "kzgit-snapshot"
        self.rev = ""

    def config(self, hook_ids: List[str]) -> str:
        hooks = "".join(f"  - id: {h}\n" for h in hook_ids)
        return f"repos:\n- repo: {self.snapshot}\n  rev: {self.rev}\n  hooks:\n{hooks}"

    def repo(self, path: Path, files: Dict[str, str], hook_ids: List[str] = HOOK_IDS) -> Path:
        path.mkdir(parents=True)
        git(path, self.env, "init", "-q")
        write(path, {**files, ".pre-commit-config.yaml": self.config(hook_ids)})
        rc, out = run([sys.executable, "-m", "pre_commit", "install"], path, self.env)
        assert rc == 0, out
        return path

    def commit(self, repo: Path, msg: str = "change") -> Tuple[int, str]:
        git(repo, self.env, "add", "-A")
        return run(["git", "commit", "-q", "-m", msg], repo, self.env, timeout=300)


def make_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    s = Session(tmp_path_factory.mktemp("precommit"))
    s.snapshot.mkdir()
    for rel in SNAPSHOT_PATHS:
        src = PROJECT / rel
        if src.is_dir():
            shutil.copytree(src, s.snapshot / rel, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
        elif src.exists():
            shutil.copy2(src, s.snapshot / rel)
    git(s.snapshot, s.env, "init", "-q")
    git(s.snapshot, s.env, "add", "-A")
    git(s.snapshot, s.env, "commit", "-q", "-m", "snapshot")
    s.rev = git(s.snapshot, s.env, "rev-parse", "HEAD").strip()
    # Build the hook environment once (pip-installs kzgit and its dependencies).
    warm = s.root / "warm"
    warm.mkdir()
    git(warm, s.env, "init", "-q")
    write(warm, {".pre-commit-config.yaml": s.config(HOOK_IDS)})
    rc, out = run([sys.executable, "-m", "pre_commit", "install-hooks"], warm, s.env, timeout=600)
    if rc != 0:
        pytest.fail(f"pre-commit could not build kzgit's hook environment:\n{out}")
    yield s


