"""``kzgit transform``: crane transform plugins with priorities (the transform-plugin-priority proposal).

Plugins are small Python scripts written by the tests, speaking crane's binary protocol.  The
library runs exactly the plugins it is given (``discover_plugins``: the executables); the CLI adds
crane's builtin KubernetesPlugin, so CLI tests about the executables skip it with
``-s KubernetesPlugin`` (the builtin itself: tests/test_transform_kubernetes.py).
"""
from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import jsonpatch
import pytest

from kzgit.cli.main import main
from kzgit.errors import PluginError, UsageError
from kzgit.crane import discover_plugins, run_transform
from kzgit.crane.priority import PluginOperation, resolve
from kzgit.yamlio import dump_documents, load_documents

PY = sys.executable
KUBECTL = shutil.which("kubectl")


pytestmark = pytest.mark.usefixtures("isolated_home")   # conftest.py

PY_PLUGIN = """\
#!{py}
import json, sys
CFG = json.loads({cfg!r})
req = json.load(sys.stdin)
if not req:  # metadata request
    print(json.dumps(CFG["metadata"]))
    sys.exit(0)
patches = CFG["patches"]
patches = json.loads(json.dumps(patches).replace("$EXTRAS", json.dumps(req.get("extras"))[1:-1].replace('"', "'")))
json.dump({{"version": "v1", "isWhiteOut": False, "patches": patches}}, sys.stdout)
"""


def _sq(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def plugin(d: Path, file_name: str, name: Optional[str] = None, **cfg: Any) -> Path:
    """Write a crane plugin ``d/file_name`` whose metadata name is ``name`` (default: file name).

    ``patches`` maps resource names (or ``*``) to operations, ``whiteout`` lists resource names,
    ``raw`` replaces every answer, ``version`` is the response version, ``req`` the request
    versions, ``fields`` the optional fields.  The plugin is a shell script with its answers
    precomputed (fast: no interpreter start-up per resource); ``python=True`` writes a Python
    plugin that substitutes ``$EXTRAS`` with the request's extras.
    """
    d.mkdir(parents=True, exist_ok=True)
    metadata = {"name": file_name if name is None else name, "version": "v1",
                "requestVersion": cfg.get("req", ["v1"]), "responseVersion": ["v1"],
                "optionalFields": cfg.get("fields", [])}
    p = d / file_name
    patches = cfg.get("patches", {})
    if cfg.get("python"):
        p.write_text(PY_PLUGIN.format(py=PY, cfg=json.dumps({"metadata": metadata,
                                                              "patches": patches.get("*", [])})))
        p.chmod(0o755)
        return p

    def answer(res_name: str) -> str:
        if cfg.get("raw") is not None:
            return cfg["raw"]
        return json.dumps({"version": cfg.get("version", "v1"),
                           "isWhiteOut": res_name in cfg.get("whiteout", []),
                           "patches": patches.get(res_name, patches.get("*", []))})

    names = set(patches) | set(cfg.get("whiteout", [])) - {"*"}
    lines = ["#!/bin/sh", "req=$(cat)",
             f'if [ "$req" = "{{}}" ]; then printf "%s\\n" {_sq(json.dumps(metadata))}; exit 0; fi',
             'case "$req" in']
    for n in sorted(names - {"*"}):
        lines.append(f"  *{_sq(json.dumps({'name': n})[1:-1])}*) printf %s {_sq(answer(n))};;")
    lines += [f"  *) printf %s {_sq(answer('*'))};;", "esac", ""]
    p.write_text("\n".join(lines))
    p.chmod(0o755)
    return p


def replicas(n: int) -> List[Dict[str, Any]]:
    return [{"op": "replace", "path": "/spec/replicas", "value": n}]


def deployment(name: str, ns: Optional[str] = "apps") -> Dict[str, Any]:
    md: Dict[str, Any] = {"name": name}
    if ns:
        md["namespace"] = ns
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": md,
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


@pytest.fixture()
def export(tmp_path: Path) -> Path:
    """A crane-style export directory with two Deployments and a ConfigMap."""
    d = tmp_path / "export"
    (d / "resources" / "apps").mkdir(parents=True)
    (d / "resources" / "apps" / "Deployment_apps_v1_apps_web.yaml").write_text(
        dump_documents([deployment("web")]))
    (d / "resources" / "apps" / "Deployment_apps_v1_apps_db.yaml").write_text(
        dump_documents([deployment("db")]))
    (d / "resources" / "apps" / "ConfigMap__v1_apps_cfg.yaml").write_text(dump_documents([
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "apps"},
         "data": {"k": "v"}}]))
    return d


