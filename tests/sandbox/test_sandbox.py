"""kzgit.sandbox: exec plugins, KRM exec functions and helm run confined (Landlock).

Each confined program tries what a hostile plugin merged in a pull request would: read a key in
the home directory, write outside its temporary directory or into the source tree, connect to a
listener on 127.0.0.1, or start a child that tries the same.  All of it is refused, the build
fails with the sandbox's hint and nothing outside changes; the same program succeeds once the
configuration allows what it needs.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

from helpers import CONTAINER_FN_CONFIG
from kzgit import sandbox
from kzgit.builder import BuildOptions, build
from kzgit.config import SandboxSettings, load_config
from kzgit.errors import KzgitError, PluginError, UsageError

PY = sys.executable
LANDLOCK, WHY = sandbox.available()
needs_landlock = pytest.mark.skipif(not LANDLOCK, reason=f"no Landlock here: {WHY}")

# What every confined program runs first: the attack named by KZGIT_ATTACK ("child-X" runs X in
# a child process); a refusal exits 1 with the error on stderr.
ATTACK_FN = '''
import json, os, socket, subprocess, sys
T = json.loads(os.environ["KZGIT_TARGETS"])

def attack(name):
    if name.startswith("child-"):
        code = SRC + "\\nprint(attack(%r))" % name[len("child-"):]
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        sys.stderr.write(r.stderr)
        if r.returncode:
            sys.exit(r.returncode)
        return r.stdout.strip()
    try:
        if name == "read":
            return open(T["secret"]).read().strip()
        if name == "write-outside":
            open(T["outside"], "w").write("pwned")
        elif name == "write-source":
            open(T["source"], "w").write("pwned")
        elif name == "connect":
            socket.create_connection(("127.0.0.1", T["port"]), timeout=5).close()
        elif name == "env":   # what of kzgit's environment it receives
            return "token=%s home=%s" % (os.environ.get("GITHUB_TOKEN", "none"), os.environ["HOME"])
        elif name == "tmp":   # its own temporary directory is writable
            p = os.path.join(os.environ.get("TMPDIR", "/tmp"), "scratch-%d" % os.getpid())
            open(p, "w").write("ok")
            return open(p).read()
        return "done"
    except OSError as e:
        sys.stderr.write("attack %s refused: %s\\n" % (name, e))
        sys.exit(1)
'''
ATTACK = (f"SRC = {ATTACK_FN!r}\nexec(SRC)\n"
          "GOT = attack(os.environ.get('KZGIT_ATTACK', 'tmp'))\n")

CM = ('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "got"}, '
      '"data": {"got": %s}}')

LEGACY = f"#!{PY}\n{ATTACK}\nprint(CM % json.dumps(GOT))\n".replace("CM", repr(CM))
KRM = (f"#!{PY}\n{ATTACK}\nsys.stdin.read()\n"
       "print(json.dumps({'apiVersion': 'config.kubernetes.io/v1', 'kind': 'ResourceList', "
       "'items': [json.loads(CM % json.dumps(GOT))]}))\n").replace("CM", repr(CM))
HELM = (f"#!{PY}\n{ATTACK}\n"
        "if sys.argv[1] == 'version':\n    print('v3.16.2')\n"
        "else:\n    print(CM % json.dumps(GOT))\n").replace("CM", repr(CM))


class Listener:
    """A TCP listener on 127.0.0.1 counting the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = False
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self) -> None:
        while not self._stop:
            try:
                c, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            c.close()

    def count(self, expected: int, seconds: float = 10.0) -> int:
        """The connections accepted, once ``expected`` are (or ``seconds`` have passed): a
        connection the plugin made may be accepted by this thread after the plugin exits."""
        end = time.monotonic() + seconds
        while self.accepted < expected and time.monotonic() < end:
            time.sleep(0.01)
        return self.accepted

    def close(self) -> None:
        self._stop = True
        self._t.join(2)
        self.sock.close()


