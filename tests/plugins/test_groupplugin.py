"""The proposal's group-named plugin protocol (kzgit.plugins.groupplugin), with real programs.

Every plugin is a shell or Python script written into a fake ``$XDG_CONFIG_HOME/kustomize/plugins``;
builds run the whole pipeline (kzgit.builder.build) so the phases are checked in place.
"""
from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from kzgit.builder import BuildOptions, build
from kzgit.config import SandboxSettings
from kzgit.errors import PluginError
from kzgit.sandbox import available as sandbox_available
from kzgit.yamlio import load_documents

PY = sys.executable

pytestmark = pytest.mark.usefixtures("isolated_home")   # conftest.py

GROUP = "team.example.com"

# A Python plugin of the proposal: `generate` turns each App into a Deployment; `transform`
# labels every resource with the team of each Owner (and of each App: generators transform too),
# and logs each call with what it was given into $LOG (a directory the test lets it write).
TEAM_PLUGIN = f"""\
#!{PY}
import os, sys, yaml
sub = sys.argv[1]
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
virtual = [d for d in docs if d["apiVersion"].startswith("{GROUP}/")]
rest = [d for d in docs if not d["apiVersion"].startswith("{GROUP}/")]
with open(os.path.join(os.environ["LOG"], "calls.txt"), "a") as f:
    f.write(f"{{sub}} cwd={{os.getcwd()}} virtual={{','.join(v['kind'] + '/' + v['metadata']['name'] for v in virtual)}} "
            f"rest={{','.join(r['metadata']['name'] for r in rest)}}\\n")
if sub == "generate":
    out = [{{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {{"name": v["metadata"]["name"]}},
            "spec": {{"replicas": v["spec"]["replicas"]}}}} for v in virtual if v["kind"] == "App"]
    yaml.safe_dump_all(out, sys.stdout)
elif sub == "transform":
    for r in rest:
        for v in virtual:
            if "team" in v["spec"]:
                r["metadata"].setdefault("labels", {{}})["team"] = v["spec"]["team"]
    yaml.safe_dump_all(rest, sys.stdout)
else:
    sys.exit(127)
"""


@pytest.fixture()
def xdg() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"])


@pytest.fixture()
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "log"
    d.mkdir()
    monkeypatch.setenv("LOG", str(d))
    return d


