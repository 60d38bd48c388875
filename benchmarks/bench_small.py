#!/usr/bin/env python3
"""Time one ``kzgit build`` of small roots against ``kubectl kustomize``, in the same run.

Scripts, CI loops and GitOps tools build one root per process, so for the small roots most
repositories hold, start-up is what users feel.  The roots are the kubectl-recorded golden
fixtures under ``tests/fixtures/`` that build without plugins (each is a few resources), plus a
generated 10-resource overlay (``gen_tree.py 10``: namePrefix, namespace, labels, annotations,
images, a merging configMapGenerator, a JSON 6902 and a strategic-merge patch).

Two kzgit cases, each against kubectl in the same run:

* **cold** (the headline figure): ``kzgit build --no-cache``, a real build;
* **cached**: ``kzgit build`` answered from the render cache (the default; the warm-up run
  filled it), which checks the recorded inputs and prints the stored output.

kzgit runs as users run it: the ``kzgit`` console script of a normal (non-editable) install,
as pre-commit makes one.  A wheel is built from a copy of this checkout (``pip wheel``, build
isolation as ``pip install .`` has it), installed with ``pip install --no-deps`` (which
compiles the bytecode) into a temporary virtual environment, which sees this interpreter's
site-packages (PyYAML and the other dependencies) through a ``.pth`` line: a path, so no
``.pth`` file there runs (an editable install's import hook, for one, stays out).  The render
cache is a temporary directory (``KZGIT_CACHE_DIR``), never the user's.

For every root, after one unmeasured warm-up run of each case (it fills the render cache and
the page cache), the three cases alternate for ``--rounds`` rounds (the order rotates each
round), each run timed on its own child through ``os.wait4`` (wall time, and user+system CPU
time, which is steadier on a busy machine; kubectl's Go runtime spreads its CPU over threads,
so its CPU time exceeds its wall time).  Printed per root: the median wall and CPU time of each
case and the kzgit/kubectl wall ratios; then, per case, the median over roots of the ratios,
and the 10-resource overlay's CPU time against the 80 ms goal.

    .venv/bin/python benchmarks/bench_small.py                 # 40 fixtures, 5 rounds
    .venv/bin/python benchmarks/bench_small.py --all --rounds 3
    .venv/bin/python benchmarks/bench_small.py --limit 10 --quiet
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import venv
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(HERE))
import gen_tree  # noqa: E402

KUBECTL = ["kubectl", "kustomize"]
CASES = ("kubectl", "cold", "cached")
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


def kubectl_release(kubectl: str) -> str:
    """The Kustomize release ``kubectl`` embeds (``kubectl version --client``), e.g. 5.5.0."""
    out = subprocess.run([kubectl, "version", "--client", "-o", "json"], capture_output=True,
                         text=True, timeout=60)
    try:
        return str(json.loads(out.stdout)["kustomizeVersion"]).lstrip("v")
    except (ValueError, KeyError):
        raise SystemExit(f"{kubectl} does not say which Kustomize it embeds") from None


def fixture_roots(release: str) -> List[Root]:
    """The golden fixtures recorded with Kustomize ``release`` that build without plugins, in
    a stable order (a case without a recorded release was recorded with 5.5.0)."""
    roots = []
    for case in sorted((PROJECT / "tests" / "fixtures").glob("*/*/case.json")):
        spec = json.loads(case.read_text(encoding="utf-8"))
        args = [str(a) for a in spec.get("args", [])]
        if spec.get("expected") != "ok" or any(a.startswith(_PLUGIN_FLAGS) for a in args):
            continue
        if spec.get("kustomize", "5.5.0") != release:
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


def install(tmp: str) -> str:
    """kzgit installed from a wheel of this checkout into a new venv under ``tmp``; its script."""
    src = os.path.join(tmp, "src")
    # a copy: building a wheel in place would leave build/ and *.egg-info in the checkout
    shutil.copytree(PROJECT / "kzgit", os.path.join(src, "kzgit"),
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (PROJECT / name).exists():
            shutil.copy2(PROJECT / name, src)
    wheels = os.path.join(tmp, "wheel")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(pip + ["wheel", "--no-deps", "-w", wheels, src], check=True, timeout=600)
    env_dir = os.path.join(tmp, "venv")
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = os.path.join(env_dir, "bin", "python")
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True, timeout=60).stdout.strip()
    ours = sysconfig.get_paths()
    with open(os.path.join(purelib, "kzgit-bench-deps.pth"), "w", encoding="utf-8") as f:
        f.write("".join(f"{p}\n" for p in dict.fromkeys([ours["purelib"], ours["platlib"]])))
    subprocess.run(pip + ["--python", python, "install", "--no-deps", "--no-index",
                          *glob.glob(os.path.join(wheels, "kzgit-*.whl"))], check=True, timeout=600)
    return os.path.join(env_dir, "bin", "kzgit")


def run(argv: Sequence[str], env: Dict[str, str]) -> Sample:
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(list(argv), stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        return Sample(wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status),
                      out.read())


def time_root(root: Root, rounds: int, kzgit: str, env: Dict[str, str],
              release: str) -> Dict[str, List[Sample]]:
    # kzgit renders as the release kubectl embeds (its default is the newest supported)
    version = ["--kustomize-version", release]
    cmds = {"kubectl": KUBECTL + root.args + [root.path],
            "cold": [kzgit, "build", "--no-cache", *version] + root.args + [root.path],
            "cached": [kzgit, "build", *version] + root.args + [root.path]}
    for case in CASES:  # warm-up: the render cache filled, files in the page cache
        run(cmds[case], env)
    samples: Dict[str, List[Sample]] = {case: [] for case in CASES}
    for i in range(rounds):
        for case in CASES[i % 3:] + CASES[:i % 3]:
            samples[case].append(run(cmds[case], env))
    return samples


def medians(samples: List[Sample]) -> Tuple[float, float]:
    return statistics.median(s.wall for s in samples), statistics.median(s.cpu for s in samples)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--limit", type=int, default=40, help="fixtures to time, spread over the areas")
    ap.add_argument("--all", action="store_true", help="every fixture (overrides --limit)")
    ap.add_argument("--rounds", type=int, default=5, help="measured runs of each case per root")
    ap.add_argument("--quiet", action="store_true", help="print the summary only")
    ns = ap.parse_args(argv)
    if shutil.which("kubectl") is None:
        print("kubectl not on PATH: nothing to compare with", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="kzgit-bench-small-") as tmp:
        kzgit = install(tmp)
        env = dict(os.environ, KZGIT_CACHE_DIR=os.path.join(tmp, "cache"))
        env.pop("PYTHONPATH", None)
        gen_tree.generate(10, os.path.join(tmp, "tree-10"))
        overlay = Root("generated/10-resource-overlay", os.path.join(tmp, "tree-10", "overlay"), [])
        release = kubectl_release(KUBECTL[0])
        roots = spread(fixture_roots(release), 0 if ns.all else ns.limit) + [overlay]
        python = os.path.join(os.path.dirname(kzgit), "python")
        bare = statistics.median(run([python, "-c", "pass"], env).cpu for _ in range(7))
        print(f"kzgit installed from a wheel (console script, compiled bytecode); {len(roots)} "
              f"roots, {ns.rounds} rounds each, cases alternating; the bare interpreter "
              f"(python -c pass) takes {bare * 1000:.0f} ms CPU")
        if not ns.quiet:
            print(f"{'root':<46} {'kubectl wall/cpu':>16} {'cold wall/cpu':>14} "
                  f"{'cached wall/cpu':>16} {'ratio cold/cached':>18}")
        ratios: Dict[str, List[Tuple[float, float]]] = {"cold": [], "cached": []}
        kz_cpu: Dict[str, List[float]] = {"cold": [], "cached": []}
        differ: List[str] = []
        s: Dict[str, List[Sample]] = {}
        for root in roots:
            s = time_root(root, ns.rounds, kzgit, env, release)
            m = {case: medians(s[case]) for case in CASES}
            uw, uc = m["kubectl"]
            for case in ("cold", "cached"):
                ratios[case].append((m[case][0] / uw, m[case][1] / max(uc, 1e-9)))
                kz_cpu[case].append(m[case][1])
                last, ref = s[case][-1], s["kubectl"][-1]
                if last.returncode != 0 or ref.returncode != 0 or last.output != ref.output:
                    differ.append(f"{root.name} ({case})")
            if not ns.quiet:
                cells = " ".join(f"{m[c][0] * 1000:7.0f}/{m[c][1] * 1000:4.0f} ms" for c in CASES)
                print(f"{root.name[:46]:<46} {cells} {m['cold'][0] / uw:8.2f}/{m['cached'][0] / uw:.2f}")
            sys.stdout.flush()
        for case in ("cold", "cached"):
            wall = statistics.median(r[0] for r in ratios[case])
            cpu = statistics.median(r[1] for r in ratios[case])
            faster = sum(1 for r in ratios[case] if r[0] <= 1.0)
            print(f"{case:>6}: median kzgit/kubectl over {len(roots)} roots {wall:.2f} wall, "
                  f"{cpu:.2f} CPU (kzgit at least as fast on {faster}/{len(roots)}); kzgit median "
                  f"CPU per build {statistics.median(kz_cpu[case]) * 1000:.0f} ms")
        (uw, uc), (cw, cc), (hw, hc) = (medians(s[case]) for case in CASES)
        print(f"10-resource overlay: cold {cw * 1000:.0f} ms wall / {cc * 1000:.0f} ms CPU (goal < "
              f"{CPU_GOAL_MS:.0f} ms CPU: {'met' if cc * 1000 < CPU_GOAL_MS else 'NOT met'}), cached "
              f"{hw * 1000:.0f} / {hc * 1000:.0f} ms, kubectl {uw * 1000:.0f} / {uc * 1000:.0f} ms")
        if differ:
            print(f"outputs differ or a tool failed on {len(differ)}: {', '.join(differ)}")
        else:
            print("outputs byte-identical on every root, cold and cached")
    return 0


if __name__ == "__main__":
    sys.exit(main())
