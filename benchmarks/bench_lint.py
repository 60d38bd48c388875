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

import os
import statistics
import subprocess
import sys
import tempfile
from typing import List

from bench_hooks import bench_args, installed_repo, timed   # the 30-overlay repository, kzgit timed





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
    args = bench_args(__doc__ or "", argv, "also time a git work tree (e.g. a Kubeflow manifests checkout)")
    with tempfile.TemporaryDirectory(prefix="kzgit-bench-lint-") as tmp:
        root = installed_repo(tmp, args.overlays, args.resources, "lint")
        cold_pair(root, tmp, f"{args.overlays} overlays x {args.resources} resources")
        warm = warm_commit(root, tmp)
        print(f"warm kzgit-lint commit touching one file: {warm:.3f} s (median of 3; goal < 0.5 s)")
        if args.tree:
            cold_pair(os.path.abspath(args.tree), tmp, os.path.basename(os.path.abspath(args.tree)))
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0 if warm < 0.5 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
