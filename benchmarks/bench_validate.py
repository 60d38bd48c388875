#!/usr/bin/env python3
"""Time ``kzgit validate`` against the ``kubernetes-validate`` CLI, in the same run.

A tree of ``--size`` resources (default 3,000) is generated with ``gen_tree.py``; its overlay is
rendered once and every ``--mutate``-th Deployment of that output gets a typo (``replica``) and
every ``--mutate``-th Service a string port, so there is something to find.  Then, best of
``--repeat`` runs each:

* ``kzgit build OVERLAY`` and ``kzgit validate OVERLAY`` (render + validate), both with
  ``--no-cache`` so that they work: the goal is the second within 1.5x of the first;
* ``kzgit validate --manifests OUT`` and ``kubernetes-validate --strict OUT`` on the same
  rendered, mutated file, same Kubernetes release and strictness: the ratio (goal >= 20x), and
  whether the verdicts agree resource by resource.

    .venv/bin/python benchmarks/bench_validate.py
    .venv/bin/python benchmarks/bench_validate.py --size 300 --repeat 3 --kubernetes-version 1.29
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_tree  # noqa: E402
from bench_build import Run, run_measured  # noqa: E402

KZGIT = [sys.executable, "-m", "kzgit"]


def best(argv: List[str], repeat: int, cwd: Optional[str] = None, ok: Tuple[int, ...] = (0,)) -> Run:
    runs = []
    for _ in range(repeat):
        r = run_measured(argv, cwd=cwd)
        if r.returncode not in ok:
            sys.exit(f"{' '.join(argv)} exited {r.returncode}:\n{r.stderr.decode(errors='replace')[-2000:]}")
        runs.append(r)
    return min(runs, key=lambda r: r.seconds)


def mutate(text: str, every: int) -> Tuple[str, Set[Tuple[str, str]]]:
    """The rendered stream with errors in every ``every``-th Deployment and Service."""
    import yaml
    docs = list(yaml.safe_load_all(text))
    bad: Set[Tuple[str, str]] = set()
    seen: Dict[str, int] = {}
    for d in docs:
        kind = d.get("kind")
        seen[kind] = seen.get(kind, 0) + 1
        if every and seen[kind] % every == 0:
            if kind == "Deployment":
                d["spec"]["replica"] = 1
            elif kind == "Service":
                d["spec"]["ports"][0]["port"] = "http"
            else:
                continue
            bad.add((kind.lower(), d["metadata"]["name"]))
    return yaml.safe_dump_all(docs, sort_keys=False), bad


_KV_LINE = re.compile(r"^(INFO|ERROR) \S+ (?:passed|did not validate) for resource ([^/\s]+)/(\S+)")


def kv_invalid(output: str) -> Tuple[Set[Tuple[str, str]], int]:
    invalid, seen = set(), 0
    for line in output.splitlines():
        m = _KV_LINE.match(line)
        if m:
            seen += 1
            if m.group(1) == "ERROR":
                invalid.add((m.group(2), m.group(3)))
    return invalid, seen


def kzgit_invalid(report: Dict) -> Set[Tuple[str, str]]:
    return {(f["resource"]["kind"].lower(), f["resource"]["name"])
            for f in report["findings"] if f["severity"] == "error"}


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=3, help="best of N for the kzgit runs (kubernetes-validate: 1)")
    ap.add_argument("--mutate", type=int, default=10, help="break every Nth Deployment and Service (0: none)")
    ap.add_argument("--kubernetes-version", default="1.29")
    ap.add_argument("--no-kubernetes-validate", action="store_true", help="time kzgit alone")
    args = ap.parse_args(argv)
    kv = shutil.which("kubernetes-validate") or os.path.join(os.path.dirname(sys.executable), "kubernetes-validate")
    tmp = tempfile.mkdtemp(prefix="kzgit-bench-validate-")
    try:
        gen_tree.generate(args.size, tmp)
        overlay = os.path.join(tmp, "overlay")
        ver = ["--kubernetes-version", args.kubernetes_version]
        # --no-cache: both measure the work (best of N would otherwise time cache hits)
        build = best(KZGIT + ["build", "--no-cache", overlay], args.repeat)
        validate = best(KZGIT + ["validate", "--no-cache", overlay] + ver, args.repeat, cwd=tmp)
        out_text, broken = mutate(build.output.decode(), args.mutate)
        manifests = os.path.join(tmp, "rendered.yaml")
        Path(manifests).write_text(out_text)
        ours = best(KZGIT + ["validate", "--no-cache", "--manifests", manifests, "--format", "json"] + ver,
                    args.repeat,
                    cwd=tmp, ok=(0, 1))
        ours_invalid = kzgit_invalid(json.loads(ours.output))
        n = out_text.count("\nkind: ") + out_text.startswith("kind: ")
        print(f"{args.size} resources generated, {n} rendered; Kubernetes {args.kubernetes_version}, strict; "
              f"{len(broken)} resources broken on purpose")
        print(f"  kzgit build overlay              {build.seconds:7.2f}s wall {build.cpu_seconds:7.2f}s cpu")
        print(f"  kzgit validate overlay           {validate.seconds:7.2f}s wall {validate.cpu_seconds:7.2f}s cpu"
              f"   validate/build {validate.seconds / build.seconds:.2f}x wall, "
              f"{validate.cpu_seconds / build.cpu_seconds:.2f}x cpu (goal <= 1.5x)")
        print(f"  kzgit validate --manifests       {ours.seconds:7.2f}s wall {ours.cpu_seconds:7.2f}s cpu"
              f"   {len(ours_invalid)} invalid")
        if ours_invalid != broken:
            print(f"  kzgit found {len(ours_invalid)} invalid, {len(broken)} were broken: MISMATCH")
        if args.no_kubernetes_validate:
            return 0
        theirs = best([kv, "-k", args.kubernetes_version, "--strict", manifests], 1, cwd=tmp, ok=(0, 1))
        kv_bad, kv_seen = kv_invalid(theirs.output.decode())
        agree = kv_bad == ours_invalid and kv_seen == n
        print(f"  kubernetes-validate --strict     {theirs.seconds:7.2f}s wall {theirs.cpu_seconds:7.2f}s cpu"
              f"   {len(kv_bad)} invalid of {kv_seen}")
        print(f"  ratio kubernetes-validate/kzgit  {theirs.seconds / ours.seconds:7.1f}x wall "
              f"{theirs.cpu_seconds / ours.cpu_seconds:7.1f}x cpu (goal >= 20x)")
        print(f"  verdicts agree: {'yes' if agree else 'NO'}")
        if not agree:
            for who, diff in (("only kzgit", ours_invalid - kv_bad), ("only kubernetes-validate", kv_bad - ours_invalid)):
                if diff:
                    print(f"    invalid for {who}: {sorted(diff)[:10]}")
        return 0 if agree else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
