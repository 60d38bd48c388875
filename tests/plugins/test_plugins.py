"""External plugins: legacy exec plugins and KRM exec/container functions, with real programs.

Every plugin here is a shell or Python script the test writes into a temp dir; HOME, XDG and
KUSTOMIZE_PLUGIN_HOME point into tmp so nothing of the real home is read.
"""
from __future__ import annotations

import os
import stat
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from kzgit.options import BuildOptions
from kzgit.config import SandboxSettings
from kzgit.errors import KzgitError, PluginError
from kzgit.loader import Loader
from kzgit.plugins import external
from kzgit.plugins.execplugin import google_shlex_split
from kzgit.resource import Resource, ResMap
from kzgit.versions import parse
from kzgit.yamlio import load_documents

PY = sys.executable


pytestmark = pytest.mark.usefixtures("isolated_home")   # conftest.py


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake HOME with a plugin home under $XDG_CONFIG_HOME/kustomize/plugin."""
    h = tmp_path / "home"
    (h / ".config" / "kustomize" / "plugin").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(h / ".config"))
    monkeypatch.delenv("KUSTOMIZE_PLUGIN_HOME", raising=False)
    return h


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    r = tmp_path / "kust"
    r.mkdir()
    return Path(os.path.realpath(r))


def write_exe(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def plugin_path(home: Path, api_version: str, kind: str) -> Path:
    return home / ".config" / "kustomize" / "plugin" / api_version / kind.lower() / kind


def opts(writes: Optional[Path] = None, **kw: Any) -> BuildOptions:
    """Plugin options; ``writes``: a directory the (sandboxed) test plugins record into."""
    if writes is not None:
        kw["sandbox"] = SandboxSettings(allow_write=(str(writes),))
    kw.setdefault("enable_alpha_plugins", True)
    kw.setdefault("plugin_timeout", 20)
    return BuildOptions(**kw)


def cm(name: str, **data: str) -> Dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": dict(data)}


GEN_CONFIG = {"apiVersion": "someteam.example.com/v1", "kind": "ChartInflator",
              "metadata": {"name": "notImportantHere"}, "argsOneLiner": "one 'two three'",
              "value": "hello"}

LEGACY_GENERATOR = """\
#!/bin/sh
# records how it was called, then prints two ConfigMaps
{ echo "argv=$*"; echo "cwd=$(pwd)"; echo "mode=$KUSTOMIZE_PLUGIN_MODE";
  echo "root=$KUSTOMIZE_PLUGIN_CONFIG_ROOT"; } > "$KUSTOMIZE_PLUGIN_CONFIG_ROOT/calls.txt"
cat "$1" > "$KUSTOMIZE_PLUGIN_CONFIG_ROOT/config-copy.yaml"
printf '%s' "$KUSTOMIZE_PLUGIN_CONFIG_STRING" > "$KUSTOMIZE_PLUGIN_CONFIG_ROOT/config-env.yaml"
cat <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: generated
  annotations:
    kustomize.config.k8s.io/needs-hash: "true"
    kustomize.config.k8s.io/behavior: merge
    keep: me
data:
  a: b
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: plain
  annotations:
    kustomize.config.k8s.io/needs-hash: "false"
