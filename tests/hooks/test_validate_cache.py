"""``kzgit validate`` and ``kzgit hook validate`` through the render cache: ``-v``,
``--no-cache``, ``cache = false``, ``--shard``."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from helpers import WEB_DEPLOYMENT, WIDGET_CRD
from test_hooks import git, make_repo, write
from test_render_cache import probe_twice

from kzgit.cli.main import main
from kzgit.hooks.validate import Resources
from kzgit.validate import Validator

BAD_PORT = WEB_DEPLOYMENT + "        ports:\n        - containerPort: \"80\"\n"
FILES: Dict[str, str] = {
    "base/kustomization.yaml": "resources:\n- deploy.yaml\n",
    "base/deploy.yaml": BAD_PORT,
    "crds/kustomization.yaml": "resources:\n- crd.yaml\n",
    "crds/crd.yaml": WIDGET_CRD,
}
for _i in range(4):
    FILES[f"overlays/o{_i}/kustomization.yaml"] = f"resources:\n- ../../base\nnamePrefix: o{_i}-\n"
FILES["widgets/kustomization.yaml"] = "resources:\n- w.yaml\n"
FILES["widgets/w.yaml"] = ("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n"
                           "spec:\n  size: big\n")
ROOTS = sorted(["crds", "widgets"] + [f"overlays/o{i}" for i in range(4)])


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KZGIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PRE_COMMIT", raising=False)


def validate(repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
             *argv: str) -> Tuple[int, str, str]:
    monkeypatch.chdir(repo)
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def statuses(err: str) -> Dict[str, str]:
    found = re.findall(r"^(built|cached|failed) +(\S+) \(\d+\.\d\ds\)$", err, re.M)
    return {root: status for status, root in found}


def entries(tmp_path: Path) -> List[Path]:
    return list((tmp_path / "cache").rglob("*.kzr"))


def test_second_run_is_cached_with_the_same_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", FILES)
    rc, first, err = validate(repo, monkeypatch, capsys, "validate", "--all", "-v")
    assert rc == 1 and statuses(err) == {r: "built" for r in ROOTS}
    # findings placed in files (the resource's own file, from the cached sources) and the
    # custom resource checked against the CRD another root renders
    assert "overlays/o2: Deployment/o2-web: /spec/template/spec/containers/0/ports/0/containerPort: " \
           'expected integer, got string "80" (base/deploy.yaml:' in first
    assert "widgets: Widget/w: /spec/size: expected integer" in first
    # each root's render, each root's findings, and the repository's dependency graph
    assert len(entries(tmp_path)) == 2 * len(ROOTS) + 1
    rc, second, err = validate(repo, monkeypatch, capsys, "validate", "--all", "-v")
    assert (rc, second) == (1, first) and statuses(err) == {r: "cached" for r in ROOTS}
    # the JSON report stays JSON: -v goes to stderr
    rc, out, err = validate(repo, monkeypatch, capsys, "validate", "--all", "-v", "--format", "json")
    assert json.loads(out)["findings"] and statuses(err) == {r: "cached" for r in ROOTS}
    # without -v, nothing on stderr
    assert validate(repo, monkeypatch, capsys, "validate", "--all")[2] == ""


def test_a_changed_input_rebuilds_only_the_roots_that_read_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", FILES)
    validate(repo, monkeypatch, capsys, "validate", "--all")
    write(repo, {"overlays/o1/kustomization.yaml": FILES["overlays/o1/kustomization.yaml"] +
                 "patches:\n- patch: |-\n    - op: replace\n      path: /spec/template/spec/containers/0/ports/0/containerPort\n"
                 "      value: 80\n  target: {kind: Deployment}\n"})
    rc, out, err = validate(repo, monkeypatch, capsys, "validate", "--all", "-v")
    assert statuses(err) == {**{r: "cached" for r in ROOTS}, "overlays/o1": "built"}
    assert "overlays/o1:" not in out and "overlays/o0: Deployment" in out
    # the base every overlay reads: every overlay is rebuilt, and now valid
    write(repo, {"base/deploy.yaml": BAD_PORT.replace('"80"', "80")})
    rc, out, err = validate(repo, monkeypatch, capsys, "validate", "--all", "-v")
    assert statuses(err) == {**{r: "cached" for r in ROOTS}, **{f"overlays/o{i}": "built" for i in range(4)}}
    assert "Deployment" not in out
    # a root that stops rendering is failed, and its failure replays from the cache
    write(repo, {"overlays/o3/kustomization.yaml": "resources:\n- gone.yaml\n"})
    for _ in range(2):
        rc, out, err = validate(repo, monkeypatch, capsys, "validate", "--all", "-v")
        assert rc == 1 and statuses(err)["overlays/o3"] == "failed" and "overlays/o3: does not render" in out


def test_no_cache_and_cache_false(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", FILES)
    for argv in (["validate", "--all", "-v", "--no-cache"], ["hook", "validate", "--all", "-v", "--no-cache"]):
        for _ in range(2):
            _, _, err = validate(repo, monkeypatch, capsys, *argv)
            assert set(statuses(err).values()) == {"built"}
    assert not entries(tmp_path)
    write(repo, {".kzgit.toml": "cache = false\n"})
    for _ in range(2):
        _, _, err = validate(repo, monkeypatch, capsys, "validate", "--all", "-v")
        assert set(statuses(err).values()) == {"built"}
    assert not entries(tmp_path)


def test_hook_validate_uses_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", FILES)
    _, first, err = validate(repo, monkeypatch, capsys, "hook", "validate", "--all", "-v")
    assert statuses(err) == {r: "built" for r in ROOTS}
    _, second, err = validate(repo, monkeypatch, capsys, "hook", "validate", "--all", "-v")
    assert second == first and statuses(err) == {r: "cached" for r in ROOTS}
    # without -v nothing is listed: pre-commit shows a failing hook's output, which is what
    # failed and one line counting the rest (issue 23, item 14)
    monkeypatch.setenv("PRE_COMMIT", "1")
    _, _, err = validate(repo, monkeypatch, capsys, "hook", "validate", "base/deploy.yaml")
    assert statuses(err) == {}


def _canonical(finding: object) -> str:
    return json.dumps(finding, sort_keys=True)


def test_shards_are_disjoint_and_complete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", FILES)
    _, whole, _ = validate(repo, monkeypatch, capsys, "validate", "--all", "--format", "json")
    unsharded = json.loads(whole)
    for n in (1, 2, 3, 4):
        roots: List[str] = []
        findings: List[object] = []
        for i in range(1, n + 1):
            _, out, _ = validate(repo, monkeypatch, capsys, "validate", "--all", "--format", "json",
                                 "--shard", f"{i}/{n}")
            part = json.loads(out)
            roots += [r["root"] for r in part["roots"]]
            findings += part["findings"]
        assert sorted(roots) == ROOTS, n
        # every shard checks its custom resources against the CRD, wherever that root went
        assert sorted(map(_canonical, findings)) == sorted(map(_canonical, unsharded["findings"])), n
    rc, _, err = validate(repo, monkeypatch, capsys, "hook", "validate", "--all", "--shard", "2/2")
    assert rc == 1
    with pytest.raises(SystemExit) as e:
        validate(repo, monkeypatch, capsys, "validate", "--all", "--shard", "3/2")
    assert e.value.code == 2 and "between 1 and N" in capsys.readouterr().err


def test_an_unwritable_cache_is_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", FILES)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("KZGIT_CACHE_DIR", str(blocker))
    rc, out, err = validate(repo, monkeypatch, capsys, "validate", "--all", "-v")
    assert rc == 1 and "widgets: Widget/w: /spec/size" in out
    assert "warning: the render cache" in err and "building without it" in err
    assert statuses(err) == {r: "built" for r in ROOTS}


def _no_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*a: object, **k: object) -> None:
        raise AssertionError("validated although nothing changed")
    monkeypatch.setattr(Validator, "check", refuse)


def test_findings_are_reused_while_what_they_depend_on_is_unchanged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    unknown = "apiVersion: other.io/v1\nkind: Thing\nmetadata:\n  name: t\n"
    repo = make_repo(tmp_path / "r", {**FILES, "base/thing.yaml": unknown,
                                      "base/kustomization.yaml": "resources:\n- deploy.yaml\n- thing.yaml\n"})
    _, first, _ = validate(repo, monkeypatch, capsys, "validate", "--all")
    # a kind without a schema is listed once per root that has it, from the cache too: what a
    # root reports does not depend on which other roots ran
    thing = sorted(line.split(":", 1)[0] for line in first.splitlines()
                   if "warning: no schema for Thing" in line)
    assert thing == [f"overlays/o{i}" for i in range(4)]
    _, alone, _ = validate(repo, monkeypatch, capsys, "validate", "overlays/o2")
    assert [line for line in alone.splitlines() if "no schema" in line] == \
        [line for line in first.splitlines() if "no schema" in line and line.startswith("overlays/o2:")]
    with monkeypatch.context() as m:
        _no_validation(m)
        assert validate(repo, monkeypatch, capsys, "validate", "--all")[1] == first
        # the JSON report counts the resources validated, from the cache too
        _, out, _ = validate(repo, monkeypatch, capsys, "validate", "--all", "--format", "json")
        assert json.loads(out)["summary"]["resources"] > 0
    # a comment above the resource: the same render, another line for the finding
    write(repo, {"base/deploy.yaml": "# the web server\n" + BAD_PORT})
    _, out, _ = validate(repo, monkeypatch, capsys, "validate", "--all")
    line = int(re.search(r"overlays/o0: Deployment/o0-web: .*\(base/deploy\.yaml:(\d+)\)", out).group(1))
    old = int(re.search(r"overlays/o0: Deployment/o0-web: .*\(base/deploy\.yaml:(\d+)\)", first).group(1))
    assert line == old + 1
    # the settings change: validated again (strictness changes what a Deployment may hold)
    write(repo, {"base/deploy.yaml": BAD_PORT.replace("spec:\n", "spec:\n  replica: 2\n", 1)})
    _, strict, _ = validate(repo, monkeypatch, capsys, "validate", "--all")
    assert 'unknown field "replica"' in strict
    _, relaxed, _ = validate(repo, monkeypatch, capsys, "validate", "--all", "--no-strict")
    assert 'unknown field "replica"' not in relaxed and "expected integer" in relaxed
    # a CRD changes (another root renders it): its custom resources are validated again
    write(repo, {"crds/crd.yaml": WIDGET_CRD.replace("size: {type: integer, minimum: 1}", "size: {type: string}")})
    _, out, _ = validate(repo, monkeypatch, capsys, "validate", "--all")
    assert "widgets:" not in out


def test_findings_with_schema_locations_are_not_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Schema files found through templates are read as kinds need them: nothing keys them."""
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "color": {"type": "string"}}}}}
    repo = make_repo(tmp_path / "r", {
        "app/kustomization.yaml": "resources:\n- thing.yaml\n",
        "app/thing.yaml": "apiVersion: other.io/v1\nkind: Thing\nmetadata:\n  name: t\nspec:\n  color: 3\n",
        "schemas/thing-other.io-v1.json": json.dumps(schema),
        ".kzgit.toml": '[validate]\nschema-locations = ["schemas/{{.ResourceKind}}-{{.Group}}-{{.ResourceAPIVersion}}.json"]\n'})
    rc, first, _ = validate(repo, monkeypatch, capsys, "validate", "--all")
    assert rc == 1 and "/spec/color" in first
    schema["properties"]["spec"]["properties"]["color"]["type"] = "integer"
    (repo / "schemas/thing-other.io-v1.json").write_text(json.dumps(schema))
    assert validate(repo, monkeypatch, capsys, "validate", "--all")[:2] == (0, "")


