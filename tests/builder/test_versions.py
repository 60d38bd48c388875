"""Selecting the Kustomize release: the table (kzgit.versions), the precedence of the
flag, the environment and the configuration, refusals (exit 2) and the render cache's key.

The managed-by label is the witness: kubectl 1.32 and 1.33 write ``kustomize-(devel)``, 1.35
``kustomize-v5.7.1`` and 1.36 ``kustomize-v5.8.1`` (tests/fixtures/buildmetadata/managedby-*)."""
from __future__ import annotations

from pathlib import Path

import pytest

from kzgit.cli.main import main
from kzgit.errors import UsageError
from kzgit import versions

TREE = {
    "kustomization.yaml": "buildMetadata: [managedByLabel]\nresources:\n- cm.yaml\n",
    "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
}


@pytest.mark.parametrize("text, release", [
    ("5.5.0", "5.5.0"), ("v5.6.0", "5.6.0"), ("5.7.1", "5.7.1"), ("5.8.1", "5.8.1"),
    ("5.5", "5.5.0"), ("5.6", "5.6.0"), ("5.7", "5.7.1"), ("5.8", "5.8.1"),
    ("kubectl-1.32", "5.5.0"), ("kubectl-1.33", "5.6.0"), ("kubectl-1.34", "5.7.1"),
    ("kubectl-1.35", "5.7.1"), ("kubectl-1.36", "5.8.1"), ("kubectl-1.37", "5.8.1"),
    ("argocd-3.0", "5.6.0"), ("argocd-3.3", "5.8.1"), ("ArgoCD-3.5", "5.8.1"),
    ("5.7.0", "5.7.0"), ("argocd-3.1", "5.7.0"), ("argocd-3.2", "5.7.0"),
    ("flux-2.6", "5.6.0"), ("flux-2.7", "5.7.1"), ("flux-2.8", "5.8.1"), ("flux-2.9", "5.8.1"),
])
def test_values_resolve_through_the_one_table(text: str, release: str) -> None:
    assert versions.name(versions.resolve(text, "--kustomize-version")) == release


@pytest.mark.parametrize("text, says", [
    ("5.8.0", "5.7.1 or 5.8.1"), ("argocd-3.3.0", "unknown"), ("5.4.3", "5.5.0"), ("4.5.7", "older than 5.5.0"),
    ("5.9.0", "nearest supported: 5.8.1"), ("kubectl-1.31", "unknown"), ("latest", "known: 5.5.0"),
])
def test_releases_kzgit_cannot_reproduce_are_refused_naming_the_nearest(text: str, says: str) -> None:
    with pytest.raises(UsageError) as ei:
        versions.resolve(text, "--kustomize-version")
    assert says in str(ei.value)
    assert str(ei.value).startswith("--kustomize-version: ")


def test_every_deployer_names_a_release_the_table_knows() -> None:
    for deployer, release in versions.DEPLOYERS.items():
        assert release in versions.SUPPORTED or release in versions.REFUSED, deployer
    assert versions.DEFAULT == max(versions.SUPPORTED, key=versions.parse)


