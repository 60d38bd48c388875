"""``kzgit fix`` on real kustomization trees: byte-level expected files, the proof, exit codes.

Each case under ``tests/fix/data/<case>/`` is an input tree ``in/`` and, in ``out/``, the
kustomization files as ``kzgit fix`` must leave them, byte for byte (a file absent from
``out/`` must not change).  The differential tests render every root of the input and of the
fixed tree with ``kubectl kustomize`` 1.32 and 1.36 (Kustomize 5.5.0 and 5.8.1) and require
identical output.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from kzgit.cli.main import main

DATA = Path(__file__).parent / "data"

# case -> (exit code of the first run, of the second run, roots the differential renders,
#          text the first run's output must hold)
CASES: Dict[str, Tuple[int, int, List[str], List[str]]] = {
    # --vars: $(BACKEND) whole, after a delimiter, and in a strategic-merge patch (whose target
    # is the Deployment the patch names: kustomize's empty selector would also pick "other",
    # which has no such field, and fail), converted and proven
    "vars": (1, 0, ["."], ["fixed kustomization.yaml: patchesStrategicMerge -> patches, vars -> "
                           "replacements (2 resource files with placeholders)"]),
    # --vars: $(BACKEND) in a ConfigMap's data, which vars never fill: the conversion would fill
    # it, so it is left undone, and the file's other migration is proven and written alone
    "vars-held": (1, 1, ["."], ["fixed kustomization.yaml: commonLabels -> labels",
                                "kustomization.yaml: vars -> replacements: left undone: would change the "
                                "output of .: line 3 of its output: -backend: $(BACKEND) +backend: backend"]),
    # --vars: a reference inside a URL cannot be a replacement target: refused, naming the var
    "vars-refused": (1, 1, ["."], ["kustomization.yaml: vars -> replacements: not migrated: var BACKEND: "
                                   "$(BACKEND) is not delimited in 'http://$(BACKEND):8080/api' "
                                   "(deploy.yaml, spec.template.spec.containers.0.env.0.value)"]),
    "bases": (1, 0, ["overlay", "flow"], ["fixed overlay/kustomization.yaml: bases -> resources"]),
    "common-labels": (1, 0, [".", "flow"], ["fixed kustomization.yaml: commonLabels -> labels"]),
    "generator-env": (1, 0, ["."], ["fixed kustomization.yaml: env -> envs"]),
    "patches": (1, 0, ["."], ["patchesJson6902 -> patches, patchesStrategicMerge -> patches"]),
    "images-typemeta": (1, 0, ["app"], ["fixed app/kustomization.yaml: apiVersion, kind added, "
                                        "imageTags -> images",
                                        "fixed lonely/kustomization.yaml: apiVersion added"]),
    # an SMP and a JSON patch setting the same field: edit fix's order (JSON patches first)
    # changes the output, so the file stays as it is
    "held": (1, 1, ["."], ["kustomization.yaml: left untouched: would change the output of .: "
                           "line 6 of its output: -replicas: 5 +replicas: 3"]),
    # the same in a component no root includes: rendered through a throw-away kustomization
    # that lists it (in memory only), so the component is held back too
    "held-component": (1, 1, [], ["comp/kustomization.yaml: left untouched: would change the output of "
                                  "comp: line 6 of its output: -replicas: 5 +replicas: 3"]),
    # a label in both commonLabels and labels: kustomize's own error, the rest migrated
    "refused": (1, 1, ["."], ["kustomization.yaml: commonLabels -> labels (includeSelectors: true): "
                              "not migrated: label name 'app' exists in both commonLabels and labels"]),
}


def _files(top: Path) -> Dict[str, bytes]:
    return {str(p.relative_to(top)): p.read_bytes() for p in sorted(top.rglob("*")) if p.is_file()}


def _tree(case: str, tmp_path: Path) -> Path:
    work = tmp_path / case
    shutil.copytree(DATA / case / "in", work)
    return work


def _run(work: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
         *args: str) -> Tuple[int, str]:
    monkeypatch.chdir(work)
    if work.name.startswith("vars"):
        args += ("--vars",)
    rc = main(["fix", *args])
    out = capsys.readouterr()
    return rc, out.out + out.err


@pytest.mark.parametrize("case", sorted(CASES))
def test_case(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
              capsys: pytest.CaptureFixture[str]) -> None:
    first, second, _, says = CASES[case]
    work = _tree(case, tmp_path)
    before = _files(work)
    rc, out = _run(work, monkeypatch, capsys)
    assert rc == first, out
    for text in says:
        assert text in out
    assert not [p for p in work.rglob(".kzgit-fix-probe-*")]   # the probe lives in memory only
    out_dir = DATA / case / "out"
    expected = {**before, **(_files(out_dir) if out_dir.is_dir() else {})}
    assert _files(work) == expected
    # idempotent: a second run changes nothing
    rc, out = _run(work, monkeypatch, capsys)
    assert rc == second, out
    assert not [ln for ln in out.splitlines() if ln.startswith("fixed ")]
    assert _files(work) == expected


@pytest.mark.parametrize("case", ["bases", "patches"])
def test_check_changes_nothing_and_exits_1(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    work = _tree(case, tmp_path)
    before = _files(work)
    rc, out = _run(work, monkeypatch, capsys, "--check")
    assert rc == 1 and "would fix" in out
    assert _files(work) == before


def test_diff_prints_unified_diffs_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    work = _tree("bases", tmp_path)
    before = _files(work)
    rc, out = _run(work, monkeypatch, capsys, "--diff", "overlay")
    assert rc == 1
    assert "--- a/overlay/kustomization.yaml\n+++ b/overlay/kustomization.yaml\n" in out
    assert "-bases:\n" in out and "+  # the shared base\n" in out
    assert "flow/kustomization.yaml" not in out   # only below the PATH given
    assert _files(work) == before


def test_clean_tree_exits_0_silently(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    work = _tree("bases", tmp_path)
    shutil.rmtree(work / "overlay")
    shutil.rmtree(work / "flow")
    assert _run(work, monkeypatch, capsys, "--check") == (0, "")
    assert _run(work, monkeypatch, capsys, "--all") == (0, "")


def test_keeps_the_file_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    work = _tree("bases", tmp_path)
    k = work / "overlay" / "kustomization.yaml"
    os.chmod(k, 0o640)
    assert _run(work, monkeypatch, capsys, "overlay")[0] == 1
    assert (k.stat().st_mode & 0o777) == 0o640
    assert k.read_bytes() == (DATA / "bases" / "out" / "overlay" / "kustomization.yaml").read_bytes()
    assert not [p for p in (work / "overlay").iterdir() if p.name.startswith(".kzgit-")]


def test_a_path_outside_the_tree_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    work = _tree("bases", tmp_path)
    rc, out = _run(work, monkeypatch, capsys, "nowhere")
    assert rc == 2 and "nowhere: no such file or directory" in out


ORACLES = {"1.32": "KZGIT_ORACLE_KUBECTL_1_32", "1.36": "KZGIT_ORACLE_KUBECTL_1_36"}


def _kubectl(version: str) -> str:
    var = ORACLES[version]
    binary = os.environ.get(var) or os.environ.get(var.replace("KUBECTL", "kubectl"))
    if not binary:
        pytest.skip(f"{var} is not set: no kubectl {version} oracle to compare with")
    return binary


def _kustomize(kubectl: str, path: Path) -> str:
    res = subprocess.run([kubectl, "kustomize", str(path)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.mark.parametrize("version", sorted(ORACLES))
@pytest.mark.parametrize("case", sorted(c for c in CASES if CASES[c][2]))
def test_fixed_tree_renders_as_the_original_with_kubectl(case: str, version: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    kubectl = _kubectl(version)
    work = _tree(case, tmp_path)
    _run(work, monkeypatch, capsys)
    roots = CASES[case][2]
    for root in roots:
        assert _kustomize(kubectl, work / root) == _kustomize(kubectl, DATA / case / "in" / root), root


def test_paths_and_all_together_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    work = _tree("bases", tmp_path)
    before = _files(work)
    rc, out = _run(work, monkeypatch, capsys, "--all", "overlay")
    assert rc == 2 and "give PATHs or --all, not both" in out
    assert _files(work) == before


def test_the_fixer_leaves_alone_what_it_should_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 33 items 1 and 2: a repository kustomize builds without a warning passes the fixer
    (no apiVersion/kind alone); a localized copy and an excluded file are never rewritten; a
    kustomization that does not render before the fix is left as it is without failing; vars
    without --vars are named with what converts them."""
    import subprocess
    from helpers import write_tree
    from kzgit.localize import LOCK_FILE_NAME
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: $(V)\n"
    work = write_tree(tmp_path / "w", {
        ".kzgit.toml": 'exclude = ["legacy/*"]\n',
        "plain/kustomization.yaml": "resources:\n- cm.yaml\n", "plain/cm.yaml": cm,
        "vendor/copy/kustomization.yaml": "bases:\n- ../../plain\n",
        f"vendor/copy/{LOCK_FILE_NAME}": "{}\n",
        "legacy/old/kustomization.yaml": "bases:\n- ../../plain\n",
        "broken/kustomization.yaml": "resources:\n- missing.yaml\ncommonLabels:\n  a: b\n",
        "withvars/kustomization.yaml": ("resources:\n- cm.yaml\nvars:\n- name: V\n  objref:\n"
                                        "    kind: ConfigMap\n    name: a\n    apiVersion: v1\n"
                                        "  fieldref:\n    fieldpath: metadata.name\n"),
        "withvars/cm.yaml": cm})
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    subprocess.run(["git", "add", "-A"], cwd=work, check=True)
    before = _files(work)
    rc, out = _run(work, monkeypatch, capsys, "--check", "--all")
    assert rc == 0, out
    assert _files(work) == before
    assert "broken/kustomization.yaml: left as it is (not counted as left to migrate): nothing that " \
           "reaches it renders now" in out
    assert "withvars/kustomization.yaml: vars left: V; kustomize still warns about them; " \
           "kzgit fix --vars withvars converts them" in out
    assert "vendor/" not in out and "legacy/" not in out and "plain/" not in out
    # the build's error names the file as the hooks do: repository-relative (issue 33 item 6)
    assert "renders now; broken does not render: broken/kustomization.yaml" in out, out
    assert str(work) not in out and os.path.realpath(work) not in out