EOF
"""


def test_legacy_generator_invocation_and_annotations(home: Path, root: Path) -> None:
    write_exe(plugin_path(home, "someteam.example.com/v1", "ChartInflator"), LEGACY_GENERATOR)
    out = external.generate(GEN_CONFIG, "gen.yaml", Loader(str(root)), opts(root))
    assert [r.name for r in out] == ["generated", "plain"]
    gen, plain = out
    assert gen.needs_hash and gen.behavior == "merge"
    assert gen.obj["metadata"]["annotations"] == {"keep": "me"}
    assert not plain.needs_hash and plain.behavior == ""
    assert "annotations" not in plain.obj["metadata"]  # emptied map removed, as kyaml does
    calls = dict(line.split("=", 1) for line in (root / "calls.txt").read_text().splitlines())
    argv = calls["argv"].split(" ")
    assert os.path.basename(argv[0]).startswith("kust-plugin-config-")
    assert not os.path.exists(argv[0]), "the temp config file is removed"
    assert argv[1:] == ["one", "two", "three"]  # shlex: 'two three' is one arg; $* joins
    assert calls["cwd"] == str(root) and calls["root"] == str(root)
    assert calls["mode"] == "generate"
    cfg = load_documents((root / "config-copy.yaml").read_bytes())[0]
    assert cfg == GEN_CONFIG
    assert load_documents((root / "config-env.yaml").read_bytes())[0] == GEN_CONFIG


def test_args_from_file(home: Path, root: Path) -> None:
    write_exe(plugin_path(home, "x.example.com/v1", "Args"), """\
        #!/bin/sh
        printf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: args\\ndata:\\n'
        i=0
        for a in "$@"; do i=$((i+1)); printf '  a%s: "%s"\\n' "$i" "$a"; done
        """)
    (root / "args.txt").write_text("  first arg\n\nsecond\n")
    cfg = {"apiVersion": "x.example.com/v1", "kind": "Args", "metadata": {"name": "a"},
           "argsOneLiner": "zero", "argsFromFile": "args.txt"}
    [r] = external.generate(cfg, "g.yaml", Loader(str(root)), opts())
    data = r.obj["data"]
    assert os.path.basename(data.pop("a1")).startswith("kust-plugin-config-")
    assert data == {"a2": "zero", "a3": "first arg", "a4": "second"}


@pytest.mark.parametrize("release, one_liner, want", [   # each verified with its kubectl
    # 5.5 and 5.6 split with github.com/google/shlex (# only starts a word's comment)
    ("5.5.0", "a b#c 'd e'", ["a", "b#c", "d e"]),
    ("5.5.0", "a 'b", ["a"]),   # an unclosed quote: the words before it, the error ignored
    # 5.7.1's ShlexSplit: an unquoted # anywhere ends the string, '' gives no word
    ("5.7.1", "a b#c 'd e'", ["a", "b"]),
    ("5.8.1", "x '' \"y z\"", ["x", "y z"]),
])
def test_args_one_liner_is_split_as_the_release_splits_it(home: Path, root: Path, release: str,
                                                           one_liner: str, want: List[str]) -> None:
    write_exe(plugin_path(home, "x.example.com/v1", "Args"), """\
        #!/bin/sh
        shift
        printf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: args\\ndata:\\n'
        i=0
        for a in "$@"; do i=$((i+1)); printf '  a%s: "%s"\\n' "$i" "$a"; done
        """)
    cfg = {"apiVersion": "x.example.com/v1", "kind": "Args", "metadata": {"name": "a"},
           "argsOneLiner": one_liner}
    [r] = external.generate(cfg, "g.yaml", Loader(str(root)), opts(kustomize_version=parse(release)))
    assert list((r.obj.get("data") or {}).values()) == want


# github.com/google/shlex as 5.5.0 and 5.6.0 split argsOneLiner: each row verified with
# kubectl 1.32 through an exec plugin that prints its argv
@pytest.mark.parametrize("one_liner, want", [
    ('"a4=x\\ny" \'c\\d\'', ["a4=xny", "c\\d"]),   # a backslash in double quotes escapes any character
    ("a #b c", ["a"]),                        # a word starting with # is a comment to the line's end
    ("a#b c", ["a#b", "c"]),
    ('"" x', ["", "x"]),                      # an empty pair is an empty word
    ('a "unclosed', ["a"]),                   # the error ignored: the words before it
    ("a b\\", ["a"]),                        # a trailing backslash drops the word being read
    ("#c\nd e", ["d", "e"]),
    ('a\\ b "q\\"r" \'s\\\'', ["a b", 'q"r', "s\\"]),
    ("x\u00a0y\tz", ["x\u00a0y", "z"]),         # only space, tab, CR and LF separate words
    ("a\\#b #c", ["a#b"]),
])
def test_args_one_liner_before_5_7_is_google_shlex(one_liner: str, want: List[str]) -> None:
    assert google_shlex_split(one_liner) == want


def test_an_unclosed_quote_in_args_one_liner_fails_from_5_7(home: Path, root: Path) -> None:
    write_exe(plugin_path(home, "x.example.com/v1", "Args"), "#!/bin/sh\necho '{}'\n")
    cfg = {"apiVersion": "x.example.com/v1", "kind": "Args", "metadata": {"name": "a"},
           "argsOneLiner": "a 'b"}
    with pytest.raises(KzgitError, match="failed to parse argsOneLiner: unclosed quote in string"):
        external.generate(cfg, "g.yaml", Loader(str(root)), opts(kustomize_version=parse("5.7.1")))


@pytest.mark.parametrize("text, want", [   # kustomize api/internal/plugins/execplugin/shlex_test.go
    ("hello world", ["hello", "world"]),
    ("'can'\\''t'", ["can't"]),
    ('"hello \\"world\\""', ['hello "world"']),
    ("hello\\ world", ["hello world"]),
    ("   multiple\tspaces   ", ["multiple", "spaces"]),
    ('echo "Hello, W#orld!" ${USER} # This is a comment', ["echo", "Hello, W#orld!", "${USER}"]),
    ("", []),
])
def test_shlex_split_table(text: str, want: List[str]) -> None:
    from kzgit.plugins.execplugin import shlex_split
    assert shlex_split(text) == want


LEGACY_TRANSFORMER = f"""\
#!{PY}
import os, sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
with open(os.path.join(os.environ["KUSTOMIZE_PLUGIN_CONFIG_ROOT"], "seen.yaml"), "w") as f:
    yaml.safe_dump_all(docs, f)
    f.write("# mode=" + os.environ.get("KUSTOMIZE_PLUGIN_MODE", "") + "\\n")