def run(export: Path, plugdir: Path, out: Path, prio: str = "", flags: str = "") -> Dict[str, Any]:
    """Run the library entry point; return the written overlay's files parsed."""
    plugins = discover_plugins(str(plugdir))
    from kzgit.crane import parse_optional_flags
    run_transform(str(export), plugins, str(out), priorities=[n for n in prio.split(",") if n],
                  extras=parse_optional_flags(flags))
    return read_overlay(out)


def read_overlay(out: Path) -> Dict[str, Any]:
    res: Dict[str, Any] = {"kustomization": load_documents((out / "kustomization.yaml").read_bytes())[0]}
    res["patches"] = {}
    for entry in res["kustomization"].get("patches", []):
        res["patches"][entry["path"]] = (json.loads((out / entry["path"]).read_text())
                                         if entry["path"].endswith(".json")
                                         else load_documents((out / entry["path"]).read_bytes())[0])
    ign = load_documents((out / "ignored-patches.yaml").read_bytes())
    res["ignored"] = ign[0] if ign else []
    return res


def patch_of(overlay: Dict[str, Any], name: str) -> List[Dict[str, Any]]:
    for entry in overlay["kustomization"].get("patches", []):
        if entry.get("target", {}).get("name", "").replace("\\", "") == name:
            return overlay["patches"][entry["path"]]
    return []


# ------------------------------------------------------------------ priority rules

def test_two_plugins_same_path_no_priorities_first_in_order_wins(export: Path, tmp_path: Path) -> None:
    pd = tmp_path / "plugins"
    plugin(pd, "a", patches={"web": replicas(2)})
    plugin(pd, "b", patches={"web": replicas(3)})
    ov = run(export, pd, tmp_path / "out")
    assert patch_of(ov, "web") == replicas(2)
    assert ov["ignored"] == [{"resource": {"apiVersion": "apps/v1", "kind": "Deployment",
                                           "name": "web", "namespace": "apps"},
                              "plugin": "b", "operation": replicas(3)[0], "wonBy": "a"}]


@pytest.mark.parametrize("prio,winner,losers", [
    ("", "a", {"b", "c"}),
    ("a", "a", {"b", "c"}),
    ("b,a", "b", {"a", "c"}),
    ("c,b,a", "c", {"a", "b"}),
    ("c", "c", {"a", "b"}),       # a named plugin beats the unnamed ones, even earlier ones
])
def test_three_plugins_same_path(export: Path, tmp_path: Path, prio: str, winner: str,
                                 losers: set) -> None:
    pd = tmp_path / "plugins"
    values = {"a": 2, "b": 3, "c": 4}
    for n, v in values.items():
        plugin(pd, n, patches={"web": replicas(v)})
    ov = run(export, pd, tmp_path / "out", prio=prio)
    assert patch_of(ov, "web") == replicas(values[winner])
    assert {i["plugin"] for i in ov["ignored"]} == losers
    assert {i["wonBy"] for i in ov["ignored"]} == {winner}


def test_named_beats_unnamed_and_unnamed_keep_plugin_order(export: Path, tmp_path: Path) -> None:
    pd = tmp_path / "plugins"
    plugin(pd, "a", patches={"web": replicas(2) + [
        {"op": "add", "path": "/metadata/labels", "value": {"from": "a"}}]})
    plugin(pd, "b", patches={"web": replicas(3)})
    plugin(pd, "c", patches={"web": [{"op": "add", "path": "/metadata/labels",
                                      "value": {"from": "c"}}]})
    ov = run(export, pd, tmp_path / "out", prio="b")
    # b is named: it wins /spec/replicas; a and c are unnamed: plugin order decides the labels
    assert patch_of(ov, "web") == [
        {"op": "add", "path": "/metadata/labels", "value": {"from": "a"}}, replicas(3)[0]]


def test_metadata_name_is_the_plugin_name(export: Path, tmp_path: Path) -> None:
    pd = tmp_path / "plugins"
    plugin(pd, "10-first", name="Zeta", patches={"web": replicas(2)})
    plugin(pd, "20-second", name="", patches={"web": replicas(3)})  # no name: file name
    ov = run(export, pd, tmp_path / "out", prio="20-second,Zeta")
    assert patch_of(ov, "web") == replicas(3)
    assert ov["ignored"][0]["plugin"] == "Zeta" and ov["ignored"][0]["wonBy"] == "20-second"


