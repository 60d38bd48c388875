"""Benchmark: ``kzgit hook render --all`` against ``kubectl kustomize`` once per root.

Builds a git repository in a temp dir with one base of ``--resources``
resources (Deployments, Services, ConfigMaps) and ``--overlays`` overlays on
it (namespace, name prefix, labels, a strategic-merge patch, an image tag), then
times, in the same run:

* ``kzgit hook render --all`` (one process, every root), and
* ``kubectl kustomize ROOT`` for each root, one after the other, as a CI job or
  a pre-commit hook calling kubectl would.

Prints both times and the ratio; exits 1 when the ratio is below ``--min-ratio``
(the goal: 5x with 30 overlays over a 300-resource base).

Then, with the render cache (a fresh cache directory, so the first run above is cold):

* warm: ``kzgit hook render --all`` again; goal: at most 0.5 s wall and 10% of the
  first run;
* one overlay's patch changed: ``-v`` must show that root alone ``built``;
* ``kzgit diff`` of a pull request after a one-file push (the check ran once
  before the push): goal within 2x of ``kzgit build --no-cache`` of one root (the median
  of three pushes against the median of three builds);
* ``kzgit validate --all`` cold, then warm (its renders come from the cache; the
  resources are validated again): figures only, no goal.

Warm figures are the median of three runs.  kzgit runs as an installed package does: from a
wheel of this checkout installed into a temporary virtual environment (as pre-commit installs
it; ``bench_small.install``), through its console script, with compiled bytecode (``PYTHONPYCACHEPREFIX`` in a temporary directory, written by an unmeasured
warm-up build), even when the environment sets ``PYTHONDONTWRITEBYTECODE``.  The load average
is printed before and after: wall times mean little on a busy machine.

    python benchmarks/bench_hooks.py [--overlays 30] [--resources 300] [--min-ratio 5]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import List, Tuple

from bench_small import install   # kzgit installed as pre-commit installs it (a wheel)

#: how kzgit is run: the installed console script (set in main)
KZ: List[str] = [sys.executable, "-m", "kzgit"]



def timed(argv: List[str], cwd: str, cache: str, ok: Tuple[int, ...] = (0, 1)) -> Tuple[float, str]:
    """Wall seconds of ``kzgit ARGV`` (:data:`KZ`) with the render cache at ``cache``; its
    output (bench_fix.py and bench_lint.py)."""
    env = dict(os.environ, KZGIT_CACHE_DIR=cache)
    t0 = time.perf_counter()
    p = subprocess.run(KZ + argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=3600)
    wall = time.perf_counter() - t0
    if p.returncode not in ok:
        raise SystemExit(f"kzgit {' '.join(argv)} failed (exit {p.returncode}):\n{p.stdout[-3000:]}")
    return wall, p.stdout


def bench_args(doc: str, argv: List[str], tree_help: str) -> argparse.Namespace:
    """The options bench_fix.py and bench_lint.py share; prints the machine's state first."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--overlays", type=int, default=30)
    ap.add_argument("--resources", type=int, default=300)
    ap.add_argument("--tree", help=tree_help)
    args = ap.parse_args(argv)
    print(f"cpus: {os.cpu_count()}; load average before: {os.getloadavg()[0]:.1f}")
    return args


def installed_repo(tmp: str, overlays: int, resources: int, command: str) -> str:
    """kzgit installed as pre-commit installs it (:data:`KZ` becomes its script, bytecode
    compiled under ``tmp``) and the repository of ``overlays`` overlays made; its path."""
    from bench_small import install   # a wheel, as pre-commit installs kzgit
    KZ[:] = [install(os.path.join(tmp, "install"))]
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")
    root = os.path.join(tmp, "repo")
    os.makedirs(root)
    make_repo(root, overlays, resources)
    timed([command, "--help"], root, os.path.join(tmp, "warm-up"))   # compiles the bytecode
    return root

