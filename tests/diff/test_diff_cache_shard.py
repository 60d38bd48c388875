"""``kzgit diff`` with the render cache (``-v``), ``--shard`` and ``--merge``."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, List

import pytest
from gitserver import GitRepo, isolate

from kzgit.cli.main import main


def files(n: int) -> Dict[str, str]:
    out = {"base/kustomization.yaml": "resources:\n- cm.yaml\n",
           "base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n"}
    for i in range(n):
        out[f"overlays/o{i}/kustomization.yaml"] = (f"resources:\n- ../../base\nnamePrefix: o{i}-\n"
                                                   "patches:\n- path: patch.yaml\n")
        out[f"overlays/o{i}/patch.yaml"] = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"
                                            f"data:\n  a: o{i}\n" + "".join(f"  pad{j}: x\n" for j in range(i * 20)))
    return out


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(monkeypatch, tmp_path)
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text("[user]\n\tname = T\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def kz(repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
       *argv: str) -> "tuple[int, str, str]":
    monkeypatch.chdir(repo)
    rc = main(["diff", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def renders(err: str) -> Dict[str, str]:
    found = re.findall(r"^(built|cached|failed) +(\S+ at .+) \(\d+\.\d\ds\)$", err, re.M)
    return {what: status for status, what in found}


@pytest.fixture()
def pushed(tmp_path: Path) -> Path:
    """Two commits: the second changes the base, so every overlay changes."""
    repo = GitRepo.create(str(tmp_path / "r"), files(6))
    repo.tag("c0")
    repo.commit({"base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n  new: c\n"})
    repo.tag("c1")
    return Path(repo.path)


def test_rerun_after_a_push_renders_only_what_changed(pushed: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = kz(pushed, monkeypatch, capsys, "--base", "c0", "--head", "c1", "-v", "-j", "1")
    assert rc == 0, err
    assert set(renders(err).values()) == {"built"} and len(renders(err)) == 12
    rc, out2, err = kz(pushed, monkeypatch, capsys, "--base", "c0", "--head", "c1", "-v", "-j", "1")
    assert out2 == out and set(renders(err).values()) == {"cached"}
    # a push changing one overlay: only its head rendering is built (its blobs are new)
    GitRepo(str(pushed)).commit({"overlays/o3/patch.yaml": "apiVersion: v1\nkind: ConfigMap\n"
                                 "metadata:\n  name: cm\ndata:\n  a: pushed\n"})
    rc, out3, err = kz(pushed, monkeypatch, capsys, "--base", "c0", "--head", "HEAD", "-v", "-j", "1")
    got = renders(err)
    assert got.pop("overlays/o3 at HEAD") == "built" and set(got.values()) == {"cached"}
    assert "a: pushed" in out3
    # both revisions' dependency graphs come from the cache too (no kustomization changed)
    import kzgit.diff.compare
    import kzgit.graph

    def no_scan(*a: object, **k: object) -> None:
        raise AssertionError("the graph was parsed again")
    monkeypatch.setattr(kzgit.graph, "scan", no_scan)
    monkeypatch.setattr(kzgit.diff.compare, "scan", no_scan)
    assert kz(pushed, monkeypatch, capsys, "--base", "c0", "--head", "HEAD")[1] == out3


@pytest.mark.parametrize("fmt", ["json", "text", "github"])
def test_merged_shards_equal_the_unsharded_report(pushed: Path, tmp_path: Path, fmt: str,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    rc, whole, _ = kz(pushed, monkeypatch, capsys, "--base", "c0", "--head", "c1", "--format", fmt,
                      "--exit-code", "--no-cache")
    assert rc == 1
    for n in (2, 3, 7):
        reports: List[str] = []
        roots: List[str] = []
        for i in range(1, n + 1):
            rc, out, _ = kz(pushed, monkeypatch, capsys, "--base", "c0", "--head", "c1", "--format",
                            "json", "--shard", f"{i}/{n}")
            p = tmp_path / f"shard-{n}-{i}.json"
            p.write_text(out)
            reports.append(str(p))
            roots += [r["root"] for r in json.loads(out)["roots"]]
        assert sorted(roots) == [f"overlays/o{i}" for i in range(6)] and len(set(roots)) == 6
        rc, merged, _ = kz(pushed, monkeypatch, capsys, "--merge", *reports, "--format", fmt,
                           "--exit-code")
        # github's stop-commands token is random per run
        assert rc == 1 and re.sub(r"[0-9a-f]{32}", "T", merged) == re.sub(r"[0-9a-f]{32}", "T", whole)


def test_merge_refuses_reports_of_other_revisions(pushed: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    _, a, _ = kz(pushed, monkeypatch, capsys, "--base", "c0", "--head", "c1", "--format", "json")
    _, b, _ = kz(pushed, monkeypatch, capsys, "--base", "c1", "--head", "c0", "--format", "json")
    (tmp_path / "a.json").write_text(a)
    (tmp_path / "b.json").write_text(b)
    (tmp_path / "bad.json").write_text("{}")
    rc, _, err = kz(pushed, monkeypatch, capsys, "--merge", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert rc == 2 and "report 2 compares" in err
    rc, _, err = kz(pushed, monkeypatch, capsys, "--merge", str(tmp_path / "bad.json"))
    assert rc == 2 and "bad.json: not a kzgit diff JSON report" in err
    rc, _, err = kz(pushed, monkeypatch, capsys, "--merge", str(tmp_path / "missing.json"))
    assert rc == 2 and "cannot read" in err


def test_merge_refuses_a_partial_doubled_or_foreign_set_of_shards(
        pushed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    def shard(spec: str, name: str, *extra: str) -> str:
        rc, out, _ = kz(pushed, monkeypatch, capsys, "--base", "c0", "--head", "c1", "--format",
                        "json", "--shard", spec, *extra)
        assert json.loads(out)["shard"] == dict(zip(("index", "count"), map(int, spec.split("/"))))
        (tmp_path / name).write_text(out)
        return str(tmp_path / name)

    one, two, three = (shard(f"{i}/3", f"s{i}.json") for i in (1, 2, 3))
    # two of three: the merged report would pass for the whole diff
    rc, out, err = kz(pushed, monkeypatch, capsys, "--merge", one, three)
    assert rc == 2 and out == "" and "shard 2 of 3 missing: the merged report would be partial" in err
    # the same shard twice (a copied artifact) is named, not silently de-duplicated
    rc, _, err = kz(pushed, monkeypatch, capsys, "--merge", one, two, two, three)
    assert rc == 2 and f"shard 2/3 given twice: {two} and {two}" in err
    # a shard of a 2-way split does not complete a 3-way one
    other = shard("2/2", "other.json")
    rc, _, err = kz(pushed, monkeypatch, capsys, "--merge", one, other, three)
    assert rc == 2 and f"{other} is shard 2/2" in err
    # a shard of another diff of the same revisions (made with another configuration, so
    # another set of roots): its fingerprint differs
    data = json.loads((tmp_path / "s2.json").read_text())
    data["fingerprint"] = "0" * 64
    (tmp_path / "foreign.json").write_text(json.dumps(data))
    rc, _, err = kz(pushed, monkeypatch, capsys, "--merge", one, str(tmp_path / "foreign.json"), three)
    assert rc == 2 and f"{tmp_path / 'foreign.json'} is a shard of another diff than {one}" in err
    # an unsharded report is not a shard
    rc, whole, _ = kz(pushed, monkeypatch, capsys, "--base", "c0", "--head", "c1", "--format", "json")
    (tmp_path / "whole.json").write_text(whole)
    rc, _, err = kz(pushed, monkeypatch, capsys, "--merge", str(tmp_path / "whole.json"))
    assert rc == 2 and "whole.json is not a shard report" in err
    # the complete set merges, in any order
    rc, out, err = kz(pushed, monkeypatch, capsys, "--merge", three, one, two, "--format", "json")
    assert rc == 0, err
    assert json.loads(out)["fingerprint"] == json.loads(whole)["fingerprint"]


@pytest.mark.parametrize("jobs", [1, 2])
def test_each_rendering_is_told_as_it_finishes(pushed: Path, jobs: int) -> None:
    """``kzgit diff -v`` prints each rendering when it is done (issue 33 item 3), not all of
    them at the end: the library tells ``on_render`` before it compares anything."""
    from kzgit.diff import DiffOptions, diff
    import kzgit.diff.compare as compare
    told: List[str] = []
    compared_after: List[int] = []
    real = compare._root_diff

    def spy(*args: Any, **kwargs: Any) -> Any:
        compared_after.append(len(told))
        return real(*args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(compare, "_root_diff", spy)
        report = diff(str(pushed), DiffOptions(base="c0", head="c1", jobs=jobs, repo=str(pushed),
                                               on_render=lambda r: told.append(f"{r.root} at {r.label}")))
    assert sorted(told) == sorted(f"{r.root} at {r.label}" for r in report.renders) and len(told) == 12
    assert compared_after and min(compared_after) == 12   # every one told before the first comparison
