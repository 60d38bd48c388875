"""Benchmark: a one-file commit through every kzgit hook, driven by the real pre-commit, on a
repository of ``--overlays`` kustomization roots (goal: 1 s or less for 100 roots, issue 33).

Makes the ``bench_hooks.py`` repository (one base of ``--resources`` resources, ``--overlays``
overlays on it), installs kzgit as pre-commit installs it (a wheel of this checkout in a
virtual environment, ``bench_small.install``), and writes a ``.pre-commit-config.yaml`` holding
every hook of this checkout's ``.pre-commit-hooks.yaml`` (ids, entries, ``files``,
``pass_filenames``, ``always_run``, ``require_serial`` as they are), as ``repo: local`` hooks
whose entry is the installed ``kzgit`` (pre-commit's own environment for a ``language: python``
hook is the same install; a local hook needs no network).  Then:

* ``pre-commit run --all-files`` once (the first run on the repository: cold caches; the
  fixer's migration of the base's deprecated field is committed, and a second run passes);
* a comment added to one overlay's patch, staged, and ``pre-commit run`` (the staged file only,
  as ``git commit`` runs it): the median of ``--runs`` such edits, each a new comment.

Prints both, the per-hook times of the last commit (``pre-commit run --verbose``), and exits 1
when the median exceeds ``--goal`` seconds.  The load average is printed before and after.

    python benchmarks/bench_commit.py [--overlays 100] [--resources 30] [--runs 3] [--goal 1.0]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_hooks import make_repo   # noqa: E402 - the shared repository
from bench_small import PROJECT, install   # noqa: E402

KEYS = ("id", "name", "files", "exclude", "pass_filenames", "always_run", "require_serial", "types")


def config(kzgit: str) -> str:
    hooks: List[Dict[str, Any]] = []
    with open(PROJECT / ".pre-commit-hooks.yaml", encoding="utf-8") as f:
        for h in yaml.safe_load(f):
            if not h["entry"].startswith("kzgit "):
                continue
            local = {k: h[k] for k in KEYS if k in h}
            local["entry"] = kzgit + h["entry"][len("kzgit"):]
            local["language"] = "system"
            hooks.append(local)
    return yaml.safe_dump({"repos": [{"repo": "local", "hooks": hooks}]}, sort_keys=False)


def run(cmd: List[str], cwd: str, env: Dict[str, str], ok: "tuple[int, ...]" = (0,)) -> "tuple[float, str]":
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=3600)
    wall = time.perf_counter() - t0
    if p.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd)} failed (exit {p.returncode}):\n{p.stdout[-4000:]}")
    return wall, p.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--overlays", type=int, default=100)
    ap.add_argument("--resources", type=int, default=30)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--goal", type=float, default=1.0)
    args = ap.parse_args()
    if shutil.which("pre-commit") is None and not os.path.exists(os.path.join(os.path.dirname(sys.executable), "pre-commit")):
        raise SystemExit("pre-commit is not installed (pip install pre-commit)")
    pc = os.path.join(os.path.dirname(sys.executable), "pre-commit")
    pc = pc if os.path.exists(pc) else "pre-commit"
    print(f"cpus: {os.cpu_count()}; load average before: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="kzgit-bench-commit-") as tmp:
        kzgit = install(os.path.join(tmp, "install"))
        root = os.path.join(tmp, "repo")
        os.makedirs(root)
        make_repo(root, args.overlays, args.resources)
        with open(os.path.join(root, ".pre-commit-config.yaml"), "w", encoding="utf-8") as f:
            f.write(config(kzgit))
        env = dict(os.environ, KZGIT_CACHE_DIR=os.path.join(tmp, "cache"),
                   PRE_COMMIT_HOME=os.path.join(tmp, "pre-commit"),
                   PYTHONPYCACHEPREFIX=os.path.join(tmp, "pycache"),
                   GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.com",
                   GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.com")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run(["git", "add", ".pre-commit-config.yaml"], cwd=root, env=env, check=True)
        subprocess.run(["git", "commit", "-q", "-m", "hooks"], cwd=root, env=env, check=True)
        # the shared repository keeps a deprecated field (for bench_fix.py): the fixer's first
        # run migrates it, as on a real repository's first run; that is committed
        first, _ = run([pc, "run", "--all-files"], root, env, ok=(0, 1))
        subprocess.run(["git", "add", "-A"], cwd=root, env=env, check=True)
        subprocess.run(["git", "commit", "-q", "--no-verify", "-m", "fixed"], cwd=root, env=env, check=True)
        run([pc, "run", "--all-files"], root, env)
        patches = sorted(os.path.relpath(os.path.join(d, n), root) for d, _, names in os.walk(root)
                         for n in names if n.endswith(".yaml") and "overlay" in d and n != "kustomization.yaml")
        target = patches[len(patches) // 2]
        times: List[float] = []
        out = ""
        for i in range(args.runs):
            with open(os.path.join(root, target), "a", encoding="utf-8") as f:
                f.write(f"# edit {i}\n")
            subprocess.run(["git", "add", target], cwd=root, env=env, check=True)
            wall, out = run([pc, "run", "--verbose"], root, env)
            times.append(wall)
            subprocess.run(["git", "commit", "-q", "--no-verify", "-m", f"edit {i}"], cwd=root, env=env, check=True)
    median = statistics.median(times)
    print(f"{args.overlays} roots, {args.resources} base resources, {len(yaml.safe_load(config('kzgit'))['repos'][0]['hooks'])} hooks")
    print(f"  pre-commit run --all-files (first run, cold caches): {first:.2f} s")
    print(f"  one-file commit ({target}), median of {args.runs}: {median:.2f} s (goal <= {args.goal:.1f} s); "
          f"each: {', '.join(f'{t:.2f}' for t in times)}")
    for m in re.finditer(r"^- hook id: (\S+)\n- duration: ([0-9.]+)s", out, re.M):
        print(f"    {m.group(1):<24} {m.group(2)} s")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0 if median <= args.goal else 1


if __name__ == "__main__":
    sys.exit(main())
