"""Discovery through the render cache: the parses it keeps (kzgit.gitops.memo) and the remotes
that decide "this repository" (kzgit.gitops.urls.git_remotes) are used only while what they
were made from is unchanged; each way an entry goes stale is tried here."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, Callable, List, Tuple

import pytest

from kzgit.config import load_config
from kzgit.gitops import memo, urls
from kzgit.gitops.discover import discover, open_worktree
from kzgit.rendercache import Store

from gitops_repos import REMOTE
from test_gitops_hooks import DEPLOY, SYNC, ks


def counting(parse: Callable[[str, bytes], Any]) -> Tuple[Callable[[str, bytes], Any], List[str]]:
    calls: List[str] = []

    def wrapped(name: str, data: bytes) -> Any:
        calls.append(name)
        return parse(name, data)
    return wrapped, calls


def upper(name: str, data: bytes) -> Any:
    return {"name": name, "text": data.decode().upper(), "n": len(data), "f": 0.5, "b": True}


def test_parses_come_back_from_the_cache_while_the_files_are_unchanged(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "cache"))
    parse, calls = counting(upper)
    files = [("a.yaml", b"one"), ("b.yaml", b"two")]
    first = memo.parsed(store, "test", files, parse)
    assert calls == ["a.yaml", "b.yaml"]
    assert memo.parsed(store, "test", files, parse) == first
    assert calls == ["a.yaml", "b.yaml"]   # the second answer is the entry's
    # any file's bytes, a file's name, the set of files, the flavour: another key
    for changed in ([("a.yaml", b"one"), ("b.yaml", b"tw0")],
                    [("a.yaml", b"one"), ("c.yaml", b"two")],
                    [("a.yaml", b"one")],
                    [("b.yaml", b"two"), ("a.yaml", b"one")]):
        calls.clear()
        assert memo.parsed(store, "test", changed, parse) == [upper(n, d) for n, d in changed]
        assert calls == [n for n, _ in changed]
    calls.clear()
    memo.parsed(store, "other", files, parse)
    assert calls == ["a.yaml", "b.yaml"]


def test_kzgits_version_makes_another_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kzgit import _version
    store = Store(str(tmp_path / "cache"))
    parse, calls = counting(upper)
    memo.parsed(store, "test", [("a.yaml", b"one")], parse)
    monkeypatch.setattr(_version, "__version__", _version.__version__ + ".post1")
    memo.parsed(store, "test", [("a.yaml", b"one")], parse)
    assert calls == ["a.yaml", "a.yaml"]


@pytest.mark.parametrize("value", [{1: "an int key"}, {"d": __import__("datetime").date(2024, 1, 1)},
                                   {"t": (1, 2)}, "shared"])
def test_what_json_would_change_is_not_stored(tmp_path: Path, value: Any) -> None:
    if value == "shared":   # one object reached twice (a YAML alias): JSON would copy it
        inner = {"k": "v"}
        value = {"a": inner, "b": inner}
    store = Store(str(tmp_path / "cache"))
    parse, calls = counting(lambda name, data: value)
    assert memo.parsed(store, "test", [("a.yaml", b"x")], parse) == [value]
    assert memo.parsed(store, "test", [("a.yaml", b"x")], parse) == [value]
    assert calls == ["a.yaml", "a.yaml"]


def test_a_damaged_entry_is_parsed_again(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "cache"))
    parse, calls = counting(upper)
    memo.parsed(store, "test", [("a.yaml", b"one")], parse)
    for entry in (tmp_path / "cache").rglob("*.kzr"):
        entry.write_bytes(entry.read_bytes()[:-3] + b"!!!")
    assert memo.parsed(store, "test", [("a.yaml", b"one")], parse) == [upper("a.yaml", b"one")]
    assert calls == ["a.yaml", "a.yaml"]


FLEET = {
    "clusters/prod/flux-system/gotk-sync.yaml": SYNC,
    "clusters/prod/web.yaml": ks("web", "./apps/web", "  targetNamespace: web\n"),
    "apps/web/kustomization.yaml": "resources: [deploy.yaml]\n",
    "apps/web/deploy.yaml": DEPLOY,
    "apps/web/patch.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n",
}


def ids(top: Path, store: Store) -> List[Tuple[str, str, str, int]]:
    catalog = discover(open_worktree(str(top), load_config(str(top))), store=store)
    return [(a.id, str(a.path), a.file, a.line) for a in catalog.apps]


def test_discovery_with_the_cache_finds_what_it_finds_without(
        repo: Callable[..., Path], tmp_path: Path) -> None:
    top = repo(FLEET)
    store = Store(str(tmp_path / "cache"))
    plain = ids(top, None)   # type: ignore[arg-type]
    assert ids(top, store) == plain == ids(top, store)
    assert [i for i, *_ in plain] == ["flux:flux-system/flux-system", "flux:flux-system/web"]
    # an application added, one moved down a line, a kustomization now listing a patch file
    # (a partial Kustomization there is no application): each seen at once
    (top / "clusters/prod/web.yaml").write_text("# web\n" + FLEET["clusters/prod/web.yaml"])
    (top / "clusters/prod/api.yaml").write_text(ks("api", "./apps/web", ""))
    subprocess.run(["git", "-C", str(top), "add", "-A"], check=True, timeout=60)
    got = ids(top, store)
    assert got == ids(top, None)   # type: ignore[arg-type]
    assert ("flux:flux-system/web", "apps/web", "clusters/prod/web.yaml", 2) in got
    assert "flux:flux-system/api" in [i for i, *_ in got]
    (top / "apps/web/patch.yaml").write_text(ks("web", "./apps/other", ""))
    (top / "apps/web/kustomization.yaml").write_text(
        "resources: [deploy.yaml]\npatches:\n- path: patch.yaml\n")
    patched = ids(top, store)
    assert patched == ids(top, None) != got   # type: ignore[arg-type]
    assert patched == ids(top, store)


def test_remotes_come_back_from_the_cache_until_the_configuration_changes(
        repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    top = str(repo(FLEET))
    store = Store(str(tmp_path / "cache"))
    assert urls.git_remotes(top, store) == [REMOTE]
    from kzgit import gitio
    real_git = gitio.git
    asked: List[List[str]] = []

    def git(args: List[str], *rest: Any, **kw: Any) -> bytes:
        asked.append(args)
        return real_git(args, *rest, **kw)
    monkeypatch.setattr(gitio, "git", git)
    assert urls.git_remotes(top, store) == [REMOTE]
    assert asked == []   # from the cache: git did not run
    # the repository's own configuration: a remote moved, another added
    subprocess.run(["git", "-C", top, "remote", "set-url", "origin", "https://example.com/x.git"],
                   check=True, timeout=60)
    subprocess.run(["git", "-C", top, "remote", "add", "up", "git@example.com:y.git"],
                   check=True, timeout=60)
    assert urls.git_remotes(top, store) == ["https://example.com/x.git", "git@example.com:y.git"]
    assert len(asked) == 1
    assert urls.git_remotes(top, store) == ["https://example.com/x.git", "git@example.com:y.git"]
    assert len(asked) == 1
    # the global configuration may name remotes too
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    (home / ".gitconfig").write_text('[remote "g"]\n\turl = https://example.com/g.git\n')
    assert urls.git_remotes(top, store)[0] == "https://example.com/g.git"   # global first
    assert len(asked) == 2
    (home / ".gitconfig").write_text('[remote "g"]\n\turl = https://example.com/h.git\n')
    assert urls.git_remotes(top, store)[0] == "https://example.com/h.git"
    assert len(asked) == 3
    # GIT_CONFIG_GLOBAL picks another file
    other = tmp_path / "global"
    other.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(other))
    assert urls.git_remotes(top, store) == ["https://example.com/x.git", "git@example.com:y.git"]
    assert len(asked) == 4


def test_remotes_with_an_include_are_asked_of_git_every_time(
        repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    top = repo(FLEET)
    extra = tmp_path / "extra.gitconfig"
    extra.write_text('[remote "inc"]\n\turl = https://example.com/inc.git\n')
    subprocess.run(["git", "-C", str(top), "config", "include.path", str(extra)], check=True,
                   timeout=60)
    store = Store(str(tmp_path / "cache"))
    assert urls.git_remotes(str(top), store) == [REMOTE, "https://example.com/inc.git"]
    # the included file changes without the repository's configuration changing
    extra.write_text('[remote "inc"]\n\turl = https://example.com/moved.git\n')
    assert urls.git_remotes(str(top), store) == [REMOTE, "https://example.com/moved.git"]
