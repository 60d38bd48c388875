"""The cores of ``kzgit diff``: the git-tree file system, resource pairing, GitHub output."""
from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path
from typing import Optional

import pytest
from gitserver import GitRepo, isolate

from kzgit.builder import BuildOptions, build
from kzgit.diff import github
from kzgit.diff.gittree import GitTreeFS
from kzgit.diff.report import (DiffReport, Drift, RenderedResource, RenderError, ResourceChange, RootDiff,
                               Side, compare, pair, stem_from_shape)
from kzgit.errors import BuildError


# -- GitTreeFS -----------------------------------------------------------------------------------
@pytest.fixture
def tree_fs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitTreeFS:
    isolate(monkeypatch, tmp_path)
    repo = GitRepo.create(str(tmp_path / "t"), {
        "app/kustomization.yaml": "resources:\n- linked.yaml\n",
        "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
        "shared/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n",
        "escape/kustomization.yaml": "resources:\n- passwd.yaml\n",
    }, "files")
    p = repo.path
    os.symlink("cm.yaml", f"{p}/app/linked.yaml")            # a file link inside the dir
    os.symlink("../shared", f"{p}/app/shared-dir")           # a directory link
    os.symlink("/etc/passwd", f"{p}/escape/passwd.yaml")     # out of the repository
    os.symlink("loop", f"{p}/loop")                          # a loop
    repo.commit({}, "links")
    for rel in ("app/linked.yaml", "app/shared-dir", "escape/passwd.yaml", "loop"):
        os.remove(f"{p}/{rel}")
    repo.write({"app/cm.yaml": "work tree: not the commit\n"})
    real = os.path.realpath(p)
    return GitTreeFS(real, repo.head())


def test_tree_fs_reads_the_commit_and_follows_links(tree_fs: GitTreeFS) -> None:
    m = tree_fs.mount
    assert tree_fs.read_bytes(f"{m}/app/cm.yaml").startswith(b"apiVersion: v1\n")
    assert tree_fs.read_bytes(f"{m}/app/linked.yaml") == tree_fs.read_bytes(f"{m}/app/cm.yaml")
    assert tree_fs.realpath(f"{m}/app/linked.yaml") == f"{m}/app/cm.yaml"
    assert tree_fs.realpath(f"{m}/app/shared-dir/extra.yaml") == f"{m}/shared/extra.yaml"
    assert tree_fs.realpath(m) == m
    assert tree_fs.is_dir(f"{m}/app/shared-dir") and not tree_fs.is_file(f"{m}/app/shared-dir")
    assert tree_fs.is_file(f"{m}/app/linked.yaml") and not tree_fs.is_dir(f"{m}/app/cm.yaml")
    assert tree_fs.listdir(f"{m}/app") == ["cm.yaml", "kustomization.yaml", "linked.yaml", "shared-dir"]
    assert tree_fs.listdir(f"{m}/app/shared-dir") == ["extra.yaml"]
    assert tree_fs.files() == ["app/cm.yaml", "app/kustomization.yaml", "app/linked.yaml",
                               "app/shared-dir", "escape/kustomization.yaml", "escape/passwd.yaml",
                               "loop", "shared/extra.yaml"]


