"""The engine seam: builtin and external engines, timeouts, error reporting, git env."""
from __future__ import annotations

import os
import shutil
import stat
import time
from pathlib import Path
from typing import List

import pytest

from kzgit import proc
from kzgit.options import BuildOptions
from kzgit.config import Config
from kzgit.engine import ExternalEngine, engine_from_config, get_engine, no_git_env
from kzgit.errors import BuildError, UsageError
from kzgit.loader import NO_RESTRICTIONS


def _fake(tmp_path: Path, body: str, name: str = "kustomize") -> str:
    p = tmp_path / name
    p.write_text("#!/bin/sh\n" + body)
    p.chmod(p.stat().st_mode | stat.S_IXUSR)
    return str(p)


def test_builtin_is_default() -> None:
    assert get_engine().name == "builtin"
    assert engine_from_config(Config()).name == "builtin"


def test_missing_binary_is_a_usage_error_naming_the_source(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as e:
        get_engine("kustomize", str(tmp_path / "nope"), source="/r/.kzgit.toml")
    assert "/r/.kzgit.toml" in str(e.value) and "nope" in str(e.value)


def test_argv_maps_options(tmp_path: Path) -> None:
    eng = ExternalEngine("kubectl", "/usr/bin/kubectl")
    opts = BuildOptions(load_restrictor=NO_RESTRICTIONS, enable_helm=True, env=["A=1"])
    assert eng.argv("d", opts) == ["/usr/bin/kubectl", "kustomize", "d",
                                   f"--load-restrictor={NO_RESTRICTIONS}", "--enable-helm", "--env=A=1"]
    assert ExternalEngine("kustomize", "k").argv("d", BuildOptions())[:3] == ["k", "build", "d"]
    helm = BuildOptions(enable_helm=True, helm_api_versions=["a/v1", "b/v2"], helm_kube_version="1.30",
                        helm_debug=True, as_current_user=True)
    assert eng.argv("d", helm)[3:] == ["--enable-helm", "--helm-api-versions=a/v1",
                                       "--helm-api-versions=b/v2", "--helm-kube-version=1.30",
                                       "--helm-debug", "--as-current-user"]


def test_stdout_is_the_rendering(tmp_path: Path) -> None:
    eng = ExternalEngine("kustomize", _fake(tmp_path, 'echo "kind: X  # $2"\n'))
    assert eng.render("dir", BuildOptions()) == "kind: X  # dir\n"


def test_failure_carries_the_binary_message(tmp_path: Path) -> None:
    eng = ExternalEngine("kustomize", _fake(tmp_path, 'echo "Error: no kustomization" >&2; exit 1\n'))
    with pytest.raises(BuildError, match=r"^no kustomization$"):
        eng.render("dir", BuildOptions())


def test_kubectl_klog_wrapping_is_removed(tmp_path: Path) -> None:
    body = ("printf 'E1122 19:54:26.894963   18250 run.go:72] \"command failed\" err=<\\n"
            "\\tfirst line\\n\\tsecond line\\n >\\n' >&2; exit 1\n")
    eng = ExternalEngine("kubectl", _fake(tmp_path, body, "kubectl"))
    with pytest.raises(BuildError) as e:
        eng.render("dir", BuildOptions())
    assert str(e.value) == "first line\nsecond line"


def test_kubectl_one_line_klog_and_warnings_are_removed(tmp_path: Path) -> None:
    body = ("printf '# Warning: '\\''bases'\\'' is deprecated.\n"
            "E1122 19:54:26.894963   18250 run.go:72] \"command failed\" "
            "err=\"accumulating resources: accumulation err='\\''x'\\'': \\\"quoted\\\"\"\n' >&2; exit 1\n")
    eng = ExternalEngine("kubectl", _fake(tmp_path, body, "kubectl"))
    with pytest.raises(BuildError) as e:
        eng.render("dir", BuildOptions())
    assert str(e.value) == "accumulating resources: accumulation err='x': \"quoted\""


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not on PATH")
def test_kubectl_error_reads_like_the_builtin_engine(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text("resources:\n- missing.yaml\ncommonLabels: {a: b}\n")
    msgs = []
    for eng in (get_engine("kubectl"), get_engine("builtin")):
        with pytest.raises(BuildError) as e:
            eng.render(str(tmp_path), BuildOptions())
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    assert msgs[0].startswith("accumulating resources: accumulation err='accumulating resources from ")


def test_timeout_kills_the_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "child-alive"
    body = f'(sleep 3; touch "{marker}") &\nsleep 30\n'
    eng = ExternalEngine("kustomize", _fake(tmp_path, body), timeout=0.5)
    t0 = time.monotonic()
    with pytest.raises(BuildError, match="timed out after 0.5s"):
        eng.render("dir", BuildOptions())
    assert time.monotonic() - t0 < 10
    time.sleep(3.5)
    assert not marker.exists(), "a grandchild survived the timeout"


def test_git_env_is_stripped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_DIR", "/elsewhere/.git")
    monkeypatch.setenv("GIT_SSH_COMMAND", "ssh -i k")
    env = no_git_env()
    assert "GIT_DIR" not in env and env["GIT_SSH_COMMAND"] == "ssh -i k"
    eng = ExternalEngine("kustomize", _fake(tmp_path, 'echo "dir=${GIT_DIR:-unset}"\n'))
    assert eng.render("d", BuildOptions()) == "dir=unset\n"


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_renders(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text("resources:\n- cm.yaml\nnamePrefix: p-\n")
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
    out = get_engine("kubectl").render(str(tmp_path), BuildOptions())
    assert "name: p-a" in out
    os.remove(tmp_path / "cm.yaml")
    with pytest.raises(BuildError, match="cm.yaml"):
        get_engine("kubectl").render(str(tmp_path), BuildOptions())


def test_kill_all_stops_renders_in_flight(tmp_path: Path) -> None:
    import threading
    eng = ExternalEngine("kustomize", _fake(tmp_path, "sleep 30\n"), timeout=60)
    errors: List[object] = []
    t = threading.Thread(target=lambda: errors.append(pytest.raises(BuildError, eng.render, "d", BuildOptions())))
    t0 = time.monotonic()
    t.start()
    while not proc.live_groups() and time.monotonic() - t0 < 10:
        time.sleep(0.05)
    proc.kill_all()
    t.join(20)
    assert not t.is_alive() and time.monotonic() - t0 < 15


def test_external_engine_pickles() -> None:
    import pickle
    eng = pickle.loads(pickle.dumps(ExternalEngine("kubectl", "/bin/k", 7)))
    assert (eng.name, eng.binary, eng.timeout) == ("kubectl", "/bin/k", 7)