def _base(n: int) -> List[str]:
    docs = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            docs.append(f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-{i}
  labels:
    app: app-{i}
spec:
  replicas: 1
  selector:
    matchLabels:
      app: app-{i}
  template:
    metadata:
      labels:
        app: app-{i}
    spec:
      containers:
      - name: main
        image: registry.example.com/app:{i}
        envFrom:
        - configMapRef:
            name: conf-{i + 2}
        ports:
        - containerPort: 8080
""")
        elif kind == 1:
            docs.append(f"""apiVersion: v1
kind: Service
metadata:
  name: svc-{i}
spec:
  selector:
    app: app-{i - 1}
  ports:
  - port: 80
    targetPort: 8080
""")
        else:
            docs.append(f"""apiVersion: v1
kind: ConfigMap
metadata:
  name: conf-{i}
data:
  key: value-{i}
  other: "{i}"
""")
    return docs


def make_repo(root: str, overlays: int, resources: int) -> None:
    """Write the benchmark repository under ``root`` and commit it."""
    os.makedirs(os.path.join(root, "base"))
    with open(os.path.join(root, "base", "resources.yaml"), "w") as f:
        f.write("---\n".join(_base(resources)))
    with open(os.path.join(root, "base", "kustomization.yaml"), "w") as f:
        f.write("resources:\n- resources.yaml\ncommonLabels:\n  team: bench\n")
    for j in range(overlays):
        d = os.path.join(root, "overlays", f"env-{j:02d}")
        os.makedirs(d)
        with open(os.path.join(d, "kustomization.yaml"), "w") as f:
            f.write(f"""resources:
- ../../base
namespace: env-{j}
namePrefix: e{j}-
labels:
- pairs:
    env: env-{j}
  includeSelectors: false
images:
- name: registry.example.com/app
  newTag: v1.{j}.0
patches:
- path: replicas.yaml
""")
        with open(os.path.join(d, "replicas.yaml"), "w") as f:
            f.write(f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-0\n"
                    f"spec:\n  replicas: {j + 2}\n")
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.com",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.com")
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "bench"]):
        subprocess.run(cmd, cwd=root, env=env, check=True, timeout=120, stdout=subprocess.DEVNULL)


def _children_cpu() -> float:
    """User + system CPU seconds of the finished child processes so far."""
    import resource
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--overlays", type=int, default=30)
    ap.add_argument("--resources", type=int, default=300)
    ap.add_argument("--min-ratio", type=float, default=5.0)
    ap.add_argument("--jobs", type=int, default=0, help="kzgit render jobs (0 = default)")
    ap.add_argument("--kubectl", default=shutil.which("kubectl") or "kubectl")
    args = ap.parse_args(argv)
    if not shutil.which(args.kubectl):
        print(f"kubectl not found ({args.kubectl}); cannot compare", file=sys.stderr)
        return 2
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="kzgit-bench-") as root, \
            tempfile.TemporaryDirectory(prefix="kzgit-bench-cache-") as cache, \
            tempfile.TemporaryDirectory(prefix="kzgit-bench-install-") as inst:
        KZ[:] = [install(inst)]
        os.environ["KZGIT_CACHE_DIR"] = cache   # cold first run; never the user's cache
        # bytecode as installed, kept out of the source tree
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = os.path.join(cache, "pycache")
        make_repo(root, args.overlays, args.resources)
        roots = sorted(os.path.join(root, "overlays", d) for d in os.listdir(os.path.join(root, "overlays")))
        for warm_up in (["build", "--no-cache", roots[0]], ["hook", "render", "--help"],
                        ["validate", "--help"], ["diff", "--help"]):
            subprocess.run(KZ + warm_up, cwd=root, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=600, check=True)

        cmd = KZ + ["hook", "render", "--all"]
        if args.jobs:
            cmd += ["--jobs", str(args.jobs)]
        c0 = _children_cpu()
        t0 = time.perf_counter()
        p = subprocess.run(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=1800)
        t_kzgit = time.perf_counter() - t0
        cpu_kzgit = _children_cpu() - c0
        if p.returncode != 0:
            print(f"kzgit hook render --all failed (exit {p.returncode}):\n{p.stdout}", file=sys.stderr)
            return 1

        c0 = _children_cpu()
        t0 = time.perf_counter()
        for r in roots:
            k = subprocess.run([args.kubectl, "kustomize", r], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, timeout=600)
            if k.returncode != 0:
                print(f"kubectl kustomize {r} failed:\n{k.stderr}", file=sys.stderr)
                return 1
        t_kubectl = time.perf_counter() - t0
        cpu_kubectl = _children_cpu() - c0
        ratio = t_kubectl / t_kzgit if t_kzgit else float("inf")
        cpu_ratio = cpu_kubectl / cpu_kzgit if cpu_kzgit else float("inf")
        print(f"roots: {len(roots)} overlays over a {args.resources}-resource base; "
              f"cpus: {os.cpu_count()}; load average before: {load_before:.1f}")
        print(f"kzgit hook render --all:          {t_kzgit:8.2f} s wall {cpu_kzgit:8.2f} s cpu")
        print(f"kubectl kustomize, once per root: {t_kubectl:8.2f} s wall {cpu_kubectl:8.2f} s cpu")
        print(f"ratio (kubectl / kzgit):          {ratio:8.2f}x wall {cpu_ratio:7.2f}x cpu"
              f"  (target >= {args.min_ratio:g}x wall)")
        warm_ok = warm(root, cmd, t_kzgit)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0 if ratio >= args.min_ratio and warm_ok else 1


_LAST_CPU = [0.0]


def _timed(cmd: List[str], cwd: str) -> "tuple[float, str]":
    """Wall seconds and output of ``cmd``; its CPU seconds are left in ``_LAST_CPU[0]``."""
    c0 = _children_cpu()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=1800)
    took = time.perf_counter() - t0
    _LAST_CPU[0] = _children_cpu() - c0
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed (exit {p.returncode}):\n{p.stdout}")
    return took, p.stdout


def _commit(root: str, message: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.com",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.com")
    subprocess.run(["git", "commit", "-qam", message], cwd=root, env=env, check=True, timeout=120,
                   stdout=subprocess.DEVNULL)


def _patch(root: str, overlay: int, replicas: int) -> None:
    with open(os.path.join(root, "overlays", f"env-{overlay:02d}", "replicas.yaml"), "w") as f:
        f.write(f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-0\n"
                f"spec:\n  replicas: {replicas}\n")


def _median_of_3(cmd: List[str], cwd: str) -> Tuple[float, float]:
    """Median wall and CPU seconds of three runs of ``cmd``."""
    walls, cpus = [], []
    for _ in range(3):
        walls.append(_timed(cmd, cwd)[0])
        cpus.append(_LAST_CPU[0])
    return statistics.median(walls), statistics.median(cpus)


def _validate(root: str) -> None:
    """``kzgit validate --all`` cold, then warm (figures only)."""
    cmd = KZ + ["validate", "--all"]
    t_cold, _ = _timed(cmd, root)
    cpu_cold = _LAST_CPU[0]
    t_warm, cpu_warm = _median_of_3(cmd, root)
    print(f"kzgit validate --all, cold:       {t_cold:8.2f} s wall {cpu_cold:.2f} s cpu; warm "
          f"{t_warm:.2f} s wall {cpu_warm:.2f} s cpu ({t_warm / t_cold:.0%} of cold)")


def warm(root: str, cmd: List[str], cold: float) -> bool:
    """The render cache's cases (see the module docstring); True when every goal is met."""
    kz = KZ
    t_warm, cpu_warm = _median_of_3(cmd, root)
    _patch(root, 7, 99)
    t_one, out = _timed(cmd + ["-v"], root)
    built = sorted(line.split()[1] for line in out.splitlines() if line.startswith("built "))
    one_ok = built == ["overlays/env-07"]
    _timed(["git", "checkout", "-q", "--", "."], root)
    # a pull request changing two overlays; its check runs once, then one file is pushed
    subprocess.run(["git", "tag", "pr-base"], cwd=root, check=True, timeout=60)
    _patch(root, 3, 40)
    _patch(root, 7, 41)
    _commit(root, "pr")
    diff = kz + ["diff", "--base", "pr-base", "--head", "HEAD"]
    _timed(diff, root)
    # three one-file pushes, each checked once (the root it changed built, the rest cached):
    # the median of them, against the median of three builds of that root
    walls, cpus = [], []
    for replicas in (42, 43, 44):
        _patch(root, 7, replicas)
        _commit(root, "push")
        walls.append(_timed(diff, root)[0])
        cpus.append(_LAST_CPU[0])
    t_diff, cpu_diff = statistics.median(walls), statistics.median(cpus)
    t_root, cpu_root = _median_of_3(kz + ["build", "--no-cache", os.path.join(root, "overlays", "env-07")],
                                    root)
    warm_ok = t_warm <= 0.5 and t_warm <= 0.1 * cold
    diff_ok = t_diff <= 2 * t_root
    print(f"render cache, warm --all:         {t_warm:8.2f} s wall {cpu_warm:.2f} s cpu "
          f"({t_warm / cold:.0%} of the cold run; "
          f"target <= 0.5 s and <= 10%) {'ok' if warm_ok else 'MISSED'}")
    print(f"one patch changed, --all -v:      {t_one:8.2f} s wall, built: {', '.join(built) or 'none'} "
          f"{'ok' if one_ok else 'MISSED (expected overlays/env-07 only)'}")
    print(f"kzgit diff after a one-file push: {t_diff:8.2f} s wall {cpu_diff:.2f} s cpu; kzgit build "
          f"of one root {t_root:.2f} s wall {cpu_root:.2f} s cpu ({t_diff / t_root:.2f}x wall; "
          f"target <= 2x) {'ok' if diff_ok else 'MISSED'}")
    _validate(root)
    return warm_ok and one_ok and diff_ok


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
