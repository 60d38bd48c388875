"""A ``.yaml``/``.yml`` file at or below a kustomization's directory that no kustomization
references (as a file, or through a directory read whole), and that is no kustomization itself.

Off by default: many repositories keep such files on purpose.  Read from the dependency graph
(:mod:`kzgit.graph`); a finding has no line (an ignore comment goes on the file's first line).

```text
base/old.yaml: warning: no kustomization references this file (nearest: base/kustomization.yaml); list it in resources, or remove it [unreferenced-file]
```
"""
from __future__ import annotations

import posixpath

from kzgit.loader import KUSTOMIZATION_FILE_NAMES

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Iterable, Optional, Set, Tuple
    from kzgit.graph import Graph

ID = "unreferenced-file"
SEVERITY = "off"
SUMMARY = "a YAML file in a kustomization's tree that no kustomization references"
KIND = "tree"
RAISED_BY_WARNINGS_AS_ERRORS = False


def check(graph: Graph, files: Iterable[str], only: Optional[Set[str]] = None
          ) -> Iterable[Tuple[str, str]]:
    """(file, message) for each file no kustomization reaches; ``only``: the kustomization
    directories to report for (None: all)."""
    referenced: Set[str] = set()
    trees: Set[str] = set()
    for node in graph.nodes.values():
        referenced.add(node.file)
        referenced |= node.files
        trees |= node.trees
    for f in files:
        if not f.endswith((".yaml", ".yml")) or f in referenced:
            continue
        d, base = posixpath.split(f)
        if base in KUSTOMIZATION_FILE_NAMES:
            continue
        if any(f.startswith(t + "/") for t in trees) or "." in trees:
            continue
        owner = _owner(d or ".", graph)
        if owner is None or (only is not None and owner not in only):
            continue
        yield f, (f"no kustomization references this file (nearest: {graph.nodes[owner].file}); "
                  "list it in resources, or remove it")


def _owner(d: str, graph: Graph) -> Optional[str]:
    """The nearest directory at or above ``d`` holding a kustomization."""
    while True:
        if d in graph.nodes:
            return d
        if d in (".", ""):
            return None
        d = posixpath.dirname(d) or "."
