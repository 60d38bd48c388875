#!/usr/bin/env python3
"""Time one ``kzgit build`` of small roots against ``kubectl kustomize``, in the same run.

Scripts, CI loops and GitOps tools build one root per process, so for the small roots most
repositories hold, start-up is what users feel.  The roots are the kubectl-recorded golden
fixtures under ``tests/fixtures/`` that build without plugins (each is a few resources), plus a
generated 10-resource overlay (``gen_tree.py 10``: namePrefix, namespace, labels, annotations,
images, a merging configMapGenerator, a JSON 6902 and a strategic-merge patch).

For every root, after one unmeasured warm-up run of each tool, the tools alternate for
``--rounds`` rounds (who goes first alternates too), each run timed on its own child through
``os.wait4`` (wall time, and user+system CPU time, which is steadier on a busy machine).
Printed per root: the median wall and CPU time of each tool and kzgit/kubectl ratios; then the
median over roots of those ratios, and the 10-resource overlay's CPU time against the 80 ms
goal.

kzgit runs as an installed package does: with compiled bytecode (``PYTHONPYCACHEPREFIX`` in a
temporary directory, written by the warm-up run, so the source tree stays untouched), even when
the environment sets ``PYTHONDONTWRITEBYTECODE``.  ``--no-bytecode`` times the other case:
every run compiles every module it imports.

    .venv/bin/python benchmarks/bench_small.py                 # 40 fixtures, 5 rounds
    .venv/bin/python benchmarks/bench_small.py --all --rounds 3
    .venv/bin/python benchmarks/bench_small.py --limit 10 --quiet
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(HERE))
import gen_tree  # noqa: E402

KZGIT = [sys.executable, "-m", "kzgit", "build"]
KUBECTL = ["kubectl", "kustomize"]
CPU_GOAL_MS = 80.0
# Flags that start plugins or helm: those roots measure the plugin, not the build.
_PLUGIN_FLAGS = ("--enable-helm", "--enable-alpha-plugins", "--enable-exec", "--network", "--mount")


class Root(NamedTuple):
    name: str
    path: str
    args: List[str]


class Sample(NamedTuple):
    wall: float
    cpu: float
    returncode: int
    output: bytes


def fixture_roots() -> List[Root]:
    """The golden fixtures that kubectl builds without plugins, in a stable order."""
    roots = []
    for case in sorted((PROJECT / "tests" / "fixtures").glob("*/*/case.json")):
        spec = json.loads(case.read_text(encoding="utf-8"))
        args = [str(a) for a in spec.get("args", [])]
        if spec.get("expected") != "ok" or any(a.startswith(_PLUGIN_FLAGS) for a in args):
            continue
        name = f"{case.parent.parent.name}/{case.parent.name}"
        roots.append(Root(name, str(case.parent / spec.get("target", ".")), args))
    return roots


def spread(roots: List[Root], limit: int) -> List[Root]:
    """``limit`` roots evenly spread over the list (every area gets its share)."""
    if limit <= 0 or limit >= len(roots):
        return roots
    step = len(roots) / limit
    return [roots[int(i * step)] for i in range(limit)]


def run(argv: Sequence[str], env: Dict[str, str]) -> Sample:
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(list(argv), stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        return Sample(wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status),
                      out.read())


def kzgit_env(bytecode: bool, pycache: str) -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT), env.get("PYTHONPATH")]))
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pycache
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def time_root(root: Root, rounds: int, envs: Dict[str, Dict[str, str]]) -> Dict[str, List[Sample]]:
    cmds = {"kzgit": KZGIT + root.args + [root.path], "kubectl": KUBECTL + root.args + [root.path]}
    for tool in cmds:  # warm-up: bytecode written, files in the page cache
        run(cmds[tool], envs[tool])
    samples: Dict[str, List[Sample]] = {tool: [] for tool in cmds}
    order = list(cmds)
    for i in range(rounds):
        for tool in (order if i % 2 == 0 else order[::-1]):
            samples[tool].append(run(cmds[tool], envs[tool]))
    return samples


def medians(samples: List[Sample]) -> Tuple[float, float]:
    return statistics.median(s.wall for s in samples), statistics.median(s.cpu for s in samples)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=40, help="fixtures to time, spread over the areas")
    ap.add_argument("--all", action="store_true", help="every fixture (overrides --limit)")
    ap.add_argument("--rounds", type=int, default=5, help="measured runs of each tool per root")
    ap.add_argument("--no-bytecode", action="store_true",
                    help="kzgit without compiled bytecode (every module compiled on every run)")
    ap.add_argument("--quiet", action="store_true", help="print the summary only")
    ns = ap.parse_args(argv)
    if shutil.which("kubectl") is None:
        print("kubectl not on PATH: nothing to compare with", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="kzgit-bench-small-") as tmp:
        gen_tree.generate(10, os.path.join(tmp, "tree-10"))
        overlay = Root("generated/10-resource-overlay", os.path.join(tmp, "tree-10", "overlay"), [])
        roots = spread(fixture_roots(), 0 if ns.all else ns.limit) + [overlay]
        envs = {"kzgit": kzgit_env(not ns.no_bytecode, os.path.join(tmp, "pycache")),
                "kubectl": dict(os.environ)}
        baseline = [run([sys.executable, "-c", "pass"], envs["kzgit"]).cpu for _ in range(5)]
        print(f"kzgit {'without' if ns.no_bytecode else 'with'} compiled bytecode; "
              f"{len(roots)} roots, {ns.rounds} rounds each, tools alternating; the bare "
              f"interpreter (python -c pass) takes {statistics.median(baseline) * 1000:.0f} ms CPU")
        if not ns.quiet:
            print(f"{'root':<58} {'kzgit wall/cpu':>15} {'kubectl wall/cpu':>17} "
                  f"{'ratio wall/cpu':>15}")
        wall_ratios, cpu_ratios, kz_cpu = [], [], []
        differ = []
        for root in roots:
            s = time_root(root, ns.rounds, envs)
            (kw, kc), (uw, uc) = medians(s["kzgit"]), medians(s["kubectl"])
            wall_ratios.append(kw / uw)
            cpu_ratios.append(kc / max(uc, 1e-9))
            kz_cpu.append(kc)
            z, k = s["kzgit"][-1], s["kubectl"][-1]
            if z.returncode != 0 or k.returncode != 0 or z.output != k.output:
                differ.append(root.name)
            if not ns.quiet:
                print(f"{root.name[:58]:<58} {kw * 1000:6.0f}/{kc * 1000:4.0f} ms "
                      f"{uw * 1000:7.0f}/{uc * 1000:4.0f} ms {kw / uw:8.2f}/{kc / max(uc, 1e-9):.2f}")
            sys.stdout.flush()
        ow, oc = medians(s["kzgit"])
        uw, uc = medians(s["kubectl"])
        faster = sum(1 for r in wall_ratios if r <= 1.0)
        print(f"median kzgit/kubectl over {len(roots)} roots: {statistics.median(wall_ratios):.2f} "
              f"wall, {statistics.median(cpu_ratios):.2f} CPU (kzgit at least as fast on "
              f"{faster}/{len(roots)}); kzgit median CPU per build "
              f"{statistics.median(kz_cpu) * 1000:.0f} ms")
        print(f"10-resource overlay: kzgit {ow * 1000:.0f} ms wall / {oc * 1000:.0f} ms CPU "
              f"(goal < {CPU_GOAL_MS:.0f} ms CPU: {'met' if oc * 1000 < CPU_GOAL_MS else 'NOT met'}), "
              f"kubectl {uw * 1000:.0f} ms wall / {uc * 1000:.0f} ms CPU")
        if differ:
            print(f"outputs differ or a tool failed on {len(differ)} roots: {', '.join(differ)}")
        else:
            print("outputs byte-identical on every root")
    return 0


if __name__ == "__main__":
    sys.exit(main())