def test_5_7_0_renders_as_5_7_1_and_refuses_only_its_args_one_liner(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Argo CD 3.1 and 3.2 ship Kustomize 5.7.0, which differs from 5.7.1 in the tokenizer of
    an exec plugin's argsOneLiner alone (kustomize PR #5943): kzgit renders the rest as 5.7.1,
    with 5.7.0's managed-by value, and refuses argsOneLiner naming the way out."""
    monkeypatch.delenv(versions.ENV_VAR, raising=False)
    monkeypatch.setenv("KZGIT_CACHE_DIR", str(tmp_path / "cache"))
    root = _tree(tmp_path / "r", 'kustomize-version = "argocd-3.2"\n')
    assert _managed_by(capsys, str(root)) == "kustomize-v5.7.0"
    home = tmp_path / "plugins"
    plugin = home / "x.example.com" / "v1" / "args" / "Args"
    plugin.parent.mkdir(parents=True)
    plugin.write_text("#!/bin/sh\necho '{}'\n")
    plugin.chmod(0o755)
    (root / "gen.yaml").write_text("apiVersion: x.example.com/v1\nkind: Args\nmetadata:\n  name: a\n"
                                   "argsOneLiner: a b\n")
    (root / "kustomization.yaml").write_text("generators:\n- gen.yaml\n")
    monkeypatch.setenv("KUSTOMIZE_PLUGIN_HOME", str(home))
    assert main(["build", "--enable-alpha-plugins", "--enable-exec", "--sandbox", "off", str(root)]) == 1
    err = capsys.readouterr().err
    assert "argsOneLiner is not supported as Kustomize 5.7.0 splits it" in err
    assert "5.7.1" in err and "argsFromFile" in err


def _tree(root: Path, config: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir()
    for name, text in TREE.items():
        (root / name).write_text(text)
    if config:
        (root / ".kzgit.toml").write_text(config)
    return root


def _managed_by(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["build", *argv]) == 0
    line = [ln for ln in capsys.readouterr().out.splitlines() if "managed-by" in ln]
    return line[0].split(": ")[1]


def test_precedence_flag_then_environment_then_configuration_then_default(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(versions.ENV_VAR, raising=False)
    monkeypatch.setenv("KZGIT_CACHE_DIR", str(tmp_path / "cache"))
    plain = _tree(tmp_path / "plain")
    assert _managed_by(capsys, str(plain)) == "kustomize-v5.8.1"          # the default
    pinned = _tree(tmp_path / "pinned", 'kustomize-version = "kubectl-1.35"\n')
    assert _managed_by(capsys, str(pinned)) == "kustomize-v5.7.1"         # the configuration
    monkeypatch.setenv(versions.ENV_VAR, "5.6")
    assert _managed_by(capsys, str(pinned)) == "kustomize-(devel)"        # the environment
    assert _managed_by(capsys, str(pinned), "--kustomize-version", "5.8.1") == "kustomize-v5.8.1"


def test_pyproject_table_pins_too(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(versions.ENV_VAR, raising=False)
    root = _tree(tmp_path / "r")
    (root / "pyproject.toml").write_text('[tool.kzgit]\nkustomize-version = "5.7"\n')
    assert _managed_by(capsys, str(root), "--no-cache") == "kustomize-v5.7.1"


@pytest.mark.parametrize("how", ["flag", "env", "config"])
def test_an_unsupported_release_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    monkeypatch.delenv(versions.ENV_VAR, raising=False)
    root = _tree(tmp_path / "r", 'kustomize-version = "5.8.0"\n' if how == "config" else "")
    argv = ["build", str(root)] + (["--kustomize-version", "5.8.0"] if how == "flag" else [])
    if how == "env":
        monkeypatch.setenv(versions.ENV_VAR, "5.8.0")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Kustomize 5.8.0 is not supported" in err and "5.7.1 or 5.8.1" in err
    where = {"flag": "--kustomize-version", "env": versions.ENV_VAR, "config": ".kzgit.toml"}[how]
    assert where in err


def test_the_render_cache_keys_on_the_release(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(versions.ENV_VAR, raising=False)
    monkeypatch.setenv("KZGIT_CACHE_DIR", str(tmp_path / "cache"))
    root = _tree(tmp_path / "r")
    for release, value in [("5.8.1", "kustomize-v5.8.1"), ("5.5.0", "kustomize-(devel)"),
                           ("5.8.1", "kustomize-v5.8.1"), ("5.7.1", "kustomize-v5.7.1")]:
        assert _managed_by(capsys, str(root), "--kustomize-version", release) == value


def test_build_help_names_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["build", "--help"])
    assert f"else {versions.DEFAULT}" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("field, entry", [
    ("sourceValue", "replacements:\n- sourceValue: x\n  targets:\n  - select: {kind: ConfigMap}\n"),
    ("devel", "helmCharts:\n- name: c\n  devel: true\n"),
])
def test_a_field_of_a_later_release_fails_as_the_pinned_one_does_and_says_why_first(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        field: str, entry: str) -> None:
    monkeypatch.delenv(versions.ENV_VAR, raising=False)
    root = _tree(tmp_path / "r", 'kustomize-version = "5.6.0"\n')
    (root / "kustomization.yaml").write_text("resources:\n- cm.yaml\n" + entry)
    assert main(["build", "--no-cache", str(root)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == (f"Error: {field} needs Kustomize 5.7 or later; this repository pins 5.6.0 "
                        "(.kzgit.toml kustomize-version)")
    assert f'json: unknown field "{field}"' in lines[1]   # what kubectl 1.33 says


def test_a_field_no_release_knows_gets_no_lead(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(versions.ENV_VAR, raising=False)
    root = _tree(tmp_path / "r", 'kustomize-version = "5.6.0"\n')
    (root / "kustomization.yaml").write_text("resources:\n- cm.yaml\nsourceValues: x\n")
    assert main(["build", "--no-cache", str(root)]) == 1
    err = capsys.readouterr().err
    assert "needs Kustomize" not in err and 'unknown field "sourceValues"' in err
