"""End to end with the real ``pre-commit`` tool: install kzgit's hooks in a git repo and commit.

One hook environment per test session: a snapshot of this checkout (its
package files as they are in the work tree) is committed to a temp repository,
and every test repo's ``.pre-commit-config.yaml`` points at that commit with a
shared ``PRE_COMMIT_HOME``, so pre-commit builds its venv and pip-installs
kzgit once.  HOME and the XDG dirs point into temp dirs; pip keeps its user
configuration through ``PIP_CONFIG_FILE``.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from helpers import (HOOKS_REPO, WEB_DEPLOYMENT, WIDGET_CRD, git_run as git, run, write_tree as write)

from precommit_session import Session

GOOD = HOOKS_REPO


def test_good_commit_passes(session: Session, tmp_path: Path) -> None:
    repo = session.repo(tmp_path / "r", GOOD)
    rc, out = session.commit(repo)
    assert rc == 0, out
    assert "kustomizations render (kzgit)" in out and "Passed" in out
    write(repo, {"base/cm.yaml": GOOD["base/cm.yaml"].replace("a: b", "a: c")})
    rc, out = session.commit(repo)
    assert rc == 0, out


def test_broken_overlay_is_refused_naming_it(session: Session, tmp_path: Path) -> None:
    repo = session.repo(tmp_path / "r", GOOD)
    assert session.commit(repo)[0] == 0
    (repo / "overlays/dev/patch.yaml").unlink()
    write(repo, {"overlays/dev/kustomization.yaml": GOOD["overlays/dev/kustomization.yaml"] + "# edit\n"})
    rc, out = session.commit(repo)
    assert rc == 1, out
    assert "overlays/dev: does not render" in out and "patch.yaml" in out
    assert "overlays/prod: does not render" not in out


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed: engine = 'kubectl' untested")
def test_broken_overlay_with_kubectl_engine(session: Session, tmp_path: Path) -> None:
    repo = session.repo(tmp_path / "r", {**GOOD, ".kzgit.toml": 'engine = "kubectl"\n'}, ["kzgit-render"])
    assert session.commit(repo)[0] == 0
    write(repo, {"overlays/prod/kustomization.yaml": "resources:\n- ../../nowhere\n"})
    rc, out = session.commit(repo)
    assert rc == 1 and "overlays/prod: does not render" in out, out


# A commit that only deletes or renames: pre-commit passes no file (it drops paths that no
# longer exist) and starts no hook whose files match nothing, so the hooks run always and ask
# git for the deletions themselves (issue 23, item 4).
GENERATED = {**GOOD, "apps/gen/kustomization.yaml": "configMapGenerator:\n- name: settings\n  envs:\n  - app.env\n",
             "apps/gen/app.env": "LEVEL=debug\n"}


@pytest.mark.parametrize("hook_id", ["kzgit-render", "kzgit-validate"])
@pytest.mark.parametrize("change,broken", [
    (["rm", "-q", "base/cm.yaml"], ["overlays/dev", "overlays/prod"]),
    (["rm", "-q", "overlays/dev/patch.yaml"], ["overlays/dev"]),
    (["rm", "-q", "apps/gen/app.env"], ["apps/gen"]),
    (["mv", "base", "lib"], ["overlays/dev", "overlays/prod"]),
], ids=["resource", "patch", "env-file", "renamed-base"])
def test_a_commit_that_only_deletes_or_renames_is_refused(
        session: Session, tmp_path: Path, hook_id: str, change: List[str], broken: List[str]) -> None:
    repo = session.repo(tmp_path / "r", GENERATED, [hook_id])
    rc, out = session.commit(repo)
    assert rc == 0, out
    git(repo, session.env, *change)
    rc, out = run(["git", "commit", "-q", "-m", "delete"], repo, session.env, timeout=300)
    assert rc == 1, out
    for root in broken:
        assert f"{root}: " in out and "does not render" in out, out
    assert "overlays/prod: " not in out or "overlays/prod" in broken, out


def test_a_commit_touching_no_kustomize_input_passes(session: Session, tmp_path: Path) -> None:
    repo = session.repo(tmp_path / "r", {**GOOD, "docs/notes.md": "notes\n"}, ["kzgit-render"])
    assert session.commit(repo)[0] == 0
    git(repo, session.env, "rm", "-q", "docs/notes.md")
    rc, out = run(["git", "commit", "-q", "-m", "docs"], repo, session.env, timeout=300)
    assert rc == 0 and "kustomizations render (kzgit)" in out and "Passed" in out, out


# A component nothing includes yet (microservices-demo's shop/components/*): its inline patch
# matches no resource on its own, which is no fault of the commit (issue 23, item 1).
ALLOYDB = ("apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- patch: |-\n"
           "    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: cm\n    data:\n      db: alloy\n")
WITH_COMPONENTS = {**GOOD, "components/alloydb/kustomization.yaml": ALLOYDB,
                   "components/tracing/kustomization.yaml": ALLOYDB.replace("db: alloy", "tracing: on"),
                   "overlays/traced/kustomization.yaml": "resources:\n- ../../base\ncomponents:\n- ../../components/tracing\n"}


@pytest.mark.parametrize("hook_id", ["kzgit-render", "kzgit-validate"])
def test_a_component_is_checked_through_the_roots_including_it(
        session: Session, tmp_path: Path, hook_id: str) -> None:
    repo = session.repo(tmp_path / "r", WITH_COMPONENTS, [hook_id])
    rc, out = session.commit(repo)
    assert rc == 0, out
    write(repo, {"components/tracing/kustomization.yaml": ALLOYDB.replace("kind: ConfigMap", "kind: Secret")})
    rc, out = session.commit(repo)
    assert rc == 1 and "overlays/traced: does not render" in out, out
    assert "components/tracing: does not render" not in out, out


def test_exclude_never_hides_a_change_a_root_reaches(session: Session, tmp_path: Path) -> None:
    """``exclude`` keeps components from being roots; a broken patch inside one that a root
    includes still fails the commit (issue 23, item 5)."""
    files = {**WITH_COMPONENTS, ".kzgit.toml": 'exclude = ["components/**"]\n',
             # the excluded component includes another one, outside the excluded directory
             "components/tracing/kustomization.yaml": ALLOYDB.replace("db: alloy", "tracing: on")
             + "components:\n- ../../lib/otel\n",
             "lib/otel/kustomization.yaml": ALLOYDB.replace("db: alloy", "otel: on")}
    repo = session.repo(tmp_path / "r", files, ["kzgit-render"])
    rc, out = session.commit(repo)
    assert rc == 0, out
    write(repo, {"lib/otel/kustomization.yaml": ALLOYDB.replace("kind: ConfigMap", "kind: Secret")})
    rc, out = session.commit(repo)
    assert rc == 1 and "overlays/traced: does not render" in out, out
    git(repo, session.env, "reset", "-q", "--hard")
    write(repo, {"components/tracing/kustomization.yaml": ALLOYDB.replace("kind: ConfigMap", "kind: Secret")})
    rc, out = session.commit(repo)
    assert rc == 1 and "overlays/traced: does not render" in out, out


def test_a_roots_glob_that_matches_nothing_refuses_the_commit(session: Session, tmp_path: Path) -> None:
    """A typo in ``roots`` made every hook pass having checked nothing (issue 23, item 6)."""
    repo = session.repo(tmp_path / "r", {**GOOD, ".kzgit.toml": 'roots = ["overlays/prod/kustomization.yaml"]\n'},
                        ["kzgit-render"])
    rc, out = session.commit(repo)
    assert rc == 1, out
    assert ".kzgit.toml: roots: 'overlays/prod/kustomization.yaml' selects no kustomization root" in out, out
    write(repo, {".kzgit.toml": 'roots = ["overlays/prod"]\n'})
    rc, out = session.commit(repo)
    assert rc == 0, out


def test_branch_ref_is_refused(session: Session, tmp_path: Path) -> None:
    repo = session.repo(tmp_path / "r", GOOD, ["kzgit-pinned-refs"])
    assert session.commit(repo)[0] == 0
    write(repo, {"overlays/prod/kustomization.yaml":
                 "resources:\n- ../../base\n- https://github.com/org/repo//deploy?ref=main\n"})
    rc, out = session.commit(repo)
    assert rc == 1, out
    assert ("overlays/prod/kustomization.yaml:3: https://github.com/org/repo//deploy?ref=main: "
            "ref 'main' does not look like a version") in out


def test_a_release_asset_is_pinned_by_its_tag(session: Session, tmp_path: Path) -> None:
    """Kubeflow's and Argo CD's manifests name release assets: no false alarm (issue 23, item 2)."""
    asset = "https://github.com/kubernetes-sigs/jobset/releases/download/v0.11.0/manifests.yaml"
    repo = session.repo(tmp_path / "r", {**GOOD, "overlays/prod/kustomization.yaml":
                                         f"resources:\n- ../../base\n- {asset}\n"}, ["kzgit-pinned-refs"])
    rc, out = session.commit(repo)
    assert rc == 0, out
    write(repo, {"overlays/prod/kustomization.yaml":
                 "resources:\n- ../../base\n- https://raw.githubusercontent.com/org/repo/main/app.yaml\n"})
    rc, out = session.commit(repo)
    assert rc == 1 and ("overlays/prod/kustomization.yaml:3: https://raw.githubusercontent.com/org/repo/main/app.yaml: "
                        "'main' in the path does not look like a version") in out, out


def test_executable_downloaded_binary_is_fixed(session: Session, tmp_path: Path) -> None:
    repo = session.repo(tmp_path / "r", GOOD, ["kzgit-exec-bits"])
    assert session.commit(repo)[0] == 0
    tool = repo / "copy/localized-files/github.com/o/r/v1/tool"
    write(repo, {"copy/localized-files/github.com/o/r/v1/tool": "#!/bin/sh\necho pwned\n"})
    tool.chmod(0o755)
    rc, out = session.commit(repo)
    assert rc == 1, out
    assert "copy/localized-files/github.com/o/r/v1/tool: removed executable bit" in out
    assert not tool.stat().st_mode & 0o111
    assert git(repo, session.env, "ls-files", "-s", "--", str(tool.relative_to(repo))).startswith("100644")
    rc, out = session.commit(repo)   # the fixed state commits
    assert rc == 0, out
    tree = git(repo, session.env, "ls-tree", "-r", "HEAD", "--", "copy")
    assert tree.startswith("100644")


def test_stale_localized_copy_is_refused(session: Session, tmp_path: Path) -> None:
    repo = session.repo(tmp_path / "r", GOOD, ["kzgit-localized-sync"])
    assert session.commit(repo)[0] == 0
    rc, out = run([sys.executable, "-m", "kzgit", "localize", "overlays/prod", "copy", "--scope", "."], repo, session.env)
    assert rc == 0, out
    assert session.commit(repo)[0] == 0
    write(repo, {"base/cm.yaml": GOOD["base/cm.yaml"].replace("a: b", "a: changed")})
    rc, out = session.commit(repo)
    assert rc == 1 and "kzgit rebuild" in out, out
    # a team with kzgit only through pre-commit rebuilds with the manual-stage hook
    write(repo, {".pre-commit-config.yaml": session.config(["kzgit-localized-sync", "kzgit-rebuild"])})
    git(repo, session.env, "add", ".pre-commit-config.yaml")
    rc, out = run([sys.executable, "-m", "pre_commit", "run", "--hook-stage", "manual", "kzgit-rebuild"],
                  repo, session.env, timeout=300)
    assert "rebuild localized copies (kzgit)" in out and "files were modified by this hook" in out, out
    assert "a: changed" in (repo / "copy" / "base" / "cm.yaml").read_text()
    rc, out = session.commit(repo)
    assert rc == 0, out


def test_run_all_files_checks_every_root(session: Session, tmp_path: Path) -> None:
    repo = session.repo(tmp_path / "r", GOOD, ["kzgit-render"])
    write(repo, {"overlays/prod/kustomization.yaml": "resources:\n- ../../nowhere\n"})
    git(repo, session.env, "add", "-A")
    rc, out = run(["git", "commit", "-q", "--no-verify", "-m", "sneak"], repo, session.env)
    assert rc == 0, out
    rc, out = run([sys.executable, "-m", "pre_commit", "run", "--all-files"], repo, session.env, timeout=300)
    assert rc == 1 and "overlays/prod: does not render" in out, out


# -- kzgit-validate -------------------------------------------------------------------------

DEPLOY = WEB_DEPLOYMENT
VALID: Dict[str, str] = {
    "base/kustomization.yaml": "resources:\n- deploy.yaml\n",
    "base/deploy.yaml": DEPLOY,
    "overlays/prod/kustomization.yaml": "resources:\n- ../../base\npatches:\n- path: replicas.yaml\n",
    "overlays/prod/replicas.yaml": ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
                                    "spec:\n  replicas: 3\n"),
}


def test_validate_refuses_a_typo_in_a_patch_naming_the_patch(session: Session, tmp_path: Path) -> None:
    repo = session.repo(tmp_path / "r", VALID, ["kzgit-validate"])
    rc, out = session.commit(repo)
    assert rc == 0, out
    write(repo, {"overlays/prod/replicas.yaml": VALID["overlays/prod/replicas.yaml"].replace("replicas", "replica")})
    rc, out = session.commit(repo)
    assert rc == 1, out
    assert ('overlays/prod: Deployment/web: /spec/replica: unknown field "replica" '
            '(did you mean "replicas"?) (overlays/prod/replicas.yaml:6)') in out


def test_validate_checks_a_custom_resource_against_a_crd_of_the_repo(session: Session, tmp_path: Path) -> None:
    files = {**VALID, "crds/kustomization.yaml": "resources:\n- widget-crd.yaml\n", "crds/widget-crd.yaml": WIDGET_CRD,
             "apps/kustomization.yaml": "resources:\n- widget.yaml\n",
             "apps/widget.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size: 2\n"}
    repo = session.repo(tmp_path / "r", files, ["kzgit-validate"])
    rc, out = session.commit(repo)
    assert rc == 0, out
    write(repo, {"apps/widget.yaml": files["apps/widget.yaml"].replace("size: 2", "size: 0")})
    rc, out = session.commit(repo)
    assert rc == 1, out
    assert "apps: Widget/w: /spec/size: must be at least 1, got 0 (apps/widget.yaml:6)" in out


def test_validate_removed_api_version_depends_on_the_pinned_release(session: Session, tmp_path: Path) -> None:
    fs = ("apiVersion: flowcontrol.apiserver.k8s.io/v1beta2\nkind: FlowSchema\nmetadata:\n  name: fs\n"
          "spec:\n  priorityLevelConfiguration:\n    name: global-default\n")
    files = {"flow/kustomization.yaml": "resources:\n- fs.yaml\n", "flow/fs.yaml": fs,
             ".kzgit.toml": '[validate]\nkubernetes-version = "1.29"\n'}
    repo = session.repo(tmp_path / "r", files, ["kzgit-validate"])
    rc, out = session.commit(repo)
    assert rc == 1, out
    assert ("flow: FlowSchema/fs: /apiVersion: FlowSchema flowcontrol.apiserver.k8s.io/v1beta2 is not served "
            "by Kubernetes 1.29 (removed in 1.29, deprecated since 1.26; use flowcontrol.apiserver.k8s.io/v1) "
            "(flow/fs.yaml:1)") in out
    write(repo, {".kzgit.toml": '[validate]\nkubernetes-version = "1.28"\n'})
    rc, out = session.commit(repo)   # still served in 1.28: a warning, which does not fail the commit
    assert rc == 0, out


def test_validate_warns_about_an_unknown_kind_then_refuses_it(session: Session, tmp_path: Path) -> None:
    files = {"app/kustomization.yaml": "resources:\n- thing.yaml\n",
             "app/thing.yaml": "apiVersion: other.io/v1\nkind: Thing\nmetadata:\n  name: t\n"}
    repo = session.repo(tmp_path / "r", files, ["kzgit-validate"])
    rc, out = session.commit(repo)
    assert rc == 0, out
    rc, out = run([sys.executable, "-m", "pre_commit", "run", "kzgit-validate", "--all-files", "--verbose"],
                  repo, session.env, timeout=300)
    assert rc == 0 and "app: Thing/t: warning: no schema for Thing other.io/v1 (app/thing.yaml:1)" in out, out
    write(repo, {".kzgit.toml": '[validate]\nmissing-schemas = "error"\n'})
    rc, out = session.commit(repo)
    assert rc == 1 and "app: Thing/t: no schema for Thing other.io/v1 (app/thing.yaml:1)" in out, out


# A KRM exec function that steals the user's SSH key: it copies it to STOLEN (possible only
# unconfined) and fails the render when it cannot read it (so a passing commit means it did).
_STEAL = '''#!/usr/bin/env python3
import os, sys
sys.stdin.read()
try:
    key = open(os.path.join(HOME, ".ssh", "id_ed25519")).read()   # plugins get a HOME of their own
except OSError as e:
    sys.exit("no key: %s" % e)
try:
    open(STOLEN, "w").write(key)
except OSError:
    pass
print("apiVersion: config.kubernetes.io/v1\\nkind: ResourceList\\nitems:\\n- apiVersion: v1\\n"
      "  kind: ConfigMap\\n  metadata:\\n    name: loot\\n  data:\\n    took: 'yes'\\n")
'''
_FN = ("apiVersion: example.com/v1\nkind: Steal\nmetadata:\n  name: s\n  annotations:\n"
       "    config.kubernetes.io/function: |\n      exec:\n        path: ./fn/steal\n")


@pytest.mark.parametrize("widening,key,grant", [
    ('mode = "off"', "sandbox.mode", 'mode = "off"'),
    ('allow-read = ["~/.ssh"]', "sandbox.allow-read", 'allow-read = ["~/.ssh"]'),
])
def test_a_branch_cannot_widen_its_own_sandbox(session: Session, tmp_path: Path, widening: str,
                                               key: str, grant: str) -> None:
    """Issue 24: a branch adds an exec function that reads ~/.ssh and, in the same change,
    widens the sandbox in .kzgit.toml.  The next commit of whoever checks it out runs the render
    hook: it fails naming the key and how to grant it, and the key is not read.  The user's
    own ~/.config/kzgit/config.toml grants it."""
    from kzgit import sandbox
    if key == "sandbox.allow-read" and not sandbox.available()[0]:
        pytest.skip("without Landlock an allow-read widens nothing")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY----- victim\n")
    stolen = tmp_path / "stolen"
    env = dict(session.env, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_CACHE_HOME=str(home / ".cache"))
    repo = session.repo(tmp_path / "r", {"app/kustomization.yaml": "resources:\n- cm.yaml\n",
                                         "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"},
                        ["kzgit-render"])
    git(repo, env, "add", "-A")
    git(repo, env, "commit", "-q", "-m", "base")
    # the branch: the plugin and the widening, committed without hooks by its author
    write(repo, {".kzgit.toml": f"enable-alpha-plugins = true\nenable-exec = true\n\n[sandbox]\n{widening}\n",
                 "app/kustomization.yaml": "resources:\n- cm.yaml\ngenerators:\n- gen.yaml\n",
                 "app/gen.yaml": _FN, "app/fn/steal": _STEAL.replace("STOLEN", repr(str(stolen)))
                                                             .replace("HOME,", repr(str(home)) + ",")})
    (repo / "app" / "fn" / "steal").chmod(0o755)
    git(repo, env, "add", "-A")
    git(repo, env, "commit", "-q", "-n", "-m", "add a generator")
    # the victim lets repositories turn plugins on (issue 32), not widen the sandbox
    (home / ".config" / "kzgit").mkdir(parents=True)
    user = "enable-alpha-plugins = true\nenable-exec = true\n"
    (home / ".config" / "kzgit" / "config.toml").write_text(user)
    # the victim's next commit there
    write(repo, {"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm2\n"})
    git(repo, env, "add", "-A")
    rc, out = run(["git", "commit", "-q", "-m", "edit"], repo, env, timeout=300)
    assert rc == 1, out
    assert f"'{key}'" in out and "widens the plugin sandbox" in out and grant in out, out
    assert str(home / ".config" / "kzgit" / "config.toml") in out, out
    assert not stolen.exists() and "victim" not in out
    # granted by the user: the same commit passes (and, unconfined, the function takes the key)
    (home / ".config" / "kzgit" / "config.toml").write_text(f"{user}[sandbox]\n{grant}\n")
    rc, out = run(["git", "commit", "-q", "-m", "edit"], repo, env, timeout=300)
    assert rc == 0, out
    assert stolen.exists() == (key == "sandbox.mode")


# kzgit-lint: a commit introducing a patch whose target selects nothing is refused naming file,
# line and rule; silenced by its ignore comment it passes; [lint] sets the severity.
LINT_HEAD = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
LINT_GOOD = {
    "base/kustomization.yaml": LINT_HEAD + "resources:\n- deploy.yaml\n",
    "base/deploy.yaml": WEB_DEPLOYMENT,
    "app/kustomization.yaml": LINT_HEAD + "resources:\n- ../base\n",
}
LINT_PATCH = ("patches:\n- target:\n    kind: StatefulSet\n  patch: |-\n    - op: add\n"
              "      path: /metadata/labels/x\n      value: y\n")


def test_lint_hook_refuses_then_passes_when_silenced(session: Session, tmp_path: Path) -> None:
    repo = session.repo(tmp_path / "r", LINT_GOOD, ["kzgit-lint"])
    rc, out = session.commit(repo)
    assert rc == 0, out
    assert "kustomizations lint clean (kzgit)" in out and "Passed" in out
    write(repo, {"app/kustomization.yaml": LINT_GOOD["app/kustomization.yaml"] + LINT_PATCH})
    rc, out = session.commit(repo)
    assert rc == 1, out
    assert ("app/kustomization.yaml:6: error: patches[0].target: target {\"kind\": \"StatefulSet\"} "
            "selects no resource when app is built") in out and "[patch-matches-nothing]" in out
    write(repo, {"app/kustomization.yaml": LINT_GOOD["app/kustomization.yaml"]
                 + LINT_PATCH.replace("- target:", "- target:   # kzgit: ignore[patch-matches-nothing]")})
    rc, out = session.commit(repo)
    assert rc == 0, out


def test_lint_hook_follows_the_lint_table(session: Session, tmp_path: Path) -> None:
    files = {**LINT_GOOD, "app/kustomization.yaml": LINT_GOOD["app/kustomization.yaml"] + LINT_PATCH}
    repo = session.repo(tmp_path / "r", {**files, ".kzgit.toml": '[lint]\npatch-matches-nothing = "warning"\n'},
                        ["kzgit-lint"])
    rc, out = session.commit(repo)
    assert rc == 0, out
    write(repo, {".kzgit.toml": '[lint]\npatch-matches-nothing = "error"\n',
                 "app/kustomization.yaml": files["app/kustomization.yaml"] + "# touched\n"})
    rc, out = session.commit(repo)
    assert rc == 1 and "[patch-matches-nothing]" in out, out


def test_a_break_is_reported_once_per_commit(session: Session, tmp_path: Path) -> None:
    """Issue 33 item 6: a deleted base file breaks every overlay; kzgit-render says why (the
    whole chain), and kzgit-validate and kzgit-lint, run after it by the same pre-commit, fail
    with one line pointing there instead of saying it again."""
    hooks = ["kzgit-render", "kzgit-validate", "kzgit-lint"]
    repo = session.repo(tmp_path / "r", GOOD, hooks)
    assert session.commit(repo)[0] == 0
    (repo / "base/cm.yaml").unlink()
    write(repo, {"base/kustomization.yaml": GOOD["base/kustomization.yaml"] + "# edit\n"})
    rc, out = session.commit(repo)
    assert rc == 1, out
    lead = "base/kustomization.yaml:2: resources: 'cm.yaml' does not exist"
    assert out.count(lead) == 2, out   # render: overlays/dev, then overlays/prod "(as ..., above)"
    assert "evalsymlink failure" in out, out   # the chain, once
    assert "overlays/dev, overlays/prod: do not render (kzgit-render said why, above)" in out, out
    assert ("base/kustomization.yaml:2: error: resources: overlays/dev and 1 other root "
            "(overlays/prod) do not render (kzgit-render said why, above) [render-error]") in out, out
    assert out.count("Failed") == 3, out


def test_without_render_validate_says_the_break_itself(session: Session, tmp_path: Path) -> None:
    repo = session.repo(tmp_path / "r", GOOD, ["kzgit-validate", "kzgit-lint"])
    assert session.commit(repo)[0] == 0
    (repo / "base/cm.yaml").unlink()
    write(repo, {"base/kustomization.yaml": GOOD["base/kustomization.yaml"] + "# edit\n"})
    rc, out = session.commit(repo)
    assert rc == 1, out
    assert "overlays/dev: does not render: base/kustomization.yaml:2: resources: 'cm.yaml' does not exist" in out
    assert "said why" not in out, out
