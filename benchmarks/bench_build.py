#!/usr/bin/env python3
"""Time ``kzgit build`` against ``kubectl kustomize`` on generated trees, in the same run.

For each size (default 300 and 3,000 resources) a tree is generated with ``gen_tree.py`` and
both tools build its overlay (or its base with ``--base``).  Printed per size and tool: wall
time (best of ``--repeat`` runs) and that run's user+system CPU time (steadier than wall time
on a busy machine), peak RSS (from ``os.wait4`` on that very child, so runs do not
mask each other), then the kzgit/kubectl time ratio, whether the outputs are byte-identical,
and each tool's growth factor between consecutive sizes (time ratio / size ratio: ~1 means
linear, ~10 for a 10x step means quadratic).

Per resource, each row also shows CPU time (ms) and peak RSS (KB, the interpreter's own
included, so it falls as trees grow); between sizes kzgit's per-resource figures are checked
against the scale goals: CPU per resource grows by at most 20%, peak memory per resource does
not grow.  kubectl is quadratic: above ``--kubectl-max`` resources (default 3,000; 30,000 would
take it hours) it is skipped, and the output says so.

    .venv/bin/python benchmarks/bench_build.py                 # 300 and 3000
    .venv/bin/python benchmarks/bench_build.py --sizes 3000 30000
    .venv/bin/python benchmarks/bench_build.py --sizes 100 1000 --repeat 3
    .venv/bin/python benchmarks/bench_build.py --no-kubectl    # kzgit alone
"""
from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_tree  # noqa: E402

# --no-cache: this measures builds; a second run of the same tree would otherwise be answered
# from the render cache (bench_small.py times that case on its own)
KZGIT = [sys.executable, "-m", "kzgit", "build", "--no-cache"]


@dataclass
class Run:
    seconds: float
    cpu_seconds: float
    max_rss_mb: float
    returncode: int
    output: bytes
    stderr: bytes