def test_identical_operations_are_applied_once(export: Path, tmp_path: Path) -> None:
    pd = tmp_path / "plugins"
    op = {"op": "add", "path": "/metadata/annotations", "value": {"migrated": "true"}}
    plugin(pd, "a", patches={"*": [op]})
    plugin(pd, "b", patches={"*": [op]})
    ov = run(export, pd, tmp_path / "out", prio="b")
    assert patch_of(ov, "web") == [op] and patch_of(ov, "cfg") == [op]
    assert ov["ignored"] == []


def test_whiteout_wins_over_high_priority_patch(export: Path, tmp_path: Path) -> None:
    pd = tmp_path / "plugins"
    plugin(pd, "a", whiteout=["db"])
    plugin(pd, "b", patches={"db": replicas(5), "web": replicas(6)})
    out = tmp_path / "out"
    ov = run(export, pd, out, prio="b")
    assert patch_of(ov, "db") == [] and patch_of(ov, "web") == replicas(6)
    kept = [load_documents((out / f).read_bytes())[0]["metadata"]["name"]
            for f in ov["kustomization"]["resources"]]
    assert sorted(kept) == ["cfg", "web"]


def test_resolve_is_deterministic_in_plugin_then_op_order() -> None:
    ops = [PluginOperation("a", {"op": "add", "path": "/z", "value": 1}, (0, 0)),
           PluginOperation("a", {"op": "add", "path": "/y", "value": 1}, (0, 1)),
           PluginOperation("b", {"op": "add", "path": "/x", "value": 2}, (1, 0)),
           PluginOperation("b", {"op": "add", "path": "/z", "value": 2}, (1, 1))]
    kept, ignored = resolve(ops, {"b": 0})
    assert [k.operation["path"] for k in kept] == ["/y", "/x", "/z"]
    assert [(i.plugin, i.won_by) for i in ignored] == [("a", "b")]
    # same path, different op kinds: a conflict too (crane keys on the path)
    kept, ignored = resolve([PluginOperation("a", {"op": "remove", "path": "/x"}, (0, 0)),
                             PluginOperation("b", {"op": "add", "path": "/x", "value": 1}, (1, 0))], {})
    assert [k.plugin for k in kept] == ["a"] and ignored[0].plugin == "b"


def test_optional_flags_reach_plugins_lowercased(export: Path, tmp_path: Path) -> None:
    pd = tmp_path / "plugins"
    plugin(pd, "a", python=True, patches={"*": [{"op": "add", "path": "/metadata/labels",
                                                 "value": {"extras": "$EXTRAS"}}]},
           fields=[{"flagName": "foo-flag", "help": "the foo", "example": "x"}])
    ov = run(export, pd, tmp_path / "out", flags='{"Foo-Flag": "bar"}')
    assert patch_of(ov, "web")[0]["value"] == {"extras": "'foo-flag': 'bar'"}


# ------------------------------------------------------------------ overlay and rendering

def expected_render(resources: List[Dict[str, Any]], overlay: Dict[str, Any],
                    out: Path) -> List[Dict[str, Any]]:
    result = []
    for r in resources:
        patch = patch_of(overlay, r["metadata"]["name"])
        result.append(jsonpatch.apply_patch(copy.deepcopy(r), patch) if patch else r)
    return result


def kubectl_build(path: Path) -> List[Dict[str, Any]]:
    if KUBECTL is None:
        pytest.skip("kubectl not on PATH: cannot check the overlay renders with kubectl kustomize")
    res = subprocess.run([KUBECTL, "kustomize", str(path)], capture_output=True, timeout=60)
    assert res.returncode == 0, res.stderr.decode()
    return load_documents(res.stdout)


