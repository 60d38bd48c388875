"""``kzgit lint``: each rule on a real kustomization that kustomize builds without complaint,
then silenced by its ignore comment, then with its severity changed and turned off.

Each case is a small repository where exactly one finding of the rule is expected, at a file,
line and field; the kubectl oracle (Kustomize 5.8.1, or the release the case pins) must build
every root of it with exit 0 and no stderr but the warnings the rule is about: the point of
these rules is what kustomize lets pass.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from helpers import WEB_DEPLOYMENT, git_tree, oracle
from kzgit.cli.main import main
from kzgit.lint.rules import DEFAULTS as LINT_RULES

KUBECTL_1_36 = "KZGIT_ORACLE_KUBECTL_1_36"
KUBECTL_1_35 = "KZGIT_ORACLE_KUBECTL_1_35"
HELM_3 = "KZGIT_ORACLE_HELM_3"

BASE = {
    "base/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                               "resources:\n- deploy.yaml\n",
    "base/deploy.yaml": WEB_DEPLOYMENT,
}
HEAD = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
COMPONENT = ("apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
             "labels:\n- pairs:\n    team: shop\n")
CHART = {
    "app/charts/c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    "app/charts/c/values.yaml": "",
    "app/charts/c/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-chart\n",
}


class Case:
    """A repository, the roots the oracle builds, and the one finding expected."""

    def __init__(self, files: Dict[str, str], roots: List[str], file: str, line: Optional[int],
                 field: str, words: str, warns: str = "", kubectl: str = KUBECTL_1_36,
                 helm: bool = False, config: str = "") -> None:
        self.files, self.roots = files, roots
        self.file, self.line, self.field, self.words = file, line, field, words
        self.warns, self.kubectl, self.helm, self.config = warns, kubectl, helm, config


CASES: Dict[str, Case] = {
    "deprecated-field": Case(
        {**BASE, "app/kustomization.yaml": HEAD + "resources:\n- ../base\ncommonLabels:\n  team: shop\n"},
        ["app"], "app/kustomization.yaml", 5, "commonLabels",
        "Warning: 'commonLabels' is deprecated. Please use 'labels' instead. Run 'kustomize edit fix'",
        warns="'commonLabels' is deprecated"),
    "warnings": Case(
        {**BASE, "app/kustomization.yaml": HEAD + "resources:\n- ../base\nvars:\n- name: WEB\n  objref:\n"
                                                  "    apiVersion: apps/v1\n    kind: Deployment\n    name: web\n"},
        ["app"], "app/kustomization.yaml", 6, "vars[0]", "var 'WEB' is never replaced",
        warns="well-defined vars that were never replaced: WEB"),
    "patch-matches-nothing": Case(
        {**BASE, "comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
                                            "patches:\n- target:\n    kind: StatefulSet\n  patch: |-\n"
                                            "    - op: add\n      path: /metadata/labels/x\n      value: y\n",
         "app/kustomization.yaml": HEAD + "resources:\n- ../base\ncomponents:\n- ../comp\n"},
        ["app"], "comp/kustomization.yaml", 4, "patches[0].target", 'target {"kind": "StatefulSet"} selects no resource'),
    "replacement-matches-nothing": Case(
        {**BASE, "app/kustomization.yaml": HEAD + "resources:\n- ../base\nreplacements:\n- source:\n"
                                                  "    kind: Deployment\n    name: web\n  targets:\n"
                                                  "  - select:\n      kind: ConfigMap\n    fieldPaths:\n"
                                                  "    - data.web\n"},
        ["app"], "app/kustomization.yaml", 10, "replacements[0].targets[0].select",
        'select {"kind": "ConfigMap"} selects no resource'),
    "unreferenced-file": Case(
        {**BASE, "base/old-deploy.yaml": WEB_DEPLOYMENT},
        ["base"], "base/old-deploy.yaml", None, "", "no kustomization references this file",
        config='[lint]\nunreferenced-file = "warning"\n'),
    "unpinned-chart": Case(
        {**CHART, "app/kustomization.yaml": HEAD + "helmCharts:\n- name: c\n  repo: https://charts.example.invalid\n"
                                                   "  releaseName: r\n"},
        ["app"], "app/kustomization.yaml", 4, "helmCharts[0]", "chart 'c' from https://charts.example.invalid has no version",
        helm=True),
    "needs-newer-kustomize": Case(
        {**BASE, "app/kustomization.yaml": HEAD + "resources:\n- ../base\nreplacements:\n- sourceValue: shop\n"
                                                  "  targets:\n  - select:\n      kind: Deployment\n    fieldPaths:\n"
                                                  "    - spec.template.metadata.labels.app\n"},
        ["app"], "app/kustomization.yaml", 6, "sourceValue",
        "'sourceValue' needs Kustomize 5.7 or later; this repository pins 5.6.0",
        kubectl=KUBECTL_1_35, config='kustomize-version = "5.6"\n'),
    "duplicate-entry": Case(
        {**BASE, "comp/kustomization.yaml": COMPONENT,
         "app/kustomization.yaml": HEAD + "resources:\n- ../base\ncomponents:\n- ../comp\n- ./../comp\n"},
        ["app"], "app/kustomization.yaml", 7, "components[1]", "component './../comp' is listed twice"),
    "render-error": Case(
        {**BASE, "app/kustomization.yaml": HEAD + "resources:\n- ../base\n- missing.yaml\n"},
        [], "app/kustomization.yaml", 5, "resources", "app does not render: app/kustomization.yaml:5: resources: "
                                                      "'missing.yaml' does not exist"),
}


def test_every_rule_has_a_case() -> None:
    assert sorted(CASES) == sorted(LINT_RULES)






def lint(root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
         *argv: str) -> Tuple[int, Dict[str, Any]]:
    monkeypatch.chdir(root)
    rc = main(["lint", "--all", "--format", "json", *argv])
    out, _ = capsys.readouterr()
    return rc, json.loads(out)


def _of(doc: Dict[str, Any], rule: str) -> List[Dict[str, Any]]:
    return [f for f in doc["findings"] if f["rule"] == rule]


def _setup(tmp_path: Path, case: Case, extra: str = "") -> Path:
    return git_tree(tmp_path, {**case.files, **({".kzgit.toml": case.config + extra} if case.config or extra else {})})


@pytest.mark.parametrize("rule", sorted(CASES))
def test_kustomize_builds_the_case_without_complaint(tmp_path: Path, rule: str) -> None:
    case = CASES[rule]
    kubectl = oracle(case.kubectl)
    root = git_tree(tmp_path, case.files)
    for r in case.roots:
        argv = [kubectl, "kustomize", str(root / r)]
        if case.helm:
            argv += ["--enable-helm", "--helm-command", oracle(HELM_3)]
        got = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert got.returncode == 0, got.stderr
        assert got.stdout.strip()
        if case.warns:
            assert case.warns in got.stderr
        else:
            assert got.stderr == ""


@pytest.mark.parametrize("rule", sorted(CASES))
def test_the_rule_finds_it_at_file_line_and_field(tmp_path: Path, rule: str, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES[rule]
    rc, doc = lint(_setup(tmp_path, case), monkeypatch, capsys)
    got = _of(doc, rule)
    assert len(got) == 1, doc["findings"]
    f = got[0]
    assert (f["file"], f["line"], f["field"]) == (case.file, case.line, case.field)
    assert case.words in f["message"]
    severity = "warning" if rule == "unreferenced-file" else LINT_RULES[rule]
    assert f["severity"] == severity
    assert rc == (1 if any(x["severity"] == "error" for x in doc["findings"]) else 0)


@pytest.mark.parametrize("rule", sorted(CASES))
def test_an_ignore_comment_on_the_line_silences_it(tmp_path: Path, rule: str, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES[rule]
    root = _setup(tmp_path, case)
    path = root / case.file
    lines = path.read_text().split("\n")
    n = (case.line or 1) - 1
    lines[n] += f"  # kzgit: ignore[other-rule, {rule}]"
    path.write_text("\n".join(lines))
    _, doc = lint(root, monkeypatch, capsys)
    assert _of(doc, rule) == [] and doc["summary"]["silenced"] >= 1


def test_a_run_whose_findings_are_all_silenced_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Not silence (issue 33 item 6): the text output counts what the comments silenced."""
    case = CASES["render-error"]
    root = _setup(tmp_path, case)
    path = root / case.file
    lines = path.read_text().split("\n")
    lines[(case.line or 1) - 1] += "  # kzgit: ignore[render-error]"
    path.write_text("\n".join(lines))
    monkeypatch.chdir(root)
    assert main(["lint", "--all"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("0 errors, 0 warnings, 1 silenced in "), out


@pytest.mark.parametrize("rule", sorted(CASES))
def test_a_comment_for_another_rule_does_not_silence_it(tmp_path: Path, rule: str,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES[rule]
    root = _setup(tmp_path, case)
    path = root / case.file
    lines = path.read_text().split("\n")
    lines[(case.line or 1) - 1] += "  # kzgit: ignore[other-rule]"
    path.write_text("\n".join(lines))
    _, doc = lint(root, monkeypatch, capsys)
    assert len(_of(doc, rule)) == 1


@pytest.mark.parametrize("rule", sorted(CASES))
@pytest.mark.parametrize("severity", ["error", "warning", "off"])
def test_lint_table_sets_the_severity(tmp_path: Path, rule: str, severity: str, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES[rule]
    config = case.config.replace('[lint]\nunreferenced-file = "warning"\n', "")
    others = "".join(f'{r} = "off"\n' for r in LINT_RULES if r != rule)
    root = git_tree(tmp_path, {**case.files, ".kzgit.toml": config + f'[lint]\n{rule} = "{severity}"\n' + others})
    rc, doc = lint(root, monkeypatch, capsys)
    got = _of(doc, rule)
    if severity == "off":
        assert (rc, doc["findings"]) == (0, [])
    else:
        assert [f["severity"] for f in got] == [severity]
        assert rc == (1 if severity == "error" else 0)


def test_warnings_as_errors_raises_kustomizes_warnings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES["deprecated-field"]
    rc, doc = lint(git_tree(tmp_path, {**case.files, ".kzgit.toml": "warnings-as-errors = true\n"}), monkeypatch, capsys)
    assert rc == 1 and [f["severity"] for f in _of(doc, "deprecated-field")] == ["error"]


def test_a_clean_repository_has_no_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    files = {**BASE, "comp/kustomization.yaml": COMPONENT,
             "app/kustomization.yaml": HEAD + "resources:\n- ../base\ncomponents:\n- ../comp\n"
                                       "patches:\n- target:\n    kind: Deployment\n  patch: |-\n"
                                       "    - op: add\n      path: /metadata/labels/x\n      value: y\n"}
    rc, doc = lint(git_tree(tmp_path, files), monkeypatch, capsys)
    assert (rc, doc["findings"], doc["summary"]["kustomizations"]) == (0, [], 3)


def test_unknown_rule_in_the_lint_table_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    git_tree(tmp_path, {**BASE, ".kzgit.toml": '[lint]\npatch-matches-nothin = "off"\n'})
    monkeypatch.chdir(tmp_path)
    assert main(["lint", "--all"]) == 2
    err = capsys.readouterr().err
    assert ".kzgit.toml: unknown key 'lint.patch-matches-nothin'" in err and "patch-matches-nothing" in err


def test_bad_severity_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    git_tree(tmp_path, {**BASE, ".kzgit.toml": '[lint]\nduplicate-entry = "fatal"\n'})
    monkeypatch.chdir(tmp_path)
    assert main(["lint", "--all"]) == 2
    assert "bad value for 'lint.duplicate-entry': 'fatal'" in capsys.readouterr().err


def test_the_build_does_not_change_when_a_target_matches_nothing(tmp_path: Path) -> None:
    """The recording hook only listens: the same output with and without a listener."""
    from kzgit.builder import build
    from kzgit.builtins.common import UNMATCHED
    case = CASES["patch-matches-nothing"]
    root = git_tree(tmp_path, case.files)
    plain = build(str(root / "app")).to_yaml()
    seen: List[Any] = []
    token = UNMATCHED.set(seen)
    try:
        listened = build(str(root / "app")).to_yaml()
    finally:
        UNMATCHED.reset(token)
    assert plain == listened and [s[0] for s in seen] == ["patches"]


def test_a_patch_matching_in_one_overlay_only_is_reported_for_the_other(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Through components: one component, two overlays; the target exists in one of them."""
    files = {**BASE,
             "cm/kustomization.yaml": HEAD + "configMapGenerator:\n- name: web\n  literals: [a=b]\n",
             "comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
                                        "patches:\n- target:\n    kind: ConfigMap\n  patch: |-\n"
                                        "    - op: add\n      path: /data/x\n      value: y\n",
             "with/kustomization.yaml": HEAD + "resources:\n- ../base\n- ../cm\ncomponents:\n- ../comp\n",
             "without/kustomization.yaml": HEAD + "resources:\n- ../base\ncomponents:\n- ../comp\n"}
    rc, doc = lint(git_tree(tmp_path, files), monkeypatch, capsys)
    got = _of(doc, "patch-matches-nothing")
    assert rc == 1 and [(f["file"], f["line"], f["root"]) for f in got] == [("comp/kustomization.yaml", 4, "without")]


def test_text_and_github_formats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES["duplicate-entry"]
    git_tree(tmp_path, case.files)
    monkeypatch.chdir(tmp_path)
    assert main(["lint", "--all"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("app/kustomization.yaml:7: error: components[1]: component './../comp' is listed "
                          "twice (first as components[0], line 6) [duplicate-entry]\n")
    assert out.endswith("1 error, 0 warnings in 3 kustomizations (1 root built)\n")
    assert main(["lint", "--all", "--format", "github"]) == 1
    assert capsys.readouterr().out == (
        "::error file=app/kustomization.yaml,line=7,title=kzgit lint%3A duplicate-entry::components[1]: "
        "component './../comp' is listed twice (first as components[0], line 6)\n")


def test_named_roots_and_warm_run_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES["patch-matches-nothing"]
    root = git_tree(tmp_path, case.files)
    monkeypatch.chdir(root)
    assert main(["lint", "app", "-v"]) == 1
    first = capsys.readouterr()
    assert "built   app" in first.err
    assert main(["lint", "app", "-v"]) == 1
    second = capsys.readouterr()
    assert "cached  app" in second.err and second.out == first.out


def _committed(root: Path, files: Dict[str, str]) -> Path:
    git_tree(root, files)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, timeout=60)
    subprocess.run(["git", "-C", str(root), "commit", "-q", "-m", "x"], check=True, timeout=60)
    return root


def test_hook_lints_only_what_the_changed_files_reach(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Two independent roots, each with a problem: a change in one reports that one only."""
    bad = "patches:\n- target:\n    kind: StatefulSet\n  patch: '[{\"op\": \"add\", \"path\": \"/x\", \"value\": 1}]'\n"
    files = {**BASE,
             "one/kustomization.yaml": HEAD + "resources:\n- ../base\n" + bad,
             "two/kustomization.yaml": HEAD + "resources:\n- ../base\ncomponents:\n- ../c\n- ../c\n",
             "c/kustomization.yaml": COMPONENT}
    root = _committed(tmp_path, files)
    monkeypatch.chdir(root)
    (root / "one/kustomization.yaml").write_text(files["one/kustomization.yaml"] + "# edited\n")
    subprocess.run(["git", "add", "-A"], check=True, timeout=60)
    assert main(["hook", "lint", "one/kustomization.yaml", "-v"]) == 1
    out, err = capsys.readouterr()
    assert "one/kustomization.yaml:6: error: patches[0].target" in out and "two/" not in out
    assert "built   one" in err and "two" not in err
    assert main(["hook", "lint", "--all"]) == 1
    out = capsys.readouterr().out
    assert "one/kustomization.yaml:6" in out and "two/kustomization.yaml:7: error: components[1]" in out


def test_hook_all_runs_lint_only_with_a_lint_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES["duplicate-entry"]
    root = _committed(tmp_path, case.files)
    monkeypatch.chdir(root)
    assert main(["hook", "all", "--all"]) == 0
    assert "kzgit-lint" not in capsys.readouterr().out
    (root / ".kzgit.toml").write_text('[lint]\nunpinned-chart = "warning"\n')
    assert main(["hook", "all", "--all"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("kzgit-lint:\n") and "[duplicate-entry]" in out


def test_a_regex_select_under_a_release_before_5_8_needs_a_newer_kustomize(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """kustomize 5.8 reads replacement select fields as regular expressions (PR #5863); 5.7.1
    compares them as written and silently selects nothing (the oracle shows the label unset)."""
    files = {**BASE, ".kzgit.toml": 'kustomize-version = "5.7"\n',
             "app/kustomization.yaml": HEAD + "resources:\n- ../base\nreplacements:\n- sourceValue: shop\n"
                                       "  targets:\n  - select:\n      name: we.*\n    fieldPaths:\n"
                                       "    - spec.template.metadata.labels.app\n"}
    root = git_tree(tmp_path, files)
    rc, doc = lint(root, monkeypatch, capsys)
    got = [(f["rule"], f["line"], f["field"]) for f in doc["findings"]]
    assert rc == 1 and got == [("needs-newer-kustomize", 8, "replacements[0].targets[0].select")]
    assert "needs Kustomize 5.8 or later; this repository pins 5.7.1" in doc["findings"][0]["message"]
    kubectl = os.environ.get("KZGIT_ORACLE_kubectl_1_35") or os.environ.get(KUBECTL_1_35)
    if kubectl:
        out = subprocess.run([kubectl, "kustomize", str(root / "app")], capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0 and out.stderr == "" and "shop" not in out.stdout
    monkeypatch.setenv("KZGIT_KUSTOMIZE_VERSION", "5.8")
    rc, doc = lint(root, monkeypatch, capsys)
    assert (rc, doc["findings"]) == (0, [])


def test_no_finding_is_placed_in_an_excluded_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES["deprecated-field"]
    files = {**case.files, "legacy/kustomization.yaml": "resources:\n- ../base\nbases:\n- ../base\n"}
    rc, doc = lint(git_tree(tmp_path, {**files, ".kzgit.toml": 'exclude = ["legacy/**"]\n'}), monkeypatch, capsys)
    assert [f["file"] for f in doc["findings"]] == ["app/kustomization.yaml"]
    rc, doc = lint(git_tree(tmp_path, {".kzgit.toml": "cache = true\n"}), monkeypatch, capsys)
    assert sorted({f["file"] for f in doc["findings"]}) == ["app/kustomization.yaml", "legacy/kustomization.yaml"]


@pytest.mark.parametrize("field,value,command", [
    ("bases", "- ../base", "kzgit fix app"), ("imageTags", "- name: nginx\n  newTag: '1'", "kzgit fix app"),
    ("patchesStrategicMerge", "- p.yaml", "kzgit fix app"),
    ("vars", "- name: WEB\n  objref: {apiVersion: apps/v1, kind: Deployment, name: web}", "kzgit fix --vars app"),
])
def test_each_deprecation_in_kustomizes_words_with_its_fix(tmp_path: Path, field: str, value: str, command: str,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from kzgit.kustomization import DEPRECATIONS
    files = {**BASE, "app/p.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n",
             "app/kustomization.yaml": HEAD + "resources:\n- ../base\n" + f"{field}:\n{value}\n"}
    if field == "bases":
        files["app/kustomization.yaml"] = HEAD + f"{field}:\n{value}\n"
    _, doc = lint(git_tree(tmp_path, files), monkeypatch, capsys)
    got = _of(doc, "deprecated-field")
    words = dict(DEPRECATIONS)[field][2:]
    assert [(f["field"], f["line"]) for f in got] == [(field, 5 if field != "bases" else 3)]
    assert got[0]["message"].startswith(words) and f"`{command}`" in got[0]["message"]


@pytest.mark.parametrize("version,pinned", [("1.2.3", True), ("v0.1.0", True), ("1.2.3-rc.1", True),
                                            ("^1.2.0", False), ("~1.2", False), (">=1.0.0 <2.0.0", False),
                                            ("1.2.x", False), ("*", False)])
def test_a_chart_version_range_is_not_a_pin(tmp_path: Path, version: str, pinned: bool,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    files = {**CHART, "app/kustomization.yaml": HEAD + "helmCharts:\n- name: c\n  repo: https://charts.example.invalid\n"
                                                f"  version: '{version}'\n  releaseName: r\n"}
    _, doc = lint(git_tree(tmp_path, files), monkeypatch, capsys)
    got = [(f["line"], f["field"]) for f in _of(doc, "unpinned-chart")]
    assert got == ([] if pinned else [(6, "helmCharts[0].version")])


def test_a_patches_json6902_target_matching_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    files = {**BASE, "app/kustomization.yaml": HEAD + "resources:\n- ../base\npatchesJson6902:\n- target:\n"
                                               "    group: apps\n    version: v1\n    kind: Deployment\n"
                                               "    name: api\n  patch: '[{\"op\": \"add\", \"path\": \"/x\", \"value\": 1}]'\n"}
    rc, doc = lint(git_tree(tmp_path, files), monkeypatch, capsys)
    got = [(f["line"], f["field"]) for f in _of(doc, "patch-matches-nothing")]
    assert rc == 1 and got == [(6, "patchesJson6902[0].target")]
    assert [f["field"] for f in _of(doc, "deprecated-field")] == ["patchesJson6902"]
