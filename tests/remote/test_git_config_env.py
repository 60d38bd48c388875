"""git's configuration reaches it through ``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n``, never
``-c key=value``, and a URL's host cannot write configuration (issue 32)."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from kzgit.errors import RemoteError
from kzgit.remote._gitcli import GitAuth, run_git


@pytest.mark.parametrize("url", [
    "https://user:tok@evil.example=!sh -c id;x/org/repo",   # "=": the rest became the value
    "https://user:tok@a.example.helper=!touch pwned/org/repo",
    "https://user:tok@a example/org/repo",
])
def test_a_host_that_is_no_host_is_refused(url: str) -> None:
    with pytest.raises(RemoteError, match="is not a host name or address"):
        GitAuth(url)


@pytest.mark.parametrize("url,origin", [
    ("https://user:tok@github.com/org/repo", "https://github.com"),
    ("https://user:tok@git.example.com:8443/org/repo", "https://git.example.com:8443"),
    ("http://user:tok@127.0.0.1:9418/r", "http://127.0.0.1:9418"),
    ("https://user:tok@[::1]:8443/r", "https://[::1]:8443"),
])
def test_hosts_and_addresses_keep_working(url: str, origin: str) -> None:
    auth = GitAuth(url)
    assert f"credential.{origin}.helper=" in auth.config and "tok" not in auth.url


def test_configuration_travels_in_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in git records its argv and environment: no ``-c``, the pinned keys and the
    credential helper's key in GIT_CONFIG_KEY_n after the user's own entries."""
    record = tmp_path / "record.json"
    fake = tmp_path / "git"
    fake.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                    f"json.dump({{'argv': sys.argv[1:], 'env': dict(os.environ)}}, open({str(record)!r}, 'w'))\n")
    fake.chmod(0o755)
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "http.proxy")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "http://proxy.example:3128")
    auth = GitAuth("https://user:tok@git.example.com/org/repo")
    run_git(["ls-remote", "--", auth.url], cwd=str(tmp_path), timeout=30, label="x", git=str(fake),
            auth=auth)
    got = json.loads(record.read_text())
    assert got["argv"] == ["ls-remote", "--", "https://git.example.com/org/repo"]
    env = got["env"]
    count = int(env["GIT_CONFIG_COUNT"])
    pairs = [(env[f"GIT_CONFIG_KEY_{n}"], env[f"GIT_CONFIG_VALUE_{n}"]) for n in range(count)]
    assert pairs[0] == ("http.proxy", "http://proxy.example:3128")   # the user's own, first
    assert ("protocol.ext.allow", "never") in pairs and ("core.hooksPath", "/dev/null") in pairs
    keys = [k for k, _ in pairs]
    assert keys.count("credential.https://git.example.com.helper") == 2   # the reset, then ours
    assert "tok" not in " ".join(got["argv"]) and env["KZGIT_GIT_PASSWORD"] == "tok"
    assert os.environ["GIT_CONFIG_COUNT"] == "1"