class Scene:
    """A home with an SSH key, a kustomization using one kind of plugin, a listener."""

    def __init__(self, tmp: Path, kind: str, monkeypatch: pytest.MonkeyPatch, listener: Listener) -> None:
        self.tmp = Path(os.path.realpath(tmp))
        self.kind = kind
        self.home = self.tmp / "home"
        (self.home / ".ssh").mkdir(parents=True)
        self.secret = self.home / ".ssh" / "id_ed25519"
        self.secret.write_text("-----BEGIN OPENSSH PRIVATE KEY----- secret\n")
        monkeypatch.setenv("HOME", str(self.home))
        self.root = self.tmp / "repo" / "app"
        self.root.mkdir(parents=True)
        self.outside = self.tmp / "outside"
        self.outside.mkdir()
        self.listener = listener
        monkeypatch.setenv("KZGIT_TARGETS", json.dumps({
            "secret": str(self.secret), "outside": str(self.outside / "pwned"),
            "source": str(self.root / "pwned"), "port": listener.port}))
        bindir = self.tmp / "plugins"
        bindir.mkdir()
        if kind == "exec plugin":
            plugin = self.home / ".config" / "kustomize" / "plugin" / "example.com" / "v1" / "attacker" / "Attacker"
            self._exe(plugin, LEGACY)
            monkeypatch.setenv("XDG_CONFIG_HOME", str(self.home / ".config"))
            (self.root / "gen.yaml").write_text(
                "apiVersion: example.com/v1\nkind: Attacker\nmetadata:\n  name: a\n")
            self._kustomization("generators:\n- gen.yaml\n")
        elif kind == "KRM function":
            self._exe(self.root / "fn" / "attacker", KRM)
            (self.root / "gen.yaml").write_text(textwrap.dedent("""\
                apiVersion: example.com/v1
                kind: Attacker
                metadata:
                  name: a
                  annotations:
                    config.kubernetes.io/function: |
                      exec:
                        path: ./fn/attacker
                """))
            self._kustomization("generators:\n- gen.yaml\n")
        else:
            self.helm = str(self._exe(bindir / "helm", HELM))
            (self.root / "charts" / "c").mkdir(parents=True)
            (self.root / "charts" / "c" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 1.0.0\n")
            (self.root / "charts" / "c" / "values.yaml").write_text("a: 1\n")
            self._kustomization("helmCharts:\n- name: c\n  releaseName: r\n")

    @staticmethod
    def _exe(path: Path, text: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o755)
        return path

    def _kustomization(self, body: str) -> None:
        (self.root / "kustomization.yaml").write_text(body)

    def options(self, **settings: Any) -> BuildOptions:
        # the test's own variables reach the plugin as a user grants them (allow-env)
        settings.setdefault("allow_env", TEST_ENV)
        return BuildOptions(enable_alpha_plugins=True, enable_exec=True, enable_helm=True,
                            helm_command=getattr(self, "helm", "helm"), plugin_timeout=30,
                            sandbox=SandboxSettings(**settings))

    def untouched(self) -> bool:
        return (not (self.outside / "pwned").exists() and not (self.root / "pwned").exists()
                and self.listener.accepted == 0)


@pytest.fixture
def listener() -> Iterator[Listener]:
    lst = Listener()
    yield lst
    lst.close()


KINDS = ["exec plugin", "KRM function", "helm"]
#: What the attacks read from their environment: granted as a user grants a variable.
TEST_ENV = ("KZGIT_TARGETS", "KZGIT_ATTACK")
USER_ENV = 'allow-env = ["KZGIT_TARGETS", "KZGIT_ATTACK"]\n'


def user_toml(text: str) -> str:
    """The user's config.toml ``text`` with the test's variables granted (allow-env)."""
    if "[sandbox]\n" in text:
        return text.replace("[sandbox]\n", "[sandbox]\n" + USER_ENV, 1)
    return text + "[sandbox]\n" + USER_ENV
ATTACKS = ["read", "write-outside", "write-source", "connect"]


@needs_landlock
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("attack", ATTACKS + [f"child-{a}" for a in ATTACKS])
def test_hostile_plugin_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   listener: Listener, kind: str, attack: str) -> None:
    scene = Scene(tmp_path, kind, monkeypatch, listener)
    monkeypatch.setenv("KZGIT_ATTACK", attack)
    with pytest.raises(PluginError) as e:
        build(str(scene.root), scene.options())
    msg = str(e.value)
    assert f"attack {attack.replace('child-', '')} refused" in msg and "Permission denied" in msg
    assert "kzgit's plugin sandbox" in msg and "allow-read" in msg and "network = true" in msg
    assert str(scene.root) in msg          # what it could read is listed
    assert scene.untouched(), "a confined plugin changed something outside its temp dir"
    assert "secret" not in msg


