"""``kzgit hook render`` with the render cache: ``-v``, ``--no-cache``, ``cache = false``, ``--shard``."""
from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from helpers import WEB_DEPLOYMENT, grant_user
from test_hooks import git, kz, make_repo, write

from kzgit.graph import parse_shard, shard

FILES: Dict[str, str] = {
    "base/kustomization.yaml": "resources:\n- cm.yaml\n",
    "base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n",
}
for _i in range(4):
    FILES[f"overlays/o{_i}/kustomization.yaml"] = f"resources:\n- ../../base\nnamePrefix: o{_i}-\n"
ROOTS = [f"overlays/o{i}" for i in range(4)]


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KZGIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PRE_COMMIT", raising=False)


def statuses(err: str) -> Dict[str, str]:
    """What -v listed (on stderr, away from the findings)."""
    found = re.findall(r"^(built|cached|failed) +(\S+) \(\d+\.\d\ds\)$", err, re.M)
    return {root: status for status, root in found}


def test_verbose_lists_each_root_built_then_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", FILES)
    rc, out, err = kz(repo, monkeypatch, capsys, "hook", "render", "--all", "-v")
    assert rc == 0 and statuses(err) == {r: "built" for r in ROOTS}
    rc, out, err = kz(repo, monkeypatch, capsys, "hook", "render", "--all", "-v")
    assert rc == 0 and statuses(err) == {r: "cached" for r in ROOTS}
    # quiet without -v, as before
    assert kz(repo, monkeypatch, capsys, "hook", "render", "--all") == (0, "", "")
    # one root's input changes: only that root is built
    write(repo, {"overlays/o2/kustomization.yaml": "resources:\n- ../../base\nnamePrefix: x-\n"})
    rc, out, err = kz(repo, monkeypatch, capsys, "hook", "render", "--all", "-v")
    assert statuses(err) == {**{r: "cached" for r in ROOTS}, "overlays/o2": "built"}
    write(repo, {"overlays/o1/kustomization.yaml": "resources:\n- ../../base\n- gone.yaml\n"})
    rc, out, err = kz(repo, monkeypatch, capsys, "hook", "render", "--all", "-v")
    assert rc == 1 and statuses(err)["overlays/o1"] == "failed"
    assert "overlays/o1: does not render" in out


def test_on_failure_what_failed_and_a_count_of_the_rest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """pre-commit shows a failing hook's output: what failed and one line counting the rest,
    not every root as built or cached; quiet on success; -v lists every root (item 14)."""
    repo = make_repo(tmp_path / "r", FILES)
    monkeypatch.setenv("PRE_COMMIT", "1")
    assert kz(repo, monkeypatch, capsys, "hook", "render", "base/cm.yaml") == (0, "", "")
    write(repo, {"overlays/o1/kustomization.yaml": "resources:\n- ../../base\n- gone.yaml\n"})
    rc, out, err = kz(repo, monkeypatch, capsys, "hook", "render", "base/cm.yaml")
    assert rc == 1 and err == "" and statuses(err) == {}
    lines = out.splitlines()
    assert lines[0] == "overlays/o1: does not render: overlays/o1/kustomization.yaml:3: resources: 'gone.yaml' does not exist"
    assert lines[-1] == f"1 of {len(ROOTS)} roots does not render; {len(ROOTS) - 1} rendered (0 built, {len(ROOTS) - 1} cached; -v lists them)"
    rc, _, err = kz(repo, monkeypatch, capsys, "hook", "render", "base/cm.yaml", "-v")
    assert rc == 1 and set(statuses(err)) == set(ROOTS)