def _key(o: Dict[str, Any]) -> tuple:
    return (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"])


def test_overlay_from_export_dir_renders(export: Path, tmp_path: Path) -> None:
    pd = tmp_path / "plugins"
    plugin(pd, "a", whiteout=["cfg"], patches={"web": replicas(2)})
    plugin(pd, "b", patches={"*": [{"op": "add", "path": "/metadata/labels",
                                    "value": {"moved": "yes"}}]})
    out = tmp_path / "out"
    ov = run(export, pd, out)
    sources = [deployment("db"), deployment("web")]
    want = sorted(expected_render(sources, ov, out), key=_key)
    got = sorted(kubectl_build(out), key=_key)
    assert got == want
    assert got[1]["spec"]["replicas"] == 2 and got[0]["metadata"]["labels"] == {"moved": "yes"}


def test_overlay_on_kustomization_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SOURCE is a kustomization: OUT uses it as a base and deletes whited-out resources."""
    src = tmp_path / "app"
    src.mkdir()
    (src / "kustomization.yaml").write_text(
        "namespace: apps\nnamePrefix: p-\nresources:\n- res.yaml\n")
    (src / "res.yaml").write_text(dump_documents([deployment("web", None), deployment("db", None),
                                                  {"apiVersion": "v1", "kind": "Service",
                                                   "metadata": {"name": "web.svc"}}]))
    rendered = kubectl_build(src)

    # Render SOURCE with kubectl (the oracle) so this test does not depend on the build pipeline.
    from kzgit.options import BuildResult
    from kzgit.resource import Resource
    monkeypatch.setattr(sys.modules["kzgit.builder"], "build",
                        lambda path, options=None: BuildResult([Resource(o) for o in rendered]))
    pd = tmp_path / "plugins"
    plugin(pd, "a", whiteout=["p-db"], patches={"p-web": replicas(2)})
    plugin(pd, "b", patches={"p-web": replicas(9), "p-web.svc": [
        {"op": "add", "path": "/metadata/annotations", "value": {"x": "y"}}]})
    out = tmp_path / "out"
    ov = run(src, pd, out, prio="")
    assert ov["kustomization"]["resources"] == ["../app"]
    target = [e["target"] for e in ov["kustomization"]["patches"] if "target" in e]
    assert {"version": "v1", "kind": "Service", "name": r"p-web\.svc", "namespace": "apps"} in target
    got = sorted(kubectl_build(out), key=_key)
    want = sorted(expected_render([o for o in rendered if o["metadata"]["name"] != "p-db"], ov, out),
                  key=_key)
    assert got == want


def test_out_must_not_exist_and_nothing_left_on_failure(export: Path, tmp_path: Path) -> None:
    pd = tmp_path / "plugins"
    plugin(pd, "a", raw="not json")
    out = tmp_path / "out"
    with pytest.raises(PluginError, match=r"crane plugin 'a' .* on \w+ apps/\w+: unable to decode"):
        run(export, pd, out)
    assert sorted(os.listdir(tmp_path)) == ["export", "plugins"], "no OUT, no temp dir"
    out.mkdir()
    with pytest.raises(UsageError, match="already exists"):
        run(export, pd, out)


# ------------------------------------------------------------------ protocol errors, CLI

def test_version_mismatch_and_malformed_answers(export: Path, tmp_path: Path) -> None:
    pd = tmp_path / "p1"
    plugin(pd, "old", req=["v0"])
    with pytest.raises(PluginError, match=r"crane plugin .*/old: invalid versions"):
        discover_plugins(str(pd))
    pd = tmp_path / "p2"
    plugin(pd, "v2", version="v2")
    with pytest.raises(PluginError, match="response version 'v2' is not 'v1'"):
        run(export, pd, tmp_path / "o2")
    pd = tmp_path / "p3"
    plugin(pd, "badop", patches={"*": [{"op": "frobnicate", "path": "/x"}]})
    with pytest.raises(PluginError, match="crane plugin 'badop'.*unknown patch operation 'frobnicate'"):
        run(export, pd, tmp_path / "o3")


def test_non_executables_are_ignored_and_sorted(tmp_path: Path) -> None:
    pd = tmp_path / "plugins"
    plugin(pd, "b")
    plugin(pd, "a")
    (pd / "README.md").write_text("not a plugin")
    (pd / "sub").mkdir()
    assert [p.name for p in discover_plugins(str(pd))] == ["a", "b"]


def test_cli_list_plugins(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pd = tmp_path / "plugins"
    plugin(pd, "annot", name="AnnotationPlugin",
           fields=[{"flagName": "annotation-value", "help": "The value", "example": "foo"}])
    assert main(["transform", "--list-plugins", "--plugin-dir", str(pd)]) == 0
    out = capsys.readouterr().out
    assert "Plugin: AnnotationPlugin (version v1)" in out
    assert "annotation-value: The value (example: foo)" in out
    # crane's builtin comes first (crane internal/plugin/plugin_helper.go GetPlugins)
    assert out.startswith("Plugin: KubernetesPlugin (version v0.0.6)\n    path: (builtin)\n")


def test_cli_transform_and_errors(export: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pd = tmp_path / "plugins"
    plugin(pd, "a", patches={"web": replicas(2)})
    plugin(pd, "b", patches={"web": replicas(3)})
    out = tmp_path / "out"
    assert main(["transform", str(export), "-p", str(pd), "--plugin-priorities", "b,a",
                 "-s", "KubernetesPlugin", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "3 resources, 2 plugins: 1 patched, 0 whited out, 1 operations ignored" in err
    assert patch_of(read_overlay(out), "web") == replicas(3)
    assert main(["transform", str(export), "-p", str(pd), "-o", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["transform", str(export), "-p", str(pd), "--plugin-priorities", "nope",
                 "-o", str(tmp_path / "o2")]) == 2
    assert "unknown plugin(s): nope" in capsys.readouterr().err
    assert main(["transform", str(export), "-p", str(pd), "--optional-flags", "[1]",
                 "-o", str(tmp_path / "o3")]) == 2


def test_cli_skip_plugins(export: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pd = tmp_path / "plugins"
    plugin(pd, "a", patches={"web": replicas(2)})
    plugin(pd, "b", patches={"web": replicas(3)})
    out = tmp_path / "out"
    assert main(["transform", str(export), "-p", str(pd), "-s", "a,KubernetesPlugin", "-o",
                 str(out)]) == 0
    assert "3 resources, 1 plugins: 1 patched, 0 whited out, 0 operations ignored" in capsys.readouterr().err
    assert patch_of(read_overlay(out), "web") == replicas(3)
    assert main(["transform", "--list-plugins", "-p", str(pd), "--skip-plugins", "b"]) == 0
    listed = capsys.readouterr().out
    assert "Plugin: KubernetesPlugin (" in listed
    assert "Plugin: a (" in listed and "Plugin: b (" not in listed
    # crane ignores an unknown name; a typo here would silently run the plugin meant to be skipped
    assert main(["transform", str(export), "-p", str(pd), "--skip-plugins", "a,zz",
                 "-o", str(tmp_path / "o2")]) == 2
    assert ("--skip-plugins names unknown plugin(s): zz; the plugins are: KubernetesPlugin, a, b"
            in capsys.readouterr().err)
    assert not (tmp_path / "o2").exists()


def test_overlay_renders_with_kzgit_build_like_kubectl(tmp_path: Path) -> None:
    """Real pipeline end to end: SOURCE rendered by kzgit build, OUT rendered by both tools."""
    src = tmp_path / "app"
    src.mkdir()
    (src / "kustomization.yaml").write_text(
        "namespace: apps\nresources:\n- res.yaml\nconfigMapGenerator:\n- name: env\n"
        "  literals: [A=1]\n")
    (src / "res.yaml").write_text(dump_documents([deployment("web", None), deployment("db", None)]))
    pd = tmp_path / "plugins"
    plugin(pd, "a", whiteout=["db"], patches={"web": replicas(3)})
    plugin(pd, "b", patches={"*": [{"op": "add", "path": "/metadata/annotations",
                                    "value": {"migrated": "true"}}]})
    out = tmp_path / "out"
    assert main(["transform", str(src), "-p", str(pd), "-o", str(out), "-q"]) == 0
    from kzgit.builder import build
    mine = build(str(out)).to_yaml()
    got = load_documents(mine.encode())
    assert [(o["kind"], o["metadata"]["name"]) for o in got] == [
        ("ConfigMap", got[0]["metadata"]["name"]), ("Deployment", "web")]
    assert got[0]["metadata"]["name"].startswith("env-")
    assert got[1]["spec"]["replicas"] == 3
    assert all(o["metadata"]["annotations"] == {"migrated": "true"} for o in got)
    if KUBECTL is None:
        pytest.skip("kubectl not on PATH: kzgit's render checked, kubectl's not")
    res = subprocess.run([KUBECTL, "kustomize", str(out)], capture_output=True, timeout=60)
    assert res.returncode == 0, res.stderr.decode()
    assert mine == res.stdout.decode()


def test_a_binary_plugin_receives_the_plugin_environment_not_kzgits(
        export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32: a crane plugin inherited kzgit's whole environment (a CI token); now the
    plugin allow-list, with what the user's ``[sandbox] allow-env`` grants."""
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    d = tmp_path / "plugins"
    d.mkdir()
    p = d / "envy"
    p.write_text(PY_PLUGIN.format(py=PY, cfg=json.dumps({
        "metadata": {"name": "envy", "version": "v1", "requestVersion": ["v1"],
                     "responseVersion": ["v1"], "optionalFields": []},
        "patches": []})).replace(
        "patches = CFG[\"patches\"]",
        "import os\npatches = [{'op': 'add', 'path': '/metadata/annotations', "
        "'value': {'token': os.environ.get('GITHUB_TOKEN', 'none')}}]"))
    p.chmod(0o755)
    got = run(export, d, tmp_path / "out")
    assert patch_of(got, "web")[0]["value"] == {"token": "none"}
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "kzgit" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text('[sandbox]\nallow-env = ["GITHUB_TOKEN"]\n')
    got = run(export, d, tmp_path / "out2")
    assert patch_of(got, "web")[0]["value"] == {"token": "ghp_secret"}