def test_tree_fs_missing_outside_and_loops(tree_fs: GitTreeFS) -> None:
    m = tree_fs.mount
    for path in (f"{m}/nope.yaml", f"{m}/app/nope/x"):
        with pytest.raises(FileNotFoundError):
            tree_fs.realpath(path)
        with pytest.raises(FileNotFoundError):
            tree_fs.read_bytes(path)
        assert not tree_fs.exists(path) and not tree_fs.is_file(path) and not tree_fs.is_dir(path)
    with pytest.raises(NotADirectoryError):
        tree_fs.listdir(f"{m}/app/cm.yaml")
    with pytest.raises(OSError) as e:
        tree_fs.realpath(f"{m}/app/cm.yaml/x")
    assert e.value.errno == errno.ENOTDIR
    # a link out of the repository resolves to where it points, which is never read
    assert tree_fs.realpath(f"{m}/escape/passwd.yaml") == "/etc/passwd"
    assert tree_fs.exists(f"{m}/escape/passwd.yaml") and not tree_fs.is_file(f"{m}/escape/passwd.yaml")
    with pytest.raises(BuildError, match="outside the repository"):
        tree_fs.read_bytes(f"{m}/escape/passwd.yaml")
    assert tree_fs.realpath(f"{m}/../x") == os.path.normpath(f"{m}/../x")
    assert not tree_fs.is_dir("/") and not tree_fs.exists(f"{m}-other/app")
    with pytest.raises(BuildError, match="too many links"):
        tree_fs.realpath(f"{m}/loop")
    assert tree_fs.exists(f"{m}/loop") and not tree_fs.is_file(f"{m}/loop")
    assert tree_fs.read_rel("loop") is None and tree_fs.read_rel("app/linked.yaml") is not None


def test_build_through_the_tree_fs(tree_fs: GitTreeFS) -> None:
    m = tree_fs.mount
    out = build(f"{m}/app", BuildOptions(fs=tree_fs)).to_yaml()
    assert out == "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"
    with pytest.raises(BuildError, match=f"security; file '[^']*' is not in or below '{m}/escape'"):
        build(f"{m}/escape", BuildOptions(fs=tree_fs))


def test_submodule_is_an_empty_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(monkeypatch, tmp_path)
    sub = GitRepo.create(str(tmp_path / "sub"), {"a.yaml": "x: 1\n"})
    top = GitRepo.create(str(tmp_path / "top"), {"README": "r\n"})
    top.add_submodule(sub.path, "vendor/sub")
    fs = GitTreeFS(top.path, top.head())
    assert fs.is_dir(f"{top.path}/vendor/sub") and fs.listdir(f"{top.path}/vendor/sub") == []
    assert "vendor/sub" not in fs.files()


# -- pairing -------------------------------------------------------------------------------------
def res(kind: str, name: str, text: str = "", ns: str = "", api: str = "v1",
        stem: Optional[str] = None) -> RenderedResource:
    return RenderedResource(api, kind, ns, name, text or f"{kind} {name} {ns}\n", stem)


def test_stem_from_shape() -> None:
    assert stem_from_shape("ConfigMap", "app-hf678c7m2b") == "app"
    assert stem_from_shape("Secret", "a-b-47668c6k28") == "a-b"
    assert stem_from_shape("ConfigMap", "app-monitoring") is None     # 'o', 'i', 'n' never occur
    assert stem_from_shape("ConfigMap", "app-0123456789") is None     # 0, 1, 3 never occur
    assert stem_from_shape("Deployment", "app-hf678c7m2b") is None


def test_pairing_passes() -> None:
    base = [res("ConfigMap", "cfg-hf678c7m2b", "a\n", stem="cfg"), res("Deployment", "web", api="extensions/v1beta1"),
            res("Service", "gone"), res("ConfigMap", "plain", "x\n")]
    head = [res("Deployment", "web", api="apps/v1"), res("ConfigMap", "cfg-47668c6k28", "b\n", stem="cfg"),
            res("Service", "new"), res("ConfigMap", "plain-47668c6k28", "y\n", stem="plain")]
    got = [(a.name if a else None, b.name if b else None) for a, b in pair(base, head)]
    assert sorted(got, key=str) == sorted([("cfg-hf678c7m2b", "cfg-47668c6k28"), ("web", "web"),
                                           ("plain", "plain-47668c6k28"), ("gone", None), (None, "new")],
                                          key=str)