def test_no_cache_and_cache_false(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", FILES)
    for _ in range(2):
        _, out, err = kz(repo, monkeypatch, capsys, "hook", "render", "--all", "-v", "--no-cache")
        assert set(statuses(err).values()) == {"built"}
    assert not list((tmp_path / "cache").rglob("*.kzr"))
    write(repo, {".kzgit.toml": "cache = false\n"})
    for _ in range(2):
        _, out, err = kz(repo, monkeypatch, capsys, "hook", "render", "--all", "-v")
        assert set(statuses(err).values()) == {"built"}
    assert not list((tmp_path / "cache").rglob("*.kzr"))
    write(repo, {".kzgit.toml": "cache-size-mb = 0\n"})
    rc, _, err = kz(repo, monkeypatch, capsys, "hook", "render", "--all")
    assert rc == 2 and "cache-size-mb" in err


def test_shards_are_disjoint_and_complete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", FILES)
    for n in (1, 2, 3, 5):
        seen: List[str] = []
        for i in range(1, n + 1):
            rc, out, err = kz(repo, monkeypatch, capsys, "hook", "render", "--all", "-v", "--shard", f"{i}/{n}")
            assert rc == 0
            seen += list(statuses(err))
        assert sorted(seen) == ROOTS, n
    with pytest.raises(SystemExit) as e:
        kz(repo, monkeypatch, capsys, "hook", "render", "--all", "--shard", "3/2")
    assert e.value.code == 2 and "between 1 and N" in capsys.readouterr().err


def test_shard_assignment_is_deterministic_complete_and_balanced() -> None:
    rng = random.Random(7)
    roots = [f"r{i:03d}" for i in range(200)]
    weights = {r: rng.randint(0, 10_000) for r in roots}
    for n in (1, 2, 3, 4, 7, 16):
        parts = [shard(roots, weights, i, n) for i in range(1, n + 1)]
        flat = [r for p in parts for r in p]
        assert sorted(flat) == roots and len(flat) == len(set(flat))
        # the same on every call, whatever the input order
        assert parts == [shard(list(reversed(roots)), weights, i, n) for i in range(1, n + 1)]
        loads = [sum(weights[r] for r in p) for p in parts]
        assert max(loads) - min(loads) <= max(weights.values())
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/2", "3/2", "a/b", "2", "1/0"):
        with pytest.raises(ValueError):
            parse_shard(bad)


def test_staged_content_is_cached_by_content_not_by_its_export(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """--staged builds a temporary export of the index, seen at the repository's path: the
    same staged content is rendered once; a staged change rebuilds exactly the roots it
    reaches; an unstaged change is not what is checked."""
    repo = make_repo(tmp_path / "r", FILES)
    write(repo, {"base/cm.yaml": FILES["base/cm.yaml"] + "  c: d\n"})
    git(repo, "add", "-A")
    rc, _, err = kz(repo, monkeypatch, capsys, "hook", "render", "--staged", "--all", "-v")
    assert rc == 0 and statuses(err) == {r: "built" for r in ROOTS}
    rc, _, err = kz(repo, monkeypatch, capsys, "hook", "render", "--staged", "--all", "-v")
    assert rc == 0 and statuses(err) == {r: "cached" for r in ROOTS}
    write(repo, {"overlays/o3/kustomization.yaml": "resources:\n- ../../base\nnamePrefix: n-\n"})
    rc, _, err = kz(repo, monkeypatch, capsys, "hook", "render", "--staged", "--all", "-v")
    assert rc == 0 and statuses(err) == {r: "cached" for r in ROOTS}   # not staged yet
    git(repo, "add", "overlays/o3")
    rc, _, err = kz(repo, monkeypatch, capsys, "hook", "render", "--staged", "--all", "-v")
    assert rc == 0 and statuses(err) == {**{r: "cached" for r in ROOTS}, "overlays/o3": "built"}
    # a failure is replayed naming the repository's files, never the temporary export
    write(repo, {"overlays/o1/kustomization.yaml": "resources:\n- ../../base\n- gone.yaml\n"})
    git(repo, "add", "overlays/o1")
    outs = []
    for status in ("failed", "failed"):
        rc, out, err = kz(repo, monkeypatch, capsys, "hook", "render", "--staged", "--all", "-v")
        assert rc == 1 and statuses(err)["overlays/o1"] == status
        outs.append(out)
    assert outs[0] == outs[1] and " overlays/o1/gone.yaml: no such file" in outs[0]   # repo-relative
    assert "kzgit-hook-" not in outs[0]
    # renders are keyed by what they read, not where: once committed, the work tree holds
    # what the index held, and a work-tree run reuses the staged renders
    write(repo, {"overlays/o1/kustomization.yaml": FILES["overlays/o1/kustomization.yaml"]})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "staged")
    rc, _, err = kz(repo, monkeypatch, capsys, "hook", "render", "--all", "-v")
    assert rc == 0 and statuses(err) == {r: "cached" for r in ROOTS}


def test_a_pushed_commit_is_cached_by_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "r", FILES)
    head = git(repo, "rev-parse", "HEAD").strip()
    for status in ("built", "cached"):
        rc, _, err = kz(repo, monkeypatch, capsys, "hook", "render", "--rev", head, "--all", "-v")
        assert rc == 0 and statuses(err) == {r: status for r in ROOTS}


def test_exports_built_by_programs_are_not_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """With plugins enabled a build may run programs, which read the export on the disk
    (a new path every run): such exports are built where they are, and never stored."""
    repo = make_repo(tmp_path / "r", {**FILES, ".kzgit.toml": "enable-alpha-plugins = true\n"})
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    grant_user(tmp_path / "cfg", enable_alpha_plugins=True)   # the user grants what it turns on
    write(repo, {"base/cm.yaml": FILES["base/cm.yaml"] + "  c: d\n"})
    git(repo, "add", "-A")
    for _ in range(2):
        rc, out, err = kz(repo, monkeypatch, capsys, "hook", "render", "--staged", "-v")
        assert rc == 0 and statuses(err) == {r: "built" for r in ROOTS}
    assert not list((tmp_path / "cache").rglob("*.kzr"))


