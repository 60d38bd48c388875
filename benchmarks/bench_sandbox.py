"""What the plugin sandbox costs per plugin run: the same trivial exec plugin, confined and not.

    .venv/bin/python benchmarks/bench_sandbox.py [RUNS]

Prints the median wall time of a run with ``mode = "off"`` and ``mode = "auto"`` (Landlock),
their difference, and the two parts of the difference measured alone: building the ruleset in
the parent and the per-run temporary directory (created and removed).
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from typing import Callable, List

from kzgit import sandbox
from kzgit.options import BuildOptions
from kzgit.config import SandboxSettings
from kzgit.sandbox import _landlock


def median_ms(fn: Callable[[], object], runs: int) -> float:
    times: List[float] = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def plugin_runner(d: str, timeout: float) -> Callable[[str], Callable[[], object]]:
    """A trivial exec plugin written into ``d``; ``runner(mode)`` runs it under that sandbox mode."""
    plugin = os.path.join(d, "plugin")
    with open(plugin, "w") as f:
        f.write("#!/bin/sh\necho 'kind: ConfigMap'\n")
    os.chmod(plugin, 0o755)

    def run(mode: str) -> Callable[[], object]:
        opts = BuildOptions(sandbox=SandboxSettings(mode=mode))
        return lambda: sandbox.run([plugin], options=opts, label="bench", root=d, timeout=timeout)
    return run


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    ok, why = sandbox.available()
    if not ok:
        print(f"no sandbox here: {why}")
        return 1
    with tempfile.TemporaryDirectory() as d:
        run = plugin_runner(d, timeout=10)

        # interleaved, so that a change of the machine's load hits both alike
        offs: List[float] = []
        ons: List[float] = []
        for _ in range(runs):
            offs.append(median_ms(run("off"), 1))
            ons.append(median_ms(run("auto"), 1))
        off, on = statistics.median(offs), statistics.median(ons)
        abi = _landlock.abi_version()
        rules = [(p, _landlock.READ) for p in (*sandbox.SYSTEM_READ, d)]
        ruleset = median_ms(lambda: _landlock.build(abi, rules, False)[0].close(), runs)
        tmpdir = median_ms(lambda: os.rmdir(tempfile.mkdtemp(prefix="kzgit-sandbox-")), runs)
    print(f"Landlock ABI {abi}, {runs} runs each, TMPDIR={tempfile.gettempdir()}, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"plugin run unconfined: {off:.2f} ms; confined: {on:.2f} ms; "
          f"difference: {on - off:+.2f} ms")
    print(f"  ruleset built in the parent: {ruleset:.2f} ms; temp dir made and removed: {tmpdir:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
