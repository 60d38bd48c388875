"""``action.yml``: the composite action's script steps, run locally as the runner would.

A small stand-in for the runner: it evaluates the ``${{ }}`` expressions the
action uses (``inputs.*``, ``github.*``, ``steps.<id>.outputs.*``, ``||`` and
string literals), runs each ``run:`` script with bash in its working directory
and environment, with ``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY`` and
``RUNNER_TEMP`` pointing at temp files, and reads the step outputs back in both
of the runner's forms (``name=value`` and ``name<<DELIM``).  The install step
needs the network and is only syntax-checked; kzgit comes from this venv.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest
import yaml
from gitserver import GitRepo, isolate
from helpers import PROJECT

ACTION = yaml.safe_load((PROJECT / "action.yml").read_text())
_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def parse_outputs(text: str) -> Dict[str, str]:
    """The runner's GITHUB_OUTPUT file format."""
    out: Dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            body: List[str] = []
            while lines[i] != delim:
                body.append(lines[i])
                i += 1
            i += 1
            out[name] = "\n".join(body)
        else:
            name, value = line.split("=", 1)
            out[name] = value
    return out


class Runner:
    def __init__(self, tmp: Path, workspace: Path, inputs: Dict[str, str],
                 event: Optional[Dict[str, Any]] = None) -> None:
        self.tmp, self.workspace = tmp, workspace
        self.inputs = {k: str(v.get("default", "")) for k, v in ACTION["inputs"].items()}
        unknown = set(inputs) - set(self.inputs)
        assert not unknown, f"not inputs of the action: {unknown}"
        self.inputs.update(inputs)
        self.github = {"action_path": str(PROJECT), "event": event or {}}
        self.steps: Dict[str, Dict[str, str]] = {}
        tmp.mkdir(parents=True, exist_ok=True)
        self.summary = tmp / "step-summary.md"
        self.summary.write_text("")
        (tmp / "runner-temp").mkdir()

    def value(self, expr: str) -> str:
        for alt in (a.strip() for a in expr.split("||")):
            if alt.startswith("'") and alt.endswith("'"):
                v: Any = alt[1:-1]
            else:
                head, *path = alt.split(".")
                v = {"inputs": self.inputs, "github": self.github, "steps": self.steps}[head]
                for p in path:
                    v = v.get(p, "") if isinstance(v, dict) else ""
                    if p == "outputs" and isinstance(v, str):
                        v = {}
            if v:
                return str(v)
        return ""

    def render(self, text: str) -> str:
        return _EXPR.sub(lambda m: self.value(m.group(1)), text)

    def condition(self, cond: Optional[str]) -> bool:
        if cond is None:
            return True
        m = re.fullmatch(r"(\S+) == '([^']*)'", cond.strip())
        assert m, f"the test runner cannot evaluate: {cond}"
        return self.value(m.group(1)) == m.group(2)

    def run(self, skip: Tuple[str, ...] = ("install",)) -> Tuple[int, str, str]:
        """Run the steps; (exit code of the first failing step or 0, stdout, stderr)."""
        out_all, err_all = "", ""
        for step in ACTION["runs"]["steps"]:
            sid = step.get("id", "")
            if sid in skip or not self.condition(step.get("if")):
                self.steps[sid] = {"outputs": {}}  # type: ignore[dict-item]
                continue
            output = self.tmp / f"output-{sid}"
            output.write_text("")
            env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
            env.update({k: self.render(str(v)) for k, v in (step.get("env") or {}).items()})
            env.update({"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(self.summary),
                        "RUNNER_TEMP": str(self.tmp / "runner-temp"), "GITHUB_ACTIONS": "true",
                        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"})
            cwd = self.workspace / self.render(step.get("working-directory", "."))
            p = subprocess.run(["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", step["run"]],
                               cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
            out_all += p.stdout
            err_all += p.stderr
            self.steps[sid] = {"outputs": parse_outputs(output.read_text())}  # type: ignore[dict-item]
            if p.returncode != 0:
                return p.returncode, out_all, err_all
        return 0, out_all, err_all

    def outputs(self) -> Dict[str, str]:
        return {name: self.render(spec["value"]) for name, spec in ACTION["outputs"].items()}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate(monkeypatch, tmp_path)
    r = GitRepo.create(str(tmp_path / "ws"), {
        "app/kustomization.yaml": "resources:\n- cm.yaml\n",
        "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: \"1\"\n",
        "docs/README.md": "docs\n"})
    r.tag("base")
    r.commit({"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: \"2\"\n"})
    return r


def test_action_shape() -> None:
    assert ACTION["runs"]["using"] == "composite"
    assert set(ACTION["inputs"]) >= {"base", "head", "format", "fail-on-change"}
    assert set(ACTION["outputs"]) >= {"changed", "summary", "summary-file"}
    for step in ACTION["runs"]["steps"]:
        assert step["shell"] == "bash"
        # inputs reach scripts through env only: no expression is pasted into shell code
        assert "${{" not in step["run"], step["name"]
        subprocess.run(["bash", "-n", "-c", step["run"]], check=True, timeout=30)
    install = ACTION["runs"]["steps"][0]
    assert install["id"] == "install" and 'pip install' in install["run"]
    assert "$KZGIT_ACTION_PATH" in install["run"] and install["env"]["KZGIT_ACTION_PATH"] == "${{ github.action_path }}"


def test_action_reports_a_change(tmp_path: Path, repo: GitRepo) -> None:
    runner = Runner(tmp_path, Path(repo.path), {"install": "false"},
                    event={"pull_request": {"base": {"sha": "base"}}})
    rc, out, err = runner.run()
    assert rc == 0, err
    outputs = runner.outputs()
    assert outputs["changed"] == "true"
    assert out.startswith("::notice file=app/kustomization.yaml,title=kzgit diff%3A app 1 changed::"
                          "changed ConfigMap/cm\n::group::kzgit diff: app 1 changed\n")
    summary = Path(outputs["summary-file"]).read_text()
    assert runner.summary.read_text() == summary
    assert outputs["summary"] + "\n" == summary
    assert "| <code>app</code> | 1 changed |" in summary and '-  a: "1"\n+  a: "2"\n' in summary
    assert Path(outputs["report-file"]).read_text() == out


def test_action_fail_on_change_and_no_change(tmp_path: Path, repo: GitRepo) -> None:
    runner = Runner(tmp_path / "a", Path(repo.path), {"install": "false", "base": "base",
                                                      "fail-on-change": "true"})
    rc, out, _ = runner.run()
    assert rc == 1 and runner.outputs()["changed"] == "true"
    assert out.endswith("::error title=kzgit diff::the rendered kustomizations changed (fail-on-change is set)\n")
    runner = Runner(tmp_path / "b", Path(repo.path), {"install": "false", "base": "HEAD",
                                                      "fail-on-change": "true", "format": "json",
                                                      "working-directory": "docs"})
    rc, out, err = runner.run()
    assert rc == 0, err
    assert runner.outputs()["changed"] == "false"
    assert '"roots": []' in out
    assert "No kustomization root is affected by the change." in runner.summary.read_text()


def test_action_fails_when_a_root_does_not_render(tmp_path: Path, repo: GitRepo) -> None:
    repo.commit({"app/kustomization.yaml": "resources:\n- missing.yaml\n"}, "broken")
    runner = Runner(tmp_path, Path(repo.path), {"install": "false", "base": "HEAD~1"})
    rc, out, _ = runner.run()
    assert rc == 4
    assert "::error file=app/kustomization.yaml,title=kzgit diff%3A app does not render::" in out
    assert out.endswith("::error title=kzgit diff::kzgit diff failed with exit code 4 (4: a root does not "
                        "render, 2: usage or configuration)\n")
    assert "does not render at <code>HEAD</code>" in runner.summary.read_text()
    assert runner.outputs()["changed"] == ""


def test_action_shards_and_merges(tmp_path: Path, repo: GitRepo) -> None:
    """A matrix of two shard jobs with format json, then a merging job: one report."""
    repo.commit({"web/kustomization.yaml": "resources:\n- cm.yaml\n",
                 "web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n"})
    reports = tmp_path / "reports"
    reports.mkdir()
    roots = []
    for i in (1, 2):
        runner = Runner(tmp_path / f"s{i}", Path(repo.path), {"install": "false", "base": "base",
                                                                "format": "json", "shard": f"{i}/2"})
        rc, out, err = runner.run()
        assert rc == 0, err
        (reports / f"shard {i}.json").write_text(Path(runner.outputs()["report-file"]).read_text())
        roots += [r["root"] for r in __import__("json").loads(out)["roots"]]
    assert sorted(roots) == ["app", "web"]
    whole = Runner(tmp_path / "w", Path(repo.path), {"install": "false", "base": "base",
                                                     "format": "text"})
    assert whole.run()[0] == 0
    merged = Runner(tmp_path / "m", Path(repo.path), {"install": "false", "format": "text",
                                                      "merge": f"{reports}/*.json"})
    rc, out, err = merged.run()
    assert rc == 0, err
    assert merged.outputs()["changed"] == "true"
    assert out == Path(whole.outputs()["report-file"]).read_text()
