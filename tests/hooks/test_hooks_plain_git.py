"""End to end with the plain git hooks (``hooks/pre-commit``, ``hooks/pre-push``).

``kzgit install-hooks`` installs them into real repositories in temp dirs;
the commits and pushes below run them as git does.  They check the staged
content (or the pushed commits), never the work tree.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Dict, Tuple

import pytest
from helpers import HOOKS_REPO, git_run as git, run, user_gitconfig, write_tree as write

GOOD = HOOKS_REPO


@pytest.fixture()
def env(tmp_path: Path) -> Dict[str, str]:
    home = tmp_path / "home"
    gitconfig = user_gitconfig(home)
    e = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "KZGIT_"))}
    # the hooks must find kzgit through the interpreter recorded at install, not PATH
    e["PATH"] = os.pathsep.join(p for p in e.get("PATH", "").split(os.pathsep)
                                if not os.path.exists(os.path.join(p, "kzgit")))
    e.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"),
             GIT_CONFIG_GLOBAL=str(gitconfig), GIT_CONFIG_NOSYSTEM="1")
    return e


def make_repo(path: Path, env: Dict[str, str], files: Dict[str, str] = GOOD) -> Path:
    path.mkdir()
    git(path, env, "init", "-q")
    write(path, files)
    rc, out = run([sys.executable, "-m", "kzgit", "install-hooks", "-t", "pre-commit", "-t", "pre-push"],
                  path, env)
    assert rc == 0, out
    return path


def commit(repo: Path, env: Dict[str, str], *extra: str) -> Tuple[int, str]:
    git(repo, env, "add", "-A")
    return run(["git", "commit", "-q", "-m", "c", *extra], repo, env)


def test_good_commit_passes_silently(tmp_path: Path, env: Dict[str, str]) -> None:
    repo = make_repo(tmp_path / "r", env)
    assert commit(repo, env) == (0, "")


def test_broken_overlay_is_refused_in_the_index(tmp_path: Path, env: Dict[str, str]) -> None:
    repo = make_repo(tmp_path / "r", env)
    assert commit(repo, env)[0] == 0
    write(repo, {"overlays/dev/kustomization.yaml": "resources:\n- ../../base\npatches:\n- path: gone.yaml\n"})
    rc, out = commit(repo, env)
    assert rc == 1 and out.startswith("kzgit-render:\noverlays/dev: does not render: "), out
    assert "gone.yaml" in out and "kzgit-hook-" not in out
    # the work tree being fine does not help: the index is what is committed
    write(repo, GOOD)
    rc, out = run(["git", "commit", "-q", "-m", "c"], repo, env)
    assert rc == 1 and "overlays/dev: does not render" in out
    # `git commit -a` (git's temporary index) is checked too
    write(repo, {"overlays/prod/kustomization.yaml": "resources:\n- ../../nowhere\n"})
    rc, out = run(["git", "commit", "-q", "-a", "-m", "c"], repo, env)
    assert rc == 1 and "overlays/prod: does not render" in out, out


def test_branch_ref_is_refused(tmp_path: Path, env: Dict[str, str]) -> None:
    repo = make_repo(tmp_path / "r", env)
    assert commit(repo, env)[0] == 0
    write(repo, {".kzgit.toml": "roots = ['overlays/dev']\n",
                 "overlays/prod/kustomization.yaml": "resources:\n- github.com/org/repo/deploy?ref=master\n"})
    rc, out = commit(repo, env)
    assert rc == 1
    assert ("overlays/prod/kustomization.yaml:2: github.com/org/repo/deploy?ref=master: ref 'master'"
            in out), out


def test_executable_downloaded_binary_is_fixed(tmp_path: Path, env: Dict[str, str]) -> None:
    repo = make_repo(tmp_path / "r", env)
    assert commit(repo, env)[0] == 0
    tool = repo / "vendored/localized-files/example.com/tool"
    write(repo, {"vendored/localized-files/example.com/tool": "#!/bin/sh\n"})
    tool.chmod(0o755)
    rc, out = commit(repo, env)
    assert rc == 1 and "vendored/localized-files/example.com/tool: removed executable bit" in out, out
    assert not tool.stat().st_mode & 0o111
    assert git(repo, env, "ls-files", "-s", "vendored").startswith("100644")
    assert commit(repo, env) == (0, "")
    assert git(repo, env, "ls-tree", "-r", "HEAD", "vendored").startswith("100644")


def test_stale_localized_copy_is_refused(tmp_path: Path, env: Dict[str, str]) -> None:
    repo = make_repo(tmp_path / "r", env)
    rc, out = run([sys.executable, "-m", "kzgit", "localize", "overlays/prod", "copy", "--scope", "."], repo, env)
    assert rc == 0, out
    assert commit(repo, env) == (0, "")
    write(repo, {"base/cm.yaml": GOOD["base/cm.yaml"].replace("a: b", "a: changed")})
    rc, out = commit(repo, env)
    assert rc == 1 and "copy: localized copy is stale" in out and "kzgit rebuild copy" in out, out


def test_existing_hook_is_chained(tmp_path: Path, env: Dict[str, str]) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, env, "init", "-q")
    legacy = repo / ".git/hooks/pre-commit"
    legacy.write_text("#!/bin/sh\necho legacy-ran\nexit ${LEGACY_RC:-0}\n")
    legacy.chmod(0o755)
    write(repo, GOOD)
    rc, out = run([sys.executable, "-m", "kzgit", "install-hooks"], repo, env)
    assert rc == 0 and "pre-commit.legacy" in out
    rc, out = commit(repo, {**env, "LEGACY_RC": "3"})
    assert rc == 1 and "legacy-ran" in out   # git reports any hook failure as 1
    assert commit(repo, env) == (0, "legacy-ran\n")


def test_pre_push_refuses_a_broken_commit(tmp_path: Path, env: Dict[str, str]) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, env, "init", "-q", "--bare", str(remote))
    repo = make_repo(tmp_path / "r", env)
    assert commit(repo, env)[0] == 0
    git(repo, env, "remote", "add", "origin", str(remote))
    rc, out = run(["git", "push", "-q", "origin", "main"], repo, env)
    assert rc == 0, out
    write(repo, {"overlays/prod/kustomization.yaml": "resources:\n- ../../nowhere\n"})
    assert commit(repo, env, "--no-verify")[0] == 0
    rc, out = run(["git", "push", "-q", "origin", "main"], repo, env)
    assert rc != 0 and "overlays/prod: does not render" in out, out
    write(repo, GOOD)
    assert commit(repo, env)[0] == 0
    rc, out = run(["git", "push", "-q", "origin", "main"], repo, env)
    assert rc == 0, out
