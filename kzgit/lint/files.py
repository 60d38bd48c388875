"""The lint rules that read a kustomization file as written: ``deprecated-field``,
``unpinned-chart``, ``needs-newer-kustomize``, ``duplicate-entry``; and ``unreferenced-file``,
which reads the dependency graph.

A kustomization is read twice: with kustomize's typing (:func:`kzgit.yamlio.load_yaml11`, so a
``null`` is told from an empty list as Go tells a nil slice) and with each key's and item's line
(:func:`kzgit.yamlio.lines.parse_with_lines`).  Field names match case-insensitively, as Go's
encoding/json matches struct fields (``Bases:`` is ``bases``).
"""
from __future__ import annotations

import json
import posixpath
import re

from kzgit.errors import KzgitError
from kzgit.kustomization import DEPRECATIONS
from kzgit.loader import KUSTOMIZATION_FILE_NAMES

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, Iterable, List, Optional, Set, Tuple
    from kzgit.graph import Graph
    Hit = Tuple[str, Optional[int], str, str]
    """(rule, line, field, message) of one finding in the file checked."""

#: The fields whose entries ``duplicate-entry`` compares, and what an entry is there.
#: ``bases`` joins ``resources``: types.FixKustomization appends it there
#: (api/types/kustomization.go), so a path in both is accumulated twice.
DUPLICATE_FIELDS = (("resources", "resource"), ("bases", "resource"), ("components", "component"),
                    ("patches", "patch"), ("patchesStrategicMerge", "patch"),
                    ("patchesJson6902", "patch"))


# a semver constraint rather than one release: operators, wildcards, alternatives, spaces
_RANGE = re.compile(r"[\^~<>=*|, ]|(^|\.)[xX](\.|$)")


class KFile:
    """One kustomization file: its typed mapping and the lines of its keys and items."""

    def __init__(self, rel: str, data: bytes) -> None:
        from kzgit.yamlio.lines import parse_with_lines   # start-up: only lint runs read lines
        from kzgit.yamlio import load_yaml11   # start-up: as above
        self.rel = rel
        self.text = data.decode("utf-8", "replace")
        self.raw: Any = load_yaml11(data, rel)
        self.tree: Any = parse_with_lines(self.text) if isinstance(self.raw, dict) else None
        # canonical (lower-case) name -> the key as written
        self.keys: Dict[str, Any] = ({str(k).lower(): k for k in self.raw}
                                     if isinstance(self.raw, dict) else {})

    @property
    def dir(self) -> str:
        return posixpath.dirname(self.rel) or "."

    def key(self, field: str) -> Any:
        """The key spelling ``field`` in this file, or None."""
        return self.keys.get(field.lower())

    def value(self, field: str) -> Any:
        k = self.key(field)
        return None if k is None else self.raw.get(k)

    def line(self, field: str, index: Optional[int] = None, sub: Optional[str] = None) -> Optional[int]:
        """The line of ``field``, of its item ``index``, or of that item's key ``sub``."""
        return self.path_line(*[p for p in (field, index, sub) if p is not None])

    def path_line(self, *parts: Any) -> Optional[int]:
        """The line of the deepest key or item of ``parts`` (field, index, key, ...) present."""
        k = self.key(str(parts[0])) if parts else None
        node, best = self.tree, None
        for p in ((str(k),) + parts[1:] if k is not None else ()):
            if isinstance(node, dict) and p in node:
                best, node = _key_lines(node).get(p) or best, node[p]
            elif isinstance(node, list) and isinstance(p, int) and 0 <= p < len(node):
                best, node = _item_lines(node)[p], node[p]
            else:
                break
        return best

    def find_key(self, name: str) -> Optional[int]:
        """The line of the first key ``name`` anywhere in the file (breadth first)."""
        queue = [self.tree]
        while queue:
            node = queue.pop(0)
            if isinstance(node, dict):
                if name in node:
                    return _key_lines(node).get(name)
                queue.extend(node.values())
            elif isinstance(node, list):
                queue.extend(node)
        return None


def _key_lines(node: Any) -> Dict[Any, int]:
    """The lines of a mapping's keys (:func:`kzgit.yamlio.lines.parse_with_lines`)."""
    return getattr(node, "key_lines", {})


def _item_lines(node: Any) -> List[int]:
    return getattr(node, "item_lines", [])


def read_kfile(rel: str, data: bytes) -> Optional[KFile]:
    """The file, or None when it is not a mapping or not YAML (the build reports that)."""
    try:
        k = KFile(rel, data)
    except KzgitError:
        return None
    return k if isinstance(k.raw, dict) else None


def check(k: KFile, version: Tuple[int, int, int], origin: str) -> List[Hit]:
    """Every file rule over one kustomization; ``version`` the pinned release (``origin``:
    where it was pinned, for the message)."""
    return [*deprecated_fields(k), *unpinned_charts(k), *needs_newer(k, version, origin),
            *duplicates(k)]


def fix_command(k: KFile, field: str) -> str:
    """The ``kzgit fix`` that migrates ``field`` of this kustomization (``vars`` only with
    ``--vars``, as ``kustomize edit fix --vars``)."""
    return f"kzgit fix {'--vars ' if field == 'vars' else ''}{k.dir}"