out = []
for d in docs:
    if d["metadata"]["name"] == "drop":
        continue
    d["metadata"].setdefault("labels", {{}})["touched"] = "yes"
    out.append(d)
out.append({{"apiVersion": "v1", "kind": "Service", "metadata": {{"name": "new"}}}})
yaml.safe_dump_all(out, sys.stdout)
"""


def test_legacy_transformer_updates_resmap(home: Path, root: Path) -> None:
    write_exe(plugin_path(home, "x.example.com/v1", "Toucher"), LEGACY_TRANSFORMER)
    keep = Resource(cm("keep", k="v"))
    keep.prev_ids.append(keep.cur_id()._replace(name="older"))
    rm = ResMap([keep, Resource(cm("drop"))])
    cfg = {"apiVersion": "x.example.com/v1", "kind": "Toucher", "metadata": {"name": "t"}}
    external.transform(cfg, "t.yaml", Loader(str(root)), rm, opts(root))
    assert [(r.kind, r.name) for r in rm] == [("ConfigMap", "keep"), ("Service", "new")]
    kept = rm.resources()[0]
    assert kept is keep and kept.prev_ids, "updated in place: build state is kept"
    assert kept.obj["metadata"] == {"name": "keep", "labels": {"touched": "yes"}}
    seen_text = (root / "seen.yaml").read_text()
    seen = load_documents(seen_text.encode())
    assert seen[0]["metadata"]["annotations"]["kustomize.config.k8s.io/id"] == (
        "kind: ConfigMap\nname: keep\nversion: v1\n")
    assert "# mode=transform" in seen_text


def test_transformer_duplicate_output(home: Path, root: Path) -> None:
    write_exe(plugin_path(home, "x.example.com/v1", "Dup"), """\
        #!/bin/sh
        cat; echo '---'; printf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: a\\n'
        """)
    rm = ResMap([Resource(cm("a"))])
    cfg = {"apiVersion": "x.example.com/v1", "kind": "Dup", "metadata": {"name": "d"}}
    with pytest.raises(PluginError, match="generated duplicate resource"):
        external.transform(cfg, "t.yaml", Loader(str(root)), rm, opts())


def test_disabled_without_flag(home: Path, root: Path) -> None:
    write_exe(plugin_path(home, "x.example.com/v1", "Never"), "#!/bin/sh\ntouch ran\n")
    cfg = {"apiVersion": "x.example.com/v1", "kind": "Never", "metadata": {"name": "n"}}
    with pytest.raises(PluginError) as e:
        external.generate(cfg, "gens/never.yaml", Loader(str(root)), opts(enable_alpha_plugins=False))
    msg = str(e.value)
    assert "external plugins disabled; unable to load external plugin 'Never'" in msg
    assert "gens/never.yaml" in msg and "--enable-alpha-plugins" in msg and "TIP:" in msg
    assert "enable-alpha-plugins = true in the repository's .kzgit.toml" in msg   # the setting too
    assert not (root / "ran").exists()
    fn = {"apiVersion": "x/v1", "kind": "Fn", "metadata": {"name": "f", "annotations": {
        "config.kubernetes.io/function": "exec:\n  path: ./fn.sh\n"}}}
    with pytest.raises(PluginError, match="external plugins disabled"):
        external.transform(fn, "k", Loader(str(root)), ResMap(), opts(enable_alpha_plugins=False))


def test_go_plugin_refused(home: Path, root: Path) -> None:
    so = Path(str(plugin_path(home, "x.example.com/v1", "GoThing")) + ".so")
    so.parent.mkdir(parents=True)
    so.write_bytes(b"\x7fELF")
    cfg = {"apiVersion": "x.example.com/v1", "kind": "GoThing", "metadata": {"name": "g"}}
    with pytest.raises(PluginError) as e:
        external.generate(cfg, "g.yaml", Loader(str(root)), opts())
    assert str(so) in str(e.value) and "not supported" in str(e.value)
    assert "exec plugin" in str(e.value) and "KRM function" in str(e.value)


def test_missing_and_unexecutable_plugin(home: Path, root: Path) -> None:
    cfg = {"apiVersion": "x.example.com/v1", "kind": "Nope", "metadata": {"name": "g"}}
    with pytest.raises(PluginError, match="not found: no executable at .*/x.example.com/v1/nope/Nope"):
        external.generate(cfg, "g.yaml", Loader(str(root)), opts())
    p = plugin_path(home, "x.example.com/v1", "Nope")
    p.parent.mkdir(parents=True)
    p.write_text("#!/bin/sh\n")
    with pytest.raises(PluginError, match="unexecutable plugin at: "):
        external.generate(cfg, "g.yaml", Loader(str(root)), opts())


def test_plugin_home_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("KUSTOMIZE_PLUGIN_HOME", raising=False)
    with pytest.raises(PluginError, match=r"unable to find plugin root - tried: \('<no value>'; "
                                          r"homed in \$KUSTOMIZE_PLUGIN_HOME\)"):
        external.plugin_home()
    (tmp_path / "h" / "kustomize" / "plugin").mkdir(parents=True)
    assert external.plugin_home() == str(tmp_path / "h" / "kustomize" / "plugin")
    (tmp_path / "h" / ".config" / "kustomize" / "plugin").mkdir(parents=True)
    assert external.plugin_home() == str(tmp_path / "h" / ".config" / "kustomize" / "plugin")
    monkeypatch.setenv("KUSTOMIZE_PLUGIN_HOME", str(tmp_path))
    assert external.plugin_home() == str(tmp_path)
    assert external.legacy_plugin_path({"apiVersion": "v1", "kind": "Foo"}) == str(
        tmp_path / "v1" / "foo" / "Foo")


def test_failing_plugin_shows_exit_code_and_stderr(home: Path, root: Path) -> None:
    p = write_exe(plugin_path(home, "x.example.com/v1", "Fails"), """\
        #!/bin/sh
        for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25; do
          echo "noise $i" >&2
        done
        echo "the real problem" >&2
        exit 3
        """)
    cfg = {"apiVersion": "x.example.com/v1", "kind": "Fails", "metadata": {"name": "f"}}
    with pytest.raises(PluginError) as e:
        external.generate(cfg, "g.yaml", Loader(str(root)), opts())
    msg = str(e.value)
    assert str(p) in msg and "exited with code 3" in msg and "the real problem" in msg
    assert "noise 1\n" not in msg, "only the last lines of stderr"


def test_invalid_output_is_clear(home: Path, root: Path) -> None:
    write_exe(plugin_path(home, "x.example.com/v1", "Bad"), "#!/bin/sh\necho 'kind: ConfigMap'\n")
    cfg = {"apiVersion": "x.example.com/v1", "kind": "Bad", "metadata": {"name": "b"}}
    with pytest.raises(PluginError, match="without metadata.name"):
        external.generate(cfg, "g.yaml", Loader(str(root)), opts())


def test_list_output_is_inlined(home: Path, root: Path) -> None:
    write_exe(plugin_path(home, "x.example.com/v1", "Lister"), """\
        #!/bin/sh
        cat <<EOF
        apiVersion: v1
        kind: ConfigMapList
        items:
        - {apiVersion: v1, kind: ConfigMap, metadata: {name: one}}
        - {apiVersion: v1, kind: ConfigMap, metadata: {name: two}}
        EOF
        """)
    cfg = {"apiVersion": "x.example.com/v1", "kind": "Lister", "metadata": {"name": "l"}}
    assert [r.name for r in external.generate(cfg, "g", Loader(str(root)), opts())] == ["one", "two"]


# ---------------------------------------------------------------- KRM functions

KRM_FN = f"""\
#!{PY}
# A KRM function: adds an annotation to every item, reports results from functionConfig.spec
import json, os, sys, yaml
rl = yaml.safe_load(sys.stdin)
with open("fn-input.yaml", "w") as f:
    yaml.safe_dump(rl, f)
