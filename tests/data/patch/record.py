#!/usr/bin/env python3
"""Record kubectl kustomize's answers for the patch table tests.

Usage: python tests/data/patch/record.py  (needs ``kubectl`` on PATH)

For each case of ``smp_cases.yaml`` / ``json6902_cases.yaml`` builds a temp
kustomization (``resources: [target.yaml]`` + ``patches: [{path: patch.yaml,
target?}]``), runs ``kubectl kustomize`` and stores its stdout (or, on failure,
its stderr) in ``<kind>_expected.json``.  Tests compare semantically.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict

import yaml

HERE = Path(__file__).resolve().parent


def run_case(case: Dict[str, Any]) -> Dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "target.yaml").write_text(case["target"])
        (d / "patch.yaml").write_text(case["patch"])
        entry: Dict[str, Any] = {"path": "patch.yaml"}
        if case.get("select"):
            entry["target"] = case["select"]
        kust = {"resources": ["target.yaml"], "patches": [entry]}
        (d / "kustomization.yaml").write_text(yaml.safe_dump(kust))
        p = subprocess.run(["kubectl", "kustomize", str(d)], capture_output=True, text=True)
        if p.returncode != 0:
            # drop klog's timestamp/pid prefix so re-recording is stable
            err = re.sub(r"(?m)^E\d{4} [\d:.]+\s+\d+ \S+\] ", "", p.stderr)
            return {"error": err.replace(tmp, "<tmp>")}
        return {"output": p.stdout}


def main() -> int:
    for kind in ("smp", "json6902"):
        cases = yaml.safe_load((HERE / f"{kind}_cases.yaml").read_text())
        out = {c["name"]: run_case(c) for c in cases}
        (HERE / f"{kind}_expected.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
