"""go-yaml's line numbers in YAML syntax errors, for resources (go-yaml v3) and kustomization
files (go-yaml v2): kubectl's words, recorded with kubectl v1.32.3 (Kustomize v5.5.0), and
re-checked against the kubectl on PATH when there is one."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Dict, Tuple

import pytest

from kzgit.cli.main import main

# name -> (text, what kubectl says of it as a resource file, as a kustomization file)
CASES: Dict[str, Tuple[str, str, str]] = {
    "unclosed flow sequence on the last line": (
        "a: 1\n" * 44 + "b: [x, y\n",
        "yaml: line 44: did not find expected ',' or ']'", "yaml: line 45: did not find expected ',' or ']'"),
    "unclosed flow sequence, no final newline": (
        "a: 1\nb: c\nd: [x, y",
        "yaml: line 2: did not find expected ',' or ']'", "yaml: line 3: did not find expected ',' or ']'"),
    "unclosed flow mapping": (
        "a: 1\nb: {x: 1\nc: 2\n",
        "yaml: line 1: did not find expected ',' or '}'", "yaml: line 2: did not find expected ',' or '}'"),
    "unclosed double quote (a scanner error)": (
        "a: 1\nb: \"open\nc: d\n",
        "yaml: line 2: found unexpected end of stream", "yaml: line 4: found unexpected end of stream"),
    "key at a lesser indentation": (
        "a:\n  b: c\n d: e\n",
        "yaml: line 2: did not find expected key", "yaml: line 2: did not find expected key"),
    "tab in indentation": (
        "a:\n  b: c\n\t d: e\n",
        "yaml: line 2: found a tab character that violates indentation",
        "yaml: line 3: found a tab character that violates indentation"),
    "mapping value on line 0 (no line printed)": (
        "a: b: c\n",
        "yaml: mapping values are not allowed in this context",
        "yaml: mapping values are not allowed in this context"),
    "sequence then mapping": (
        "- a\nb: c\n",
        "yaml: line 1: did not find expected '-' indicator", "yaml: line 1: did not find expected '-' indicator"),
    "plain scalar without ':'": (
        "a: 1\nb\n", "yaml: line 2: could not find expected ':'", "yaml: line 3: could not find expected ':'"),
    "undefined alias": (
        "a: *nope\n", "yaml: unknown anchor 'nope' referenced", "yaml: unknown anchor 'nope' referenced"),
}


def _tree(tmp_path: Path, text: str, kind: str) -> Path:
    d = tmp_path / kind
    d.mkdir()
    if kind == "resource":
        (d / "r.yaml").write_text(text)
        (d / "kustomization.yaml").write_text("resources:\n- r.yaml\n")
    else:
        (d / "kustomization.yaml").write_text(text)
    return d


def _error_line(err: str) -> str:
    # the reader's "yaml: " (kzgit writes "MalformedYAMLError: yaml: ..."), not a file name
    # ending in .yaml (the lead line names the kustomization.yaml)
    m = re.search(r"(?<![.\w])yaml: (?!MalformedYAMLError)(?:line \d+: )?.*?(?= in File|\"|$)", err, re.M)
    assert m, err
    return m.group(0)


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("kind", ["resource", "kustomization"])
def test_syntax_error_line_is_kubectls(name: str, kind: str, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    text, as_resource, as_kustomization = CASES[name]
    assert main(["build", str(_tree(tmp_path, text, kind))]) == 1
    err = capsys.readouterr().err
    assert _error_line(err) == (as_resource if kind == "resource" else as_kustomization)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not on PATH: no differential check")
@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("kind", ["resource", "kustomization"])
def test_syntax_error_line_matches_kubectl(name: str, kind: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    d = _tree(tmp_path, CASES[name][0], kind)
    theirs = subprocess.run(["kubectl", "kustomize", str(d)], capture_output=True, text=True, timeout=120)
    assert theirs.returncode != 0
    assert main(["build", str(d)]) == 1
    assert _error_line(capsys.readouterr().err) == _error_line(theirs.stderr)
