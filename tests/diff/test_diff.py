"""``kzgit diff`` end to end, on real git repositories with several commits."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Dict, Iterator, Tuple

import pytest
from gitserver import GitRepo, git, isolate
from helpers import grant_user, krm_exec_function

from kzgit.cli.main import main

BASE: Dict[str, str] = {
    "base/kustomization.yaml": ("resources:\n- deploy.yaml\n- service.yaml\nconfigMapGenerator:\n"
                                "- name: app\n  literals:\n  - LOG_LEVEL=info\n"),
    "base/deploy.yaml": ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n"
                         "  replicas: 1\n  template:\n    spec:\n      containers:\n      - name: web\n"
                         "        image: nginx:1.25\n        envFrom:\n        - configMapRef:\n"
                         "            name: app\n"),
    "base/service.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n",
    "overlays/prod/kustomization.yaml": "resources:\n- ../../base\nnamespace: prod\nreplicas:\n- name: web\n  count: 2\n",
    "overlays/dev/kustomization.yaml": "resources:\n- ../../base\nnamespace: dev\n",
    "README.md": "docs\n",
}
DEBUG_BASE = BASE["base/kustomization.yaml"].replace("=info", "=debug")


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """c0 initial; c1 replicas; c2 ConfigMap data; c3 new overlay; c4 deleted resource; c5 broken."""
    path = tmp_path_factory.mktemp("history") / "repo"
    r = GitRepo.create(str(path), BASE, "initial")
    r.tag("c0")
    r.commit({"overlays/prod/kustomization.yaml":
              BASE["overlays/prod/kustomization.yaml"].replace("count: 2", "count: 3")}, "replicas")
    r.tag("c1")
    r.commit({"base/kustomization.yaml": DEBUG_BASE}, "log level")
    r.tag("c2")
    r.commit({"overlays/staging/kustomization.yaml": "resources:\n- ../../base\nnamespace: staging\n"},
             "staging")
    r.tag("c3")
    r.commit({"base/service.yaml": None,
              "base/kustomization.yaml": DEBUG_BASE.replace("- service.yaml\n", "")}, "no service")
    r.tag("c4")
    r.commit({"overlays/dev/kustomization.yaml": "resources:\n- ../../base\n- missing.yaml\nnamespace: dev\n"},
             "broken dev")
    r.tag("c5")
    return path


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No real home or git config; temp dirs in a dir of our own, checked empty afterwards."""
    isolate(monkeypatch, tmp_path)
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text("[user]\n\tname = T\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    yield tmp
    assert os.listdir(tmp) == [], "kzgit diff left temporary files behind"


def kz(repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
       *argv: str) -> Tuple[int, str, str]:
    monkeypatch.chdir(repo)
    rc = main(["diff", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def status(repo: Path) -> str:
    return git("status", "--porcelain", "--ignored", cwd=str(repo))


# -- the scenarios of the issue ----------------------------------------------------------------
def test_replica_change(history: Path, monkeypatch: pytest.MonkeyPatch,
                        capsys: pytest.CaptureFixture[str]) -> None:
    before = status(history)
    rc, out, err = kz(history, monkeypatch, capsys, "--base", "c0", "--head", "c1")
    assert (rc, err) == (0, "")
    assert out == """\
1 root affected (1 changed); resources: 0 added, 0 removed, 1 changed
root overlays/prod: 1 changed
changed Deployment/prod/web
--- a/overlays/prod Deployment/prod/web
+++ b/overlays/prod Deployment/prod/web
@@ -4,7 +4,7 @@
   name: web
   namespace: prod
 spec:
-  replicas: 2
+  replicas: 3
   template:
     spec:
       containers:
"""
    assert kz(history, monkeypatch, capsys, "--base", "c0", "--head", "c1", "--exit-code")[0] == 1
    assert status(history) == before, "kzgit diff wrote into the repository"


def test_generated_configmap_rename_is_a_change(history: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = kz(history, monkeypatch, capsys, "--base", "c1", "--head", "c2", "--format", "json")
    assert rc == 0
    report = json.loads(out)
    assert report["version"] == 1 and report["changed"] is True and report["failed"] is False
    assert report["base"]["rev"] == "c1" and len(report["base"]["commit"]) == 40
    assert report["head"]["rev"] == "c2"
    assert [(r["root"], r["status"], r["file"]) for r in report["roots"]] == [
        ("overlays/dev", "changed", "overlays/dev/kustomization.yaml"),
        ("overlays/prod", "changed", "overlays/prod/kustomization.yaml")]
    cm, dep = report["roots"][1]["resources"]
    assert {k: v for k, v in cm.items() if k != "diff"} == {
        "status": "changed", "api_version": "v1", "kind": "ConfigMap", "namespace": "prod",
        "name": "app-47668c6k28", "previous_name": "app-hf678c7m2b"}
    assert cm["diff"] == """\
--- a/overlays/prod ConfigMap/prod/app-hf678c7m2b
+++ b/overlays/prod ConfigMap/prod/app-47668c6k28
@@ -1,7 +1,7 @@
 apiVersion: v1
 data:
-  LOG_LEVEL: info
+  LOG_LEVEL: debug
 kind: ConfigMap
 metadata:
-  name: app-hf678c7m2b
+  name: app-47668c6k28
   namespace: prod
"""
    assert (dep["kind"], dep["name"], dep["previous_name"]) == ("Deployment", "web", None)
    assert "-            name: app-hf678c7m2b\n+            name: app-47668c6k28\n" in dep["diff"]
    assert report["localized"] == [] and report["notes"] == []


def test_new_overlay_is_an_added_root(history: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = kz(history, monkeypatch, capsys, "--base", "c2", "--head", "c3")
    assert rc == 0
    assert out.startswith("1 root affected (1 added); resources: 3 added, 0 removed, 0 changed\n"
                          "root overlays/staging: added (3 resources)\n"
                          "added ConfigMap/staging/app-47668c6k28\n"
                          "--- /dev/null\n"
                          "+++ b/overlays/staging ConfigMap/staging/app-47668c6k28\n"
                          "@@ -0,0 +1,7 @@\n"
                          "+apiVersion: v1\n")
    assert [ln for ln in out.splitlines() if ln.startswith(("root ", "added ", "changed ", "removed "))] == [
        "root overlays/staging: added (3 resources)", "added ConfigMap/staging/app-47668c6k28",
        "added Deployment/staging/web", "added Service/staging/web"]
    # and back: the overlay is a removed root
    rc, out, _ = kz(history, monkeypatch, capsys, "--base", "c3", "--head", "c2", "--format", "json")
    (root,) = json.loads(out)["roots"]
    assert (root["root"], root["status"]) == ("overlays/staging", "removed")
    assert [r["status"] for r in root["resources"]] == ["removed"] * 3


def test_deleted_resource(history: Path, monkeypatch: pytest.MonkeyPatch,
                          capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = kz(history, monkeypatch, capsys, "--base", "c3", "--head", "c4", "--exit-code")
    assert rc == 1
    assert "root overlays/prod: 1 removed\nremoved Service/prod/web\n--- a/overlays/prod Service/prod/web\n" \
           "+++ /dev/null\n@@ -1,8 +0,0 @@\n-apiVersion: v1\n-kind: Service\n" in out
    assert [ln for ln in out.splitlines() if ln.startswith("root ")] == [
        "root overlays/dev: 1 removed", "root overlays/prod: 1 removed", "root overlays/staging: 1 removed"]


def test_broken_revision_exits_4_naming_root_and_revision(history: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = kz(history, monkeypatch, capsys, "--base", "c4", "--head", "c5")
    assert rc == 4
    # the lead names the kustomization, the field and the path, repository-relative as the
    # hooks write them; the build's own words follow (kustomize's, pinned by the build's tests)
    lead = "overlays/dev/kustomization.yaml:3: resources: 'missing.yaml' does not exist"
    assert out.startswith("1 root affected (1 not rendering); resources: 0 added, 0 removed, 0 changed\n"
                          f"root overlays/dev: does not render at c5:\n    {lead}\n    accumulating resources")
    assert "overlays/dev/missing.yaml: no such file or directory" in out and out.count("\n") == 4
    assert os.path.realpath(history) not in out
    # stderr: one line per error (the report holds the rest)
    assert err == f"Error: overlays/dev does not render at c5: {lead}\n"
    # broken at the base side only: the change fixes the root, which is a change, not a failure
    rc, out, err = kz(history, monkeypatch, capsys, "--base", "c5", "--head", "c4", "--format", "json",
                      "--exit-code")
    assert rc == 1, err
    report = json.loads(out)
    (root,) = report["roots"]
    assert root["status"] == "fixed" and report["failed"] is False and report["changed"] is True
    assert [(e["side"], e["revision"]) for e in root["errors"]] == [("base", "c5")]
    assert "missing.yaml" in root["errors"][0]["message"]
    # the head's whole rendering, as added
    assert root["resources"] and {c["status"] for c in root["resources"]} == {"added"}
    assert err == ""
    rc, out, err = kz(history, monkeypatch, capsys, "--base", "c5", "--head", "c4")
    assert rc == 0 and err == ""
    assert out.startswith("1 root affected (1 fixed); resources: ")
    assert "root overlays/dev: fixed (" in out and "root overlays/dev: did not render at c5:\n" in out
    rc, out, err = kz(history, monkeypatch, capsys, "--base", "c5", "--head", "c4", "--format", "github")
    assert rc == 0 and "::error" not in out and "overlays/dev fixed (" in out


def test_nothing_affected_says_so(history: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    (history / "README.md").write_text("more docs\n")
    try:
        assert kz(history, monkeypatch, capsys, "--exit-code") == (
            0, "no kustomization root or localized copy is affected by the change\n", "")
        rc, out, _ = kz(history, monkeypatch, capsys, "--format", "json")
        assert rc == 0 and json.loads(out)["roots"] == [] and json.loads(out)["changed"] is False
    finally:
        git("checkout", "--", "README.md", cwd=str(history))


# -- the working tree --------------------------------------------------------------------------
def test_working_tree_staged_unstaged_and_untracked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    repo = GitRepo.create(str(tmp_path / "w"), BASE)
    path = Path(repo.path)
    repo.write({"overlays/prod/kustomization.yaml":
                BASE["overlays/prod/kustomization.yaml"].replace("count: 2", "count: 5")})
    git("add", "overlays/prod/kustomization.yaml", cwd=repo.path)           # staged
    repo.write({"overlays/dev/kustomization.yaml": BASE["overlays/dev/kustomization.yaml"]
                + "commonLabels:\n  team: a\n"})                             # unstaged
    repo.write({"overlays/qa/kustomization.yaml": "resources:\n- ../../base\nnamespace: qa\n"})  # untracked
    before = status(path)
    rc, out, _ = kz(path, monkeypatch, capsys, "--format", "json")
    assert rc == 0
    report = json.loads(out)
    assert report["base"]["rev"] == "HEAD"
    assert report["head"] == {"rev": None, "commit": None, "label": "working tree"}
    assert [(r["root"], r["status"]) for r in report["roots"]] == [
        ("overlays/dev", "changed"), ("overlays/prod", "changed"), ("overlays/qa", "added")]
    prod = report["roots"][1]["resources"]
    assert [(c["kind"], c["name"]) for c in prod] == [("Deployment", "web")]
    assert "-  replicas: 2\n+  replicas: 5\n" in prod[0]["diff"]
    assert status(path) == before


def test_commits_are_read_from_git_objects_not_the_work_tree(history: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    expected = kz(history, monkeypatch, capsys, "--base", "c0", "--head", "c1")
    (history / "base/deploy.yaml").write_text("garbage: [\n")
    try:
        assert kz(history, monkeypatch, capsys, "--base", "c0", "--head", "c1") == expected
    finally:
        git("checkout", "--", "base/deploy.yaml", cwd=str(history))


# -- localized copies --------------------------------------------------------------------------
LOC = {
    "base/kustomization.yaml": "resources:\n- cm.yaml\n",
    "base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n",
    "overlays/prod/kustomization.yaml": "resources:\n- ../../base\nnamePrefix: prod-\n",
}


def test_stale_localized_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str]) -> None:
    repo = GitRepo.create(str(tmp_path / "l"), LOC)
    path = Path(repo.path)
    monkeypatch.chdir(path)
    assert main(["localize", "overlays/prod", "copy", "--scope", "."]) == 0
    repo.commit({}, "localized")
    repo.tag("l0")
    repo.commit({"base/cm.yaml": LOC["base/cm.yaml"].replace("a: b", "a: c")}, "original only")
    repo.tag("l1")
    capsys.readouterr()
    rc, out, _ = kz(path, monkeypatch, capsys, "--base", "l0", "--head", "l1")
    assert rc == 0
    assert out.endswith(
        "localized copy copy: original 'overlays/prod' changed but the localized copy was not rebuilt\n"
        "    copy/base/cm.yaml: its original 'base/cm.yaml' changed since localization\n"
        "    copy: out of sync with its original\n"
        "    run: kzgit rebuild copy\n")
    # rebuilt with its original: nothing to say
    monkeypatch.chdir(path)
    assert main(["rebuild", "copy"]) == 0
    capsys.readouterr()
    repo.commit({}, "rebuilt")
    repo.tag("l2")
    rc, out, _ = kz(path, monkeypatch, capsys, "--base", "l0", "--head", "l2", "--format", "json")
    assert json.loads(out)["localized"] == []
    # the copy edited without its original
    cm = path / "copy/base/cm.yaml"
    repo.commit({"copy/base/cm.yaml": cm.read_text().replace("a: c", "a: hand")}, "hand edit")
    repo.tag("l3")
    rc, out, _ = kz(path, monkeypatch, capsys, "--base", "l2", "--head", "l3", "--format", "json")
    (d,) = json.loads(out)["localized"]
    assert d == {"copy": "copy", "original": "overlays/prod", "status": "copy-changed",
                 "problems": ["copy/base/cm.yaml: modified in the copy (edit the original instead)"],
                 "rebuild": "kzgit rebuild copy"}
    # the working tree (check_copy on the disk) says the same
    repo.write({"copy/base/cm.yaml": cm.read_text().replace("a: hand", "a: again")})
    rc, out, _ = kz(path, monkeypatch, capsys, "--base", "l2", "--format", "json")
    assert [d["status"] for d in json.loads(out)["localized"]] == ["copy-changed"]


# -- security: the head does not enable plugins --------------------------------------------------
def _fn(marker: Path, value: str) -> str:
    """An exec function that leaves ``marker`` when it runs and generates ConfigMap from-fn."""
    return krm_exec_function("- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: from-fn\n"
                             f"  data:\n    k: {value}\n", prelude=f'touch "{marker}"\n')

FN_CONFIG = ("apiVersion: example.com/v1\nkind: Gen\nmetadata:\n  name: gen\n  annotations:\n"
             "    config.kubernetes.io/function: |\n      exec:\n        path: ./fn.sh\n")


def _plugin_repo(tmp_path: Path, marker: Path) -> GitRepo:
    # the base revision (whose configuration kzgit diff uses) lets the sandboxed function touch
    # the marker, within what the user's own file grants (a repository may only narrow it)
    user = tmp_path / "home" / ".config" / "kzgit" / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(f'[sandbox]\nallow-write = ["{marker.parent}"]\n')
    repo = GitRepo.create(str(tmp_path / "p"), {
        **BASE, ".kzgit.toml": f'[sandbox]\nallow-write = ["{marker.parent}"]\n'})
    repo.tag("p0")
    repo.write({".kzgit.toml": "enable-alpha-plugins = true\nenable-exec = true\n",
                "overlays/prod/fn.sh": _fn(marker, "committed"),
                "overlays/prod/gen.yaml": FN_CONFIG,
                "overlays/prod/kustomization.yaml": BASE["overlays/prod/kustomization.yaml"]
                + "generators:\n- gen.yaml\n"})
    os.chmod(os.path.join(repo.path, "overlays/prod/fn.sh"), 0o755)
    repo.commit({}, "a plugin, enabled by the head")
    repo.tag("p1")
    return repo


def test_head_cannot_enable_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "plugin-ran"
    repo = _plugin_repo(tmp_path, marker)
    rc, out, err = kz(Path(repo.path), monkeypatch, capsys, "--base", "p0", "--head", "p1", "--format", "json")
    assert rc == 4 and not marker.exists()
    report = json.loads(out)
    (root,) = [r for r in report["roots"] if r["root"] == "overlays/prod"]
    assert root["errors"][0]["side"] == "head"
    assert "external plugins disabled" in root["errors"][0]["message"]
    assert report["notes"] == ["the kzgit configuration differs at p1; kzgit diff uses the one at p0 "
                               "(plugins, exec and helm are never enabled by the revision under review)"]


def test_plugins_enabled_on_the_command_line_run_the_revisions_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "plugin-ran"
    repo = _plugin_repo(tmp_path, marker)
    # the work tree's copy of the function differs: the diff must run the committed one
    repo.write({"overlays/prod/fn.sh": _fn(marker, "worktree")})
    rc, out, err = kz(Path(repo.path), monkeypatch, capsys, "--base", "p0", "--head", "p1",
                      "--enable-alpha-plugins", "--enable-exec")
    assert rc == 0, err
    assert marker.exists()
    assert "added ConfigMap/prod/from-fn\n" in out and "+  k: committed\n" in out


# -- errors and usage ----------------------------------------------------------------------------
def test_usage_errors_exit_2(history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = kz(history, monkeypatch, capsys, "--base", "nope")
    assert (rc, out) == (2, "") and "unknown revision 'nope'" in err
    rc, _, err = kz(history, monkeypatch, capsys, "--head=--upload-pack=x")
    assert rc == 2 and "'--upload-pack=x' is not a revision" in err
    rc, _, err = kz(history, monkeypatch, capsys, "--summary", str(tmp_path / "no/such/dir/x.md"))
    assert rc == 2 and "no/such/dir/x.md: cannot write" in err
    plain = tmp_path / "plain"
    plain.mkdir()
    rc, _, err = kz(plain, monkeypatch, capsys)
    assert rc == 2 and "is not inside a git work tree" in err
    with pytest.raises(SystemExit) as e:
        kz(history, monkeypatch, capsys, "--format", "xml")
    assert e.value.code == 2


def test_bad_base_configuration_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    repo = GitRepo.create(str(tmp_path / "c"), {**BASE, ".kzgit.toml": "enigne = 'kubectl'\n"})
    rc, _, err = kz(Path(repo.path), monkeypatch, capsys)
    assert rc == 2 and err.startswith("Error: HEAD:.kzgit.toml: unknown key 'enigne'")


def test_interrupt_removes_the_export(history: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str], _isolated: Path) -> None:
    from kzgit.diff import compare
    real = compare._builtin

    def interrupted(path: str, options: Any, *rest: Any) -> Any:
        assert os.listdir(_isolated), "the revision was not exported"
        real(path, options, *rest)
        raise KeyboardInterrupt

    monkeypatch.setattr(compare, "_builtin", interrupted)
    rc, _, err = kz(history, monkeypatch, capsys, "--base", "c0", "--head", "c1", "--enable-alpha-plugins")
    assert rc == 130 and "Interrupted" in err
    # the autouse fixture checks that TMPDIR is empty again


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not on PATH")
def test_external_engine_gives_the_same_report(history: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """kubectl's YAML records no hash: the suffix's shape pairs the renamed ConfigMap."""
    builtin = kz(history, monkeypatch, capsys, "--base", "c0", "--head", "c3")
    assert kz(history, monkeypatch, capsys, "--base", "c0", "--head", "c3", "--engine", "kubectl") == builtin
    assert "(was app-hf678c7m2b)" in builtin[1]


@pytest.mark.parametrize("engine", ["builtin", "kubectl"])
def test_parallel_renders_give_the_same_report(engine: str, history: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    if engine == "kubectl" and shutil.which("kubectl") is None:
        pytest.skip("kubectl not on PATH")
    # (kubectl words a build error its own way: compare the broken revision with builtin only)
    for head in ("c3", "c5") if engine == "builtin" else ("c3",):
        one = kz(history, monkeypatch, capsys, "--base", "c0", "--head", head, "--format", "json", "-j", "1")
        assert one[0] in (0, 4)
        assert kz(history, monkeypatch, capsys, "--base", "c0", "--head", head, "--format", "json",
                  "-j", "3", "--engine", engine)[:2] == one[:2]


def test_progress_is_quiet_off_a_terminal_and_shown_on_one(history: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = kz(history, monkeypatch, capsys, "--base", "c1", "--head", "c2")
    assert (rc, err) == (0, "")
    import io

    from kzgit.cli.progress import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(Progress, "DELAY", 0.0)
    term = Terminal()
    monkeypatch.setattr("sys.stderr", term)
    monkeypatch.chdir(history)
    assert main(["diff", "--base", "c1", "--head", "c2", "--no-cache"]) == 0
    shown = term.getvalue()
    assert "\r\x1b[Kkzgit diff: 1/4 rendered, overlays/dev at c2" in shown
    assert shown.endswith("\r\x1b[K")   # erased at the end


def test_partial_clone_reads_through_git(history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """libgit2 cannot fetch the blobs a blobless clone left out; git's export can."""
    git("config", "uploadpack.allowFilter", "true", cwd=str(history))
    clone = tmp_path / "partial"
    git("clone", "--quiet", "--filter=blob:none", f"file://{history}", str(clone), cwd=str(tmp_path))
    git("fetch", "--quiet", "--tags", cwd=str(clone))
    expected = kz(history, monkeypatch, capsys, "--base", "c0", "--head", "c1")
    assert kz(clone, monkeypatch, capsys, "--base", "c0", "--head", "c1") == expected


@pytest.mark.parametrize("flags", [(), ("--enable-alpha-plugins",)], ids=["git-objects", "export"])
def test_revision_under_review_reads_nothing_outside_the_repository(
        flags: Tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], _isolated: Path) -> None:
    """Even with LoadRestrictionsNone, a link or a ../ path of the head cannot render a host file."""
    text = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: host-secret\n"
    # where ../../../secret.yaml from overlays/prod lands, for the repository and for an export
    for d in (tmp_path, _isolated):
        (d / "secret.yaml").write_text(text)
    repo = GitRepo.create(str(tmp_path / "s"),
                          {**BASE, ".kzgit.toml": "load-restrictor = \"LoadRestrictionsNone\"\n"})
    grant_user(os.environ["XDG_CONFIG_HOME"], load_restrictor="LoadRestrictionsNone")   # the user's grant
    repo.write({"overlays/prod/kustomization.yaml": "resources:\n- ../../base\n- ../../../secret.yaml\n",
                "overlays/dev/kustomization.yaml": "resources:\n- ../../base\n- link.yaml\n"})
    os.symlink(str(tmp_path / "secret.yaml"), os.path.join(repo.path, "overlays/dev/link.yaml"))
    repo.commit({}, "reach out")
    rc, out, err = kz(Path(repo.path), monkeypatch, capsys, "--base", "HEAD~1", "--head", "HEAD",
                      "--format", "json", *flags)
    (_isolated / "secret.yaml").unlink()
    assert rc == 4 and "host-secret" not in out + err
    roots = json.loads(out)["roots"]
    assert [(r["root"], r["status"]) for r in roots] == [("overlays/dev", "error"), ("overlays/prod", "error")]
    for r in roots:
        assert "outside the repository" in r["errors"][0]["message"]


def test_diff_follows_links_and_excluded_files_a_root_reaches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The diff's dependency graph is the hooks': exclude only keeps kustomizations from being
    roots, and a change to a file reached through a symbolic link or inside an excluded
    directory still reaches the root."""
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: {}\n"
    repo = GitRepo.create(str(tmp_path / "l"), {
        ".kzgit.toml": 'exclude = ["shared/**"]\n',
        "shared/kustomization.yaml": "resources:\n- cm.yaml\n",
        "shared/cm.yaml": cm.format("one"),
        "app/kustomization.yaml": "resources:\n- ../shared\n- linked.yaml\n",
        "app/data/cm2.yaml": cm.replace("name: cm", "name: cm2").format("x"),
    })
    os.symlink("data/cm2.yaml", os.path.join(repo.path, "app", "linked.yaml"))
    git("add", "-A", cwd=repo.path)
    git("commit", "-q", "-m", "link", cwd=repo.path)
    repo.tag("c0")
    repo.commit({"shared/cm.yaml": cm.format("two")})
    repo.tag("c1")
    repo.commit({"app/data/cm2.yaml": cm.replace("name: cm", "name: cm2").format("y")})
    repo.tag("c2")
    for base, head, changed in (("c0", "c1", "ConfigMap/cm"), ("c1", "c2", "ConfigMap/cm2")):
        rc, out, err = kz(Path(repo.path), monkeypatch, capsys, "--base", base, "--head", head, "--exit-code")
        assert rc == 1, (out, err)
        assert "root app: 1 changed" in out and f"changed {changed}\n" in out, out


def test_an_identical_configuration_is_no_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The configurations are compared as written: the names each side's parse carries for
    messages (``p0:.kzgit.toml``) are no difference (issue 33 item 6: a note on every pull
    request of a repository that pins a version)."""
    settings = 'kustomize-version = "5.8.1"\n[lint]\nwarnings = "off"\n[sandbox]\nmode = "auto"\n'
    repo = GitRepo.create(str(tmp_path / "n"), {**BASE, ".kzgit.toml": settings})
    repo.tag("n0")
    repo.commit({"base/service.yaml": BASE["base/service.yaml"].replace("80", "8080")}, "a change")
    repo.tag("n1")
    rc, out, _ = kz(Path(repo.path), monkeypatch, capsys, "--base", "n0", "--head", "n1", "--format", "json")
    assert rc == 0 and json.loads(out)["notes"] == []
    repo.commit({".kzgit.toml": settings.replace("5.8.1", "5.7.1")}, "another release")
    repo.tag("n2")
    rc, out, _ = kz(Path(repo.path), monkeypatch, capsys, "--base", "n1", "--head", "n2", "--format", "json")
    assert json.loads(out)["notes"][0].startswith("the kzgit configuration differs at n2")


def test_output_writes_the_report_to_a_file(history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = kz(history, monkeypatch, capsys, "--base", "c0", "--head", "c1", "--format", "json")
    report = tmp_path / "report.json"
    rc2, out2, _ = kz(history, monkeypatch, capsys, "--base", "c0", "--head", "c1", "--format", "json",
                      "--output", str(report))
    assert (rc2, out2) == (rc, "") and report.read_text() == out
    assert oct(report.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    rc, _, err = kz(history, monkeypatch, capsys, "--base", "c0", "--head", "c1", "-o",
                    str(tmp_path / "no/such/dir/r.txt"))
    assert rc == 2 and "--output" in err and "no/such/dir/r.txt" in err


def _umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old


def test_explain_names_the_change_that_set_each_added_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """``kzgit diff --explain`` (issue 36): an image changed by an overlay's images entry names
    that entry's line; a replica count changed by a patch file names the patch's line; in
    every format (the diff text carries it)."""
    files = {**BASE, "overlays/prod/kustomization.yaml": (
        "resources:\n- ../../base\nnamespace: prod\n"        # 1-3
        "images:\n- name: nginx\n  newTag: '1.25'\n")}       # 4-6
    repo = GitRepo.create(str(tmp_path / "x"), files)
    repo.tag("x0")
    repo.commit({"overlays/prod/kustomization.yaml": files["overlays/prod/kustomization.yaml"].replace(
        "'1.25'", "'1.27'") + "patches:\n- path: replicas.yaml\n",                     # 7-8
        "overlays/prod/replicas.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
                                       "spec:\n  replicas: 4\n"}, "bump")
    repo.tag("x1")
    rc, out, _ = kz(Path(repo.path), monkeypatch, capsys, "--base", "x0", "--head", "x1", "--explain")
    assert "+        image: nginx:1.27  # overlays/prod/kustomization.yaml:5 images[0]" in out, out
    assert "+  replicas: 4  # overlays/prod/replicas.yaml:6 patches[0]" in out
    rc, out, _ = kz(Path(repo.path), monkeypatch, capsys, "--base", "x0", "--head", "x1", "--explain",
                    "--format", "json")
    diffs = [r["diff"] for root in json.loads(out)["roots"] for r in root["resources"]]
    assert any("# overlays/prod/replicas.yaml:6 patches[0]" in d for d in diffs)
    rc, out, _ = kz(Path(repo.path), monkeypatch, capsys, "--base", "x0", "--head", "x1")
    assert "  # overlays/" not in out   # only when asked