@needs_landlock
@pytest.mark.parametrize("kind", KINDS)
def test_plugin_with_nothing_to_hide_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          listener: Listener, kind: str) -> None:
    """Its own temporary directory (TMPDIR) is writable, and removed afterwards."""
    scene = Scene(tmp_path, kind, monkeypatch, listener)
    monkeypatch.setenv("KZGIT_ATTACK", "tmp")
    # a temporary directory of this test's own: other test runs create sandboxes in /tmp too
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    out = build(str(scene.root), scene.options()).to_yaml()
    assert "got: ok" in out
    assert os.listdir(tmp) == [], "the plugin's temporary directory outlived it"


@needs_landlock
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("attack,settings", [
    ("read", {"allow_read": ("~/.ssh",)}),
    ("child-read", {"allow_read": ("~/.ssh/id_ed25519",)}),
    ("write-outside", {"allow_write": ("~/../outside",)}),
    ("connect", {"network": True}),
    ("child-connect", {"network": True}),
])
def test_allowed_access_succeeds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 listener: Listener, kind: str, attack: str,
                                 settings: Dict[str, Any]) -> None:
    scene = Scene(tmp_path, kind, monkeypatch, listener)
    monkeypatch.setenv("KZGIT_ATTACK", attack)
    out = build(str(scene.root), scene.options(**settings)).to_yaml()
    if attack.endswith("read"):
        assert "got: '-----BEGIN OPENSSH PRIVATE KEY----- secret'" in out
    elif attack == "write-outside":
        assert (scene.outside / "pwned").read_text() == "pwned"
    else:   # helm runs twice (version, template), each connects
        expected = 2 if kind == "helm" else 1
        assert listener.count(expected) == expected


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode", ["auto", "off"])
def test_no_plugin_receives_a_token_of_kzgits_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listener: Listener, kind: str,
        mode: str) -> None:
    """Issue 32: exec plugins, KRM functions and helm inherited kzgit's whole environment
    (a CI job's GITHUB_TOKEN); now the allow-list, whether confined or not, and a HOME of
    their own; ``allow-env`` grants one."""
    scene = Scene(tmp_path, kind, monkeypatch, listener)
    monkeypatch.setenv("KZGIT_ATTACK", "env")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret_of_the_ci_job")
    if mode == "auto" and not LANDLOCK:
        monkeypatch.setattr(sandbox, "_unconfined", [])
    out = build(str(scene.root), scene.options(mode=mode, allow_unconfined=True)).to_yaml()
    assert "token=none" in out and "ghp_secret" not in out
    assert f"home={scene.home}" not in out
    out = build(str(scene.root), scene.options(mode=mode, allow_unconfined=True,
                                               allow_env=(*TEST_ENV, "GITHUB_TOKEN"))).to_yaml()
    assert "token=ghp_secret_of_the_ci_job" in out


@needs_landlock
def test_network_option_opens_tcp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  listener: Listener) -> None:
    """--network (BuildOptions.network) opens TCP to confined plugins as network = true does."""
    scene = Scene(tmp_path, "KRM function", monkeypatch, listener)
    monkeypatch.setenv("KZGIT_ATTACK", "connect")
    opts = scene.options()
    opts.network = True
    build(str(scene.root), opts)
    assert listener.count(1) == 1


@needs_landlock
def test_mode_off_runs_unconfined(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  listener: Listener) -> None:
    scene = Scene(tmp_path, "exec plugin", monkeypatch, listener)
    monkeypatch.setenv("KZGIT_ATTACK", "read")
    assert "secret" in build(str(scene.root), scene.options(mode="off")).to_yaml()