def deprecated_fields(k: KFile) -> Iterable[Hit]:
    """``deprecated-field``: kustomize's own warnings (api/types/kustomization.go
    CheckDeprecatedFields at kustomize/v5.8.1: a field that is not nil, an empty list too),
    word for word, then the command that migrates the field keeping the file as written."""
    for field, message in DEPRECATIONS:
        if k.key(field) is None or k.value(field) is None:
            continue
        text = message[2:] if message.startswith("# ") else message
        yield ("deprecated-field", k.line(field), field,
               f"{text} With kzgit: `{fix_command(k, field)}` (keeps comments and layout, and checks "
               "that every root renders the same)")


def unpinned_charts(k: KFile) -> Iterable[Hit]:
    """``unpinned-chart``: a chart pulled from a repository (``repo``) with no ``version``:
    helm takes the newest release there, so the same commit renders differently later.  A chart
    without ``repo`` is read from ``chartHome`` (files in the repository: pinned by git)."""
    for field, version_key in (("helmCharts", "version"), ("helmChartInflationGenerator", "chartVersion")):
        entries = k.value(field)
        if not isinstance(entries, list):
            continue
        for i, c in enumerate(entries):
            if not isinstance(c, dict):
                continue
            repo = c.get("repo" if field == "helmCharts" else "chartRepoUrl")
            if not repo:
                continue
            name = c.get("name" if field == "helmCharts" else "chartName") or "?"
            version = c.get(version_key)
            if not version:
                yield ("unpinned-chart", k.line(field, i), f"{field}[{i}]",
                       f"chart '{name}' from {repo} has no {version_key}: helm pulls whatever "
                       "release is newest when it renders; pin one")
            elif isinstance(version, str) and _RANGE.search(version):
                # helm pull --version takes a semver constraint (Masterminds/semver): a range
                # is resolved against the repository's index on each pull
                yield ("unpinned-chart", k.path_line(field, i, version_key), f"{field}[{i}].{version_key}",
                       f"chart '{name}' from {repo}: {version_key} '{version}' is a range: helm "
                       "pulls the newest release it allows; pin one release")


def needs_newer(k: KFile, version: Tuple[int, int, int], origin: str) -> Iterable[Hit]:
    """``needs-newer-kustomize``: a field the pinned release's kustomization struct does not
    have but a later supported release's has (:func:`kzgit.kustomization.needs_release`, over
    the per-release structs of :func:`kzgit.kustomization.schema`)."""
    from kzgit.kustomization import decode_kustomization   # start-up: lint only
    from kzgit.versions import needs
    try:
        decode_kustomization(k.raw, version)
    except KzgitError as e:
        got = getattr(e, "needs", None)
        if got is None:
            return   # not a question of releases: the build reports it (render-error)
        field, minimum = got
        yield ("needs-newer-kustomize", k.find_key(field) or k.line(field), field,
               needs(f"'{field}'", minimum, version, origin))


def _entry_key(field: str, entry: Any, kdir: str) -> Optional[str]:
    """What makes two entries of ``field`` the same: a path normalised (``./a`` is ``a``),
    an inline patch or a mapping by its content."""
    if isinstance(entry, str):
        if field in ("patchesStrategicMerge",) and "\n" in entry:
            return "inline:" + entry.strip()
        if "://" in entry or entry.startswith(("git@", "github.com/")):
            return "url:" + entry
        return "path:" + posixpath.normpath(posixpath.join(kdir, entry))
    if isinstance(entry, dict):
        return "entry:" + json.dumps(entry, sort_keys=True, default=str)
    return None


def duplicates(k: KFile) -> Iterable[Hit]:
    """``duplicate-entry``: the same resource (``resources`` and ``bases`` together),
    component or patch (each patch field on its own) listed twice."""
    seen: Dict[Tuple[str, str], Tuple[str, int]] = {}
    for field, what in DUPLICATE_FIELDS:
        entries = k.value(field)
        if not isinstance(entries, list):
            continue
        group = "resources" if field in ("resources", "bases") else field
        for i, e in enumerate(entries):
            key = _entry_key(field, e, k.dir)
            if key is None:
                continue
            first = seen.get((group, key))
            if first is None:
                seen[(group, key)] = (field, i)
                continue
            shown = e if isinstance(e, str) and "\n" not in e else f"entry {i}"
            at = k.line(*first)
            yield ("duplicate-entry", k.line(field, i), f"{field}[{i}]",
                   f"{what} {shown!r} is listed twice (first as {first[0]}[{first[1]}]"
                   + (f", line {at})" if at else ")"))


def unreferenced_files(graph: Graph, files: Iterable[str], only: Optional[Set[str]] = None
                       ) -> Iterable[Tuple[str, str]]:
    """``unreferenced-file``: (file, kustomization directory) for each ``.yaml``/``.yml``
    file at or below a kustomization's directory that no kustomization reaches (as a file,
    or through a directory read whole), and that is no kustomization itself.  ``only``:
    the kustomization directories to report for (None: all)."""
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
        yield f, owner


def _owner(d: str, graph: Graph) -> Optional[str]:
    """The nearest directory at or above ``d`` holding a kustomization."""
    while True:
        if d in graph.nodes:
            return d
        if d in (".", ""):
            return None
        d = posixpath.dirname(d) or "."
