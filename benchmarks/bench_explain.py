"""Benchmark: ``kzgit explain`` against ``kzgit build`` of the same target (goal: at most 2x).

Writes a three-layer tree into a temp dir: a base of ``--resources`` Deployments (each with a
container, labels and an env list), a middle overlay (namePrefix, labels, a strategic-merge
patch per tenth resource, images) and a top overlay (namespace, commonAnnotations, replicas, a
JSON 6902 patch, a ConfigMap generator that the Deployments reference, so names are hashed and
references updated).  Then times, alternating, ``kzgit build --no-cache TOP`` and
``kzgit explain TOP --format json`` (the median of ``--runs``, in fresh processes), prints both
and the ratio, and exits 1 when the ratio exceeds ``--max-ratio``.

    python benchmarks/bench_explain.py [--resources 300] [--runs 5] [--max-ratio 2.0]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List


def tree(n: int) -> Dict[str, str]:
    files: Dict[str, str] = {}
    res = []
    for i in range(n):
        res.append(f"d{i}.yaml")
        files[f"base/d{i}.yaml"] = f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: app{i}
  labels: {{app: app{i}}}
spec:
  replicas: 1
  selector:
    matchLabels: {{app: app{i}}}
  template:
    metadata:
      labels: {{app: app{i}}}
    spec:
      containers:
      - name: main
        image: nginx:1.25
        env:
        - {{name: A, value: "1"}}
        - {{name: B, value: "2"}}
        envFrom:
        - configMapRef: {{name: settings}}
"""
    files["base/kustomization.yaml"] = "resources:\n" + "".join(f"- {r}\n" for r in res)
    patches = "".join(f"- path: p{i}.yaml\n" for i in range(0, n, 10))
    for i in range(0, n, 10):
        files[f"mid/p{i}.yaml"] = (f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app{i}\n"
                                   "spec:\n  template:\n    spec:\n      containers:\n      - name: main\n"
                                   "        resources: {limits: {memory: 256Mi}}\n")
    files["mid/kustomization.yaml"] = ("resources: [../base]\nnamePrefix: mid-\nlabels:\n- pairs: {tier: web}\n"
                                       "images:\n- name: nginx\n  newTag: '1.27'\npatches:\n" + patches)
    files["top/ops.yaml"] = "- op: add\n  path: /spec/paused\n  value: true\n"
    files["top/kustomization.yaml"] = (
        "resources: [../mid]\nnamespace: prod\ncommonAnnotations: {owner: team}\n"
        "replicas:\n- name: mid-app0\n  count: 3\n"
        "configMapGenerator:\n- name: settings\n  literals: [MODE=prod]\n"
        "patches:\n- path: ops.yaml\n  target: {kind: Deployment, name: mid-app1}\n")
    return files


def timed(argv: List[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, timeout=600)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resources", type=int, default=300)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--max-ratio", type=float, default=2.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="kzgit-bench-explain-") as tmp:
        for rel, text in tree(args.resources).items():
            path = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        top = os.path.join(tmp, "top")
        kz = [sys.executable, "-m", "kzgit"]
        build_argv = kz + ["build", "--no-cache", top]
        explain_argv = kz + ["explain", top, "--format", "json"]
        builds, explains = [], []
        for _ in range(args.runs):
            builds.append(timed(build_argv))
            explains.append(timed(explain_argv))
    b, e = statistics.median(builds), statistics.median(explains)
    print(f"{args.resources} Deployments, 3 layers: kzgit build {b:.2f}s, kzgit explain {e:.2f}s, "
          f"ratio {e / b:.2f} (goal <= {args.max_ratio})")
    return 0 if e / b <= args.max_ratio else 1


if __name__ == "__main__":
    sys.exit(main())