def test_without_landlock_auto_runs_unconfined_only_when_allowed_and_require_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listener: Listener) -> None:
    """A machine without Landlock (simulated): mode "auto" used to run the plugin unconfined
    silently; it now refuses unless the user allows unconfined runs (issue 32)."""
    scene = Scene(tmp_path, "KRM function", monkeypatch, listener)
    monkeypatch.setenv("KZGIT_ATTACK", "read")
    monkeypatch.setattr(sandbox, "available", lambda: (False, "this test's kernel has none"))
    monkeypatch.setattr(sandbox, "_unconfined", [])
    with pytest.raises(PluginError) as e:
        build(str(scene.root), scene.options())
    assert "cannot confine it here (this test's kernel has none)" in str(e.value)
    assert "allow-unconfined = true" in str(e.value) and "--sandbox off" in str(e.value)
    assert sandbox.unconfined_reason() is None and "secret" not in str(e.value)
    monkeypatch.setenv("KZGIT_ATTACK", "tmp")
    assert "got: ok" in build(str(scene.root), scene.options(allow_unconfined=True)).to_yaml()
    assert sandbox.unconfined_reason() == "this test's kernel has none"
    with pytest.raises(PluginError) as e:
        build(str(scene.root), scene.options(mode="require", source="/r/.kzgit.toml"))
    assert "sandbox is required (/r/.kzgit.toml) but this test's kernel has none" in str(e.value)
    assert 'mode = "auto"' in str(e.value)


def test_docker_mount_outside_the_root_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "app"
    root.mkdir()
    (root / "fn.yaml").write_text(CONTAINER_FN_CONFIG)
    (root / "kustomization.yaml").write_text("generators:\n- fn.yaml\n")
    opts = BuildOptions(enable_alpha_plugins=True, mounts=[f"type=bind,src={tmp_path / 'secret'},dst=/s"])
    (tmp_path / "secret").mkdir()
    with pytest.raises(PluginError, match="mount source .*secret' is outside the kustomization root"):
        build(str(root), opts)
    opts.sandbox = SandboxSettings(allow_read=(str(tmp_path / "secret"),))
    with pytest.raises(KzgitError) as e:   # allowed: docker itself runs (and fails here)
        build(str(root), opts)
    assert "outside the kustomization root" not in str(e.value)
    opts.mounts = [f"type=bind,src={tmp_path / 'secret'},dst=/s,rw=true"]
    with pytest.raises(PluginError, match="allow-write"):   # writable needs allow-write
        build(str(root), opts)


def test_config_table(tmp_path: Path) -> None:
    (tmp_path / ".kzgit.toml").write_text(
        '[sandbox]\nmode = "require"\nallow-read = ["~/.config/sops/age"]\nnetwork = true\n')
    s = load_config(str(tmp_path)).sandbox
    assert (s.mode, s.allow_read, s.allow_write, s.network) == (
        "require", ("~/.config/sops/age",), (), True)
    assert s.with_flags("off").mode == "off" and s.with_flags(None).mode == "require"
    (tmp_path / ".kzgit.toml").write_text('[sandbox]\nmode = "maybe"\n')
    with pytest.raises(UsageError, match="bad value for 'sandbox.mode'"):
        load_config(str(tmp_path))
    (tmp_path / ".kzgit.toml").write_text('[sandbox]\nallow-reads = []\n')
    with pytest.raises(UsageError, match="unknown key 'sandbox.allow-reads'"):
        load_config(str(tmp_path))
    os.remove(tmp_path / ".kzgit.toml")
    (tmp_path / "pyproject.toml").write_text('[tool.kzgit.sandbox]\nallow-write = ["/w"]\n')
    assert load_config(str(tmp_path)).sandbox.allow_write == ("/w",)


