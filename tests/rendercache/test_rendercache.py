"""The persistent render cache: every kind of recorded input, damaged entries, concurrency."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any, List

import pytest
from helpers import PROJECT

import kzgit
from kzgit.options import BuildOptions
from kzgit.builder.cache import BuildCache
from kzgit.loader import DiskFS
from kzgit.rendercache import BUILT, CACHED, FAILED, Store, cache_key, lookup_yaml, open_store, render_yaml
from kzgit.rendercache.reads import Checker, Recorder, RecordingFS
from kzgit.sha import sha256

pytestmark = pytest.mark.usefixtures("isolated_home")

CM = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
data:
  v: "{value}"
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    top = Path(os.path.realpath(tmp_path)) / "repo"
    write(top / "base" / "kustomization.yaml", "resources: [cm.yaml]\n")
    write(top / "base" / "cm.yaml", CM.format(name="cm", value="1"))
    write(top / "overlay" / "kustomization.yaml", "resources: [../base]\nnamePrefix: p-\n")
    return top


@pytest.fixture()
def store(tmp_path: Path) -> Store:
    s, warning = open_store(str(tmp_path / "cache" / "renders"))
    assert s is not None and warning is None
    return s


def render(path: Path, store: Store, **kw: Any) -> Any:
    return render_yaml(str(path), BuildOptions(**kw), store)


def test_unchanged_inputs_are_not_built_again(tree: Path, store: Store,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    first = render(tree / "overlay", store)
    assert first.status == BUILT and "name: p-cm" in first.yaml

    def no_build(*a: Any, **k: Any) -> Any:
        raise AssertionError("built although nothing changed")
    monkeypatch.setattr(sys.modules["kzgit.builder"], "build", no_build)
    second = render(tree / "overlay", store)
    assert second.status == CACHED and second.yaml == first.yaml


def test_file_content_change_rebuilds(tree: Path, store: Store) -> None:
    assert render(tree / "overlay", store).status == BUILT
    write(tree / "base" / "cm.yaml", CM.format(name="cm", value="2"))
    again = render(tree / "overlay", store)
    assert again.status == BUILT and 'v: "2"' in again.yaml
    # and going back finds the first variant again
    write(tree / "base" / "cm.yaml", CM.format(name="cm", value="1"))
    back = render(tree / "overlay", store)
    assert back.status == CACHED and 'v: "1"' in back.yaml


def test_file_added_where_the_build_looked_rebuilds(tree: Path, store: Store) -> None:
    assert render(tree / "overlay", store).status == BUILT
    # the build checked that base/kustomization.yml does not exist: now it does
    write(tree / "base" / "kustomization.yml", "resources: [cm.yaml]\n")
    again = render(tree / "overlay", store)
    assert again.status == FAILED and "Found multiple kustomization files" in str(again.error)


def test_directory_listing_is_recorded(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    rec = Recorder(DiskFS())
    RecordingFS(DiskFS(), rec, "m").listdir(str(tmp_path / "d"))
    from kzgit.rendercache.reads import Checker
    assert Checker(DiskFS()).same(rec.trace())
    (tmp_path / "d" / "new.yaml").write_text("x: 1\n")
    assert not Checker(DiskFS()).same(rec.trace())


def test_symlink_target_change_rebuilds(tree: Path, store: Store) -> None:
    same = CM.format(name="cm", value="1")
    write(tree / "base" / "a.yaml", same)
    write(tree / "base" / "b.yaml", same)
    (tree / "base" / "cm.yaml").unlink()
    os.symlink("a.yaml", tree / "base" / "cm.yaml")
    assert render(tree / "overlay", store).status == BUILT
    assert render(tree / "overlay", store).status == CACHED
    (tree / "base" / "cm.yaml").unlink()
    os.symlink("b.yaml", tree / "base" / "cm.yaml")   # same bytes, another file
    assert render(tree / "overlay", store).status == BUILT


def test_environment_variable_change_rebuilds(tree: Path, store: Store,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    assert render(tree / "overlay", store).status == BUILT
    assert render(tree / "overlay", store).status == CACHED
    monkeypatch.setenv("KUSTOMIZE_PLUGIN_HOME", str(tree / "plugins"))
    assert render(tree / "overlay", store).status == BUILT


def test_kzgit_version_change_rebuilds(tree: Path, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    assert render(tree / "overlay", store).status == BUILT
    monkeypatch.setattr(kzgit._version, "__version__", kzgit.__version__ + ".post1")
    assert render(tree / "overlay", store).status == BUILT
    assert render(tree / "overlay", store).status == CACHED


def test_build_flag_change_rebuilds(tree: Path, store: Store) -> None:
    assert render(tree / "overlay", store).status == BUILT
    assert render(tree / "overlay", store, reorder="none").status == BUILT
    assert render(tree / "overlay", store, reorder="none").status == CACHED
    assert render(tree / "overlay", store, enable_managedby_label=True).status == BUILT
    assert cache_key("x", BuildOptions(), "yaml") != cache_key("x", BuildOptions(reorder="legacy"), "yaml")


def test_exec_plugin_builds_are_never_cached(tree: Path, store: Store) -> None:
    fn = tree / "gen" / "fn.sh"
    write(fn, """\
        #!/bin/sh
        cat <<'EOF'
        apiVersion: config.kubernetes.io/v1
        kind: ResourceList
        items:
        - apiVersion: v1
          kind: ConfigMap
          metadata: {name: generated}
          data: {v: "one"}
        EOF
        """)
    fn.chmod(fn.stat().st_mode | stat.S_IXUSR)
    write(tree / "gen" / "gen.yaml", """\
        apiVersion: example.com/v1
        kind: Gen
        metadata:
          name: g
          annotations:
            config.kubernetes.io/function: |
              exec:
                path: ./fn.sh
        """)
    write(tree / "gen" / "kustomization.yaml", "generators: [gen.yaml]\n")
    opts = {"enable_alpha_plugins": True, "enable_exec": True}
    first = render(tree / "gen", store, **opts)
    assert first.status == BUILT and "v: one" in first.yaml, first.error
    fn.write_text(fn.read_text().replace("one", "two"))   # only the binary changes
    second = render(tree / "gen", store, **opts)
    assert second.status == BUILT and "v: two" in second.yaml
    assert store.info()["entries"] == 0


def test_recorder_refuses_what_it_cannot_record(tmp_path: Path) -> None:
    for text, why in (("resources: [https://example.com/cm.yaml]\n", "over HTTP"),
                      ("transformers: [https://example.com/t.yaml]\n", "over HTTP"),
                      ("helmCharts: [{name: x}]\n", "helmCharts")):
        rec = Recorder(DiskFS())
        rec.inspect_kustomization(text.encode(), "k/kustomization.yaml")
        assert rec.uncacheable is not None and why in rec.uncacheable
    # plugin config files are read through the loader: whether they name an external
    # plugin is known when the build configures them, not from the kustomization
    for text in (b"resources: [cm.yaml]\n", b"transformers: [t.yaml]\ngenerators: [g/]\n"):
        rec = Recorder(DiskFS())
        rec.inspect_kustomization(text, "k/kustomization.yaml")
        assert rec.uncacheable is None


LABELS = """\
apiVersion: builtin
kind: LabelTransformer
metadata:
  name: labels