def test_compare_statuses_and_sorting() -> None:
    base = [res("Service", "web", "port: 80\n", ns="a"), res("ConfigMap", "cfg-hf678c7m2b", "v: 1\n", stem="cfg"),
            res("Secret", "old")]
    head = [res("ConfigMap", "cfg-47668c6k28", "v: 2\n", stem="cfg"), res("Service", "web", "port: 80\n", ns="a"),
            res("Role", "new", "r\n")]
    changes = compare("r", base, head)
    assert [(c.status, c.kind, c.name, c.previous_name) for c in changes] == [
        ("changed", "ConfigMap", "cfg-47668c6k28", "cfg-hf678c7m2b"), ("added", "Role", "new", None),
        ("removed", "Secret", "old", None)]
    assert changes[0].diff == ("--- a/r ConfigMap/cfg-hf678c7m2b\n+++ b/r ConfigMap/cfg-47668c6k28\n"
                               "@@ -1 +1 @@\n-v: 1\n+v: 2\n")
    assert changes[1].diff == "--- /dev/null\n+++ b/r Role/new\n@@ -0,0 +1 @@\n+r\n"


def test_resources_sort_in_natural_order() -> None:
    head = [res("ConfigMap", f"cfg-{i}", f"v: {i}\n") for i in (10, 2, 1)]
    assert [c.name for c in compare("r", [], head)] == ["cfg-1", "cfg-2", "cfg-10"]


# -- GitHub workflow commands --------------------------------------------------------------------
@pytest.mark.parametrize("text,data,prop", [
    ("plain", "plain", "plain"),
    ("100%", "100%25", "100%25"),
    ("a\r\nb", "a%0D%0Ab", "a%0D%0Ab"),
    ("k: v, w", "k: v, w", "k%3A v%2C w"),
    ("%0A", "%250A", "%250A"),          # an escape sequence in the input stays literal
    ("::error::x", "::error::x", "%3A%3Aerror%3A%3Ax"),
])
def test_escaping(text: str, data: str, prop: str) -> None:
    assert github.escape_data(text) == data
    assert github.escape_property(text) == prop


def test_command_syntax() -> None:
    assert github.command("warning", "line 1\nline 2", {"file": "a,b.yaml", "line": "3", "title": "t: x"}) == \
        "::warning file=a%2Cb.yaml,line=3,title=t%3A x::line 1%0Aline 2"
    assert github.command("endgroup", "") == "::endgroup::"


# One workflow command (actions/toolkit command.ts): ::name[ key=value[,key=value]*]::message,
# with no raw CR/LF, ':' or ',' inside property values, and no raw CR/LF in the message.
_COMMAND = re.compile(r"^::(?P<name>[A-Za-z0-9-]+)(?: (?P<props>[a-zA-Z]+=[^,:\r\n]*(?:,[a-zA-Z]+=[^,:\r\n]*)*))?::"
                      r"(?P<data>[^\r\n]*)$")


def _report() -> DiffReport:
    evil = "::error file=x::owned `` ``` %0A | <b>"
    change = ResourceChange("changed", "v1", "ConfigMap", "prod", "cfg-47668c6k28", "cfg-hf678c7m2b",
                            f"--- a/r x\n+++ b/r y\n@@ -1 +1 @@\n-a: 1\n+a: {evil}\n")
    return DiffReport(
        Side("origin/main", "origin/main", "a" * 40), Side("working tree", None, None),
        roots=[RootDiff("overlays/prod,1", "overlays/prod,1/kustomization.yaml", "changed", [change]),
               RootDiff("overlays/dev", "overlays/dev/kustomization.yaml", "unchanged"),
               RootDiff("overlays/bad", "overlays/bad/Kustomization", "error",
                        errors=[RenderError("head", "working tree", "boom: 50%\nsecond line")])],
        drift=[Drift("copy", "overlays/prod", "original-changed", ["copy/a.yaml: its original changed"])])