@needs_landlock
def test_cli_the_repository_narrows_only_the_user_and_the_flags_widen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listener: Listener) -> None:
    """The attack of issue 24: the change that adds a plugin also widens the sandbox in the
    repository's own file.  Refused (exit 2) naming the key and how to grant it; granted by
    the flags or by the user's ~/.config/kzgit/config.toml, which the repository narrows."""
    scene = Scene(tmp_path, "KRM function", monkeypatch, listener)
    repo = scene.root.parent
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    user_file = scene.home / ".config" / "kzgit" / "config.toml"
    user_file.parent.mkdir(parents=True)
    user_file.write_text(user_toml(""))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(scene.home / ".config"))

    def kzgit(attack: str, *flags: str) -> "subprocess.CompletedProcess[str]":
        return subprocess.run([PY, "-m", "kzgit", "build", "--enable-alpha-plugins", *flags,
                               str(scene.root)], capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, KZGIT_ATTACK=attack))

    def refused(r: "subprocess.CompletedProcess[str]", key: str, grant: str) -> bool:
        return (r.returncode == 2 and "Traceback" not in r.stderr and f"'{key}'" in r.stderr
                and "widens the plugin sandbox" in r.stderr and grant in r.stderr
                and str(user_file) in r.stderr and "secret" not in r.stdout + r.stderr)

    r = kzgit("connect")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "attack connect refused" in r.stderr and "TIP: it ran in kzgit's plugin sandbox" in r.stderr
    assert listener.accepted == 0
    assert kzgit("connect", "--network").returncode == 0 and listener.count(1) == 1
    # network from the repository: refused; from the flag or the user's file: granted
    (repo / ".kzgit.toml").write_text("[sandbox]\nnetwork = true\n")
    r = kzgit("connect")
    assert refused(r, "sandbox.network", "network = true"), r.stderr
    assert "--network" in r.stderr and listener.accepted == 1
    assert kzgit("connect", "--network").returncode == 0 and listener.count(2) == 2
    user_file.write_text(user_toml("[sandbox]\nnetwork = true\n"))
    assert kzgit("connect").returncode == 0 and listener.count(3) == 3
    (repo / ".kzgit.toml").write_text("[sandbox]\nnetwork = false\n")   # narrowing: always
    r = kzgit("connect")
    assert r.returncode == 1 and "attack connect refused" in r.stderr and listener.count(3) == 3
    user_file.write_text(user_toml(""))
    # mode off from the repository: refused; --sandbox off or the user's mode = "off": granted
    (repo / ".kzgit.toml").write_text('[sandbox]\nmode = "off"\n')
    r = kzgit("read")
    assert refused(r, "sandbox.mode", 'mode = "off"'), r.stderr
    assert "--sandbox off" in r.stderr
    r = kzgit("read", "--sandbox", "off")
    assert r.returncode == 0 and "secret" in r.stdout
    r = kzgit("read", "--sandbox", "auto")      # the flag wins over the file
    assert r.returncode == 1 and "attack read refused" in r.stderr and "secret" not in r.stdout
    user_file.write_text(user_toml('[sandbox]\nmode = "off"\n'))
    r = kzgit("read")
    assert r.returncode == 0 and "secret" in r.stdout
    (repo / ".kzgit.toml").write_text('[sandbox]\nmode = "auto"\n')   # narrower than the user's
    r = kzgit("read")
    assert r.returncode == 1 and "attack read refused" in r.stderr
    user_file.write_text(user_toml(""))
    # allow-read of ~/.ssh from the repository: refused; within what the user allows: granted
    os.remove(repo / ".kzgit.toml")
    (repo / "pyproject.toml").write_text('[tool.kzgit.sandbox]\nallow-read = ["~/.ssh"]\n')
    r = kzgit("read")
    assert refused(r, "tool.kzgit.sandbox.allow-read", 'allow-read = ["~/.ssh"]'), r.stderr
    user_file.write_text(user_toml('[sandbox]\nallow-read = ["~/.ssh"]\n'))
    r = kzgit("read")
    assert r.returncode == 0 and "secret" in r.stdout
    (repo / "pyproject.toml").write_text(
        '[tool.kzgit.sandbox]\nallow-read = ["~/.ssh/id_ed25519", "~/.aws"]\n')
    assert refused(kzgit("read"), "tool.kzgit.sandbox.allow-read", 'allow-read = ["~/.aws"]')
    (repo / "pyproject.toml").write_text('[tool.kzgit.sandbox]\nallow-read = ["~/.ssh/id_ed25519"]\n')
    r = kzgit("read")
    assert r.returncode == 0 and "secret" in r.stdout
    (repo / "pyproject.toml").write_text("[tool.kzgit.sandbox]\nallow-read = []\n")
    r = kzgit("read")
    assert r.returncode == 1 and "attack read refused" in r.stderr
    (repo / "pyproject.toml").write_text('[tool.kzgit.sandbox]\nmode = "sometimes"\n')
    r = kzgit("tmp")
    assert r.returncode == 2 and "sandbox.mode" in r.stderr
    user_file.write_text(user_toml('[sandbox]\nmode = "never"\n'))
    os.remove(repo / "pyproject.toml")
    r = kzgit("tmp")
    assert r.returncode == 2 and f"{user_file}: bad value for 'sandbox.mode'" in r.stderr


