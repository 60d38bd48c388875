#!/usr/bin/env python3
"""Time builds with kzgit's regular expressions on RE2 (``kzgit.gore``) against Python's ``re``.

Since issue 32 every regular expression a repository writes (patch and replacement targets,
field paths, CRD patterns, globs) runs on RE2 through ``kzgit.gore``: linear in the text, where
Python's backtracking ``re`` let ``(a+)+b`` hang a build.  RE2 is a C++ automaton behind a
binding that encodes each text to UTF-8; ``re`` is C too and, for the short names selectors
match, needs no encoding.  This measures what that costs a build:

* the conformance corpus (every case of ``--corpus``, built in this process as the ``run``
  script builds it, at the Kustomize version that recorded it);
* a regex-heavy overlay: ``gen_tree.py N`` plus ``--patches`` patches whose targets are name
  and kind regular expressions, each matched against every resource.

Each build runs with ``gore.compile`` as shipped ("re2") and with it replaced by ``re.compile``
("re"), alternating, ``--rounds`` times after a warm-up; the total CPU time (``process_time``)
of each engine over each set is the median over rounds.  Printed: both times and re2/re.  The
outputs of the two engines are compared too (a difference is printed: on these inputs the two
dialects agree).

    .venv/bin/python benchmarks/bench_regex.py
    .venv/bin/python benchmarks/bench_regex.py --rounds 5 --resources 2000 --patches 20
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import gen_tree  # noqa: E402

from kzgit import gore  # noqa: E402
from kzgit.builder import BuildOptions, build  # noqa: E402
from kzgit.errors import KzgitError  # noqa: E402
from kzgit.versions import resolve  # noqa: E402

DEFAULT_CORPUS = Path("/work/shared/conformance/cases")


class PythonRe:
    """Python's ``re`` in place of RE2 (what kzgit did before issue 32)."""

    def __init__(self, pattern: str) -> None:
        try:
            self.rx = re.compile(pattern[:-1] + r"\Z" if pattern.endswith("$") else pattern)
        except re.error as e:
            raise gore.RegexError(str(e), pattern) from None
        self.search, self.match, self.fullmatch = self.rx.search, self.rx.match, self.rx.fullmatch
        self.finditer = self.rx.finditer

    def test(self, text: str) -> bool:
        return self.rx.search(text) is not None


def python_re(pattern: str) -> Any:
    return PythonRe(pattern)


def corpus_cases(root: Path) -> List[Tuple[str, str, BuildOptions]]:
    """(id, directory to build, options) of every ``build`` case with no extra arguments."""
    out = []
    for case in sorted(root.glob("*/*/case.json")):
        meta = json.loads(case.read_text())
        if meta.get("args") or meta.get("source", {}).get("kind", "build") != "build":
            continue
        recorded = meta.get("recorded_with", "")
        m = re.search(r"Kustomize v(\d+\.\d+\.\d+)", recorded)
        version = resolve(m.group(1), "bench") if m else None
        opts = BuildOptions(kustomize_version=version) if version else BuildOptions()
        out.append((meta["id"], str(case.parent / meta.get("target", ".")), opts))
    return out


def regex_overlay(tmp: str, resources: int, patches: int) -> Tuple[str, str, BuildOptions]:
    gen_tree.generate(resources, tmp)
    lines = ["resources: [../overlay]", "patches:"]
    for i in range(patches):
        lines += [f"- target: {{kind: 'Deploy.*|StatefulSet', name: '.*app{i:03d}[0-9]+'}}",
                  "  patch: |-",
                  "    - op: add",
                  f"      path: /metadata/annotations/regex{i}",
                  "      value: hit"]
    top = os.path.join(tmp, "regex")
    os.makedirs(top)
    with open(os.path.join(top, "kustomization.yaml"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return ("regex-overlay", top, BuildOptions())


def run_all(cases: List[Tuple[str, str, BuildOptions]]) -> Tuple[float, Dict[str, str]]:
    outputs: Dict[str, str] = {}
    start = time.process_time()
    for cid, path, opts in cases:
        try:
            outputs[cid] = build(path, opts).to_yaml()
        except KzgitError as e:
            outputs[cid] = f"error: {e}"
    return time.process_time() - start, outputs


def measure(cases: List[Tuple[str, str, BuildOptions]], rounds: int) -> Dict[str, Any]:
    engines: Dict[str, Callable[[str], Any]] = {"re2": gore.compile, "re": python_re}
    shipped = gore.compile
    times: Dict[str, List[float]] = {k: [] for k in engines}
    outputs: Dict[str, Dict[str, str]] = {}
    try:
        for r in range(rounds + 1):   # round 0 warms up
            order = list(engines) if r % 2 else list(reversed(engines))
            for name in order:
                gore._cache.clear()
                gore.compile = engines[name]   # type: ignore[assignment]
                t, out = run_all(cases)
                if r:
                    times[name].append(t)
                outputs[name] = out
    finally:
        gore.compile = shipped   # type: ignore[assignment]
    differ = [c for c in outputs["re2"] if outputs["re2"][c] != outputs["re"][c]]
    return {k: statistics.median(v) for k, v in times.items()} | {"differ": differ}


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--resources", type=int, default=2000)
    ap.add_argument("--patches", type=int, default=20)
    args = ap.parse_args(argv)
    os.environ.setdefault("KZGIT_NO_CACHE", "1")
    sets = []
    if args.corpus.is_dir():
        sets.append((f"conformance ({args.corpus})", corpus_cases(args.corpus)))
    with tempfile.TemporaryDirectory() as tmp:
        sets.append((f"regex overlay ({args.resources} resources, {args.patches} regex targets)",
                     [regex_overlay(tmp, args.resources, args.patches)]))
        for title, cases in sets:
            got = measure(cases, args.rounds)
            print(f"{title}: {len(cases)} builds, median of {args.rounds} rounds (CPU)")
            print(f"  re2 {got['re2'] * 1000:9.1f} ms   re {got['re'] * 1000:9.1f} ms   "
                  f"re2/re {got['re2'] / got['re']:.3f}")
            if got["differ"]:
                print(f"  outputs differ: {', '.join(got['differ'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