def run_measured(argv: Sequence[str], cwd: Optional[str] = None) -> Run:
    """Run ``argv``; measure wall time and the child's own peak RSS (``os.wait4``)."""
    import subprocess
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(list(argv), stdout=out, stderr=err, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        # ru_maxrss is KiB on Linux, bytes on macOS.
        rss = usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
        cpu = usage.ru_utime + usage.ru_stime
        return Run(elapsed, cpu, rss, proc.returncode, out.read(), err.read())


def best_of(argv: Sequence[str], repeat: int) -> Run:
    runs = [run_measured(argv) for _ in range(max(1, repeat))]
    best = min(runs, key=lambda r: r.seconds)
    best.max_rss_mb = max(r.max_rss_mb for r in runs)
    return best


# Scale goals for kzgit between two sizes (a cold build: no cache is involved).
CPU_PER_RESOURCE_MAX_GROWTH = 1.20
RSS_PER_RESOURCE_MAX_GROWTH = 1.00


def bench(sizes: List[int], repeat: int, use_kubectl: bool, target: str,
          workdir: str, kubectl_max: int = 3000) -> List[Tuple[int, Dict[str, Run]]]:
    results = []
    for n in sizes:
        tree = os.path.join(workdir, f"tree-{n}")
        gen_tree.generate(n, tree)
        path = os.path.join(tree, target)
        row: Dict[str, Run] = {"kzgit": best_of(KZGIT + [path], repeat)}
        if use_kubectl and n > kubectl_max:
            print(f"{n:>7} kubectl  skipped: more than --kubectl-max {kubectl_max} resources "
                  "(kustomize is quadratic in resources)")
        elif use_kubectl:
            row["kubectl"] = best_of(["kubectl", "kustomize", path], repeat)
        results.append((n, row))
        _print_row(n, row)
    return results


def _print_row(n: int, row: Dict[str, Run]) -> None:
    for tool, r in row.items():
        status = "" if r.returncode == 0 else f"  FAILED (exit {r.returncode}): " + \
            r.stderr.decode("utf-8", "replace").strip().splitlines()[0][:100]
        print(f"{n:>7} {tool:<8} {r.seconds:9.3f} s {r.cpu_seconds:9.3f} s {r.max_rss_mb:9.1f} MB"
              f"  per resource {r.cpu_seconds * 1000 / n:7.3f} ms CPU {r.max_rss_mb * 1024 / n:8.1f} KB"
              f"{status}")
    if "kubectl" in row:
        k, z = row["kubectl"], row["kzgit"]
        same = z.returncode == 0 and k.returncode == 0 and z.output == k.output
        print(f"{n:>7} ratio    kzgit/kubectl = {z.seconds / k.seconds:.3f} wall, "
              f"{z.cpu_seconds / max(k.cpu_seconds, 1e-9):.3f} cpu  "
              f"output identical: {'yes' if same else 'NO'}")
    sys.stdout.flush()


def print_growth(results: List[Tuple[int, Dict[str, Run]]]) -> bool:
    """Print growth between consecutive sizes; False when kzgit misses a scale goal."""
    ok = True
    for (n1, r1), (n2, r2) in zip(results, results[1:]):
        z1, z2 = r1["kzgit"], r2["kzgit"]
        cpu = (z2.cpu_seconds / n2) / max(z1.cpu_seconds / n1, 1e-12)
        rss = (z2.max_rss_mb / n2) / max(z1.max_rss_mb / n1, 1e-12)
        verdict = cpu <= CPU_PER_RESOURCE_MAX_GROWTH and rss <= RSS_PER_RESOURCE_MAX_GROWTH
        ok = ok and verdict
        print(f"per resource kzgit {n1}->{n2}: CPU x{cpu:.2f} (goal <= "
              f"{CPU_PER_RESOURCE_MAX_GROWTH:.2f}), peak RSS x{rss:.2f} (goal <= "
              f"{RSS_PER_RESOURCE_MAX_GROWTH:.2f}): {'met' if verdict else 'NOT met'}")
        for tool in r1:
            if tool not in r2:
                continue
            t = r2[tool].seconds / r1[tool].seconds
            c = r2[tool].cpu_seconds / max(r1[tool].cpu_seconds, 1e-9)
            e = math.log(n2 / n1)
            print(f"growth {tool:<8} {n1}->{n2} ({n2 / n1:.0f}x resources): wall x{t:.1f}"
                  f" (exponent {math.log(t) / e:.2f}), cpu x{c:.1f} (exponent {math.log(c) / e:.2f})")
    return ok


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[300, 3000])
    ap.add_argument("--repeat", type=int, default=1, help="runs per tool and size (best time kept)")
    ap.add_argument("--no-kubectl", action="store_true", help="time kzgit alone")
    ap.add_argument("--base", action="store_true", help="build the base instead of the overlay")
    ap.add_argument("--keep", metavar="DIR", help="generate trees in DIR and keep them")
    ap.add_argument("--kubectl-max", type=int, default=3000, metavar="N",
                    help="skip kubectl for trees larger than N resources (default 3000)")
    ns = ap.parse_args(argv)
    use_kubectl = not ns.no_kubectl and shutil.which("kubectl") is not None
    if not ns.no_kubectl and not use_kubectl:
        print("kubectl not on PATH: timing kzgit alone", file=sys.stderr)
    print(f"{'size':>7} {'tool':<8} {'wall':>11} {'cpu':>11} {'peak RSS':>12}")
    if ns.keep:
        os.makedirs(ns.keep, exist_ok=True)
        results = bench(ns.sizes, ns.repeat, use_kubectl, "base" if ns.base else "overlay", ns.keep,
                        ns.kubectl_max)
    else:
        with tempfile.TemporaryDirectory(prefix="kzgit-bench-") as d:
            results = bench(ns.sizes, ns.repeat, use_kubectl, "base" if ns.base else "overlay", d,
                            ns.kubectl_max)
    return 0 if print_growth(results) else 1


if __name__ == "__main__":
    sys.exit(main())
