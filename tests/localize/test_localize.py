"""End to end: ``kzgit localize`` on real trees and real git repositories.

Remote repositories are local git repos reached over ``file://`` and over a
loopback smart-HTTP server through ``insteadOf`` (tests/gitserver.py); remote
files come from the same server's ``/raw/`` route.  Nothing leaves 127.0.0.1.
The trees follow the proposal's user stories (proposals/22-04-localize-command.md).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
from typing import Dict, Iterator, List, Optional, Tuple

import pytest

from gitserver import GitHTTPServer, GitRepo, configmap, insteadof_env, offline_home
from helpers import work_dir
from helpers import write_tree as write
from kzgit.cli.main import main
from kzgit.localize import (LOCK_FILE_NAME, LocalizeError, VerificationError, check_copy, localize,
                            read_lock)

KUBECTL = shutil.which("kubectl")

POD = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod\nspec:\n  containers:\n  - name: c\n    image: nginx\n"
DEPLOYMENT = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: the-deployment\nspec:\n"
              "  replicas: 3\n  template:\n    spec:\n      containers:\n      - name: app\n        image: app:1\n")
CONFIGMAP = configmap("the-map", altGreeting="Good Morning!", enableRisky="false")

# kubernetes-sigs/kustomize examples/multibases at v1.0.6 (shape of the proposal's Story 1 tree)
MULTIBASES = {
    "examples/multibases/kustomization.yaml": "resources:\n- dev\n- staging\n- production\n",
    "examples/multibases/base/kustomization.yaml": "resources:\n- pod.yaml\n",
    "examples/multibases/base/pod.yaml": POD,
    "examples/multibases/dev/kustomization.yaml": "namePrefix: dev-\nresources:\n- ../base\n",
    "examples/multibases/staging/kustomization.yaml": "namePrefix: staging-\nresources:\n- ../base\n",
    "examples/multibases/production/kustomization.yaml": "namePrefix: prod-\nresources:\n- ../base\n",
    "examples/helloWorld/deployment.yaml": DEPLOYMENT,
    "examples/helloWorld/configMap.yaml": CONFIGMAP,
    "README.md": "not referenced\n",
}


# -- fixtures ------------------------------------------------------------------------------------

@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: "os.PathLike[str]") -> str:
    return offline_home(monkeypatch, tmp_path)


@pytest.fixture
def tmp(tmp_path: "os.PathLike[str]", monkeypatch: pytest.MonkeyPatch) -> str:
    return work_dir(tmp_path, monkeypatch)


@pytest.fixture
def server(tmp_path: "os.PathLike[str]", monkeypatch: pytest.MonkeyPatch) -> Iterator[Tuple[GitHTTPServer, str]]:
    """A loopback server for ``<root>/srv`` (git) and ``<root>/raw`` (files); github.com mapped onto it."""
    root = os.path.realpath(os.fspath(tmp_path))
    srv, raw = os.path.join(root, "srv"), os.path.join(root, "raw")
    os.makedirs(srv)
    os.makedirs(raw)
    s = GitHTTPServer(srv, raw).start()
    for k, v in insteadof_env({"https://github.com/": s.url + "/git/"}).items():
        monkeypatch.setenv(k, v)
    try:
        yield s, root
    finally:
        s.stop()


def read(path: str) -> str:
    with open(path) as f:
        return f.read()


def tree(root: str) -> List[str]:
    out = []
    for d, _dirs, files in os.walk(root):
        for n in files:
            out.append(os.path.relpath(os.path.join(d, n), root))
    return sorted(out)


def snapshot(root: str) -> Dict[str, Tuple[int, str]]:
    snap = {}
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            st = os.lstat(p)
            h = ""
            if stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    h = hashlib.sha256(f.read()).hexdigest()
            elif stat.S_ISLNK(st.st_mode):
                h = os.readlink(p)
            snap[os.path.relpath(p, root)] = (st.st_mode, h)
    return snap


def kustomize_repo(srv: str) -> GitRepo:
    repo = GitRepo.create(os.path.join(srv, "kubernetes-sigs", "kustomize"), MULTIBASES)
    repo.tag("v1.0.6")
    return repo


def story1(server: Tuple[GitHTTPServer, str], work: str) -> str:
    s, root = server
    kustomize_repo(os.path.join(root, "srv"))
    write(os.path.join(root, "raw"), {"kubernetes-sigs/kustomize/v1.0.6/" + k: v for k, v in MULTIBASES.items()})
    raw = s.url + "/raw/kubernetes-sigs/kustomize/v1.0.6/examples/helloWorld/"
    write(work, {
        "example/overlay/kustomization.yaml": f"resources:\n  - ../base\n  - {raw}deployment.yaml\n",
        "example/base/kustomization.yaml": (
            "# the shared base\nresources:\n  # a remote root, pinned\n"
            "  - https://github.com/kubernetes-sigs/kustomize//examples/multibases?ref=v1.0.6\n"
            f"  - {raw}configMap.yaml  # a remote file\n"),
    })
    return raw


# -- the proposal's user stories ---------------------------------------------------------------------

def test_story1_local_overlay_with_scope(server: Tuple[GitHTTPServer, str], tmp: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    story1(server, tmp)
    before = snapshot(os.path.join(tmp, "example"))
    assert main(["localize", "example/overlay", "--scope", "example"]) == 0
    out = capsys.readouterr()
    assert "SUCCESS: example/overlay, localized-overlay produce same kustomize build output" in out.out
    assert snapshot(os.path.join(tmp, "example")) == before
    mb = "localized-files/github.com/kubernetes-sigs/kustomize/v1.0.6/examples/multibases/"
    hw = "localized-files/127.0.0.1/raw/kubernetes-sigs/kustomize/v1.0.6/examples/helloWorld/"
    assert tree(os.path.join(tmp, "localized-overlay")) == sorted([
        LOCK_FILE_NAME,
        "base/kustomization.yaml",
        "base/" + hw + "configMap.yaml",
        "base/" + mb + "base/kustomization.yaml",
        "base/" + mb + "base/pod.yaml",
        "base/" + mb + "dev/kustomization.yaml",
        "base/" + mb + "kustomization.yaml",
        "base/" + mb + "production/kustomization.yaml",
        "base/" + mb + "staging/kustomization.yaml",
        "overlay/kustomization.yaml",
        "overlay/" + hw + "deployment.yaml",
    ])
    # only the reference strings change; comments and indentation stay
    assert read(os.path.join(tmp, "localized-overlay/base/kustomization.yaml")) == (
        "# the shared base\nresources:\n  # a remote root, pinned\n"
        f"  - {mb.rstrip('/')}\n  - {hw}configMap.yaml  # a remote file\n")
    assert read(os.path.join(tmp, "localized-overlay/overlay/kustomization.yaml")) == (
        f"resources:\n  - ../base\n  - {hw}deployment.yaml\n")
    # the copy builds offline, with kzgit and with kubectl, to the original's bytes
    from kzgit.builder import BuildOptions, build
    original = build("example/overlay").to_yaml()
    assert build("localized-overlay/overlay", BuildOptions(offline=True)).to_yaml() == original
    if KUBECTL:
        r = subprocess.run([KUBECTL, "kustomize", "localized-overlay/overlay"], capture_output=True, timeout=120)
        assert r.returncode == 0 and r.stdout.decode() == original, r.stderr


def test_story2_remote_target(server: Tuple[GitHTTPServer, str], tmp: str,
                              capsys: pytest.CaptureFixture[str]) -> None:
    s, root = server
    kustomize_repo(os.path.join(root, "srv"))
    test_repo = GitRepo.create(os.path.join(root, "srv", "annasong20", "kustomize-test.git"), {
        "kustomization.yaml": "resources:\n- https://github.com/kubernetes-sigs/kustomize//examples/multibases?ref=v1.0.6\n",
        "unreferenced.yaml": POD})
    test_repo.tag("v1.0.0")
    url = "https://github.com/annasong20/kustomize-test.git?ref=v1.0.0"
    assert main(["localize", url]) == 0
    assert f"SUCCESS: {url}, localized-kustomize-test-v1.0.0 produce same kustomize build output" in \
        capsys.readouterr().out
    nd = os.path.join(tmp, "localized-kustomize-test-v1.0.0")
    mb = "localized-files/github.com/kubernetes-sigs/kustomize/v1.0.6/examples/multibases"
    assert tree(nd) == sorted([LOCK_FILE_NAME, "kustomization.yaml"] + [
        f"{mb}/{p}" for p in ("base/kustomization.yaml", "base/pod.yaml", "dev/kustomization.yaml",
                              "kustomization.yaml", "production/kustomization.yaml",
                              "staging/kustomization.yaml")])
    assert read(os.path.join(nd, "kustomization.yaml")) == f"resources:\n- {mb}\n"
    lock = read_lock(nd)
    assert lock["target"] == url and lock["target_commit"] == test_repo.head()
    assert [(r["url"], r["ref"]) for r in lock["remotes"]] == [
        ("https://github.com/annasong20/kustomize-test.git?ref=v1.0.0", "v1.0.0"),
        ("https://github.com/kubernetes-sigs/kustomize//examples/multibases?ref=v1.0.6", "v1.0.6")]


# -- file:// remotes, KRM exec binaries, kubectl ---------------------------------------------------

def test_file_remote_and_exec_binary_stripped(tmp: str, capsys: pytest.CaptureFixture[str]) -> None:
    fn = GitRepo.create(os.path.normpath(os.path.join(tmp, "..", "fnrepo")), {
        "fn/kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- fn.yaml\n",
        "fn/cm.yaml": configmap("cm", a="b"),
        "fn/fn.yaml": ("apiVersion: example.com/v1\nkind: Labeler\nmetadata:\n  name: labeler\n"
                       "  annotations:\n    config.kubernetes.io/function: |\n      exec:\n"
                       "        path: ./labeler.sh\n"),
        "fn/labeler.sh": "#!/bin/sh\ncat\n",
    })
    os.chmod(os.path.join(fn.path, "fn/labeler.sh"), 0o755)
    fn.commit({}, "exec bit")
    fn.tag("v1")
    write(tmp, {"app/kustomization.yaml": f"resources:\n- {fn.file_url('fn', 'v1')}\n"})
    assert main(["localize", "app"]) == 0
    out = capsys.readouterr()
    host = "localized-files/file-schemed" + fn.path + "/v1/fn"
    binary = os.path.join(tmp, "localized-app", host, "labeler.sh")
    assert read(binary) == "#!/bin/sh\ncat\n"
    assert os.stat(binary).st_mode & 0o111 == 0, "downloaded exec binary keeps an exec bit"
    assert "labeler.sh" in out.err and "chmod +x" in out.err
    assert "[reviewed-executables] of .kzgit.toml" in out.err   # how a reviewed one keeps its bit
    assert "--enable-exec" in out.out and "SUCCESS" not in out.out   # next steps, no verification
    assert read_lock(os.path.join(tmp, "localized-app"))["files"][host + "/labeler.sh"]["executable_stripped"]


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH: the kubectl comparison cannot run")
def test_copy_builds_with_kubectl_like_original(tmp: str) -> None:
    lib = GitRepo.create(os.path.normpath(os.path.join(tmp, "..", "lib")), {
        "svc/kustomization.yaml": "namePrefix: lib-\nresources:\n- cm.yaml\n", "svc/cm.yaml": configmap("x", k="v")})
    lib.tag("v2")
    write(tmp, {"a/overlay/kustomization.yaml": f"resources:\n- ../base\n- {lib.file_url('svc', 'v2')}\nnamespace: ns\n",
                "a/base/kustomization.yaml": "resources:\n- pod.yaml\nconfigMapGenerator:\n- name: g\n  files:\n  - k=data.txt\n",
                "a/base/pod.yaml": POD, "a/base/data.txt": "hello\n"})
    localize("a/overlay", "copy", scope="a")
    assert KUBECTL is not None
    orig = subprocess.run([KUBECTL, "kustomize", "a/overlay"], capture_output=True, timeout=120)
    copy = subprocess.run([KUBECTL, "kustomize", "copy/overlay"], capture_output=True, timeout=120)
    assert orig.returncode == 0, orig.stderr
    assert copy.returncode == 0, copy.stderr
    assert copy.stdout == orig.stdout


# -- error cases of the proposal; nothing left behind, target untouched ---------------------------------

def _fails(tmp: str, args: List[str], words: List[str], capsys: pytest.CaptureFixture[str],
           newdir: Optional[str] = None) -> str:
    before = snapshot(tmp)
    rc = main(["localize", *args])
    err = capsys.readouterr().err
    assert rc == 1, err
    assert "Traceback" not in err
    for w in words:
        assert w in err, (w, err)
    assert snapshot(tmp) == before, "a failing localize changed the tree or left files behind"
    return err


def test_error_needs_load_restrictions_none(tmp: str, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp, {"t/kustomization.yaml": "resources:\n- ../pod.yaml\n", "pod.yaml": POD})
    _fails(tmp, ["t"], ["pod.yaml", "not in or below"], capsys)


def test_error_newdir_exists(tmp: str, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp, {"t/kustomization.yaml": "namePrefix: a-\n", "dst/keep": "x"})
    _fails(tmp, ["t", "dst"], ["already exists"], capsys)


def test_error_newdir_parent_missing_names_the_flag(tmp: str, capsys: pytest.CaptureFixture[str]) -> None:
    # kustomize's default (TestBadArgs/dst_in_non-existing_dir): the parent must exist
    write(tmp, {"t/kustomization.yaml": "namePrefix: a-\n"})
    err = _fails(tmp, ["t", "vendor/copy"], ["parent directory 'vendor' does not exist"], capsys)
    assert "TIP: pass --parents to create 'vendor'" in err


def test_parents_creates_the_missing_directories(tmp: str, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp, {"t/kustomization.yaml": "resources:\n- pod.yaml\n", "t/pod.yaml": POD})
    assert main(["localize", "t", "vendor/a/copy", "--parents", "--no-verify"]) == 0, capsys.readouterr().err
    assert os.path.isfile(os.path.join(tmp, "vendor/a/copy/pod.yaml"))


def test_parents_removes_what_it_created_when_localize_fails(tmp: str, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp, {"t/kustomization.yaml": "resources:\n- ../pod.yaml\n", "pod.yaml": POD, "vendor/keep": "x"})
    # vendor/ existed and stays; vendor/a and vendor/a/b were created and are removed
    _fails(tmp, ["t", "vendor/a/b/copy", "--parents"], ["not in or below"], capsys)


def test_parents_refuses_a_parent_that_is_a_file(tmp: str, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp, {"t/kustomization.yaml": "namePrefix: a-\n", "vendor": "a file"})
    _fails(tmp, ["t", "vendor/copy", "--parents"], ["parent directory 'vendor' is not a directory"], capsys)


def test_error_scope_with_remote_target(tmp: str, capsys: pytest.CaptureFixture[str]) -> None:
    repo = GitRepo.create(os.path.normpath(os.path.join(tmp, "..", "r")), {"k/kustomization.yaml": "namePrefix: a-\n"})
    repo.tag("v1")
    _fails(tmp, [repo.file_url("k", "v1"), "--scope", "."], ["scope", "remote"], capsys)


def test_error_scope_does_not_contain_target(tmp: str, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp, {"t/kustomization.yaml": "namePrefix: a-\n", "other/x": ""})
    _fails(tmp, ["t", "--scope", "other"], ["does not contain target"], capsys)


def test_error_reference_leaves_scope(tmp: str, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp, {"t/kustomization.yaml": "resources:\n- ../base\n", "base/kustomization.yaml": "namePrefix: a-\n"})
    _fails(tmp, ["t"], ["outside localize scope"], capsys)


def test_error_symlink_leaves_scope(tmp: str, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp, {"t/kustomization.yaml": "resources:\n- pod.yaml\n", "secret/pod.yaml": POD})
    os.symlink(os.path.join(tmp, "secret/pod.yaml"), os.path.join(tmp, "t/pod.yaml"))
    _fails(tmp, ["t"], ["secret/pod.yaml"], capsys)


def test_error_remote_without_version(tmp: str, capsys: pytest.CaptureFixture[str]) -> None:
    repo = GitRepo.create(os.path.normpath(os.path.join(tmp, "..", "r")), {"k/kustomization.yaml": "namePrefix: a-\n"})
    write(tmp, {"t/kustomization.yaml": f"resources:\n- {repo.file_url('k')}\n"})
    _fails(tmp, ["t"], ["missing ref", "version"], capsys)
    _fails(tmp, [repo.file_url("k")], ["missing ref"], capsys)


def test_error_localized_files_exists(server: Tuple[GitHTTPServer, str], tmp: str,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    s, root = server
    write(os.path.join(root, "raw"), {"pod.yaml": POD})
    write(tmp, {"t/kustomization.yaml": f"resources:\n- {s.url}/raw/pod.yaml\n", "t/localized-files/x": ""})
    _fails(tmp, ["t"], ["localized-files"], capsys)


def test_error_cycle(tmp: str, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp, {"t/kustomization.yaml": "resources:\n- sub\n", "t/sub/kustomization.yaml": "resources:\n- ..\n"})
    _fails(tmp, ["t"], ["cycle"], capsys)


class _Engine:
    """A verification engine that renders the copy differently (or is interrupted)."""

    name = "stub"

    def __init__(self, interrupt: bool = False) -> None:
        self.interrupt = interrupt
        self.calls: List[str] = []

    def render(self, path: str, options: object) -> str:
        self.calls.append(path)
        if self.interrupt and len(self.calls) == 2:
            raise KeyboardInterrupt
        return "kind: A\n" if len(self.calls) == 1 else "kind: B\n"


def test_error_verification_mismatch(tmp: str) -> None:
    write(tmp, {"t/kustomization.yaml": "namePrefix: a-\n"})
    before = snapshot(tmp)
    with pytest.raises(VerificationError, match="differ after localization"):
        localize("t", engine=_Engine())
    assert snapshot(tmp) == before


def test_interrupt_leaves_nothing(tmp: str) -> None:
    write(tmp, {"t/kustomization.yaml": "namePrefix: a-\n"})
    before = snapshot(tmp)
    with pytest.raises(KeyboardInterrupt):
        localize("t", "dst", engine=_Engine(interrupt=True))
    assert snapshot(tmp) == before


def test_newdir_inside_target_is_legal(tmp: str, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp, {"t/kustomization.yaml": "resources:\n- pod.yaml\n", "t/pod.yaml": POD})
    monkeypatch.chdir(os.path.join(tmp, "t"))
    r = localize(".")
    assert r.verified and os.path.isdir(os.path.join(tmp, "t", "localized-t"))
    assert sorted(os.listdir(os.path.join(tmp, "t"))) == ["kustomization.yaml", "localized-t", "pod.yaml"]


def test_every_reference_field_and_only_referenced_files(tmp: str) -> None:
    write(tmp, {
        "t/kustomization.yaml": (
            "resources:\n- ./pod.yaml  # keep ./\n- " + tmp + "/t/abs.yaml\n"
            "configMapGenerator:\n- name: c\n  envs: [a.env]\n  files:\n  - key=f.txt\n"
            "patches:\n- path: patches/p.yaml\n"
            "replacements:\n- path: r.yaml\n"
            "transformers:\n- |\n  apiVersion: builtin\n  kind: PatchTransformer\n  metadata:\n    name: p\n"
            "  path: patches/../patches/p2.yaml\n"),
        "t/pod.yaml": POD, "t/abs.yaml": configmap("abs"), "t/a.env": "A=1\n", "t/f.txt": "x\n",
        "t/patches/p.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod\n  labels:\n    p: one\n",
        "t/patches/p2.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod\n  labels:\n    q: two\n",
        "t/r.yaml": "[]\n", "t/unused.yaml": POD})
    localize("t", "dst", verify=False)
    assert tree(os.path.join(tmp, "dst")) == sorted([
        LOCK_FILE_NAME, "a.env", "abs.yaml", "f.txt", "kustomization.yaml", "patches/p.yaml",
        "patches/p2.yaml", "pod.yaml", "r.yaml"])
    k = read(os.path.join(tmp, "dst/kustomization.yaml"))
    assert "- ./pod.yaml  # keep ./\n- abs.yaml\n" in k
    assert "  path: patches/p2.yaml\n" in k


# -- lock file, check_copy -----------------------------------------------------------------------------

def test_lock_is_deterministic_and_check_copy(tmp: str) -> None:
    write(tmp, {"a/t/kustomization.yaml": "resources:\n- ../b\n", "a/b/kustomization.yaml": "resources:\n- pod.yaml\n",
                "a/b/pod.yaml": POD})
    localize("a/t", "copy", scope="a", verify=False)
    first = read(os.path.join(tmp, "copy", LOCK_FILE_NAME))
    lock = json.loads(first)
    assert lock["target"] == "../a/t" and lock["scope"] == "../a" and lock["target_in_copy"] == "t"
    assert lock["files"]["b/pod.yaml"] == {"sha256": hashlib.sha256(POD.encode()).hexdigest(),
                                           "source": "../a/b/pod.yaml",
                                           "source_sha256": hashlib.sha256(POD.encode()).hexdigest()}
    assert check_copy("copy") == []
    shutil.rmtree("copy")
    localize("a/t", "copy", scope="a", verify=False)
    assert read(os.path.join(tmp, "copy", LOCK_FILE_NAME)) == first
    write(tmp, {"a/b/pod.yaml": POD.replace("nginx", "httpd")})
    problems = check_copy("copy")
    assert any("changed since localization" in p for p in problems)
    # the command to run is the caller's to give (the hook and kzgit diff say it once)
    assert problems[-1] == "copy: out of sync with its original"
    write(tmp, {"copy/t/kustomization.yaml": "resources: []\n", "copy/extra.yaml": ""})
    problems = check_copy("copy")
    assert any("modified in the copy" in p for p in problems)
    assert any("extra.yaml" in p for p in problems)


def test_check_copy_without_lock(tmp: str) -> None:
    os.makedirs("plain")
    assert check_copy("plain") and "no .kzgit-localize.lock" in check_copy("plain")[0]


def test_localize_errors_are_library_errors(tmp: str) -> None:
    with pytest.raises(LocalizeError, match="unable to establish localize target"):
        localize("missing")


def test_kustomization_symlinked_out_of_root_is_refused(tmp: str, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp, {"elsewhere/kustomization.yaml": "namePrefix: a-\n", "t/x": ""})
    os.symlink(os.path.join(tmp, "elsewhere/kustomization.yaml"), os.path.join(tmp, "t/kustomization.yaml"))
    # localizer.go load → target.LoadKustFile ignores the loader's refusal: "not found"
    _fails(tmp, ["t"], ["unable to find one of 'kustomization.yaml'"], capsys)


def test_credentials_never_reach_the_lock(server: Tuple[GitHTTPServer, str], tmp: str) -> None:
    s, root = server
    write(os.path.join(root, "raw"), {"pod.yaml": POD})
    url = s.url.replace("http://", "http://user:s3cret@") + "/raw/pod.yaml"
    write(tmp, {"t/kustomization.yaml": f"resources:\n- {url}\n"})
    localize("t", "dst", verify=False)
    text = read(os.path.join(tmp, "dst", LOCK_FILE_NAME))
    assert "s3cret" not in text
    assert read(os.path.join(tmp, "dst/kustomization.yaml")) == "resources:\n- localized-files/127.0.0.1/raw/pod.yaml\n"


def test_helm_and_container_functions_print_next_steps(tmp: str, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp, {"t/kustomization.yaml": ("helmCharts:\n- name: app\n  valuesFile: values.yaml\n"
                                        "transformers:\n- fn.yaml\n"),
                "t/values.yaml": "a: 1\n", "t/charts/app/Chart.yaml": "name: app\n", "t/charts/app/values.yaml": "",
                "t/fn.yaml": ("apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: fn\n  annotations:\n"
                              "    config.kubernetes.io/function: |\n      container:\n        image: example.com/fn:v1\n")})
    assert main(["localize", "t"]) == 0
    out = capsys.readouterr()
    assert "--enable-helm" in out.out and "--enable-alpha-plugins" in out.out and "SUCCESS" not in out.out
    assert "example.com/fn:v1" in out.err
    assert tree(os.path.join(tmp, "localized-t")) == sorted([
        LOCK_FILE_NAME, "charts/app/Chart.yaml", "charts/app/values.yaml", "fn.yaml", "kustomization.yaml",
        "values.yaml"])


def test_absolute_references_into_target_point_into_newdir(tmp: str) -> None:
    write(tmp, {"a/t/kustomization.yaml": f"resources:\n- {tmp}/a/base\n- {tmp}/a/t/cm.yaml\n",
                "a/t/cm.yaml": configmap("cm"), "a/base/kustomization.yaml": "resources:\n- pod.yaml\n",
                "a/base/pod.yaml": POD})
    localize("a/t", "dst", scope="a", verify=False)
    assert read(os.path.join(tmp, "dst/t/kustomization.yaml")) == "resources:\n- ../base\n- cm.yaml\n"
    assert tree(os.path.join(tmp, "dst")) == sorted([LOCK_FILE_NAME, "base/kustomization.yaml", "base/pod.yaml",
                                                     "t/cm.yaml", "t/kustomization.yaml"])


def test_check_copy_sees_new_files_in_a_chart_home(tmp: str) -> None:
    write(tmp, {"t/kustomization.yaml": "helmGlobals:\n  chartHome: home\n", "t/home/app/Chart.yaml": "name: app\n"})
    localize("t", "dst", verify=False)
    assert check_copy("dst") == []
    write(tmp, {"t/home/app/templates/new.yaml": "kind: X\n"})
    assert any("has a new file" in p for p in check_copy("dst"))


def test_interrupt_during_download_leaves_nothing(tmp: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    from kzgit.localize import _fetch
    scratch = os.path.join(os.path.dirname(tmp), "scratch")
    os.makedirs(scratch)
    monkeypatch.setattr(tempfile, "tempdir", scratch)
    repo = GitRepo.create(os.path.normpath(os.path.join(tmp, "..", "r")), {"k/kustomization.yaml": "namePrefix: a-\n"})
    repo.tag("v1")
    write(tmp, {"t/kustomization.yaml": f"resources:\n- {repo.file_url('k', 'v1')}\n"})
    real_clone = _fetch.Cloner.clone

    def interrupted(self: _fetch.Cloner, spec: _fetch.RepoSpec) -> _fetch.Clone:
        real_clone(self, spec)
        raise KeyboardInterrupt

    monkeypatch.setattr(_fetch.Cloner, "clone", interrupted)
    before = snapshot(tmp)
    with pytest.raises(KeyboardInterrupt):
        localize("t", "dst")
    assert snapshot(tmp) == before
    assert os.listdir(scratch) == [], "the download work directory was left behind"


def test_remote_chart_home_and_check_copy(tmp: str) -> None:
    repo = GitRepo.create(os.path.normpath(os.path.join(tmp, "..", "charts")), {
        "k/kustomization.yaml": "helmGlobals:\n  chartHome: home\nhelmCharts:\n- name: app\n",
        "k/home/app/Chart.yaml": "name: app\n"})
    repo.tag("v1")
    write(tmp, {"t/kustomization.yaml": f"resources:\n- {repo.file_url('k', 'v1')}\n"})
    r = localize("t", "dst")
    assert not r.verified and any("--enable-helm" in m for m in r.messages)
    home = "localized-files/file-schemed" + repo.path + "/v1/k/home/app/Chart.yaml"
    assert home in tree(os.path.join(tmp, "dst"))
    assert check_copy("dst") == []