fc = rl["functionConfig"]
for item in rl["items"]:
    item["metadata"].setdefault("annotations", {{}})["fn"] = fc["metadata"]["name"]
if fc.get("spec", {{}}).get("generate"):
    rl["items"].append({{"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {{"name": "from-fn", "annotations": {{
                             "kustomize.config.k8s.io/needs-hash": "true"}}}}}})
rl["results"] = fc.get("spec", {{}}).get("results", [])
yaml.safe_dump(rl, sys.stdout)
sys.exit(fc.get("spec", {{}}).get("exit", 0))
"""


def fn_config(name: str = "myfn", path: str = "./fn.py", **spec: Any) -> Dict[str, Any]:
    return {"apiVersion": "examples.config.kubernetes.io/v1beta1", "kind": "MyPlugin",
            "metadata": {"name": name, "annotations": {
                "config.kubernetes.io/function": f"exec:\n  path: {path}\n"}},
            "spec": spec}


def test_krm_exec_transformer(root: Path) -> None:
    write_exe(root / "fn.py", KRM_FN)
    rm = ResMap([Resource(cm("a")), Resource(cm("b"))])
    cfg = fn_config(results=[{"message": "just saying", "severity": "warning"}])
    external.transform(cfg, "kustomization.yaml", Loader(str(root)), rm, opts(root))
    assert [r.obj["metadata"] for r in rm] == [
        {"name": "a", "annotations": {"fn": "myfn"}}, {"name": "b", "annotations": {"fn": "myfn"}}]
    seen = load_documents((root / "fn-input.yaml").read_bytes())[0]
    assert seen["apiVersion"] == "config.kubernetes.io/v1" and seen["kind"] == "ResourceList"
    assert seen["functionConfig"]["metadata"]["annotations"][
        "config.kubernetes.io/local-config"] == "true"
    ann = seen["items"][1]["metadata"]["annotations"]
    assert ann["config.kubernetes.io/index"] == "1" and ann["internal.config.kubernetes.io/id"] == "2"
    assert ann["kustomize.config.k8s.io/id"] == "kind: ConfigMap\nname: b\nversion: v1\n"


def test_krm_exec_generator(root: Path) -> None:
    write_exe(root / "fn.py", KRM_FN)
    out = external.generate(fn_config(generate=True), "k", Loader(str(root)), opts(root))
    # As fnplugin: the function config itself is the input item, echoed back by this function.
    assert [(r.kind, r.name) for r in out] == [("MyPlugin", "myfn"), ("ConfigMap", "from-fn")]
    assert out[1].needs_hash and out[1].obj["metadata"] == {"name": "from-fn"}


def test_krm_error_results_fail(root: Path) -> None:
    write_exe(root / "fn.py", KRM_FN)
    cfg = fn_config(results=[{"message": "replicas too low", "severity": "error",
                              "resourceRef": {"kind": "ConfigMap", "name": "a"},
                              "field": {"path": "data.x"}}])
    with pytest.raises(PluginError) as e:
        external.transform(cfg, "k", Loader(str(root)), ResMap([Resource(cm("a"))]), opts(root))
    assert "replicas too low" in str(e.value) and "ConfigMap/a field data.x" in str(e.value)
    cfg = fn_config(exit=1, results=[{"message": "boom", "severity": "error"}])
    with pytest.raises(PluginError, match="boom"):
        external.transform(cfg, "k", Loader(str(root)), ResMap([Resource(cm("a"))]), opts(root))


def test_krm_exec_missing(root: Path) -> None:
    with pytest.raises(PluginError, match="exec function './nothere.sh' .* not found"):
        external.transform(fn_config(path="./nothere.sh"), "k", Loader(str(root)), ResMap(), opts())


def test_container_function_without_docker(root: Path, monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    empty = tmp_path / "emptybin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    cfg = {"apiVersion": "x/v1", "kind": "C", "metadata": {"name": "c", "annotations": {
        "config.kubernetes.io/function": "container:\n  image: example.com/fn:v1\n"}}}
    with pytest.raises(PluginError) as e:
        external.transform(cfg, "k", Loader(str(root)), ResMap(), opts())
    assert "needs docker, which is not on PATH" in str(e.value)
    assert "example.com/fn:v1" in str(e.value)


def test_container_function_runs_docker_like_kustomize(root: Path, monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    write_exe(bindir / "docker", f"""\
        #!/bin/sh
        printf '%s\\n' "$@" > {tmp_path}/docker-argv
        cat
        """)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    cfg = {"apiVersion": "x/v1", "kind": "C", "metadata": {"name": "c", "annotations": {
        "config.kubernetes.io/function":
            "container:\n  image: example.com/fn:v1\n  envs: [FOO=bar, EXPORTED]\n"
            "  mounts:\n  - {type: bind, src: data, dst: /data}\n"}}}
    rm = ResMap([Resource(cm("a"))])
    # the spec's bare EXPORTED hands docker the user's value: granted by -e EXPORTED
    with pytest.raises(PluginError, match="container.envs asks for the environment variable EXPORTED"):
        external.transform(cfg, "k", Loader(str(root)), rm, opts())
    external.transform(cfg, "k", Loader(str(root)), rm, opts(env=["EXPORTED"]))
    assert [r.obj["metadata"] for r in rm] == [{"name": "a"}]
    argv = (tmp_path / "docker-argv").read_text().splitlines()
    assert argv == ["run", "--rm", "-i", "-a", "STDIN", "-a", "STDOUT", "-a", "STDERR",
                    "--network", "none", "--user", "nobody", "--security-opt=no-new-privileges",
                    "--mount", f"type=bind,source={root}/data,target=/data,readonly",
                    "-e", "FOO=bar", "-e", "LOG_TO_STDERR=true", "-e", "STRUCTURED_RESULTS=true",
                    "-e", "EXPORTED", "example.com/fn:v1"]
    net = {"apiVersion": "x/v1", "kind": "C", "metadata": {"name": "c", "annotations": {
        "config.kubernetes.io/function": "container:\n  image: i\n  network: true\n"}}}
    with pytest.raises(PluginError, match="network required but not enabled with --network"):
        external.transform(net, "k", Loader(str(root)), rm, opts())


@pytest.mark.parametrize("release,src,why", [
    ("5.5.0", "/etc", "relative to"), ("5.5.0", "../x", "under the current"),
    ("5.8.1", "/etc", "relative to"), ("5.8.1", "../x", "under the current"),
    # 5.8 refuses every cleaned path starting with "..", ".." itself and "..x" included
    # (kustomize e115ba624); before, only "../" was
    ("5.8.1", "a/../..", "under the current"), ("5.8.1", "..x", "under the current"),
])
def test_container_mount_restrictions(root: Path, release: str, src: str, why: str) -> None:
    cfg = {"apiVersion": "x/v1", "kind": "C", "metadata": {"name": "c", "annotations": {
        "config.kubernetes.io/function":
            f"container:\n  image: i\n  mounts:\n  - {{type: bind, src: '{src}', dst: /d}}\n"}}}
    with pytest.raises(PluginError, match=f"mount path '{src}' is not permitted.*{why}"):
        external.transform(cfg, "k", Loader(str(root)), ResMap(),
                           opts(kustomize_version=parse(release)))


@pytest.mark.parametrize("src, then", [("..", "is outside the kustomization root"), ("..x", "docker")])
def test_before_5_8_a_mount_of_two_dots_passes_kustomizes_check(root: Path, src: str, then: str) -> None:
    # the next check is kzgit's sandbox (a mount outside the kustomization is refused unless
    # allow-read covers it), or docker, absent here
    cfg = {"apiVersion": "x/v1", "kind": "C", "metadata": {"name": "c", "annotations": {
        "config.kubernetes.io/function":
            f"container:\n  image: i\n  mounts:\n  - {{type: bind, src: '{src}', dst: /d}}\n"}}}
    with pytest.raises(PluginError) as e:
        external.transform(cfg, "k", Loader(str(root)), ResMap(),
                           opts(kustomize_version=parse("5.7.1")))
    assert "mount paths must be under the current kustomization directory" not in str(e.value)
    assert then in str(e.value)


def test_starlark_is_unsupported(root: Path) -> None:
    cfg: Dict[str, Any] = {"apiVersion": "x/v1", "kind": "S", "metadata": {"name": "s", "annotations": {
        "config.kubernetes.io/function": "starlark:\n  path: script.star\n"}}}
    with pytest.raises(PluginError, match="Starlark functions are not supported"):
        external.transform(cfg, "k", Loader(str(root)), ResMap(), opts())
    cfg["metadata"]["annotations"]["config.kubernetes.io/function"] = "exec: {path: x}\nbogus: 1\n"
    with pytest.raises(PluginError, match='unknown field "bogus"'):
        external.transform(cfg, "k", Loader(str(root)), ResMap(), opts())


# ---------------------------------------------------------------- validators

VALIDATOR = f"""\
#!{PY}
import sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
for d in docs:
    d["metadata"].setdefault("labels", {{}})["validated-by"] = "me"
    if "{{mode}}" == "mutate":
        d["data"] = {{"changed": "yes"}}
