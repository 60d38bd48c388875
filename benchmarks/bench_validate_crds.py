#!/usr/bin/env python3
"""Time ``kzgit validate`` on custom resources whose CRDs carry CEL rules.

The custom resources are the examples of Gateway API, Kueue, cert-manager and Cluster API
stored with their CRDs in ``tests/validate/data/realcrds`` (provenance in its README),
copied under new names until there are ``--size`` of them (default 400).  Best of
``--repeat``:

* ``kzgit validate --manifests FILE --crd DIR`` end to end (a fresh process: start-up, CRD
  loading and compiling, CEL runtime import, validation);
* in-process, the validation alone of the same resources (schemas and rules compiled by a
  first pass), with CEL and without it (the CEL rules removed from the CRDs): the cost of
  the rules, which docs/figures.md reports next to the run without them (kubeconform, which would
  be the other figure, is a Go binary no package registry here ships).

    .venv/bin/python benchmarks/bench_validate_crds.py
    .venv/bin/python benchmarks/bench_validate_crds.py --size 200 --repeat 3
"""
from __future__ import annotations

import argparse
import copy
import gzip
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_build import run_measured  # noqa: E402

from kzgit.config import ValidatePolicy  # noqa: E402
from kzgit.validate import Validator  # noqa: E402
from kzgit.yamlio import load_documents  # noqa: E402

DATA = ROOT / "tests" / "validate" / "data" / "realcrds"
VERSION = "1.34"


def crds(strip_rules: bool) -> List[Dict[str, Any]]:
    out = []
    for f in sorted(DATA.rglob("*.yaml.gz")):
        for d in load_documents(gzip.decompress(f.read_bytes()), str(f)):
            out.append(_strip(d) if strip_rules else d)
    return out


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if k != "x-kubernetes-validations"}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def resources(size: int, kinds: set) -> List[Dict[str, Any]]:
    examples = []
    for f in sorted(DATA.rglob("*.yaml")):
        if f.name == "README.md":
            continue
        for d in load_documents(f.read_bytes(), str(f)):
            if isinstance(d, dict) and (d.get("apiVersion"), d.get("kind")) in kinds:
                examples.append(d)
    out = []
    i = 0
    while len(out) < size:
        d = copy.deepcopy(examples[i % len(examples)])
        d.setdefault("metadata", {})["name"] = f"{d['metadata'].get('name', 'x')}-{i}"
        out.append(d)
        i += 1
    return out


def validator(crd_objects: List[Dict[str, Any]]) -> Validator:
    v = Validator(ValidatePolicy(kubernetes_version=VERSION))
    for d in crd_objects:
        v.crds.add(d, "bench")
    return v


def in_process(v: Validator, objs: List[Dict[str, Any]], repeat: int) -> float:
    for o in objs:          # compile every schema and rule first
        v.check(o)
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for o in objs:
            v.check(o)
        best = min(best, time.perf_counter() - t)
    return best


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    with_rules = crds(False)
    kinds = {(f"{d['spec']['group']}/{v['name']}", d["spec"]["names"]["kind"])
             for d in with_rules for v in d["spec"]["versions"]}
    objs = resources(args.size, kinds)
    v = validator(with_rules)
    n_rules = sum(r.total for r in _rules(v, objs))
    errors = sum(1 for o in objs for i in v.check(o) or [] if i.severity == "error")
    cel = in_process(v, objs, args.repeat)
    plain = in_process(validator(crds(True)), objs, args.repeat)
    tmp = tempfile.mkdtemp(prefix="kzgit-bench-crds-")
    try:
        import yaml
        crd_dir = os.path.join(tmp, "crds")
        os.mkdir(crd_dir)
        for i, d in enumerate(with_rules):
            Path(crd_dir, f"{i}.yaml").write_text(yaml.safe_dump(d))
        Path(tmp, "crs.yaml").write_text(yaml.safe_dump_all(objs))
        argv_cli = [sys.executable, "-m", "kzgit", "validate", "--no-cache", "--manifests", "crs.yaml",
                    "--crd", "crds", "--kubernetes-version", VERSION]
        runs = [run_measured(argv_cli, cwd=tmp) for _ in range(args.repeat)]
        bad = [r for r in runs if r.returncode != 0]
        if bad:
            sys.exit(f"kzgit validate exited {bad[0].returncode}: {bad[0].output.decode()[-1000:]}")
        cli = min(runs, key=lambda r: r.seconds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    kinds_used = sorted({o["kind"] for o in objs})
    print(f"{len(objs)} custom resources ({', '.join(kinds_used)}), {len(with_rules)} CRDs, "
          f"{n_rules} CEL rules in the schemas used; Kubernetes {VERSION}; {errors} errors (0 expected)")
    print(f"  kzgit validate --manifests --crd (process)  {cli.seconds:6.2f}s wall {cli.cpu_seconds:6.2f}s cpu")
    print(f"  validation alone, with CEL                  {cel * 1000:6.0f} ms  "
          f"({cel / len(objs) * 1e6:.0f} us per resource)")
    print(f"  validation alone, CEL rules removed         {plain * 1000:6.0f} ms  "
          f"({plain / len(objs) * 1e6:.0f} us per resource); CEL costs {cel / plain:.2f}x")
    return 0 if errors == 0 else 1


def _rules(v: Validator, objs: List[Dict[str, Any]]) -> List[Any]:
    from kzgit.validate.cel import rules_check
    seen = {}
    for key, (schema, _) in v.crds._raw.items():
        if any((o["apiVersion"], o["kind"]) == key for o in objs):
            seen[key] = rules_check(schema)
    return [r for r in seen.values() if r is not None]


if __name__ == "__main__":
    sys.exit(main())
