"""Issue 24: a pull request's ``kzgit diff`` never prints a Secret's values.

A branch changes a generated Secret (``secretGenerator``) and a plain Secret (``data`` and
``stringData``).  In every format (text, JSON, GitHub workflow commands and the Markdown
summary) the values, and their base64, appear nowhere; which keys changed and a digest of each
value do.  ``--show-secrets`` prints them (which also shows the test would see a leak).
"""
from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from gitserver import GitRepo
from kzgit.cli.main import main
from kzgit.diff.redact import PLACEHOLDER

OLD = {"gen": "gen-old-Vq81xZ", "token": "tok-old-Hp37kQ", "api": "api-old-Rw52mN", "gone": "gone-Jt64bC"}
NEW = {"gen": "gen-new-Ls29fD", "token": "tok-new-Xc18vB", "api": "api-new-Nm73gH", "added": "add-Wk46pR"}


def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def _digest(s: str) -> str:
    return PLACEHOLDER.format(hashlib.sha256(s.encode()).hexdigest()[:8])


def _files(v: Dict[str, str]) -> Dict[str, str]:
    data = "".join(f"  {k}: {_b64(v[k])}\n" for k in ("token", "gone", "added") if k in v)
    return {
        "app/kustomization.yaml": ("resources:\n- secret.yaml\nsecretGenerator:\n- name: gen\n"
                                   f"  literals:\n  - password={v['gen']}\n"),
        "app/secret.yaml": ("apiVersion: v1\nkind: Secret\nmetadata:\n  name: plain\n"
                            f"data:\n{data}stringData:\n  api: {v['api']}\n"),
    }


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = GitRepo.create(str(tmp_path / "repo"), _files(OLD))
    r.tag("base")
    r.commit({**_files(NEW)}, "rotate the secrets")
    r.tag("head")
    return Path(r.path)


def _run(repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
         *argv: str) -> Tuple[int, str]:
    monkeypatch.chdir(repo)
    rc = main(["diff", "--base", "base", "--head", "head", *argv])
    out, err = capsys.readouterr()
    return rc, out + err


def _leaks(text: str) -> List[str]:
    values = [*OLD.values(), *NEW.values()]
    return [v for v in values if v in text or _b64(v) in text or _b64(v).rstrip("=") in text]


FORMATS = [("text",), ("json",), ("github",)]


@pytest.mark.parametrize("fmt", FORMATS, ids=[f[0] for f in FORMATS])
def test_secret_values_are_redacted_in_every_format(repo: Path, tmp_path: Path, fmt: Tuple[str],
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    summary = tmp_path / "summary.md"
    step_summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    args = ["--format", fmt[0]] + (["--summary", str(summary)] if fmt[0] == "github" else [])
    rc, out = _run(repo, monkeypatch, capsys, *args)
    assert rc == 0, out
    written = summary.read_text() if summary.exists() else ""
    assert fmt[0] != "github" or written, "the Markdown summary was not written"
    everything = out + written + (step_summary.read_text() if step_summary.exists() else "")
    assert _leaks(everything) == []
    # which keys changed, and that they did, is still there: each value's digest, base and head
    for key, old, new in (("password", OLD["gen"], NEW["gen"]), ("token", OLD["token"], NEW["token"]),
                          ("api", OLD["api"], NEW["api"])):
        assert key in everything and _digest(old) in everything and _digest(new) in everything
    assert "gone" in everything and "added" in everything
    if fmt[0] == "json":
        diffs = "".join(c["diff"] for r in json.loads(out)["roots"] for c in r["resources"])
        assert f"-  token: {_digest(OLD['token'])}" in diffs
        assert f"+  token: {_digest(NEW['token'])}" in diffs
        assert f"+  added: {_digest(NEW['added'])}" in diffs and "-  gone: " in diffs


def test_show_secrets_prints_them(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _run(repo, monkeypatch, capsys, "--show-secrets")
    assert rc == 0, out
    assert set(_leaks(out)) == {*OLD.values(), *NEW.values()}
    assert "redacted" not in out


def test_an_unchanged_secret_is_not_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    r = GitRepo.create(str(tmp_path / "repo"), _files(OLD))
    r.tag("base")
    r.commit({"app/other.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: o\n",
              "app/kustomization.yaml": _files(OLD)["app/kustomization.yaml"].replace(
                  "- secret.yaml\n", "- secret.yaml\n- other.yaml\n")}, "another resource")
    r.tag("head")
    rc, out = _run(Path(r.path), monkeypatch, capsys, "--format", "json")
    assert rc == 0 and _leaks(out) == []
    (root,) = json.loads(out)["roots"]
    assert [c["kind"] for c in root["resources"]] == ["ConfigMap"]


@pytest.mark.parametrize("data", [
    "data:\n  token: 12345678901\n",                 # not a string: "expected string, got integer"
    "stringData:\n  api: true\n",
    "data:\n  token: not*base64*Zx91\n",             # not base64 (format: byte)
    "data: sekrit-Zx91-whole\n",                     # the whole field of the wrong type
])
def test_validation_findings_do_not_quote_a_secret_value(data: str) -> None:
    from kzgit.config import ValidatePolicy
    from kzgit.validate import Validator
    from kzgit.yamlio import load_documents
    (obj,) = load_documents("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n" + data)
    issues = Validator(ValidatePolicy()).check(obj)
    assert issues, "the value is invalid: there is a finding"
    text = "\n".join(f"{i.path}: {i.message}" for i in issues)
    for secret in ("12345678901", "true", "sekrit-Zx91-whole", "Zx91"):
        assert secret not in text, text
    assert "<redacted>" in text or "not base64" in text   # (that message never quotes it)
    # other kinds keep the value in the message (it is what helps)
    (cm,) = load_documents("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: 12345678901\n")
    assert "12345678901" in " ".join(i.message for i in Validator(ValidatePolicy()).check(cm) or [])


def test_build_errors_do_not_quote_a_secret_generator_value(tmp_path: Path) -> None:
    """kustomize quotes every literal source of a generator that has a bad one; for a Secret kzgit
    names the keys only (a ConfigMap keeps kustomize's message)."""
    from kzgit.builder import BuildOptions, build
    from kzgit.errors import BuildError
    for kind in ("secretGenerator", "configMapGenerator"):
        (tmp_path / "kustomization.yaml").write_text(
            f"{kind}:\n- name: s\n  literals:\n  - password=hunter2-Qx81\n  - oops-Zp47\n")
        with pytest.raises(BuildError) as e:
            build(str(tmp_path), BuildOptions())
        if kind == "secretGenerator":
            assert "hunter2-Qx81" not in str(e.value) and "oops-Zp47" not in str(e.value)
            assert "literal sources [password=<redacted> <redacted>]" in str(e.value)
        else:
            assert "literal sources [password=hunter2-Qx81 oops-Zp47]" in str(e.value)
    (tmp_path / "kustomization.yaml").write_text("secretGenerator:\n- name: s\n  envs:\n  - s.env\n")
    (tmp_path / "s.env").write_bytes(b"A=ok\nTOKEN=caf\xe9-Vn52\n")
    with pytest.raises(BuildError) as e:
        build(str(tmp_path), BuildOptions())
    assert "Vn52" not in str(e.value) and "233" not in str(e.value) and "line 2" in str(e.value)
