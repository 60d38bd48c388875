"""Benchmark: ``kzgit lint --all`` against ``kzgit hook render --all``, and a warm ``kzgit-lint``
commit touching one file.

On the 30-overlay repository of ``bench_hooks.py`` (``--overlays``, ``--resources``), or on any
git work tree given with ``--tree`` (the Kubeflow manifests: check them out outside this
repository), times in the same run, each with a fresh render cache (cold):

* ``kzgit hook render --all`` and ``kzgit lint --all``, and their ratio (the goal: the same
  order of time);

then, on the generated repository only, a warm ``kzgit-lint`` commit: after ``kzgit lint --all``
filled the cache, one overlay's patch is edited and staged and ``kzgit hook lint FILE`` runs as
pre-commit runs it (the median of three edits; the goal: under 0.5 s).

kzgit runs as installed (``bench_small.install``: a wheel of this checkout in a temporary
virtual environment, through its console script, with compiled bytecode).  The load average
is printed before and after: wall times mean little on a busy machine.

    python benchmarks/bench_lint.py [--overlays 30] [--resources 300] [--tree DIR]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import List, Tuple

from bench_hooks import make_repo   # the 30-overlay repository
from bench_small import install   # kzgit installed as pre-commit installs it (a wheel)

KZ: List[str] = [sys.executable, "-m", "kzgit"]


def timed(argv: List[str], cwd: str, cache: str, ok: Tuple[int, ...] = (0, 1)) -> Tuple[float, str]:
    """Wall seconds of ``kzgit ARGV`` with the render cache at ``cache``; its output."""
    env = dict(os.environ, KZGIT_CACHE_DIR=cache)
    t0 = time.perf_counter()
    p = subprocess.run(KZ + argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=3600)
    wall = time.perf_counter() - t0
    if p.returncode not in ok:
        raise SystemExit(f"kzgit {' '.join(argv)} failed (exit {p.returncode}):\n{p.stdout[-3000:]}")
    return wall, p.stdout


def cold_pair(root: str, tmp: str, label: str) -> None:
    """render --all and lint --all, each with a fresh cache."""
    render, _ = timed(["hook", "render", "--all"], root, os.path.join(tmp, f"{label}-render"))
    lint, out = timed(["lint", "--all"], root, os.path.join(tmp, f"{label}-lint"))
    last = out.strip().splitlines()[-1] if out.strip() else "no finding"
    print(f"{label}: kzgit hook render --all {render:.2f} s cold; kzgit lint --all {lint:.2f} s cold "
          f"(ratio lint/render {lint / render:.2f}); lint: {last}")


def warm_commit(root: str, tmp: str) -> float:
    """Median wall time of ``kzgit hook lint FILE`` after editing one overlay's patch."""
    cache = os.path.join(tmp, "warm")
    timed(["lint", "--all"], root, cache)   # fills the cache
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.com",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.com")
    rel = "overlays/env-00/replicas.yaml"
    times = []
    for n in range(3):
        with open(os.path.join(root, rel), "w") as f:
            f.write(f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-0\nspec:\n  replicas: {10 + n}\n")
        subprocess.run(["git", "add", rel], cwd=root, env=env, check=True, timeout=60)
        wall, out = timed(["hook", "lint", rel], root, cache)
        times.append(wall)
        subprocess.run(["git", "commit", "-q", "-m", f"edit {n}"], cwd=root, env=env, check=True, timeout=60)
    return statistics.median(times)


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--overlays", type=int, default=30)
    ap.add_argument("--resources", type=int, default=300)
    ap.add_argument("--tree", help="also time a git work tree (e.g. a Kubeflow manifests checkout)")
    args = ap.parse_args(argv)
    print(f"cpus: {os.cpu_count()}; load average before: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="kzgit-bench-lint-") as tmp:
        KZ[:] = [install(os.path.join(tmp, "install"))]
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")
        root = os.path.join(tmp, "repo")
        os.makedirs(root)
        make_repo(root, args.overlays, args.resources)
        timed(["lint", "--help"], root, os.path.join(tmp, "warm-up"))   # compiles the bytecode
        cold_pair(root, tmp, f"{args.overlays} overlays x {args.resources} resources")
        warm = warm_commit(root, tmp)
        print(f"warm kzgit-lint commit touching one file: {warm:.3f} s (median of 3; goal < 0.5 s)")
        if args.tree:
            cold_pair(os.path.abspath(args.tree), tmp, os.path.basename(os.path.abspath(args.tree)))
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0 if warm < 0.5 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