def _settings(table: str, user: str, tmp: Path) -> SandboxSettings:
    (tmp / ".kzgit.toml").write_text(table)
    mine = {k: tuple(v) if isinstance(v, list) else v for k, v in json.loads(user or "{}").items()}
    return load_config(str(tmp)).sandbox.granted(SandboxSettings(**mine))


@pytest.mark.parametrize("repo,user,expected", [
    # (the repository's [sandbox], the user's settings as JSON, what is in force or the refused key)
    ("", "", ("auto", (), (), False)),
    ("", '{"mode": "off", "network": true, "allow_read": ["/k"]}', ("off", ("/k",), (), True)),
    ('mode = "require"', '{"mode": "off"}', ("require", (), (), False)),
    ('mode = "auto"', '{"mode": "require"}', ("require", (), (), False)),
    ('mode = "off"', "", "sandbox.mode"),
    ('mode = "off"', '{"mode": "off"}', ("off", (), (), False)),
    ("network = true", "", "sandbox.network"),
    ("network = false", '{"network": true}', ("auto", (), (), False)),
    ('allow-read = ["/k/a"]', '{"allow_read": ["/k"]}', ("auto", ("/k/a",), (), False)),
    ('allow-read = ["/k2"]', '{"allow_read": ["/k"]}', "sandbox.allow-read"),
    ('allow-read = ["/k/../etc"]', '{"allow_read": ["/k"]}', "sandbox.allow-read"),
    ("allow-read = []", '{"allow_read": ["/k"]}', ("auto", (), (), False)),
    ('allow-write = ["/w"]', '{"allow_read": ["/w"]}', "sandbox.allow-write"),
    ('allow-write = ["/w/x"]', '{"allow_write": ["/w"]}', ("auto", (), ("/w/x",), False)),
])
def test_granted_table(tmp_path: Path, repo: str, user: str, expected: Any) -> None:
    if isinstance(expected, str):
        with pytest.raises(UsageError, match=f"'{expected}' = .* widens the plugin sandbox"):
            _settings(f"[sandbox]\n{repo}\n", user, tmp_path)
        return
    s = _settings(f"[sandbox]\n{repo}\n", user, tmp_path)
    assert (s.mode, s.allow_read, s.allow_write, s.network) == expected
    assert SandboxSettings(mode="off", network=True).granted() == SandboxSettings(mode="off", network=True)


def test_flags_grant_what_the_repository_asks(tmp_path: Path) -> None:
    (tmp_path / ".kzgit.toml").write_text('[sandbox]\nmode = "off"\nnetwork = true\n')
    s = load_config(str(tmp_path)).sandbox
    with pytest.raises(UsageError, match="sandbox.mode"):
        s.granted(SandboxSettings())
    assert s.with_flags("off", True).granted(SandboxSettings()).mode == "off"
    assert s.with_flags("require", True).granted(SandboxSettings()).mode == "require"
    with pytest.raises(UsageError, match="sandbox.network"):
        s.with_flags("off").granted(SandboxSettings())


@pytest.mark.parametrize("key,value", [("engine-path", "./bin/kustomize"), ("helm-command", "./helm")])
def test_a_repository_names_a_program_only_when_the_user_did(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, value: str) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    (tmp_path / ".kzgit.toml").write_text(f'{key} = "{value}"\n')
    with pytest.raises(UsageError) as e:
        load_config(str(tmp_path))
    assert f"'{key}' = \"{value}\" names a program" in str(e.value)
    assert str(tmp_path / "cfg" / "kzgit" / "config.toml") in str(e.value)
    (tmp_path / "cfg" / "kzgit").mkdir(parents=True)
    (tmp_path / "cfg" / "kzgit" / "config.toml").write_text(f'{key} = "{value}"\n')
    got = load_config(str(tmp_path))
    assert (got.engine_path if key == "engine-path" else got.helm_command) == value


