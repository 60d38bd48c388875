"""Discovery through the render cache: the parses it keeps (kzgit.gitops.memo) and the remotes
that decide "this repository" (kzgit.gitops.urls.git_remotes) are used only while what they
were made from is unchanged; each way an entry goes stale is tried here."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple

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


def git_lists(top: str) -> List[str]:
    out = subprocess.run(["git", "config", "--get-regexp", r"^remote\..*\.url$"], cwd=top,
                         capture_output=True, text=True, timeout=60).stdout
    return [line.split(None, 1)[1] for line in out.splitlines() if len(line.split(None, 1)) == 2]


def spying_on_git(monkeypatch: pytest.MonkeyPatch) -> List[List[str]]:
    from kzgit import gitio
    real_git = gitio.git
    asked: List[List[str]] = []

    def git(args: List[str], *rest: Any, **kw: Any) -> bytes:
        asked.append(args)
        return real_git(args, *rest, **kw)
    monkeypatch.setattr(gitio, "git", git)
    return asked


@pytest.mark.parametrize("config", [
    '[remote "up"]\n\tURL = git@example.com:y.git\n\tfetch = +refs/heads/*:refs/up/*\n',
    '[Remote "Up"]\n  url=https://example.com/u\n  url = https://example.com/second\n',
    '# a comment\n[remote "up"] ; another\n\turl = https://example.com/u ; trailing\n',
    '[remote "up"]\n\turl = "https://example.com/quoted"\n',
    '[remote "up"]\n\turl = https://example.com/a\\\n.git\n',
    '[remote.up]\n\turl = https://example.com/old-syntax\n',
    '[remote "up"]\n\turl\n[remote "down"]\n\turl =\n',
    '[remote "a.url"]\n\turl = https://example.com/dotted\n[remote]\n\turl = x\n',
])
def test_remotes_read_from_the_configuration_are_what_git_lists(
        repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, config: str) -> None:
    top = str(repo(FLEET))
    with open(f"{top}/.git/config", "a") as f:
        f.write(config)
    want = git_lists(top)
    asked = spying_on_git(monkeypatch)
    assert urls.git_remotes(top) == want
    files = urls._config_files(top)
    assert files is not None
    read = urls._read_remotes(files)
    assert read is None or read == want
    assert len(asked) == (read is None)   # git runs only where the file is not read plainly


def test_remotes_come_back_from_the_cache_until_the_configuration_changes(
        repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    top = str(repo(FLEET))
    store = Store(str(tmp_path / "cache"))
    asked = spying_on_git(monkeypatch)
    assert urls.git_remotes(top, store) == [REMOTE]
    assert asked == []   # read from .git/config: git did not run
    # a global configuration naming a remote too: git's answer, then the cache's
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    (home / ".gitconfig").write_text('[remote "g"]\n\turl = https://example.com/g.git\n')
    assert urls.git_remotes(top, store) == ["https://example.com/g.git", REMOTE]   # global first
    assert len(asked) == 1
    assert urls.git_remotes(top, store) == ["https://example.com/g.git", REMOTE]
    assert len(asked) == 1   # from the cache
    (home / ".gitconfig").write_text('[remote "g"]\n\turl = https://example.com/h.git\n')
    assert urls.git_remotes(top, store)[0] == "https://example.com/h.git"
    assert len(asked) == 2
    # the repository's own configuration: a remote moved, another added
    subprocess.run(["git", "-C", top, "remote", "set-url", "origin", "https://example.com/x.git"],
                   check=True, timeout=60)
    subprocess.run(["git", "-C", top, "remote", "add", "up", "git@example.com:y.git"],
                   check=True, timeout=60)
    want = ["https://example.com/h.git", "https://example.com/x.git", "git@example.com:y.git"]
    assert urls.git_remotes(top, store) == want == git_lists(top)
    assert len(asked) == 3
    assert urls.git_remotes(top, store) == want and len(asked) == 3
    # GIT_CONFIG_GLOBAL picks another file
    other = tmp_path / "global"
    other.write_text('[remote "o"]\n\turl = https://example.com/o.git\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(other))
    assert urls.git_remotes(top, store) == ["https://example.com/o.git"] + want[1:]
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


# -- the catalog restored (kzgit.gitops.snapshot) --------------------------------------------

ARGO_CM = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\n  namespace: argocd\n"
           "data:\n  kustomize.buildOptions: --load-restrictor LoadRestrictionsNone\n")


def argo_app(name: str, path: str, extra: str = "") -> str:
    return ("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n"
            f"  name: {name}\n  namespace: argocd\nspec:\n  destination: {{namespace: {name}}}\n"
            f"  source:\n    repoURL: {REMOTE}\n    path: {path}\n{extra}")


GITOPS = dict(FLEET, **{
    "clusters/prod/flux-system/gotk-sync.yaml": SYNC.replace(
        "  ref: {branch: main}\n", "  ref: {branch: main}\n  ignore: |\n    /apps/web/skip.yaml\n"),
    "clusters/prod/db.yaml": ks("db", "./apps/db", "  postBuild:\n    substituteFrom:\n"
                                                 "    - {kind: ConfigMap, name: vars}\n"),
    "clusters/prod/other.yaml": ks("other", "./apps/db").replace(
        "name: flux-system}", "name: other}"),
    "clusters/prod/other-source.yaml": "apiVersion: source.toolkit.fluxcd.io/v1\n"
        "kind: GitRepository\nmetadata: {name: other, namespace: flux-system}\n"
        f"spec:\n  url: {REMOTE}\n  ignore: |\n    *.txt\n",
    "clusters/prod/vars.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vars}\n"
                               "data: {REPLICAS: '2'}\n",
    "apps/db/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: db}\n",
    "apps/.sourceignore": "*.md\n",
    "argocd/root.yaml": argo_app("root", "argocd/apps"),
    "argocd/apps/shop.yaml": argo_app("shop", "apps/web",
                                      "    kustomize: {namePrefix: shop-, version: v5.4.3}\n"),
    "argocd/apps/plain.yaml": argo_app("plain", "apps/db"),
    "argocd/apps/broken.yaml": argo_app("broken", "apps/missing"),
    "argocd/apps/elsewhere.yaml": argo_app("elsewhere", "apps/web").replace(
        REMOTE, "https://example.com/not-this.git"),
    "argocd/cm.yaml": ARGO_CM.replace(
        "data:\n", "data:\n  kustomize.version.v5.4.3: /usr/local/bin/kustomize-5.4.3\n"),
})


def fresh_and_cached(top: Path, store: Store, monkeypatch: pytest.MonkeyPatch
                     ) -> Tuple[Any, Any, int]:
    """(discover without the cache, discover_cached through ``store``, how many times the
    latter found the applications rather than restoring them)."""
    from kzgit.gitops import discover as discover_module
    from kzgit.gitops.snapshot import discover_cached
    config = load_config(str(top))
    fresh = discover(open_worktree(str(top), config))
    found: List[int] = []
    real = discover_module.discover

    def counting_discover(*args: Any, **kw: Any) -> Any:
        found.append(1)
        return real(*args, **kw)
    monkeypatch.setattr(discover_module, "discover", counting_discover)
    try:
        cached = discover_cached(open_worktree(str(top), config), store)
    finally:
        monkeypatch.setattr(discover_module, "discover", real)
    return fresh, cached, len(found)


def described(catalog: Any) -> List[Any]:
    """Everything of each application that a hook, kzgit diff or a render reads."""
    from kzgit.gitops.cache import app_key
    out = []
    for a in catalog.apps:
        matcher = a.extra.get("matcher")
        source = a.extra.get("source")
        out.append([a.as_json(), a.controller, a.kind, a.name, a.namespace, a.obj, a.doc.file,
                    a.doc.line, a.doc.text, a.version, a.version_origin, a.expanded,
                    # ("ref": discovery's provisional name of a parent, an object's id)
                    {k: v for k, v in a.extra.items() if k not in ("matcher", "source", "ref")},
                    None if matcher is None else [(p.domain, p.parts, p.inclusion, p.dir_only)
                                                  for p in matcher.patterns],
                    None if source is None else [source.obj, source.file, source.line],
                    app_key(catalog, a)])
    settings = catalog.argo_settings()
    out.append(None if settings is None else [settings.where, settings.build_options,
                                              settings.versions, settings.version_options])
    return out


def test_a_restored_catalog_is_the_one_discovery_finds(
        repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    top = repo(GITOPS)
    store = Store(str(tmp_path / "cache"))
    fresh, first, found = fresh_and_cached(top, store, monkeypatch)
    assert found == 1
    for x, y in zip(described(first), described(fresh)):
        assert x == y
    ids = [a.id for a in fresh.apps]
    assert {"flux:flux-system/db", "flux:flux-system/other", "argocd:argocd/shop",
            "argocd:argocd/broken", "argocd:argocd/elsewhere"} <= set(ids), ids
    assert any(a.error for a in fresh.apps) and any(a.reason for a in fresh.apps)
    fresh, restored, found = fresh_and_cached(top, store, monkeypatch)
    assert found == 0, "the second run restores the catalog"
    assert described(restored) == described(fresh)
    # what is asked of a restored catalog later: the scan, a substituteFrom ConfigMap
    assert restored.lookup_object("ConfigMap", "flux-system", "vars") is not None
    assert [d.file for d in restored.index.candidates] == [d.file for d in fresh.index.candidates]


def edit(top: Path, rel: str, text: Optional[str]) -> None:
    if text is None:
        (top / rel).unlink()
    else:
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text(text)
    subprocess.run(["git", "-C", str(top), "add", "-A"], check=True, timeout=60)


@pytest.mark.parametrize("change", [
    ("an application's manifest", "argocd/apps/shop.yaml",
     argo_app("shop", "apps/db", "    kustomize: {namePrefix: shop-}\n")),
    ("a file added", "clusters/prod/api.yaml", ks("api", "./apps/web")),
    ("a file removed", "argocd/apps/plain.yaml", None),
    ("a file the scan defers (substituteFrom)", "clusters/prod/vars.yaml",
     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vars}\ndata: {REPLICAS: '5'}\n"),
    ("a .sourceignore", "apps/.sourceignore", "*.md\ncm.yaml\n"),
    ("a source's spec.ignore", "clusters/prod/other-source.yaml",
     GITOPS["clusters/prod/other-source.yaml"].replace("*.txt", "*.yaml")),
    ("argocd-cm", "argocd/cm.yaml", ARGO_CM),
    ("the path an application names appears", "apps/missing/cm.yaml",
     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\n"),
    ("kzgit's configuration", ".kzgit.toml",
     "[gitops]\nrepo-urls = ['https://example.com/not-this.git']\n"),
])
def test_each_change_discovery_reads_finds_the_applications_again(
        repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        change: Tuple[str, str, Optional[str]]) -> None:
    top = repo(GITOPS)
    store = Store(str(tmp_path / "cache"))
    before = described(fresh_and_cached(top, store, monkeypatch)[0])   # (read now: lazily)
    edit(top, change[1], change[2])
    fresh, cached, found = fresh_and_cached(top, store, monkeypatch)
    assert found == 1, change[0]
    assert described(cached) == described(fresh) != before, change[0]
    _, again, found = fresh_and_cached(top, store, monkeypatch)
    assert found == 0 and described(again) == described(fresh), change[0]


def test_a_remote_moved_finds_the_applications_again(
        repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    top = repo(GITOPS)
    store = Store(str(tmp_path / "cache"))
    before = described(fresh_and_cached(top, store, monkeypatch)[0])
    subprocess.run(["git", "-C", str(top), "remote", "set-url", "origin",
                    "https://example.com/not-this.git"], check=True, timeout=60)
    fresh, cached, found = fresh_and_cached(top, store, monkeypatch)
    assert found == 1 and described(cached) == described(fresh) != before
    assert cached.find("argocd:argocd/elsewhere").rendered


def test_a_file_git_does_not_list_still_counts(
        repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Argo CD reads the directory, not git's list: an ignored Chart.yaml makes a directory
    application a Helm one, and the record of the listing sees it come."""
    top = repo(dict(GITOPS, **{".gitignore": "Chart.yaml\n"}))
    store = Store(str(tmp_path / "cache"))
    fresh_and_cached(top, store, monkeypatch)
    (top / "apps/db/Chart.yaml").write_text("apiVersion: v2\nname: db\nversion: 0.1.0\n")
    fresh, cached, found = fresh_and_cached(top, store, monkeypatch)
    assert found == 1 and described(cached) == described(fresh)
    assert cached.find("argocd:argocd/plain").renderer == "helm: not rendered"


def test_kzgits_version_finds_the_applications_again(
        repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kzgit import _version
    top = repo(GITOPS)
    store = Store(str(tmp_path / "cache"))
    fresh_and_cached(top, store, monkeypatch)
    monkeypatch.setattr(_version, "__version__", _version.__version__ + ".post1")
    assert fresh_and_cached(top, store, monkeypatch)[2] == 1


def test_a_discovery_that_renders_a_parent_is_not_kept(
        repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A parent that patches its children is rendered to find them: what that render reads is
    more than discovery's record, so such a discovery runs again each time."""
    patched = SYNC.replace("  decryption: {provider: sops}\n",
                           "  patches:\n  - patch: |\n      - {op: add, path: /spec/prune, "
                           "value: true}\n    target: {kind: Kustomization}\n")
    top = repo(dict(FLEET, **{"clusters/prod/flux-system/gotk-sync.yaml": patched}))
    store = Store(str(tmp_path / "cache"))
    for _ in range(2):
        fresh, cached, found = fresh_and_cached(top, store, monkeypatch)
        assert found == 1 and described(cached) == described(fresh)
    assert cached.find("flux:flux-system/web").obj["spec"]["prune"] is True
