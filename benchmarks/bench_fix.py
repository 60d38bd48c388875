"""Benchmark: ``kzgit fix --check --all`` against ``kzgit hook render --all``.

On the 30-overlay repository of ``bench_hooks.py`` (``--overlays``, ``--resources``; its base
still has ``commonLabels`` and no kustomization has ``apiVersion``/``kind``, so every file
needs a migration), or on a copy of any tree given with ``--tree`` (the Kubeflow manifests:
check them out outside this repository; the copy is made in a temporary directory), times in
the same run:

* ``kzgit hook render --all`` with a fresh render cache (cold);
* ``kzgit fix --check --all`` with something to migrate: every root reaching a changed file
  is rendered twice (before, and through the overlay after), nothing written; cold (a fresh
  render cache) and warm (the render's cache, as in a commit running ``kzgit-render`` first:
  the renders before come from it);
* ``kzgit fix --all`` (the same, and the writes);
* ``kzgit fix --check --all`` again, on the migrated tree: the unchanged repository of a
  commit, where nothing is left to migrate and nothing renders (the median of three).

and prints each time with its ratio to the render.  kzgit runs as installed
(``bench_small.install``: a wheel of this checkout in a temporary virtual environment,
through its console script, with compiled bytecode).  The load average is printed before and
after: wall times mean little on a busy machine.

    python benchmarks/bench_fix.py [--overlays 30] [--resources 300] [--tree DIR]
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from typing import List

from bench_hooks import bench_args, installed_repo, timed   # the 30-overlay repository, kzgit timed





def _copy_tree(src: str, dst: str) -> None:
    """A committed copy of ``src`` (its files, not its history) at ``dst``."""
    shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.com",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.com")
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "copy"]):
        subprocess.run(cmd, cwd=dst, env=env, check=True, timeout=600, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)


def run(root: str, tmp: str, label: str) -> None:
    render, _ = timed(["hook", "render", "--all"], root, os.path.join(tmp, f"{label}-render"))
    check, out = timed(["fix", "--check", "--all"], root, os.path.join(tmp, f"{label}-check"))
    would = sum(1 for ln in out.splitlines() if ln.startswith("would fix "))
    warm, _ = timed(["fix", "--check", "--all"], root, os.path.join(tmp, f"{label}-render"))
    write, out = timed(["fix", "--all"], root, os.path.join(tmp, f"{label}-fix"))
    fixed = sum(1 for ln in out.splitlines() if ln.startswith("fixed "))
    clean = statistics.median(timed(["fix", "--check", "--all"], root, os.path.join(tmp, f"{label}-clean"))[0]
                              for _ in range(3))
    print(f"{label}:\n"
          f"  kzgit hook render --all         {render:7.2f} s cold\n"
          f"  kzgit fix --check --all          {check:7.2f} s cold ({would} files to migrate; "
          f"ratio to render {check / render:.2f})\n"
          f"  kzgit fix --check --all          {warm:7.2f} s warm (the render's cache; "
          f"ratio {warm / render:.2f})\n"
          f"  kzgit fix --all                  {write:7.2f} s ({fixed} files written; "
          f"ratio {write / render:.2f})\n"
          f"  kzgit fix --check --all, after   {clean:7.2f} s (nothing left; median of 3; "
          f"ratio {clean / render:.2f})")


def main(argv: List[str]) -> int:
    args = bench_args(__doc__ or "", argv, "also time a copy of this tree (e.g. a Kubeflow manifests checkout)")
    with tempfile.TemporaryDirectory(prefix="kzgit-bench-fix-") as tmp:
        root = installed_repo(tmp, args.overlays, args.resources, "fix")
        run(root, tmp, f"{args.overlays} overlays x {args.resources} resources")
        if args.tree:
            copy = os.path.join(tmp, "tree")
            _copy_tree(os.path.abspath(args.tree), copy)
            run(copy, tmp, os.path.basename(os.path.abspath(args.tree)))
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
