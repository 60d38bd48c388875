"""A missing resource or patch, a patch that matches nothing, a patch that is not YAML: one line
names the kustomization file, the field and the path, and kustomize's own chain follows."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Tuple

import pytest

from kzgit import BuildOptions, build
from kzgit.cli.main import main
from kzgit.errors import KzgitError, full_message
from helpers import write_tree

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
PATCH = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: y\n"


def failure(root: Path) -> Tuple[str, str]:
    """(lead, kustomize's chain) of building ``root``."""
    with pytest.raises(KzgitError) as e:
        build(str(root), BuildOptions())
    assert e.value.lead is not None, str(e.value)
    return e.value.lead, str(e.value)


def test_missing_resource(tmp_path: Path) -> None:
    app = write_tree(tmp_path / "app", {"kustomization.yaml": "resources:\n- cm.yaml\n- missing.yaml\n",
                                  "cm.yaml": CM})
    lead, chain = failure(app)
    assert lead == f"{app}/kustomization.yaml:3: resources: 'missing.yaml' does not exist"
    assert chain.startswith("accumulating resources: accumulation err='accumulating resources from "
                            "'missing.yaml': evalsymlink failure")


def test_missing_resource_in_a_base_names_the_base(tmp_path: Path) -> None:
    write_tree(tmp_path, {"base/kustomization.yaml": "resources:\n- gone.yaml\n",
                    "app/kustomization.yaml": "resources:\n- ../base\n"})
    lead, _ = failure(tmp_path / "app")
    assert lead == f"{tmp_path}/base/kustomization.yaml:2: resources: 'gone.yaml' does not exist"


def test_missing_patch_file(tmp_path: Path) -> None:
    app = write_tree(tmp_path / "app", {
        "kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- path: p.yaml\n- path: p.yaml\n"
                              "- path: nosuch.yaml\n", "cm.yaml": CM, "p.yaml": PATCH})
    lead, chain = failure(app)
    assert lead == f"{app}/kustomization.yaml:6: patches[2].path: 'nosuch.yaml' does not exist"
    assert "nosuch.yaml: no such file or directory" in chain


def test_patch_that_matches_nothing_names_the_patch_file(tmp_path: Path) -> None:
    app = write_tree(tmp_path / "app", {
        "kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- path: other.yaml\n",
        "cm.yaml": CM, "other.yaml": PATCH.replace("name: a", "name: zzz")})
    lead, chain = failure(app)
    assert lead == f"{app}/kustomization.yaml:4: patches[0]: the patch file 'other.yaml' matches no resource"
    assert chain.startswith('no resource matches strategic merge patch "ConfigMap.v1.[noGrp]/zzz.[noNs]"')


def test_patch_that_is_not_yaml_says_file_and_line(tmp_path: Path) -> None:
    app = write_tree(tmp_path / "app", {
        "kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- path: bad.yaml\n",
        "cm.yaml": CM, "bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata: [x\n  y: 1\n"})
    lead, _ = failure(app)
    assert lead.startswith(f"{app}/kustomization.yaml:4: patches[0].path: the patch file 'bad.yaml' "
                           "is not valid YAML: line ")


def test_inline_patch_that_is_not_yaml_says_the_line_inside_the_patch(tmp_path: Path) -> None:
    app = write_tree(tmp_path / "app", {
        "kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- patch: |-\n    apiVersion: v1\n"
                              "    kind: ConfigMap\n    data: [x\n      y: 1\n",
        "cm.yaml": CM})
    lead, _ = failure(app)
    # go-yaml's line, as in every YAML syntax error: the context's 0-based line, where the
    # unclosed "[" opened (kubectl itself only says "unable to parse SM or JSON patch")
    assert lead.startswith(f"{app}/kustomization.yaml:4: patches[0].patch: the inline patch is not valid "
                           "YAML: line 2: did not find expected ',' or ']'"), lead


def test_inline_patch_that_is_no_patch_says_what_a_patch_is(tmp_path: Path) -> None:
    app = write_tree(tmp_path / "app", {
        "kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- patch: 'data: {y: q}'\n"
                              "  target: {kind: ConfigMap}\n", "cm.yaml": CM})
    lead, chain = failure(app)
    assert lead == (f"{app}/kustomization.yaml:4: patches[0].patch: the inline patch is neither a "
                    "strategic-merge patch (resources with kind and metadata.name) nor a list of "
                    "JSON 6902 operations")
    assert "unable to parse SM or JSON patch" in chain


@pytest.mark.parametrize("files, want", [
    ({"p.yaml": PATCH}, "patchesStrategicMerge[1]: 'nosuch.yaml' does not exist"),
    ({"p.yaml": PATCH, "nosuch.yaml": PATCH.replace("name: a", "name: zzz")},
     "patchesStrategicMerge[1]: the patch file 'nosuch.yaml' matches no resource"),
    ({"p.yaml": PATCH, "nosuch.yaml": "kind: ConfigMap\nmetadata:\n  name: [a\n"},
     "patchesStrategicMerge[1]: the patch file 'nosuch.yaml' is not valid YAML: line "),
])
def test_patches_strategic_merge_names_the_entry(tmp_path: Path, files: dict, want: str) -> None:
    app = write_tree(tmp_path / "app", {
        "kustomization.yaml": "resources:\n- cm.yaml\npatchesStrategicMerge:\n- p.yaml\n- nosuch.yaml\n",
        "cm.yaml": CM, **files})
    lead, _ = failure(app)
    assert lead.startswith(f"{app}/kustomization.yaml:5: {want}"), lead


def test_patches_strategic_merge_inline_entry_that_matches_nothing(tmp_path: Path) -> None:
    app = write_tree(tmp_path / "app", {
        "kustomization.yaml": "resources:\n- cm.yaml\npatchesStrategicMerge:\n- |-\n"
                              + "".join("  " + ln + "\n" for ln in PATCH.replace("name: a", "name: zzz").splitlines()),
        "cm.yaml": CM})
    lead, _ = failure(app)
    assert lead == f"{app}/kustomization.yaml:4: patchesStrategicMerge[0]: the inline patch matches no resource"


def test_cli_prints_the_lead_first_then_kustomizes_chain(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    app = write_tree(tmp_path / "app", {"kustomization.yaml": "resources:\n- missing.yaml\n"})
    assert main(["build", str(app)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"Error: {app}/kustomization.yaml:2: resources: 'missing.yaml' does not exist"
    assert err[1].startswith("accumulating resources: accumulation err=")


def test_full_message_without_a_lead_is_the_message() -> None:
    assert full_message(KzgitError("plain")) == "plain"
    assert full_message(KzgitError("chain").with_lead("lead")) == "lead\nchain"


def test_full_message_escapes_what_does_not_print_as_go_quote_does() -> None:
    # strconv.Quote (klog's one-line errors): named escapes, \x for ASCII controls and bytes
    # that are not UTF-8, \u and \U above; newlines and tabs are kept
    msg = KzgitError("a\x00b\x07\ufeffkey\udcffx\u00a0y\U000e0001\tz\nnext")
    assert full_message(msg) == "a\\x00b\\a\\ufeffkey\\xffx\\u00a0y\\U000e0001\tz\nnext"
    assert full_message(KzgitError("caf\u00e9 \u4e2d")) == "caf\u00e9 \u4e2d"


def test_render_hook_leads_with_the_same_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(tmp_path / "repo" / "app", {"kustomization.yaml": "resources:\n- missing.yaml\n"})
    for git in (["init", "-q"], ["add", "-A"]):   # the hooks check a git repository
        subprocess.run(["git", *git], cwd=tmp_path / "repo", check=True, capture_output=True, timeout=60)
    monkeypatch.chdir(tmp_path / "repo")
    assert main(["hook", "render", "--all"]) == 1
    out = capsys.readouterr().out.splitlines()
    # the hooks name files by their repository-relative path, as they name roots
    assert out[0] == "app: does not render: app/kustomization.yaml:2: resources: 'missing.yaml' does not exist"
    assert out[1].startswith("    accumulating resources: accumulation err=")


def test_errors_with_their_own_arguments_survive_rewording_copy_and_pickle() -> None:
    # kzgit errors are reworded at each level and pickled back from render workers; a subclass
    # whose __init__ takes more than the message (an HTTP status, an object's size) is rebuilt
    # without calling it
    import copy
    import pickle
    from kzgit.gitio.objects import ObjectTooLarge
    err = ObjectTooLarge("abc123", 7).with_lead("lead")
    for other in (err.prefixed("reading: "), copy.copy(err), pickle.loads(pickle.dumps(err))):
        assert type(other) is ObjectTooLarge and other.size == 7 and other.lead == "lead"
    assert str(err.prefixed("reading: ")) == "reading: git object abc123 is 7 bytes"


def test_a_resource_outside_the_kustomization_names_the_load_restrictor(tmp_path: Path) -> None:
    write_tree(tmp_path, {"outside.yaml": CM, "app/kustomization.yaml": "resources:\n- ../outside.yaml\n"})
    lead, chain = failure(tmp_path / "app")
    assert lead == (f"{tmp_path}/app/kustomization.yaml:2: resources: '../outside.yaml' is outside the "
                    "kustomization's directory, which the load restrictor forbids "
                    "(LoadRestrictionsRootOnly); allow it with --load-restrictor LoadRestrictionsNone "
                    "or load-restrictor = \"LoadRestrictionsNone\" in .kzgit.toml (granted in "
                    "your ~/.config/kzgit/config.toml or by kzgit trust)")
    assert "is not in or below" in chain   # kustomize's words follow


@pytest.mark.parametrize("field", ["resources", "components"])
def test_a_remote_that_cannot_be_fetched_is_one_line_naming_the_entry(tmp_path: Path, field: str) -> None:
    gone = tmp_path / "no-such-repo"
    app = write_tree(tmp_path / "app", {"kustomization.yaml": f"{field}:\n- file://{gone}?ref=v1\n"})
    lead, chain = failure(app)
    assert lead.startswith(f"{app}/kustomization.yaml: {field}: cannot fetch 'file://{gone}?ref=v1': ")
    assert "\n" not in lead and len(lead) < 400
    assert "does not appear to be a git repository" in lead   # git's own reason, once
    assert "git ls-remote" in chain                            # the whole story follows


def test_the_render_hook_prints_a_shared_bases_chain_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(tmp_path / "repo", {"base/kustomization.yaml": "resources:\n- missing.yaml\n",
                                   "o1/kustomization.yaml": "resources:\n- ../base\n",
                                   "o2/kustomization.yaml": "resources:\n- ../base\n"})
    for git in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *git], cwd=tmp_path / "repo", check=True, capture_output=True, timeout=60)
    monkeypatch.chdir(tmp_path / "repo")
    assert main(["hook", "render", "--all"]) == 1
    out = capsys.readouterr().out.splitlines()
    lead = "base/kustomization.yaml:2: resources: 'missing.yaml' does not exist"
    assert out[0] == f"o1: does not render: {lead}"
    assert out[1].startswith("    accumulating resources:")
    assert out[2] == f"o2: does not render: {lead} (as o1, above)"
    assert out[3].startswith("2 of 2 roots do not render")


def test_a_resource_that_is_not_yaml_names_the_entry_and_line(tmp_path: Path) -> None:
    app = write_tree(tmp_path / "app", {"kustomization.yaml": "resources:\n- cm.yaml\n- bad.yaml\n",
                                        "cm.yaml": CM, "bad.yaml": CM + "data:\n  x: [\n"})
    lead, chain = failure(app)
    assert lead == (f"{app}/kustomization.yaml:3: resources: 'bad.yaml' is not valid YAML: line 6: "
                    "did not find expected node content")
    assert "MalformedYAMLError" in chain


@pytest.mark.parametrize("kustomization, want", [
    ("resources:\n- cm.yaml\npatches:\n- path: ../shared/p.yaml\n", "kustomization.yaml:4: patches[0].path"),
    ("resources:\n- cm.yaml\npatchesStrategicMerge:\n- ../shared/p.yaml\n",
     "kustomization.yaml:4: patchesStrategicMerge[0]"),
    ("configMapGenerator:\n- name: g\n  envs:\n  - a.env\n  - ../shared/e.env\n",
     "kustomization.yaml:5: configMapGenerator[0].envs"),
    ("secretGenerator:\n- name: s\n  files:\n  - k=../shared/e.env\n", "kustomization.yaml:4: secretGenerator[0].files"),
])
def test_a_file_the_load_restrictor_refuses_leads_with_the_entry_line_and_both_ways_to_allow_it(
        tmp_path: Path, kustomization: str, want: str) -> None:
    """Not kustomize's multi-line "trouble configuring builtin PatchTransformer with config:"
    first (issue 33 item 3): the kustomization's file and line, the field, the file refused,
    the flag and the .kzgit.toml setting that allow it; kustomize's words follow."""
    write_tree(tmp_path, {"shared/p.yaml": PATCH, "shared/e.env": "a=b\n", "app/cm.yaml": CM,
                          "app/a.env": "c=d\n", "app/kustomization.yaml": kustomization})
    lead, chain = failure(tmp_path / "app")
    path = "../shared/p.yaml" if "p.yaml" in kustomization else "../shared/e.env"
    assert lead.startswith(f"{tmp_path}/app/{want}: '{path}' is outside the kustomization's directory"), lead
    assert lead.endswith('allow it with --load-restrictor LoadRestrictionsNone or '
                         'load-restrictor = "LoadRestrictionsNone" in .kzgit.toml (granted in '
                         'your ~/.config/kzgit/config.toml or by kzgit trust)')
    assert "is not in or below" in chain


def test_an_error_in_a_remote_base_names_its_url_not_the_cache(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A broken remote base (issue 33 item 6): the lead and kustomize's chain name the file by
    the repository's URL and the entry as written, never kzgit's cache directory."""
    remote = write_tree(tmp_path / "remote", {"base/kustomization.yaml": "resources:\n- gone.yaml\n"})
    for git in (["init", "-q"], ["add", "-A"], ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "1"],
                ["tag", "v1"]):
        subprocess.run(["git", *git], cwd=remote, check=True, capture_output=True, timeout=60)
    cache = tmp_path / "cache"
    monkeypatch.setenv("KZGIT_CACHE_DIR", str(cache))
    entry = f"file://{remote}//base?ref=v1"
    app = write_tree(tmp_path / "app", {"kustomization.yaml": f"resources:\n- {entry}\n"})
    lead, chain = failure(app)
    assert lead == (f"file://{remote}//base/kustomization.yaml:2: resources: 'gone.yaml' does not exist "
                    f"(in {entry})")
    assert str(cache) not in chain and f"file://{remote}//base/gone.yaml" in chain