def write_exe(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def opts(writes: Path, **kw: Any) -> BuildOptions:
    """Plugins enabled and sandboxed, writing only into ``writes`` (the test's log), told
    where it is through LOG (granted as a user grants a variable)."""
    kw.setdefault("enable_alpha_plugins", True)
    return BuildOptions(sandbox=SandboxSettings(allow_write=(str(writes),), allow_env=("LOG",)),
                        plugin_timeout=20, **kw)


def group_exe(xdg: Path, text: str, group: str = GROUP) -> Path:
    return write_exe(xdg / "kustomize" / "plugins" / group, text)


def tree(root: Path, files: Dict[str, str]) -> Path:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def render(root: Path, log: Path, **kw: Any) -> List[Dict[str, Any]]:
    return [r.obj for r in build(str(root), opts(log, **kw)).resources]


def calls(log: Path) -> List[str]:
    return (log / "calls.txt").read_text().splitlines()


APP = f"apiVersion: {GROUP}/v1\nkind: App\nmetadata:\n  name: web\nspec:\n  replicas: 1\n  team: red\n"
OWNER = f"apiVersion: {GROUP}/v1\nkind: Owner\nmetadata:\n  name: o\nspec:\n  team: blue\n"
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"


def test_generate_then_transform_in_the_proposals_phases(tmp_path: Path, xdg: Path, log: Path) -> None:
    group_exe(xdg, TEAM_PLUGIN)
    root = tree(tmp_path / "app", {
        "kustomization.yaml": "namePrefix: p-\nresources: [cm.yaml]\ngenerators: [app.yaml]\n"
                              "transformers: [owner.yaml]\n"
                              # phase 3: a targeted patch applies to the virtual resource
                              "patches:\n- target: {kind: App}\n  patch: |\n"
                              "    - {op: replace, path: /spec/replicas, value: 3}\n",
        "app.yaml": APP, "owner.yaml": OWNER, "cm.yaml": CM})
    objs = render(root, log)
    assert [(o["kind"], o["metadata"]["name"]) for o in objs] == [
        ("ConfigMap", "p-c"), ("Deployment", "p-web")]
    dep = objs[1]
    assert dep["spec"]["replicas"] == 3, "the patch reached the App before it generated"
    # one transform per group with the generator's and the transformer's configs; the Owner's
    # team is applied last (the plugin's own order), and before namePrefix (phase 6 then 7)
    assert dep["metadata"]["labels"] == {"team": "blue"}
    assert calls(log) == [
        f"generate cwd={root} virtual=App/web rest=",
        f"transform cwd={root} virtual=App/web,Owner/o rest=c,web"]


def test_exit_127_generate_generates_nothing_and_transform_passes_through(
        tmp_path: Path, xdg: Path, log: Path) -> None:
    # a shell plugin that supports neither subcommand, but says so
    group_exe(xdg, '#!/bin/sh\necho "$1" >> "$LOG/calls.txt"\nexit 127\n')
    root = tree(tmp_path / "app", {"kustomization.yaml": "resources: [cm.yaml]\ngenerators: [app.yaml]\n",
                                   "app.yaml": APP, "cm.yaml": CM})
    assert render(root, log) == [load_documents(CM.encode())[0]]
    assert calls(log) == ["generate", "transform"]


def test_a_failing_plugin_fails_the_build_with_its_stderr(tmp_path: Path, xdg: Path, log: Path) -> None:
    group_exe(xdg, '#!/bin/sh\necho "no such chart: foo" >&2\nexit 3\n')
    root = tree(tmp_path / "app", {"kustomization.yaml": "generators: [app.yaml]\n", "app.yaml": APP})
    with pytest.raises(PluginError, match=r"group plugin team\.example\.com \(.*plugins/team\.example\.com "
                                          r"generate\) exited with code 3: no such chart: foo"):
        render(root, log)


@pytest.mark.parametrize("change, words", [
    ("docs.append({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'extra'}})",
     "added ConfigMap.v1.\\[noGrp\\]/extra.\\[noNs\\]"),
    ("docs.pop()", "removed ConfigMap.v1.\\[noGrp\\]/c.\\[noNs\\]"),
    ("docs[-1]['metadata']['name'] = 'renamed'",
     "changed the name or namespace of ConfigMap.v1.\\[noGrp\\]/c.\\[noNs\\] "
     "\\(it printed ConfigMap.v1.\\[noGrp\\]/renamed.\\[noNs\\] instead\\)"),
    ("docs[-1]['metadata']['namespace'] = 'elsewhere'",
     "changed the name or namespace of ConfigMap.v1.\\[noGrp\\]/c.\\[noNs\\] "
     "\\(it printed ConfigMap.v1.\\[noGrp\\]/c.elsewhere instead\\)"),
])
def test_the_restrictions_on_transformers(tmp_path: Path, xdg: Path, log: Path, change: str,
                                          words: str) -> None:
    group_exe(xdg, f"""\
#!{PY}
import sys, yaml
if sys.argv[1] != "transform":
    sys.exit(127)
docs = [d for d in yaml.safe_load_all(sys.stdin) if d and d["kind"] != "Owner"]
{change}
yaml.safe_dump_all(docs, sys.stdout)
""")
    root = tree(tmp_path / "app", {"kustomization.yaml": "resources: [cm.yaml]\ntransformers: [owner.yaml]\n",
                                   "owner.yaml": OWNER, "cm.yaml": CM})
    with pytest.raises(PluginError, match=f"group plugin team.example.com .*configured by Owner 'o' "
                                          f".*{words}: a transformer may not add or remove resources "
                                          "or change their names or namespaces"):
        render(root, log)


def test_the_shipped_protocol_wins_and_both_render_the_same(tmp_path: Path, xdg: Path, log: Path) -> None:
    root = tree(tmp_path / "app", {"kustomization.yaml": "generators: [app.yaml]\n", "app.yaml": APP})
    group_exe(xdg, TEAM_PLUGIN)
    by_group = render(root, log)
    # the same generator as a shipped-style exec plugin (argv[1] is the config file)
    write_exe(xdg / "kustomize" / "plugin" / GROUP / "v1" / "app" / "App", f"""\
#!{PY}
import sys, yaml
v = yaml.safe_load(open(sys.argv[1]))
yaml.safe_dump({{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {{"name": v["metadata"]["name"]}},
                "spec": {{"replicas": v["spec"]["replicas"]}}}}, sys.stdout)
""")
    (log / "calls.txt").unlink()
    by_kind = render(root, log)
    assert not (log / "calls.txt").exists(), "the group plugin did not run"
    # the shipped protocol does not transform with generators: the group one adds the team label
    assert by_group[0]["metadata"].pop("labels") == {"team": "red"}
    assert by_kind == by_group


def test_a_missing_plugin_names_both_paths(tmp_path: Path, xdg: Path, log: Path) -> None:
    (xdg / "kustomize" / "plugin").mkdir(parents=True)
    root = tree(tmp_path / "app", {"kustomization.yaml": "generators: [app.yaml]\n", "app.yaml": APP})
    with pytest.raises(PluginError) as e:
        render(root, log)
    msg = str(e.value)
    assert f"no executable at {xdg}/kustomize/plugin/{GROUP}/v1/app/App" in msg
    assert f"no group plugin at {xdg}/kustomize/plugins/{GROUP} either" in msg


def test_refused_without_enable_alpha_plugins(tmp_path: Path, xdg: Path, log: Path) -> None:
    group_exe(xdg, TEAM_PLUGIN)
    root = tree(tmp_path / "app", {"kustomization.yaml": "generators: [app.yaml]\n", "app.yaml": APP})
    with pytest.raises(PluginError, match="external plugins disabled; unable to load external plugin 'App'"):
        render(root, log, enable_alpha_plugins=False)
    assert not (log / "calls.txt").exists()


def test_an_unexecutable_group_plugin_is_an_error(tmp_path: Path, xdg: Path, log: Path) -> None:
    p = group_exe(xdg, TEAM_PLUGIN)
    p.chmod(0o644)
    root = tree(tmp_path / "app", {"kustomization.yaml": "generators: [app.yaml]\n", "app.yaml": APP})
    with pytest.raises(PluginError, match=f"unexecutable group plugin at: {p}"):
        render(root, log)


@pytest.mark.skipif(not sandbox_available()[0], reason="Landlock is not available on this kernel")
def test_files_outside_the_kustomization_are_not_the_plugins(tmp_path: Path, xdg: Path, log: Path) -> None:
    (tmp_path / "secret.txt").write_text("s3cret\n")
    group_exe(xdg, '#!/bin/sh\n[ "$1" = generate ] || exit 127\ncat ../secret.txt >/dev/null || exit 9\n')
    root = tree(tmp_path / "app", {"kustomization.yaml": "generators: [app.yaml]\n", "app.yaml": APP,
                                   "inside.txt": "ok\n"})
    with pytest.raises(PluginError, match="exited with code 9"):
        render(root, log)
    # the same plugin reading inside its directory runs
    group_exe(xdg, '#!/bin/sh\n[ "$1" = generate ] || exit 127\ncat inside.txt >/dev/null || exit 9\n')
    assert render(root, log) == []


def test_verbose_build_says_which_protocol_ran(tmp_path: Path, xdg: Path, log: Path) -> None:
    group_exe(xdg, TEAM_PLUGIN)
    root = tree(tmp_path / "app", {"kustomization.yaml": "generators: [app.yaml]\n", "app.yaml": APP})
    (xdg / "kzgit").mkdir(parents=True, exist_ok=True)
    (xdg / "kzgit" / "config.toml").write_text('[sandbox]\nallow-env = ["LOG"]\n')
    res = subprocess.run([sys.executable, "-m", "kzgit", "build", str(root), "--enable-alpha-plugins",
                          "-v", "--sandbox", "off"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert "kind: Deployment" in res.stdout
    plugin = xdg / "kustomize" / "plugins" / GROUP
    assert f"group plugin {GROUP} ({plugin} generate): 1 resource(s)" in res.stderr
    assert f"group plugin {GROUP} ({plugin} transform)" in res.stderr