yaml.safe_dump_all(docs, sys.stdout)
"""


def test_validator_may_only_add_validated_by(home: Path, root: Path) -> None:
    write_exe(plugin_path(home, "x.example.com/v1", "Good"), VALIDATOR.replace("{mode}", "ok"))
    write_exe(plugin_path(home, "x.example.com/v1", "Evil"), VALIDATOR.replace("{mode}", "mutate"))
    rm = ResMap([Resource(cm("a", k="v"))])
    good = {"apiVersion": "x.example.com/v1", "kind": "Good", "metadata": {"name": "g"}}
    external.validate(good, "v.yaml", Loader(str(root)), rm, opts())
    assert rm.resources()[0].obj["metadata"]["labels"] == {"validated-by": "me"}
    evil = {"apiVersion": "x.example.com/v1", "kind": "Evil", "metadata": {"name": "e"}}
    with pytest.raises(PluginError, match=r"validator Evil 'e' \(from v.yaml\) shouldn't modify"):
        external.validate(evil, "v.yaml", Loader(str(root)), rm, opts())


def test_builtin_detection() -> None:
    assert external.is_builtin({"apiVersion": "builtin", "kind": "PrefixTransformer"})
    assert not external.is_builtin({"apiVersion": "x.example.com/builtin", "kind": "P"})
    assert not external.is_builtin({"apiVersion": "v1", "kind": "P"})


def _ids(rm: ResMap) -> List[str]:
    return [r.name for r in rm]


# ---------------------------------------------------------------- exec functions: args and envs (5.7)

EXEC_FN_ECHO = f"""\
#!{PY}
import os, sys, yaml
rl = yaml.safe_load(sys.stdin)
data = {{"args": " ".join(sys.argv[1:])}}
for k in ("FROM_SPEC", "FROM_FLAG", "BOTH", "PLAIN", "ODD"):
    data[k] = os.environ.get(k, "<unset>")
