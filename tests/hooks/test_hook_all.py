"""``kzgit hook all``: every check on one workspace; validate when ``[validate]`` is configured."""
from __future__ import annotations

from pathlib import Path
from typing import Dict

import pytest
from helpers import WEB_DEPLOYMENT
from test_hooks import git, kz, make_repo, write

BAD_PORT = WEB_DEPLOYMENT + "        ports:\n        - containerPort: \"80\"\n"
FILES: Dict[str, str] = {
    "base/kustomization.yaml": "resources:\n- deploy.yaml\n",
    "base/deploy.yaml": BAD_PORT,
    "prod/kustomization.yaml": "resources:\n- ../base\nnamePrefix: prod-\n",
}
PORT_FINDING = ("prod: Deployment/prod-web: /spec/template/spec/containers/0/ports/0/containerPort: "
                'expected integer, got string "80" (base/deploy.yaml:')


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KZGIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PRE_COMMIT", raising=False)


def test_without_a_validate_table_all_renders_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", FILES)
    assert kz(repo, monkeypatch, capsys, "hook", "all", "--all") == (0, "", "")
    write(repo, {"prod/kustomization.yaml": "resources:\n- gone.yaml\n"})
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "all", "--all")
    assert rc == 1 and out.startswith("kzgit-render:\nprod: does not render")


@pytest.mark.parametrize("name, text", [(".kzgit.toml", "[validate]\n"),
                                        ("pyproject.toml", "[tool.kzgit.validate]\nstrict = true\n")])
def test_with_a_validate_table_all_validates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str], name: str, text: str) -> None:
    repo = make_repo(tmp_path / "r", {**FILES, name: text})
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "all", "--all")
    assert rc == 1 and out.startswith("kzgit-validate:\n") and PORT_FINDING in out
    assert "kzgit-render" not in out
    # the plain git pre-commit hook's form: the index (a temporary export, never cached)
    write(repo, {"base/deploy.yaml": BAD_PORT.replace('"80"', "80")})
    git(repo, "add", "-A")
    rc, out, err = kz(repo, monkeypatch, capsys, "hook", "all", "--staged", "-v")
    assert (rc, out) == (0, "") and "built   prod" in err
    # a root that does not render is validate's finding, once
    write(repo, {"prod/kustomization.yaml": "resources:\n- gone.yaml\n"})
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "all", "--all")
    assert rc == 1 and out.startswith("kzgit-validate:\n") and out.count("prod: does not render") == 1


def test_warnings_alone_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    thing = "apiVersion: other.io/v1\nkind: Thing\nmetadata:\n  name: t\n"
    repo = make_repo(tmp_path / "r", {"app/kustomization.yaml": "resources:\n- thing.yaml\n",
                                      "app/thing.yaml": thing, ".kzgit.toml": "[validate]\n"})
    rc, out, _ = kz(repo, monkeypatch, capsys, "hook", "all", "--all")
    assert rc == 0 and out.startswith("kzgit-validate:\n") and "warning: no schema for Thing" in out
    write(repo, {".kzgit.toml": "[validate]\nmissing-schemas = \"error\"\n"})
    assert kz(repo, monkeypatch, capsys, "hook", "all", "--all")[0] == 1