def test_workflow_commands_are_well_formed_and_the_diff_cannot_issue_any() -> None:
    out = github.workflow_commands(_report(), token="T0K3N")
    lines = out.splitlines()
    start, end = lines.index("::stop-commands::T0K3N"), lines.index("::T0K3N::")
    inside = lines[start + 1:end]
    assert "+a: ::error file=x::owned `` ``` %0A | <b>" in inside      # raw, but commands are off
    outside = lines[:start + 1] + lines[end:]
    for line in outside:
        assert _COMMAND.match(line), line
    names = [m.group("name") for m in map(_COMMAND.match, outside) if m]
    assert names == ["notice", "group", "stop-commands", "T0K3N", "endgroup", "error", "warning"]
    assert outside[0] == ("::notice file=overlays/prod%2C1/kustomization.yaml,title=kzgit diff%3A "
                          "overlays/prod%2C1 1 changed::changed ConfigMap/prod/cfg-47668c6k28 (was cfg-hf678c7m2b)")
    assert outside[-2] == ("::error file=overlays/bad/Kustomization,title=kzgit diff%3A overlays/bad does "
                           "not render::overlays/bad does not render at working tree:%0Aboom: 50%25%0Asecond line")
    assert outside[-1] == ("::warning file=copy/.kzgit-localize.lock,title=kzgit diff%3A copy%3A original "
                           "'overlays/prod' changed but the localized copy was not rebuilt::copy/a.yaml: "
                           "its original changed%0Arun: kzgit rebuild copy")


def test_markdown_summary() -> None:
    md = github.markdown(_report())
    assert md.startswith("## kzgit diff\n\nRendered kustomizations at <code>origin/main</code> "
                         "(<code>aaaaaaaaaaaa</code>) compared with <code>working tree</code>.\n")
    assert ("| root | result |\n| --- | --- |\n| <code>overlays/prod,1</code> | 1 changed |\n"
            "| <code>overlays/dev</code> | unchanged |\n| <code>overlays/bad</code> | does not render |\n") in md
    # the content's backtick runs are shorter than the fence; its markup is inert
    assert "\n````diff\n--- a/r x\n" in md and "+a: ::error file=x::owned `` ``` %0A | <b>\n````\n" in md
    assert "**<code>overlays/bad</code> does not render at <code>working tree</code>:**" in md
    assert "<b>" not in md.replace("+a: ::error file=x::owned `` ``` %0A | <b>", "")


def test_markdown_summary_stays_under_the_limit() -> None:
    big = ResourceChange("changed", "v1", "ConfigMap", "", "c", None, "--- a\n+++ b\n" + "+x\n" * 5000)
    report = DiffReport(Side("b", "b", None), Side("h", "h", None),
                        roots=[RootDiff("r", "r/kustomization.yaml", "changed", [big, big, big])])
    md = github.markdown(report, limit=25000)
    assert len(md) <= 25000
    assert md.count("<details>") == 1
    assert md.endswith("_2 more resource diffs left out to keep this summary short; the job log has the "
                       "full diff._\n")


