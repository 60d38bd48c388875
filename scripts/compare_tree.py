#!/usr/bin/env python3
"""Build every kustomization under a directory with ``kubectl kustomize`` and with kzgit, and
compare: the same bytes on success, a failure on both sides otherwise.

The check the golden fixtures make, run over a tree nobody wrote for kzgit: a checkout of a
public project, or your own repository before switching a pipeline to kzgit.  Each root (a
directory holding ``kustomization.yaml``, ``kustomization.yml`` or ``Kustomization``) is built
from where it is, both tools with ``HOME`` and the XDG directories pointed at one empty
temporary directory (no user configuration, plugin or cache is read) and ``GIT_TERMINAL_PROMPT=0``
(a remote base fails instead of asking).  kzgit builds with ``--no-cache``.

A root where both fail counts as agreeing; ``--reasons`` prints both first error lines for
those, to spot one that fails for another cause (kubectl on the network, kzgit on a parse).
Exits 1 when any root differs (output bytes, or one tool fails where the other builds), 2
when kubectl is missing.

Usage::

    scripts/compare_tree.py ~/src/manifests                  # kzgit as installed (python -m kzgit)
    scripts/compare_tree.py --kzgit .venv/bin/kzgit --reasons DIR
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def roots(top: Path) -> List[Path]:
    """The kustomization roots under ``top`` (``.git`` directories skipped), sorted."""
    out = []
    for d, dirs, files in os.walk(top):
        dirs[:] = sorted(x for x in dirs if x != ".git")
        if any(f in files for f in ROOT_FILES):
            out.append(Path(d))
    return sorted(out)


def _run(argv: List[str], env: Dict[str, str], timeout: float) -> Tuple[int, bytes, str]:
    try:
        p = subprocess.run(argv, capture_output=True, env=env, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return -1, b"", f"timed out after {timeout:g}s"
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def _first_error_line(stderr: str) -> str:
    """The error's first line, without klog's prefix (kubectl writes ``E1124 ... run.go:72]
    "command failed" err="..."``, or ``err=<`` with the message on the next lines)."""
    # (kustomize's deprecation warnings come first: "# Warning: 'commonLabels' is deprecated")
    lines = [ln.strip() for ln in stderr.splitlines()
             if ln.strip() and not ln.startswith(("# Warning:", "Warning:"))]
    if not lines:
        return "(no message)"
    first = lines[0]
    if first.endswith("err=<") and len(lines) > 1:
        first = lines[1]
    elif 'err="' in first:
        first = first.split('err="', 1)[1].rstrip('"')
    return first[:200]


def compare(top: Path, kzgit: List[str], kubectl: str, timeout: float,
            reasons: bool) -> Tuple[Dict[str, int], List[str]]:
    """(counts by verdict, lines describing each divergence and, with ``reasons``, each
    shared failure)."""
    counts = {"same": 0, "both fail": 0, "differ": 0, "only kzgit fails": 0, "only kubectl fails": 0}
    notes: List[str] = []
    with tempfile.TemporaryDirectory(prefix="kzgit-compare-") as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "KUSTOMIZE_"))}
        env.update(HOME=home, XDG_CONFIG_HOME=os.path.join(home, "config"),
                   XDG_CACHE_HOME=os.path.join(home, "cache"), GIT_TERMINAL_PROMPT="0")
        for root in roots(top):
            rel = str(root.relative_to(top)) or "."
            k_rc, k_out, k_err = _run([kubectl, "kustomize", str(root)], env, timeout)
            z_rc, z_out, z_err = _run([*kzgit, "build", "--no-cache", str(root)], env, timeout)
            if "Traceback (most recent call last)" in z_err or z_rc == 3:
                notes.append(f"CRASH {rel}: {_first_error_line(z_err)}")
            if k_rc == 0 and z_rc == 0:
                verdict = "same" if k_out == z_out else "differ"
            elif k_rc != 0 and z_rc != 0:
                verdict = "both fail"
                if reasons:
                    notes.append(f"both fail {rel}:\n  kubectl: {_first_error_line(k_err)}\n"
                                 f"  kzgit:   {_first_error_line(z_err)}")
            else:
                verdict = "only kzgit fails" if z_rc != 0 else "only kubectl fails"
            counts[verdict] += 1
            if verdict in ("differ", "only kzgit fails", "only kubectl fails"):
                why = _first_error_line(z_err if z_rc else k_err) if verdict != "differ" else ""
                notes.append(f"{verdict.upper()} {rel}" + (f": {why}" if why else ""))
    return counts, notes


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("``", "'"),
                                 epilog="Exit status: 0 every root agrees, 1 a root differs, "
                                        "2 kubectl is missing.")
    ap.add_argument("directory", type=Path)
    ap.add_argument("--kzgit", help="kzgit command (default: this Python's -m kzgit)")
    ap.add_argument("--kubectl", default=shutil.which("kubectl"),
                    help="the kubectl to compare with (default: the one on PATH)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per build (default 120)")
    ap.add_argument("--reasons", action="store_true", help="print both errors of shared failures")
    args = ap.parse_args(argv)
    if not args.kubectl:
        print("compare_tree: kubectl is not on PATH (it is the reference)", file=sys.stderr)
        return 2
    if not args.directory.is_dir():
        print(f"compare_tree: {args.directory}: not a directory", file=sys.stderr)
        return 2
    kzgit = args.kzgit.split() if args.kzgit else [sys.executable, "-m", "kzgit"]
    counts, notes = compare(args.directory.resolve(), kzgit, args.kubectl, args.timeout, args.reasons)
    for line in notes:
        print(line)
    print(f"{sum(counts.values())} roots: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
    bad = counts["differ"] + counts["only kzgit fails"] + counts["only kubectl fails"]
    return 1 if bad or any(n.startswith("CRASH") for n in notes) else 0


if __name__ == "__main__":
    sys.exit(main())
