"""The progress line on a terminal (kzgit.cli.progress): shown by hook render, validate and diff
when stderr is a terminal, never in pre-commit (not a terminal) nor with -v."""
from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest

from helpers import write_tree
from kzgit.cli.main import main
from kzgit.cli.progress import Progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_is_rewritten_then_erased() -> None:
    out = io.StringIO()
    p = Progress(out, "kzgit x", total=3)
    p.start -= Progress.DELAY   # a run that has taken a while
    p.step("a")
    p.step("b")
    p.step("c")      # the last: nothing more to show
    p.close()
    assert out.getvalue() == ("\r\x1b[Kkzgit x: 1/3 rendered, a\r\x1b[Kkzgit x: 2/3 rendered, b"
                              "\r\x1b[K")


def test_short_runs_stay_silent() -> None:
    out = io.StringIO()
    p = Progress(out, "kzgit x", total=3)
    p.step("a")
    p.close()
    assert out.getvalue() == ""


def _repo(tmp_path: Path) -> Path:
    files = {f"o{i}/kustomization.yaml": "resources:\n- ../base\n" for i in range(3)}
    files["base/kustomization.yaml"] = "resources:\n- cm.yaml\n"
    files["base/cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
    repo = write_tree(tmp_path / "repo", files)
    for git in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *git], cwd=repo, check=True, capture_output=True, timeout=60)
    return repo


@pytest.mark.parametrize("argv, command", [
    (["hook", "render", "--all", "--no-cache", "-j", "1"], "kzgit hook render"),
    (["validate", "--all", "--no-cache", "-j", "1"], "kzgit validate"),
])
def test_the_commands_show_progress_on_a_terminal_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       argv: list, command: str) -> None:
    monkeypatch.chdir(_repo(tmp_path))
    monkeypatch.setattr(Progress, "DELAY", 0.0)
    term = _Terminal()
    monkeypatch.setattr("sys.stderr", term)
    assert main(argv) == 0
    shown = term.getvalue()
    assert f"\r\x1b[K{command}: 1/3 rendered, o" in shown and f"{command}: 2/3 rendered" in shown
    assert shown.rfind("\r\x1b[K") > shown.rfind("rendered")   # erased at the end
    # not a terminal (pre-commit), or -v: no progress line
    pipe = io.StringIO()
    monkeypatch.setattr("sys.stderr", pipe)
    assert main(argv) == 0
    assert "\x1b[K" not in pipe.getvalue()
    monkeypatch.setattr("sys.stderr", term := _Terminal())
    assert main([*argv, "-v"]) == 0
    assert "\x1b[K" not in term.getvalue() and "built" in term.getvalue()
