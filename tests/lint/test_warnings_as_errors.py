"""``warnings-as-errors = true``: the render hook fails on a root whose build warns (kustomize
issue #6040), naming the root and the warning; without it the same root passes."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from helpers import WEB_DEPLOYMENT
from kzgit.cli.main import main

FILES = {
    "base/kustomization.yaml": "resources:\n- deploy.yaml\n",
    "base/deploy.yaml": WEB_DEPLOYMENT,
    "app/kustomization.yaml": "resources:\n- ../base\ncommonLabels:\n  team: shop\n",
    "clean/kustomization.yaml": "resources:\n- ../base\nnamePrefix: c-\n",
}


def _repo(root: Path, config: str) -> Path:
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=60)
    for rel, text in {**FILES, ".kzgit.toml": config}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, timeout=60)
    return root


@pytest.mark.parametrize("cached", [False, True])
def test_render_hook_fails_on_warnings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str], cached: bool) -> None:
    monkeypatch.chdir(_repo(tmp_path, "warnings-as-errors = true\n"))
    if cached:   # the second run answers from the render cache: its warnings were stored
        main(["hook", "render", "--all"])
        capsys.readouterr()
    assert main(["hook", "render", "--all", "-v"]) == 1
    out, err = capsys.readouterr()
    assert out == ("app: warns (warnings-as-errors): # Warning: 'commonLabels' is deprecated. Please use "
                   "'labels' instead. Run 'kustomize edit fix' to update your Kustomization automatically.\n"
                   "0 of 2 roots do not render; 2 rendered (1 of them warns) "
                   f"({0 if cached else 2} built, {2 if cached else 0} cached; -v lists them)\n")
    assert ("cached " if cached else "built  ") + " app" in err


def test_render_hook_passes_warnings_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(_repo(tmp_path, "cache = true\n"))
    assert main(["hook", "render", "--all"]) == 0
    assert capsys.readouterr().out == ""


def test_hook_all_with_validate_still_fails_on_warnings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """With a [validate] table ``kzgit hook all`` validates in place of rendering; the warnings
    of the roots still fail it under warnings-as-errors (and only they: validate reports the
    roots that do not render)."""
    monkeypatch.chdir(_repo(tmp_path, "warnings-as-errors = true\n[validate]\nstrict = true\n"))
    assert main(["hook", "all", "--all"]) == 1
    out = capsys.readouterr().out
    assert out == ("kzgit-render:\napp: warns (warnings-as-errors): # Warning: 'commonLabels' is deprecated. "
                   "Please use 'labels' instead. Run 'kustomize edit fix' to update your Kustomization "
                   "automatically.\n")
    (tmp_path / ".kzgit.toml").write_text("[validate]\nstrict = true\n")
    assert main(["hook", "all", "--all"]) == 0
    assert capsys.readouterr().out == ""
