#!/usr/bin/env python3
"""Draw kzgit's imports between its top-level modules and packages (Graphviz DOT on stdout).

usage: scripts/import_graph.py [--depth N] [--type-checking | --no-type-checking] > imports.dot
       dot -Tsvg imports.dot > imports.svg

Every import counts, deferred ones (inside a function) and those under ``TYPE_CHECKING`` too,
as ``lint-imports`` counts them (the contracts in ``pyproject.toml``). Each node is placed in its
layer (``[tool.importlinter]``'s layers contract, top to bottom), and an edge that goes up a
layer or closes a cycle is drawn red; the script exits 1 when there is one, so it is a check
too. ``--depth 3`` draws the modules of each package instead.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Dict, List, Set

ROOT = Path(__file__).resolve().parent.parent


def layers() -> Dict[str, int]:
    """Module name -> its layer's rank (0 the top) from the layers contract."""
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    with open(ROOT / "pyproject.toml", "rb") as f:
        contracts = tomllib.load(f)["tool"]["importlinter"]["contracts"]
    contract = next(c for c in contracts if c["type"] == "layers")
    out: Dict[str, int] = {}
    for rank, layer in enumerate(contract["layers"]):
        for name in layer.replace(":", "|").split("|"):
            out[f"kzgit.{name.strip()}"] = rank
    return out


def sccs(nodes: Set[str], edges: Dict[str, Set[str]]) -> List[Set[str]]:
    """Strongly connected components (Tarjan, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    out: List[Set[str]] = []
    counter = 0
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.add(x)
                    if x == v:
                        break
                out.append(comp)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--depth", type=int, default=2, help="2: top-level modules; 3: their modules")
    args = ap.parse_args()
    import grimp  # the import graph library import-linter is built on (the test extra)
    sys.path.insert(0, str(ROOT))
    graph = grimp.build_graph("kzgit", include_external_packages=False)

    def node(m: str) -> str:
        return ".".join(m.split(".")[:args.depth])
    edges: Dict[str, Set[str]] = {}
    nodes: Set[str] = set()
    for m in graph.modules:
        a = node(m)
        nodes.add(a)
        for imported in graph.find_modules_directly_imported_by(m):
            b = node(imported)
            if a != b and b != "kzgit":
                edges.setdefault(a, set()).add(b)
    nodes.discard("kzgit")
    edges.pop("kzgit", None)
    rank = layers()

    def layer(n: str) -> int:
        return rank.get(".".join(n.split(".")[:2]), -1)
    cyclic = {n for comp in sccs(nodes, edges) if len(comp) > 1 for n in comp}
    bad = 0
    print("digraph kzgit {\n  rankdir=TB; node [shape=box, fontname=Helvetica];")
    for r in sorted(set(rank.values())):
        members = sorted(n for n in nodes if layer(n) == r)
        if members:
            print(f'  {{ rank=same; {"; ".join(chr(34) + n + chr(34) for n in members)} }}')
    for a in sorted(edges):
        for b in sorted(edges[a]):
            up = layer(a) >= 0 and layer(b) >= 0 and layer(b) < layer(a)
            red = up or (a in cyclic and b in cyclic)
            bad += red
            print(f'  "{a}" -> "{b}"' + (' [color=red, penwidth=2]' if red else ""))
    print("}")
    if bad:
        print(f"{bad} import(s) go up a layer or close a cycle (red)", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