# What a warm ``kzgit hook render --all`` (every root cached) may not import, each with why:
# the run checks recorded inputs and stored verdicts, and builds nothing.
NOT_FOR_A_WARM_HOOK = [
    # the build engine and YAML: nothing is built or parsed (the graph comes from the cache)
    "yaml", "kzgit.yamlio", "kzgit.resource", "kzgit.builder.pipeline", "kzgit.builtins",
    "kzgit.openapi", "kzgit.remote", "kzgit.konfig", "kzgit.builder.cache",
    # a render pool: every root is answered by the cache
    "concurrent.futures", "multiprocessing",
    # records are kzgit.record's plain classes: dataclasses imports inspect (ast, dis, tokenize)
    "dataclasses", "inspect", "ast",
    # TOML is parsed only when the repository has a configuration file
    "tomllib", "tomli",
    # only the plain git hooks export content to a temporary directory (shutil: bz2, lzma)
    "tempfile", "shutil", "random",
    # hashlib loads OpenSSL: the cache's digests are kzgit.sha's
    "hashlib",
    # the other hooks' arguments are not built (validate's flags live there)
    "kzgit.cli.validate",
    # annotations only: the modules on this path import typing for type checkers alone
    "typing",
    # no program runs: the repository is found as git finds it, the index's files come from
    # the cache (kzgit.hooks.listing)
    "kzgit.proc", "kzgit.gitio", "subprocess", "threading", "ctypes",
]

WARM_PROBE = """
import sys
spawned = []
sys.addaudithook(lambda event, args: event in ("subprocess.Popen", "os.posix_spawn", "os.fork")
                 and spawned.append(event))
from kzgit.cli.main import main
rc = main(sys.argv[2:])
print("MODULES", " ".join(m for m in sys.argv[1].split(",") if m in sys.modules))
print("SPAWNED", len(spawned))
sys.exit(rc)
"""


def probe_twice(repo: Path, cache: Path, modules: List[str], *argv: str
                ) -> List[Tuple["subprocess.CompletedProcess[str]", Dict[str, str]]]:
    """Run ``kzgit ARGV`` twice in ``repo`` (the second run warm); each run's outcome, and
    which of ``modules`` it imported (MODULES) and how many programs it started (SPAWNED)."""
    env = dict(os.environ, KZGIT_CACHE_DIR=str(cache))
    env.pop("PRE_COMMIT", None)
    runs = [subprocess.run([sys.executable, "-c", WARM_PROBE, ",".join(modules), *argv],
                           cwd=repo, env=env, capture_output=True, text=True, timeout=120)
            for _ in range(2)]
    return [(r, {k: v for k, _, v in (line.partition(" ") for line in r.stdout.splitlines())})
            for r in runs]


def test_a_warm_hook_imports_and_spawns_only_what_it_needs(tmp_path: Path) -> None:
    """A structural guard of the warm run's cost (never a timing): which modules it loads,
    how many programs it starts."""
    repo = make_repo(tmp_path / "r", FILES)
    (first, cold), (second, warm) = probe_twice(repo, tmp_path / "cache", NOT_FOR_A_WARM_HOOK,
                                                "hook", "render", "--all", "-v")
    assert first.returncode == second.returncode == 0, (first, second)
    assert statuses(first.stderr) == {r: "built" for r in ROOTS}
    assert statuses(second.stderr) == {r: "cached" for r in ROOTS}
    assert int(cold["SPAWNED"]) >= 1   # git listed the index once (the probe sees programs start)
    assert warm["MODULES"] == ""
    assert int(warm["SPAWNED"]) == 0


FLEET = {
    "clusters/prod/flux-system/gotk-sync.yaml": """\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {url: "https://github.com/acme/fleet.git", ref: {branch: main}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: flux-system, namespace: flux-system}
spec:
  path: ./clusters/prod
  sourceRef: {kind: GitRepository, name: flux-system}
""",
    "clusters/prod/web.yaml": """\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: web, namespace: flux-system}
spec:
  path: ./apps/web
  targetNamespace: web
  sourceRef: {kind: GitRepository, name: flux-system}
  postBuild: {substitute: {REPLICAS: "3"}}
""",
    "apps/web/kustomization.yaml": "resources: [deploy.yaml]\n",
    "apps/web/deploy.yaml": WEB_DEPLOYMENT.replace("replicas: 1", "replicas: ${REPLICAS:=1}"),
    "argocd/shop.yaml": """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  destination: {namespace: shop}
  source: {repoURL: "https://github.com/acme/fleet.git", path: apps/web,
           kustomize: {namePrefix: shop-}}
""",
}


def test_a_warm_hook_over_applications_imports_no_yaml(tmp_path: Path) -> None:
    """The same guard in a repository of Flux Kustomizations and an Argo CD Application: the
    catalog and each application's verdict come from the cache (kzgit.gitops.snapshot,
    kzgit.gitops.cache), so neither YAML nor discovery nor the build engine is loaded."""
    repo = make_repo(tmp_path / "fleet", FLEET, commit=False)
    git(repo, "remote", "add", "origin", "https://github.com/acme/fleet.git")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    modules = NOT_FOR_A_WARM_HOOK + ["kzgit.gitops.discover", "kzgit.gitops.flux",
                                     "kzgit.gitops.render"]
    (first, _), (second, warm) = probe_twice(repo, tmp_path / "cache", modules,
                                             "hook", "render", "--all", "-v")
    assert first.returncode == second.returncode == 0, (first, second)
    assert "built" in first.stderr and "flux:flux-system/web" in second.stderr, second.stderr
    assert warm["MODULES"] == "", (warm, second.stderr)