rl["items"] = [{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {{"name": "seen"}}, "data": data}}]
yaml.safe_dump(rl, sys.stdout)
"""


def _exec_fn(root: Path, spec: str) -> Dict[str, Any]:
    write_exe(root / "fn.py", EXEC_FN_ECHO)
    return {"apiVersion": "x/v1", "kind": "Fn", "metadata": {"name": "f", "annotations": {
        "config.kubernetes.io/function": "exec:\n  path: ./fn.py\n" + spec}}}


def test_exec_function_args_and_envs_from_5_7(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # kyaml runfn mergeExecEnv (kustomize cc7a71c28): spec envs, then --env, the flag winning;
    # only KEY=VALUE with exactly one "=" counts; underneath, the plugin environment (kzgit's
    # allow-list and what the user grants, issue 32) instead of kustomize's whole environment
    monkeypatch.setenv("PLAIN", "inherited")
    cfg = _exec_fn(root, "  args: [one, 'two three']\n"
                         "  envs: [FROM_SPEC=s, BOTH=spec, ODD=a=b, LONE]\n")
    rm = ResMap()
    with pytest.raises(PluginError, match="exec.envs asks for the environment variable LONE"):
        external.transform(cfg, "k", Loader(str(root)), rm,
                           opts(kustomize_version=parse("5.7.1"), env=["FROM_FLAG=f", "BOTH=flag"]))
    external.transform(cfg, "k", Loader(str(root)), rm,
                       opts(kustomize_version=parse("5.7.1"), env=["FROM_FLAG=f", "BOTH=flag"],
                            sandbox=SandboxSettings(allow_env=("PLAIN", "LONE"))))
    assert [r.obj["data"] for r in rm] == [{
        "args": "one two three", "FROM_SPEC": "s", "FROM_FLAG": "f", "BOTH": "flag",
        "PLAIN": "inherited", "ODD": "<unset>"}]
    rm = ResMap()
    external.transform(_exec_fn(root, ""), "k", Loader(str(root)), rm,
                       opts(kustomize_version=parse("5.7.1")))
    assert rm.resources()[0].obj["data"]["PLAIN"] == "<unset>"   # not granted: not received


def test_exec_function_args_are_unknown_before_5_7(root: Path) -> None:
    cfg = _exec_fn(root, "  args: [one]\n")
    with pytest.raises(PluginError, match='unmarshal error: unknown field "args"'):
        external.transform(cfg, "k", Loader(str(root)), ResMap(), opts(kustomize_version=parse("5.6.0")))
    # and --env reaches containers only: an exec function runs with kzgit's environment
    rm = ResMap()
    external.transform(_exec_fn(root, ""), "k", Loader(str(root)), rm,
                       opts(kustomize_version=parse("5.6.0"), env=["FROM_FLAG=f"]))
    assert [r.obj["data"]["FROM_FLAG"] for r in rm] == ["<unset>"]