def test_an_external_engine_may_not_run_the_repositorys_plugins_unconfined(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    (tmp_path / ".kzgit.toml").write_text('engine = "kustomize"\nenable-exec = true\n')
    with pytest.raises(UsageError, match="runs the repository's plugins unconfined"):
        load_config(str(tmp_path))
    (tmp_path / "cfg" / "kzgit").mkdir(parents=True)
    user = tmp_path / "cfg" / "kzgit" / "config.toml"
    user.write_text('[sandbox]\nmode = "off"\n')
    with pytest.raises(UsageError, match="'enable-exec' = true lets the repository's plugins run"):
        load_config(str(tmp_path))   # unconfined allowed, but enable-exec not granted
    user.write_text('enable-exec = true\n[sandbox]\nmode = "off"\n')
    assert load_config(str(tmp_path)).enable_exec is True
    (tmp_path / ".kzgit.toml").write_text('enable-exec = true\n')   # the builtin engine confines
    user.write_text('enable-exec = true\n')
    assert load_config(str(tmp_path)).enable_exec is True


def test_kzgit_trust_approves_the_settings_as_they_are(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       listener: Listener) -> None:
    """An explicit approval (``kzgit trust``) grants one repository's widening settings until any
    of them changes, as ``direnv allow`` does for one ``.envrc``."""
    scene = Scene(tmp_path, "KRM function", monkeypatch, listener)
    repo = scene.root.parent
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(scene.home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(scene.home / ".local" / "share"))
    record = scene.home / ".local" / "share" / "kzgit" / "trusted.json"
    # the user's own settings: an approval adds the repository's to them, never drops them
    user_file = scene.home / ".config" / "kzgit" / "config.toml"
    user_file.parent.mkdir(parents=True)
    user_file.write_text(user_toml(""))

    def kzgit(*argv: str) -> "subprocess.CompletedProcess[str]":
        return subprocess.run([PY, "-m", "kzgit", *argv], capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, KZGIT_ATTACK="read"))

    build_it = ("build", "--enable-alpha-plugins", str(scene.root))
    (repo / ".kzgit.toml").write_text('[sandbox]\nmode = "off"\n')
    r = kzgit(*build_it)
    assert r.returncode == 2 and "'sandbox.mode'" in r.stderr and f"kzgit trust {repo}" in r.stderr
    r = kzgit("trust", str(scene.root))
    assert r.returncode == 0 and "approved the settings of" in r.stdout and "sandbox" in r.stdout, r.stderr
    assert json.loads(record.read_text()) == {str(repo): json.loads(record.read_text())[str(repo)]}
    r = kzgit(*build_it)
    assert r.returncode == 0 and "secret" in r.stdout, r.stderr
    (repo / ".kzgit.toml").write_text('[sandbox]\nmode = "off"\nnetwork = true\n')   # a change
    r = kzgit(*build_it)
    assert r.returncode == 2 and "'sandbox.mode'" in r.stderr and "secret" not in r.stdout
    assert kzgit("trust", str(repo)).returncode == 0
    assert kzgit(*build_it).returncode == 0
    assert kzgit("trust", "--revoke", str(repo)).returncode == 0
    assert kzgit(*build_it).returncode == 2
    # a program named by the repository, approved the same way
    (repo / ".kzgit.toml").write_text('helm-command = "./bin/helm"\n')
    with pytest.raises(UsageError, match=f"kzgit trust {repo}"):
        load_config(str(repo))
    assert kzgit("trust", str(repo)).returncode == 0
    assert load_config(str(repo)).helm_command == "./bin/helm"
    (repo / ".kzgit.toml").write_text('helm-command = "./bin/other"\n')
    with pytest.raises(UsageError, match="names a program"):
        load_config(str(repo))


def test_interpreter_roots_grant_an_installation_not_a_shared_prefix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``#!/usr/bin/env python3`` finds the interpreter on kzgit's PATH even when the caller
    sets variables of its own; a venv (pyvenv.cfg) in the home is granted whole, ``~/.local``
    (a prefix many programs share) only the interpreter's file (issue 32)."""
    home = tmp_path / "home"
    venv = home / "proj" / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "bin" / "python3").symlink_to(os.path.realpath(PY))
    local = home / ".local"
    (local / "bin").mkdir(parents=True)
    (local / "lib" / "python3.11" / "site-packages").mkdir(parents=True)   # pip --user's, no stdlib
    (local / "bin" / "python3").symlink_to(os.path.realpath(PY))
    monkeypatch.setenv("HOME", str(home))
    script = tmp_path / "plugin"
    script.write_text("#!/usr/bin/env python3\n")
    monkeypatch.setenv("PATH", f"{venv / 'bin'}:{os.environ['PATH']}")
    roots = sandbox._interpreter_roots(str(script), {"KUSTOMIZE_PLUGIN_CONFIG_ROOT": "/x"})
    assert str(venv) in roots
    script.write_text(f"#!{local / 'bin' / 'python3'}\n")
    roots = sandbox._interpreter_roots(str(script), {})
    assert str(local) not in roots and str(local / "bin" / "python3") in roots


