"""What a repository may turn on, and what a plugin receives (issue 32), with real repositories,
real plugins and the real CLI.

* A repository's ``enable-alpha-plugins`` / ``enable-exec`` / ``enable-helm`` = true and
  ``load-restrictor = "LoadRestrictionsNone"`` took effect whatever the user granted: a pull
  request could add a plugin and turn plugins on in the same change.  They now need the
  user's grant (the same key in ``~/.config/kzgit/config.toml``, or ``kzgit trust``).
* Plugins inherited kzgit's whole environment (a ``GITHUB_TOKEN``, ``AWS_SECRET_ACCESS_KEY``);
  they now get an allow-list, ``allow-env`` and ``-e``; a function spec naming another
  variable is refused, naming the variable and the key that grants it.
* Where the kernel cannot confine (simulated here: ``sandbox.available`` says no), mode
  "auto" ran plugins unconfined and only ``kzgit build`` said so; now a plugin runs only with
  ``allow-unconfined = true`` (or ``--sandbox off``) and every command says so.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List

import pytest

from helpers import git_tree
from kzgit import sandbox

PY = sys.executable
TOKEN = "ghp_test_token_0123456789"
LANDLOCK, WHY = sandbox.available()

#: A KRM exec function: a ConfigMap of what it sees (its environment), and "plugin ran" on
#: stderr, so a run is visible whether the build succeeds or not.
ENV_FN = textwrap.dedent(f"""\
    #!{PY}
    import json, os, sys
    sys.stdin.read()
    sys.stderr.write("plugin ran\\n")
    data = {{"token": os.environ.get("GITHUB_TOKEN", "none"), "home": os.environ.get("HOME", ""),
            "tmp": os.environ.get("TMPDIR", ""), "foo": os.environ.get("FOO", "none"),
            "path": "yes" if os.environ.get("PATH") else "no",
            "keys": ",".join(sorted(os.environ))}}
    print(json.dumps({{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
                      "items": [{{"apiVersion": "v1", "kind": "ConfigMap",
                                 "metadata": {{"name": "env"}}, "data": data}}]}}))
    """)


def fn_config(envs: List[str]) -> str:
    return textwrap.dedent(f"""\
        apiVersion: example.com/v1
        kind: Env
        metadata:
          name: env
          annotations:
            config.kubernetes.io/function: |
              exec:
                path: ./fn.py
                envs: {json.dumps(envs)}
        """)


def make_repo(top: Path, files: Dict[str, str], envs: List[str] = ()) -> Path:  # type: ignore[assignment]
    app = top / "app"
    git_tree(top, {"app/kustomization.yaml": "generators:\n- gen.yaml\n",
                   "app/gen.yaml": fn_config(list(envs)), "app/fn.py": ENV_FN, **files})
    (app / "fn.py").chmod(0o755)
    subprocess.run(["git", "add", "-A"], cwd=top, check=True, timeout=60)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=top, check=True, timeout=60)
    return app


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    (h / ".config" / "kzgit").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(h / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(h / ".local" / "share"))
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    return h


def user_config(home: Path, text: str) -> None:
    (home / ".config" / "kzgit" / "config.toml").write_text(text)


def kzgit(cwd: Path, *argv: str, no_landlock: bool = False) -> "subprocess.CompletedProcess[str]":
    """The CLI in a process of its own; ``no_landlock``: on a machine without Landlock
    (simulated: the one function that asks the kernel answers no)."""
    code = ("import sys\nfrom kzgit import sandbox\n"
            + ("sandbox.available = lambda: (False, 'simulated: no Landlock')\n" if no_landlock else "")
            + "from kzgit.cli.main import main\nsys.argv = ['kzgit'] + sys.argv[1:]\n"
              "sys.exit(main())\n")
    return subprocess.run([PY, "-c", code, *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("keys", [["enable-alpha-plugins"], ["enable-alpha-plugins", "enable-exec"]])
def test_a_repository_turns_plugins_on_only_with_the_users_grant(tmp_path: Path, home: Path,
                                                                  keys: List[str]) -> None:
    """The attack: a pull request adds a function and ``enable-*`` = true in .kzgit.toml; the
    render hook ran it on every laptop that checked the branch out."""
    top = tmp_path / "repo"
    wanted = "".join(f"{k} = true\n" for k in keys)
    make_repo(top, {".kzgit.toml": wanted})
    r = kzgit(top, "hook", "render", "--all", "--no-cache")
    assert r.returncode == 2, r.stderr
    assert f"'{keys[0]}' = true lets the repository's plugins run" in r.stderr
    assert str(home / ".config" / "kzgit" / "config.toml") in r.stderr
    assert f"kzgit trust {top}" in r.stderr and f"add {keys[0]} = true" in r.stderr
    assert "plugin ran" not in r.stderr and "Traceback" not in r.stderr
    # each key needs its own grant
    user_config(home, f"{keys[0]} = true\n")
    r = kzgit(top, "hook", "render", "--all", "--no-cache")
    assert r.returncode == (2 if len(keys) > 1 else 0), r.stderr
    if len(keys) > 1:
        assert f"'{keys[1]}' = true lets the repository's plugins run" in r.stderr
    # granted in the user's file: the repository's value applies
    user_config(home, wanted)
    r = kzgit(top, "hook", "render", "--all", "--no-cache")
    assert r.returncode == 0, r.stderr
    # the user's grant alone turns nothing on: a repository that does not ask runs no plugin
    (top / ".kzgit.toml").write_text("")
    r = kzgit(top, "hook", "render", "--all", "--no-cache")
    assert r.returncode == 1 and "plugin ran" not in r.stderr
    # approved with kzgit trust instead
    (top / ".kzgit.toml").write_text(wanted)
    user_config(home, "")
    assert kzgit(top, "hook", "render", "--all", "--no-cache").returncode == 2
    assert kzgit(top, "trust", str(top)).returncode == 0
    r = kzgit(top, "hook", "render", "--all", "--no-cache")
    assert r.returncode == 0, r.stderr
    # a repository may always narrow
    (top / ".kzgit.toml").write_text(wanted.replace("true", "false"))
    assert kzgit(top, "hook", "render", "--all", "--no-cache").returncode == 1


def test_a_repository_lifts_the_load_restrictor_only_with_the_users_grant(tmp_path: Path,
                                                                          home: Path) -> None:
    top = tmp_path / "repo"
    git_tree(top, {
        ".kzgit.toml": 'load-restrictor = "LoadRestrictionsNone"\n',
        "shared/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n",
        "app/kustomization.yaml": "resources:\n- ../shared/cm.yaml\n"})
    subprocess.run(["git", "add", "-A"], cwd=top, check=True, timeout=60)
    r = kzgit(top, "hook", "render", "--all", "--no-cache")
    assert r.returncode == 2
    assert "'load-restrictor' = \"LoadRestrictionsNone\" lets kustomizations read files outside" \
        in r.stderr
    user_config(home, 'load-restrictor = "LoadRestrictionsNone"\n')
    r = kzgit(top, "hook", "render", "--all", "--no-cache")
    assert r.returncode == 0, r.stderr
    # narrowing needs nothing
    (top / ".kzgit.toml").write_text('load-restrictor = "LoadRestrictionsRootOnly"\n')
    user_config(home, "")
    assert kzgit(top, "hook", "render", "--all", "--no-cache").returncode == 1


@pytest.mark.skipif(not LANDLOCK, reason=f"no Landlock here: {WHY}")
def test_kzgit_trust_keeps_the_users_own_sandbox_settings(tmp_path: Path, home: Path) -> None:
    """An approval used to replace the user's [sandbox] by the repository's: the user's
    allow-read (and allow-env, mode) no longer applied after ``kzgit trust``.  They combine."""
    keys = home / "keys"
    keys.mkdir()
    (keys / "age.txt").write_text("age-key\n")
    top = tmp_path / "repo"
    make_repo(top, {".kzgit.toml": 'enable-alpha-plugins = true\n[sandbox]\nnetwork = true\n'})
    (top / "app" / "fn.py").write_text(ENV_FN.replace(
        '"token": os.environ.get("GITHUB_TOKEN", "none")',
        f'"token": open({str(keys / "age.txt")!r}).read().strip()'))
    user_config(home, '[sandbox]\nallow-read = ["~/keys"]\n')
    assert kzgit(top, "trust", str(top)).returncode == 0
    r = kzgit(top, "build", "--enable-alpha-plugins", "app")
    assert r.returncode == 0, r.stderr
    assert "token: age-key" in r.stdout   # the user's allow-read still applies after the approval


def test_plugins_get_an_allow_listed_environment(tmp_path: Path, home: Path) -> None:
    top = tmp_path / "repo"
    make_repo(top, {})
    r = kzgit(top, "build", "--enable-alpha-plugins", "app")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert TOKEN not in out and "token: none" in out
    assert "path: \"yes\"" in out or "path: 'yes'" in out
    keys = out.split("keys: ", 1)[1].splitlines()[0]
    assert set(keys.split(",")) <= {"PATH", "LANG", "LANGUAGE", "TZ", "HOME", "TMPDIR", "TMP",
                                    "TEMP", "LC_CTYPE", "LC_ALL", "LC_MESSAGES"} | {
        k for k in os.environ if k.startswith("LC_")}, keys
    home_seen = out.split("home: ", 1)[1].splitlines()[0]
    assert home_seen != str(home) and "kzgit-" in home_seen   # a HOME of its own
    # granted by the user: it reaches the plugin
    user_config(home, '[sandbox]\nallow-env = ["GITHUB_TOKEN"]\n')
    r = kzgit(top, "build", "--enable-alpha-plugins", "app")
    assert r.returncode == 0 and f"token: {TOKEN}" in r.stdout, r.stderr


def test_a_function_spec_asking_for_a_variable_the_user_did_not_grant_is_refused(
        tmp_path: Path, home: Path) -> None:
    top = tmp_path / "repo"
    make_repo(top, {}, envs=["GITHUB_TOKEN", "FOO=bar"])
    r = kzgit(top, "build", "--enable-alpha-plugins", "app")
    assert r.returncode == 1
    assert "exec.envs asks for the environment variable GITHUB_TOKEN" in r.stderr
    assert 'allow-env = ["GITHUB_TOKEN"]' in r.stderr and "-e GITHUB_TOKEN" in r.stderr
    assert "plugin ran" not in r.stderr and TOKEN not in r.stderr
    # granted on the command line (kustomize's --env), as a value set by the spec
    r = kzgit(top, "build", "--enable-alpha-plugins", "-e", "GITHUB_TOKEN", "app")
    assert r.returncode == 0, r.stderr
    assert f"token: {TOKEN}" in r.stdout and "foo: bar" in r.stdout


def test_a_container_function_asking_for_a_variable_is_refused_before_docker(
        tmp_path: Path, home: Path) -> None:
    top = tmp_path / "repo"
    git_tree(top, {"app/kustomization.yaml": "generators:\n- gen.yaml\n",
                   "app/gen.yaml": textwrap.dedent("""\
                       apiVersion: example.com/v1
                       kind: Env
                       metadata:
                         name: env
                         annotations:
                           config.kubernetes.io/function: |
                             container:
                               image: example.com/fn:v1
                               envs: [AWS_SECRET_ACCESS_KEY, X=1]
                       """)})
    r = kzgit(top, "build", "--enable-alpha-plugins", "app")
    assert r.returncode == 1
    assert "container.envs asks for the environment variable AWS_SECRET_ACCESS_KEY" in r.stderr


def test_without_landlock_plugins_run_only_when_allowed_and_every_command_says_so(
        tmp_path: Path, home: Path) -> None:
    top = tmp_path / "repo"
    make_repo(top, {".kzgit.toml": "enable-alpha-plugins = true\n"})
    user_config(home, "enable-alpha-plugins = true\n")
    r = kzgit(top, "hook", "render", "--all", "--no-cache", no_landlock=True)
    assert r.returncode == 1 and "plugin ran" not in r.stderr
    assert "cannot confine it here (simulated: no Landlock)" in r.stdout
    assert "allow-unconfined = true" in r.stdout
    user_config(home, "enable-alpha-plugins = true\n[sandbox]\nallow-unconfined = true\n")
    for argv in (["hook", "render", "--all", "--no-cache"], ["hook", "render", "--all", "-j", "2", "--no-cache"],
                 ["lint", "--all", "--no-cache"], ["validate", "--all", "--no-cache"],
                 ["build", "--enable-alpha-plugins", "app"]):
        r = kzgit(top, *argv, no_landlock=True)
        assert "kzgit: info: plugins ran unconfined: simulated: no Landlock" in r.stderr, (argv, r.stderr)
    # --sandbox off is the user's explicit choice: it runs, unconfined, without Landlock
    user_config(home, "")
    r = kzgit(top, "build", "--enable-alpha-plugins", "--sandbox", "off", "app", no_landlock=True)
    assert r.returncode == 0, r.stderr
    # a repository cannot allow unconfined runs for the user
    (top / ".kzgit.toml").write_text("[sandbox]\nallow-unconfined = true\n")
    r = kzgit(top, "build", "--enable-alpha-plugins", "app", no_landlock=True)
    assert r.returncode == 2 and "'sandbox.allow-unconfined' = true widens the plugin sandbox" in r.stderr


@pytest.mark.skipif(not LANDLOCK, reason=f"no Landlock here: {WHY}")
def test_a_shebang_in_dot_local_bin_grants_the_interpreter_not_all_of_dot_local(
        tmp_path: Path, home: Path) -> None:
    """``#!~/.local/bin/python3`` granted ``bin/..``: all of ``~/.local`` (kzgit's approvals,
    keyrings, other tools' data) was readable by the plugin."""
    local_bin = home / ".local" / "bin"
    local_bin.mkdir(parents=True)
    (local_bin / "python3").symlink_to(os.path.realpath(PY))
    secret = home / ".local" / "share" / "keyrings" / "login.keyring"
    secret.parent.mkdir(parents=True)
    secret.write_text("keyring-secret\n")
    top = tmp_path / "repo"
    fn = ENV_FN.replace(f"#!{PY}", f"#!{local_bin / 'python3'}").replace(
        '"token": os.environ.get("GITHUB_TOKEN", "none")',
        f'"token": (lambda: open({str(secret)!r}).read().strip())()')
    make_repo(top, {})
    (top / "app" / "fn.py").write_text(fn)
    r = kzgit(top, "build", "--enable-alpha-plugins", "app")
    assert r.returncode == 1, r.stdout
    assert "Permission denied" in r.stderr and "keyring-secret" not in r.stdout + r.stderr