def test_github_format_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    from kzgit.cli.main import main
    isolate(monkeypatch, tmp_path)
    repo = GitRepo.create(str(tmp_path / "g"), {
        "app/kustomization.yaml": "resources:\n- cm.yaml\n",
        "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: \"1\"\n"})
    repo.write({"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n"
                               "  a: \"::add-mask::2\"\n"})
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.chdir(repo.path)
    assert main(["diff", "--format", "github", "--exit-code"]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    token = lines[2][len("::stop-commands::"):]
    assert re.fullmatch(r"[0-9a-f]{32}", token)
    assert lines[:3] == ["::notice file=app/kustomization.yaml,title=kzgit diff%3A app 1 changed::changed ConfigMap/cm",
                         "::group::kzgit diff: app 1 changed", f"::stop-commands::{token}"]
    assert lines[-2:] == [f"::{token}::", "::endgroup::"]
    assert "+  a: ::add-mask::2" in lines[3:-2]
    text = summary.read_text()
    assert text.startswith("earlier step\n## kzgit diff\n")        # appended, as GitHub expects
    assert '-  a: "1"\n+  a: ::add-mask::2\n' in text
    # --summary FILE instead of the step summary
    target = tmp_path / "out.md"
    assert main(["diff", "--format", "github", "--summary", str(target)]) == 0
    capsys.readouterr()
    assert target.read_text() == text[len("earlier step\n"):]
    assert summary.read_text() == text


def test_json_report_keys_are_stable(tmp_path: Path) -> None:
    from kzgit.diff.output import to_dict
    d = to_dict(_report())
    assert list(d) == ["version", "base", "head", "changed", "failed", "roots", "localized", "notes",
                       "shard", "fingerprint"]
    assert list(d["roots"][0]) == ["root", "file", "status", "errors", "resources", "app"]
    assert list(d["roots"][0]["resources"][0]) == ["status", "api_version", "kind", "namespace", "name",
                                                   "previous_name", "diff"]
    assert d["roots"][2]["errors"] == [{"side": "head", "revision": "working tree",
                                        "message": "boom: 50%\nsecond line"}]
    assert list(d["localized"][0]) == ["copy", "original", "status", "problems", "rebuild"]
    json.dumps(d)


def test_text_starts_with_a_one_line_summary() -> None:
    from kzgit.diff.output import text
    lines = text(_report()).splitlines()
    assert lines[0] == ("3 roots affected (1 changed, 1 unchanged, 1 not rendering); resources: "
                        "0 added, 0 removed, 1 changed; 1 stale localized copy")
    assert lines[1] == "root overlays/prod,1: 1 changed"
    empty = DiffReport(Side("HEAD", "HEAD", "a" * 40), Side("working tree", None, None))
    assert text(empty) == "no kustomization root or localized copy is affected by the change\n"


def _many(n: int) -> DiffReport:
    changes = [ResourceChange("changed", "v1", "ConfigMap", "prod", f"cfg-{i:05d}-" + "x" * 40, None,
                              f"--- a\n+++ b\n@@ -1 +1 @@\n-a: {i}\n+a: {i + 1}\n") for i in range(n)]
    return DiffReport(Side("b", "b", None), Side("h", "h", None),
                      roots=[RootDiff("big", "big/kustomization.yaml", "changed", changes)])


def test_github_annotations_stay_short() -> None:
    out = github.workflow_commands(_many(60000), token="T")
    notice = next(line for line in out.splitlines() if line.startswith("::notice"))
    assert len(notice.encode()) < 4096
    data = notice.split("::", 2)[2].split("%0A")
    assert data[0] == "60000 resources differ; the first 10:"
    assert data[1] == "changed ConfigMap/prod/cfg-00000-" + "x" * 40 and len(data) == 12
    assert data[-1] == ("... and 59990 more: see the job summary and the log group "
                        "'kzgit diff: big 60000 changed'")
    # the group keeps every resource
    assert out.count("\nchanged ConfigMap/prod/cfg-") == 60000
    small = github.workflow_commands(_many(2), token="T").splitlines()[0]
    assert small.endswith("::changed ConfigMap/prod/cfg-00000-" + "x" * 40
                          + "%0Achanged ConfigMap/prod/cfg-00001-" + "x" * 40)


def test_github_error_annotation_is_bounded() -> None:
    report = DiffReport(Side("b", "b", None), Side("h", "h", None),
                        roots=[RootDiff("r", "r/kustomization.yaml", "error",
                                        errors=[RenderError("head", "h", "boom " * 5000)])])
    line = github.workflow_commands(report).splitlines()[0]
    assert line.startswith("::error ") and len(line.encode()) < 4096
    assert line.endswith("... (the rest in the job summary)")


def test_markdown_names_the_resources_whose_diff_is_left_out() -> None:
    md = github.markdown(_many(5000), limit=20000)
    assert len(md) <= 20000
    listed = [ln for ln in md.splitlines() if ln.startswith("- <code>big</code>: changed <code>")]
    assert 20 < len(listed) < 5000
    shown = md.count("<details>")
    assert md.count("\n- ... and ") == 1
    assert f"- ... and {5000 - shown - len(listed)} more\n" in md
    assert md.endswith(f"_{5000 - shown} more resource diffs left out to keep this summary short; "
                       "the job log has the full diff._\n")