def test_a_root_outside_the_graph_is_validated_afresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """An excluded directory named on the command line: what it reaches is not known, so
    nothing keys the kustomization whose inline patch a finding points into."""
    kust = ("resources:\n- ../base\npatches:\n- patch: |-\n    apiVersion: apps/v1\n    kind: Deployment\n"
            "    metadata:\n      name: web\n    spec:\n      paused: maybe\n")
    repo = make_repo(tmp_path / "r", {**FILES, ".kzgit.toml": 'exclude = ["ex"]\n',
                                      "base/deploy.yaml": BAD_PORT.replace('"80"', "80"),
                                      "ex/kustomization.yaml": kust})
    _, first, _ = validate(repo, monkeypatch, capsys, "validate", "ex")
    where = re.search(r"/spec/paused: .*\(ex/kustomization\.yaml:(\d+)\)", first)
    assert where is not None, first
    write(repo, {"ex/kustomization.yaml": "# pause it\n" + kust})
    _, second, _ = validate(repo, monkeypatch, capsys, "validate", "ex")
    assert f"(ex/kustomization.yaml:{int(where.group(1)) + 1})" in second


def test_a_warm_run_decodes_only_the_roots_that_render_crds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Findings from the cache need no resources; CRDs do (other roots are checked against them)."""
    repo = make_repo(tmp_path / "r", FILES)
    _, first, _ = validate(repo, monkeypatch, capsys, "validate", "--all")
    decoded: List[str] = []
    real = Resources.items.fget
    assert real is not None

    def items(self: Resources) -> object:
        decoded.append(self.sources[0] if self.sources else "")
        return real(self)
    monkeypatch.setattr(Resources, "items", property(items))
    assert validate(repo, monkeypatch, capsys, "validate", "--all")[1] == first
    assert [os.path.relpath(s, repo) for s in decoded] == ["crds/crd.yaml"]


@pytest.mark.parametrize("hook", ["validate", "all"])
def test_the_plain_git_hooks_validate_staged_content_through_the_cache(
        hook: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """--staged validates an export of the index at a new temporary path each run; builds see
    it at the repository's path, so its renders and findings are reused while the staged
    content is unchanged, and a staged change rebuilds the roots it reaches."""
    repo = make_repo(tmp_path / "r", {**FILES, ".kzgit.toml": "[validate]\nstrict = true\n"})
    write(repo, {"overlays/o2/kustomization.yaml": "resources:\n- ../../base\nnamePrefix: n2-\n"})
    git(repo, "add", "-A")
    argv = ["hook", hook, "--staged", "--all", "-v"]
    rc, first, err = validate(repo, monkeypatch, capsys, *argv)
    assert rc == 1 and statuses(err) == {r: "built" for r in ROOTS}
    assert "overlays/o2: Deployment/n2-web" in first and "(base/deploy.yaml:" in first
    with monkeypatch.context() as m:
        _no_validation(m)
        rc, second, err = validate(repo, monkeypatch, capsys, *argv)
    assert rc == 1 and second == first and statuses(err) == {r: "cached" for r in ROOTS}
    write(repo, {"overlays/o1/kustomization.yaml": "resources:\n- ../../base\nnamePrefix: n1-\n"})
    git(repo, "add", "overlays/o1")
    _, third, err = validate(repo, monkeypatch, capsys, *argv)
    assert statuses(err) == {**{r: "cached" for r in ROOTS}, "overlays/o1": "built"}
    assert "overlays/o1: Deployment/n1-web" in third


# A warm `kzgit validate --all` reads renders and findings from the cache: it neither builds,
# nor parses YAML, nor uses dataclasses (kzgit.record's plain classes, as the hooks).
NOT_FOR_A_WARM_VALIDATE = ["yaml", "kzgit.yamlio", "kzgit.builder.pipeline", "kzgit.builtins",
                           "dataclasses", "inspect", "concurrent.futures",
                           # JUnit's XML escaping (it imports urllib.request): --format junit only
                           "xml.sax", "urllib.request"]


def test_a_warm_validate_imports_only_what_it_needs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", FILES)
    (first, _), (second, warm) = probe_twice(repo, tmp_path / "cache", NOT_FOR_A_WARM_VALIDATE,
                                             "validate", "--all", "-v")
    assert first.returncode == second.returncode == 1 and second.stdout.startswith(first.stdout[:40])
    assert statuses(second.stderr) == {r: "cached" for r in ROOTS}
    assert warm["MODULES"] == ""


def test_a_warm_validate_hashes_each_file_once_per_purpose(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Four overlays reach one base: a warm run checks the base's files once for the render
    cache and once for the findings' keys, not once per root."""
    from collections import Counter
    import kzgit.rendercache.reads as record
    repo = make_repo(tmp_path / "r", FILES)
    validate(repo, monkeypatch, capsys, "validate", "--all")
    hashed: "Counter[bytes]" = Counter()
    real = record.blob_id
    monkeypatch.setattr(record, "blob_id", lambda data: hashed.update([data]) or real(data))
    rc, _, err = validate(repo, monkeypatch, capsys, "validate", "--all", "-v")
    assert set(statuses(err).values()) == {"cached"}
    assert hashed[FILES["base/deploy.yaml"].encode()] == 2, hashed


def test_a_warm_validate_does_not_read_the_kubernetes_schemas(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Every finding comes from the cache: the release's definitions (megabytes of JSON) are
    read only when a resource is checked."""
    import kzgit.validate.kubernetes as kubernetes
    repo = make_repo(tmp_path / "r", FILES)
    rc, first, _ = validate(repo, monkeypatch, capsys, "validate", "--all")

    def unread(*a: object) -> None:
        raise AssertionError("the schemas were read although every finding is cached")
    monkeypatch.setattr(kubernetes, "_definitions", unread)
    assert validate(repo, monkeypatch, capsys, "validate", "--all")[:2] == (rc, first)
