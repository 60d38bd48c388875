"""What starting a process costs kzgit: git, an unconfined and a confined plugin.

    .venv/bin/python benchmarks/bench_spawn.py [RUNS] [BALLAST_MB]

A ``preexec_fn`` (work done in the child between fork and exec) makes CPython fork the whole
process instead of using ``vfork``, so its cost grows with kzgit's memory (issue 24, item 4).
kzgit keeps it for the children that need it (the Landlock sandbox, ``PR_SET_PDEATHSIG`` for
plugins, helm, engines, network git) and starts local git without one.  For each program this
prints the median wall time of :func:`kzgit.proc.run` with the child-side setup (``before``:
every process was started so) and as kzgit starts it now (``after``), and their ratio, at
kzgit's own memory and again with ``BALLAST_MB`` (default 200) of touched memory, as a large
build holds.
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
from typing import Callable, List

from bench_sandbox import median_ms, plugin_runner   # one timing helper (run as a script: benchmarks/ is on sys.path)
from kzgit import proc, sandbox


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    ballast_mb = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    confined, why = sandbox.available()
    with tempfile.TemporaryDirectory() as d:
        def git(die: bool) -> Callable[[], object]:
            return lambda: proc.run(["git", "--version"], timeout=30, die_with_parent=die)

        plug = plugin_runner(d, timeout=30)

        # (name, before, after): plugins keep their child-side setup (PDEATHSIG, the sandbox)
        cases = [("git --version (local git, kzgit.gitio)", git(True), git(False)),
                 ("unconfined plugin (mode off)", plug("off"), plug("off"))]
        if confined:
            cases.append(("confined plugin (Landlock)", plug("auto"), plug("auto")))
        else:
            print(f"no confined plugin: {why}")
        ballast = bytearray()
        for label in ("kzgit's own memory", f"with {ballast_mb} MB more"):
            if ballast_mb and label.startswith("with"):
                ballast = bytearray(ballast_mb * 2**20)
                ballast[::4096] = b"\1" * len(range(0, len(ballast), 4096))   # touch every page
            print(f"{label}: RSS {rss_mb():.0f} MB, {runs} runs each (interleaved), "
                  f"Python {sys.version.split()[0]}")
            for name, before, after in cases:
                b: List[float] = []
                a: List[float] = []
                for _ in range(runs):
                    b.append(median_ms(before, 1))
                    a.append(median_ms(after, 1))
                mb, ma = statistics.median(b), statistics.median(a)
                print(f"  {name:42s} before {mb:6.2f} ms  after {ma:6.2f} ms  ratio {mb / ma:4.1f}x")
        del ballast
    return 0


if __name__ == "__main__":
    sys.exit(main())