labels:
  team: {team}
fieldSpecs:
- path: metadata/labels
  create: true
"""


def test_builtin_plugin_configs_are_cached_and_their_files_recorded(tree: Path, store: Store) -> None:
    write(tree / "plug" / "labels.yaml", LABELS.format(team="a"))
    write(tree / "plug" / "gen" / "kustomization.yaml", "resources: [cmgen.yaml]\n")
    write(tree / "plug" / "gen" / "cmgen.yaml", """\
        apiVersion: builtin
        kind: ConfigMapGenerator
        metadata:
          name: settings
        envs: [settings.env]
        """)
    # kustomize resolves the config's files against the kustomization that lists the entry
    write(tree / "plug" / "settings.env", "LEVEL=1\n")
    write(tree / "plug" / "kustomization.yaml", """\
        resources: [../overlay]
        transformers:
        - labels.yaml
        - |-
          apiVersion: builtin
          kind: NamespaceTransformer
          metadata: {name: ns, namespace: shop}
        generators: [gen]
        """)
    first = render(tree / "plug", store)
    assert first.status == BUILT and "team: a" in first.yaml and "LEVEL: \"1\"" in first.yaml, first.error
    assert "namespace: shop" in first.yaml
    second = render(tree / "plug", store)
    assert second.status == CACHED and second.yaml == first.yaml
    # the transformer's config file changes: rebuilt
    write(tree / "plug" / "labels.yaml", LABELS.format(team="b"))
    third = render(tree / "plug", store)
    assert third.status == BUILT and "team: b" in third.yaml
    # a file the generator's config (listed by a directory entry) names changes: rebuilt
    write(tree / "plug" / "settings.env", "LEVEL=2\n")
    fourth = render(tree / "plug", store)
    assert fourth.status == BUILT and "LEVEL: \"2\"" in fourth.yaml
    assert render(tree / "plug", store).status == CACHED
    # the base the overlay reads changes: rebuilt as before
    write(tree / "base" / "cm.yaml", CM.format(name="cm", value="9"))
    fifth = render(tree / "plug", store)
    assert fifth.status == BUILT and 'v: "9"' in fifth.yaml


def test_a_legacy_exec_plugin_in_a_base_is_never_cached(tree: Path, store: Store,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A builtin transformer beside it does not make the build cacheable."""
    home = tree.parent / "plugin-home"
    plugin = write(home / "example.com" / "v1" / "stamp" / "Stamp", """\
        #!/bin/sh
        sed 's/name: cm/name: stamped/'
        """)
    plugin.chmod(plugin.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("KUSTOMIZE_PLUGIN_HOME", str(home))
    write(tree / "base" / "stamp.yaml", "apiVersion: example.com/v1\nkind: Stamp\nmetadata: {name: s}\n")
    write(tree / "base" / "kustomization.yaml", "resources: [cm.yaml]\ntransformers: [stamp.yaml]\n")
    write(tree / "overlay" / "labels.yaml", LABELS.format(team="a"))
    write(tree / "overlay" / "kustomization.yaml", "resources: [../base]\ntransformers: [labels.yaml]\n")
    first = render(tree / "overlay", store, enable_alpha_plugins=True)
    assert first.status == BUILT and "name: stamped" in first.yaml, first.error
    plugin.write_text(plugin.read_text().replace("stamped", "restamped"))   # only the binary changes
    second = render(tree / "overlay", store, enable_alpha_plugins=True)
    assert second.status == BUILT and "name: restamped" in second.yaml
    assert store.info()["entries"] == 0


def test_failed_build_is_replayed(tree: Path, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tree / "overlay" / "kustomization.yaml", "resources: [../base, missing.yaml]\n")
    first = render(tree / "overlay", store)
    assert first.status == FAILED and "missing.yaml" in str(first.error)

    def no_build(*a: Any, **k: Any) -> Any:
        raise AssertionError("built although nothing changed")
    monkeypatch.setattr(sys.modules["kzgit.builder"], "build", no_build)
    second = render(tree / "overlay", store)
    assert second.status == FAILED and str(second.error) == str(first.error)
    assert type(second.error) is type(first.error)
    assert first.error is not None and second.error is not None
    assert first.error.lead and second.error.lead == first.error.lead   # the line read first
    monkeypatch.undo()
    write(tree / "overlay" / "missing.yaml", CM.format(name="now", value="here"))
    assert render(tree / "overlay", store).status == BUILT


def _entries(store: Store) -> List[Path]:
    return sorted(Path(store.path).rglob("*.kzr"))


def _damage(entry: Path, damage: str, tree: Path, store: Store) -> None:
    data = entry.read_bytes()
    if damage == "flip":   # in the output
        i = data.rindex(b"p-cm")
        entry.write_bytes(data[:i] + b"X" + data[i + 1:])
    elif damage == "flip-header":   # in what the build read: the header's checksum catches it
        i = data.index(b"cm.yaml")
        entry.write_bytes(data[:i] + b"X" + data[i + 1:])
    elif damage == "truncate":
        entry.write_bytes(data[:len(data) // 2])
    elif damage == "truncate-output":   # the header whole, the output cut short
        entry.write_bytes(data[:-3])
    elif damage == "extend":
        entry.write_bytes(data + b"extra\n")
    elif damage == "empty":
        entry.write_bytes(b"")
    elif damage == "old-layout":   # the layout before the header had its own checksum
        rest = data.split(b"\n", 2)[2]
        entry.write_bytes(b"KZGIT-RENDER 1\n" + sha256(rest).hexdigest().encode() + b"\n" + rest)
    else:   # a well-formed entry of another root, moved under this root's key
        render(tree / "base", store)
        other = [e for e in _entries(store) if e != entry][0]
        shutil.copy(other, entry)


DAMAGES = ["flip", "flip-header", "truncate", "truncate-output", "extend", "empty", "old-layout",
           "foreign"]


@pytest.mark.parametrize("damage", DAMAGES)
def test_damaged_entries_are_rebuilt(tree: Path, store: Store, damage: str) -> None:
    good = render(tree / "overlay", store).yaml
    [entry] = _entries(store)
    _damage(entry, damage, tree, store)
    again = render(tree / "overlay", store)
    assert again.status == BUILT and again.yaml == good
    assert render(tree / "overlay", store).status == CACHED


@pytest.mark.parametrize("damage", DAMAGES)
def test_the_verdict_alone_is_read_from_a_checked_header(tree: Path, store: Store, damage: str) -> None:
    """A hook needing only ok/failed reads the header (its own checksum) and the file's length,
    not the output: damage there is still never trusted, damage inside the output is left
    for the reader of the output (kzgit build) to find."""
    assert render(tree / "overlay", store).status == BUILT
    [entry] = _entries(store)
    opts = BuildOptions()
    hit = lookup_yaml(str(tree / "overlay"), opts, store, payload=False)
    assert hit is not None and hit.status == CACHED and hit.payload == b"" and hit.digest == ""
    whole = lookup_yaml(str(tree / "overlay"), opts, store)   # the output, checked: its digest too
    assert whole is not None and whole.digest == sha256(whole.payload).hexdigest()
    _damage(entry, damage, tree, store)
    hit = lookup_yaml(str(tree / "overlay"), opts, store, payload=False)
    if damage == "flip":
        assert hit is not None and hit.status == CACHED
        assert lookup_yaml(str(tree / "overlay"), opts, store) is None   # the output's checksum
    else:
        assert hit is None
    assert not entry.exists()   # what is not an entry is removed


def test_swapped_variants_of_one_key_are_checked_by_their_own_inputs(tree: Path, store: Store) -> None:
    render(tree / "overlay", store)
    write(tree / "base" / "cm.yaml", CM.format(name="cm", value="2"))
    render(tree / "overlay", store)
    a, b = _entries(store)
    da, db = a.read_bytes(), b.read_bytes()
    a.write_bytes(db)
    b.write_bytes(da)   # names no longer match contents: each is still judged by its inputs
    got = render(tree / "overlay", store)
    assert got.status == CACHED and 'v: "2"' in got.yaml


def test_shared_base_reused_within_a_run_is_still_recorded(tree: Path, store: Store) -> None:
    write(tree / "overlay2" / "kustomization.yaml", "resources: [../base]\nnameSuffix: -s\n")
    run_cache = BuildCache()
    for o in ("overlay", "overlay2"):
        assert render_yaml(str(tree / o), BuildOptions(cache=run_cache), store).status == BUILT
    assert run_cache.hits >= 1   # overlay2 reused the base overlay accumulated
    write(tree / "base" / "cm.yaml", CM.format(name="cm", value="2"))
    for o in ("overlay", "overlay2"):
        got = render_yaml(str(tree / o), BuildOptions(cache=BuildCache()), store)
        assert got.status == BUILT and 'v: "2"' in got.yaml


def test_lru_bound(tree: Path, store: Store) -> None:
    render(tree / "base", store)
    old = _entries(store)[0]
    os.utime(old, (1, 1))   # used long ago
    render(tree / "overlay", store)
    store.max_bytes = max(p.stat().st_size for p in _entries(store))
    assert store.trim() == 1
    assert old not in _entries(store) and len(_entries(store)) == 1


def test_clear_and_info(tree: Path, store: Store) -> None:
    render(tree / "overlay", store)
    render(tree / "base", store)
    assert store.info()["entries"] == 2 and store.info()["bytes"] > 0
    assert store.clear() == 2 and store.info()["entries"] == 0


def test_unwritable_cache_is_a_warning(tmp_path: Path, tree: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    s, warning = open_store(str(blocker / "renders"))
    assert s is None and warning is not None and "not writable" in warning
    env = dict(os.environ, KZGIT_CACHE_DIR=str(blocker))
    p = subprocess.run([sys.executable, "-m", "kzgit", "build", str(tree / "overlay")], env=env,
                       capture_output=True, text=True, timeout=120, cwd=PROJECT)
    assert p.returncode == 0 and "name: p-cm" in p.stdout
    assert "warning" in p.stderr and "render cache" in p.stderr and "building without it" in p.stderr


def test_concurrent_runs(tree: Path, store: Store, tmp_path: Path) -> None:
    # threads of one process...
    outs: List[str] = []

    def one() -> None:
        outs.append(render(tree / "overlay", store).yaml)
    threads = [threading.Thread(target=one) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(outs)) == 1 and "p-cm" in outs[0]
    # ...and processes sharing one cache directory while the input changes under them
    env = dict(os.environ, KZGIT_CACHE_DIR=str(tmp_path / "shared"))
    procs = []
    for i in range(6):
        if i == 3:
            write(tree / "base" / "cm.yaml", CM.format(name="cm", value="2"))
        procs.append(subprocess.Popen([sys.executable, "-m", "kzgit", "build", str(tree / "overlay")],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, cwd=PROJECT))
    results = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
    assert all(rc == 0 and err == "" for _, err, rc in results), results
    assert all(out.count("name: p-cm") == 1 for out, _, _ in results)
    final = subprocess.run([sys.executable, "-m", "kzgit", "build", str(tree / "overlay")], env=env,
                           capture_output=True, text=True, timeout=120, cwd=PROJECT)
    assert 'v: "2"' in final.stdout


def test_the_code_fingerprint_follows_kzgit_s_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A development checkout changes without a release: an edited module is another kzgit."""
    import kzgit.rendercache as rc
    pkg = tmp_path / "kzgit"
    write(pkg / "__init__.py", "x = 1\n")
    write(pkg / "sub" / "mod.py", "y = 2\n")
    monkeypatch.setattr(kzgit._version, "__file__", str(pkg / "_version.py"))

    def fingerprint() -> str:
        monkeypatch.setattr(rc, "_FINGERPRINT", None)
        return rc.code_fingerprint()
    first = fingerprint()
    write(pkg / "__pycache__" / "mod.cpython-311.pyc", "bytecode")
    write(pkg / "sub" / "mod.pyc", "bytecode")
    assert fingerprint() == first   # compiled files are not the code
    write(pkg / "sub" / "mod.py", "y = 22\n")
    second = fingerprint()
    assert second != first
    write(pkg / "sub" / "new.py", "")
    assert fingerprint() not in (first, second)


def test_checking_resolves_paths_as_the_build_did(tmp_path: Path) -> None:
    """The checker resolves a path's directory once per run; its answers (errors included)
    are still those the disk gives the build."""
    from kzgit.rendercache.reads import ask
    top = Path(os.path.realpath(tmp_path))
    write(top / "real" / "a.yaml", "a: 1\n")
    (top / "link").symlink_to("real")
    (top / "real" / "b.yaml").symlink_to("a.yaml")
    (top / "real" / "loop").symlink_to("loop")
    (top / "real" / "sub").mkdir()
    paths = [top / "link" / "a.yaml", top / "real" / "a.yaml", top / "real" / "b.yaml",
             top / "link" / "missing.yaml", top / "real" / "loop", top / "link" / "sub" / ".." / "a.yaml",
             top / "real" / "a.yaml" / "x", top / "gone" / "a.yaml", top / "link"]
    checker = Checker(DiskFS())
    for _ in range(2):   # the second time through the resolved directories
        for p in paths:
            assert ask(checker.fs["m"], "real", str(p)) == ask(DiskFS(), "real", str(p)), p