FAKE_HELM = ("#!/bin/sh\n"
             "if [ \"$1\" = version ]; then echo v3.16.2; exit 0; fi\n"
             "printf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: from-%s\\n' \"$(basename \"$0\")\"\n")


def _home_helm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A chart, and a helm installed as a tool manager does: a copy under the home
    (``~/.local/share/tool/helm/3.16.2/bin/helm``) linked from ``~/bin`` on the PATH."""
    tmp = Path(os.path.realpath(tmp_path))
    home = tmp / "home"
    installed = home / ".local" / "share" / "tool" / "helm" / "3.16.2" / "bin" / "helm"
    installed.parent.mkdir(parents=True)
    installed.write_text(FAKE_HELM)
    installed.chmod(0o755)
    (home / "bin").mkdir()
    (home / "bin" / "helm").symlink_to(installed)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("PATH", f"{home / 'bin'}:{os.environ['PATH']}")
    root = tmp / "repo" / "app"
    (root / "charts" / "c").mkdir(parents=True)
    (root / "charts" / "c" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 1.0.0\n")
    (root / "charts" / "c" / "values.yaml").write_text("a: 1\n")
    (root / "kustomization.yaml").write_text("helmCharts:\n- name: c\n  releaseName: r\n")
    return root


@needs_landlock
def test_helm_from_the_path_runs_confined_with_its_installation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A helm on the PATH outside /usr (a link in ~/bin to a tool manager's copy) runs in the
    sandbox as a --helm-command does (issue 33 item 6): it used to be refused with "cannot run
    'helm': permission denied (is it executable?)"."""
    root = _home_helm(tmp_path, monkeypatch)
    out = build(str(root), BuildOptions(enable_helm=True, sandbox=SandboxSettings(mode="require"))).to_yaml()
    assert "name: from-helm\n" in out


@needs_landlock
def test_the_users_helm_command_names_the_helm_to_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``helm-command`` in the user's own configuration is the helm kzgit runs (it was read only
    to check a repository's); ``~`` is expanded."""
    root = _home_helm(tmp_path, monkeypatch)
    home = Path(os.environ["HOME"])
    mine = home / "tools" / "helm3"
    mine.parent.mkdir()
    mine.write_text(FAKE_HELM)
    mine.chmod(0o755)
    (home / ".config" / "kzgit").mkdir(parents=True)
    (home / ".config" / "kzgit" / "config.toml").write_text('helm-command = "~/tools/helm3"\n')
    out = build(str(root), BuildOptions(enable_helm=True, sandbox=SandboxSettings(mode="require"))).to_yaml()
    assert "name: from-helm3\n" in out


@needs_landlock
def test_a_sandbox_refusal_to_start_helm_names_the_sandbox_the_path_and_the_grant(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the rules do not cover the program (a tool manager's shim the sandbox cannot
    follow, here its grants withheld), the message says it is the sandbox, names the file
    and the allow-read that grants it, not "is it executable?"."""
    root = _home_helm(tmp_path, monkeypatch)
    monkeypatch.setattr(sandbox, "_program_roots", lambda named, program: [])
    with pytest.raises(PluginError) as e:
        build(str(root), BuildOptions(enable_helm=True, sandbox=SandboxSettings(mode="require")))
    home = os.environ["HOME"]
    msg = str(e.value)
    assert "the plugin sandbox refused to run 'helm'" in msg, msg
    assert f"{home}/bin/helm, found for 'helm' on the PATH, a link to {home}/.local/share/tool/helm/3.16.2/bin/helm" in msg
    assert "is it executable" not in msg
    assert e.value.tip is not None
    assert f'allow-read = ["{home}/.local/share/tool/helm/3.16.2/bin"]' in e.value.tip
    assert "[sandbox] in your ~/.config/kzgit/config.toml" in e.value.tip
