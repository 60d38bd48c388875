"""``kzgit explain``: where every rendered value came from.

A build runs with a :class:`kzgit.trace.Tracer`, which attributes each leaf of each resource to
the phases that wrote it (the resource file, a generator entry, a patch, a builtin
transformer's field, a name reference update, the hash suffix...).  This module turns that
history into what a person reads: for each field of each rendered resource, its final value
and the chain of steps, oldest first, each with the file and line that set the value and the
kustomization entry that brought the step in (``overlays/prod/kustomization.yaml:14``), so the
overlay layer is visible.

The rendered output is the build's, unchanged (``--annotate`` adds trailing comments only).
Lines are found by reading the files again (:mod:`kzgit.yamlio.lines`); a step whose line
cannot be known keeps its file, and a value a plugin or a chart produced says ``cannot trace``
and names it: explain never guesses.
"""
from __future__ import annotations

import json
import os
import posixpath

from kzgit.builder import build
from kzgit.options import BuildOptions
from kzgit.errors import UsageError
from kzgit.record import Record
from kzgit.trace import TRACER, Step, Tracer, flatten, item_keys, path_text

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple
    from kzgit.resource import Resource
    from kzgit.trace import Path

__all__ = ["Explained", "FieldRecord", "Origin", "explain", "explain_app", "resource_name"]

# what the trace's step kinds are called in the output
_BUILTIN_FIELDS = ("namespace", "namePrefix", "nameSuffix", "labels", "commonLabels",
                   "commonAnnotations", "replicas", "images", "replacements", "vars")
CANNOT_TRACE = "cannot trace"


class Origin(Record):
    """One step of a value's history: ``kind`` (``resource``, ``generator``, ``patch``, a
    kustomization field such as ``images``, ``nameReference``, ``hashSuffix``, ``plugin``,
    ``helm``, or ``cannot trace``), the ``file`` and ``line`` that set the value, and the
    kustomization entry that brought the step in (``FILE:LINE``)."""

    __slots__ = ("kind", "file", "line", "kustomization", "detail")

    def __init__(self, kind: str, file: str, line: Optional[int], kustomization: str,
                 detail: str = "") -> None:
        self.kind = kind
        self.file = file
        self.line = line
        self.kustomization = kustomization
        self.detail = detail

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.file and self.line else self.file

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"kind": self.kind, "file": self.file, "line": self.line,
                               "kustomization": self.kustomization}
        if self.detail:
            out["detail"] = self.detail
        return out


class FieldRecord(Record):
    """One field of one rendered resource: its path (kustomize's field-path form), its final
    value and its steps, oldest first."""

    __slots__ = ("resource", "path", "value", "steps")

    def __init__(self, resource: str, path: str, value: Any, steps: List[Origin]) -> None:
        self.resource = resource
        self.path = path
        self.value = value
        self.steps = steps

    def to_json(self) -> Dict[str, Any]:
        return {"resource": self.resource, "path": self.path, "value": self.value,
                "steps": [s.to_json() for s in self.steps]}


class Explained(Record):
    """What ``kzgit explain`` found: the records (selected resources and fields) and the build's
    output with, per resource, the path of every leaf and its last step (for ``--annotate``)."""

    __slots__ = ("records", "yaml", "chains", "ids", "warnings")

    def __init__(self, records: List[FieldRecord], yaml: str, chains: List[Dict[Path, List[Origin]]],
                 ids: List[str], warnings: List[str]) -> None:
        self.records = records
        self.yaml = yaml            # byte for byte what `kzgit build` prints
        self.chains = chains        # per output document: leaf path -> its steps, oldest first
        self.ids = ids              # per output document: Kind/namespace/name
        self.warnings = warnings

    def to_json(self) -> str:
        """One document, a record per line (each encoded by the C encoder: an indented dump of
        thousands of records costs more than the build)."""
        rows = ",\n".join("  " + json.dumps(r.to_json(), ensure_ascii=False) for r in self.records)
        return '{"records": [\n' + rows + ("\n" if rows else "") + "]}\n"

    def text(self) -> str:
        out: List[str] = []
        current = None
        for r in self.records:
            if r.resource != current:
                current = r.resource
                out.append(r.resource)
            out.append(f"  {r.path}: {_shown(r.value)}")
            width = max(len(s.where) for s in r.steps) if r.steps else 0
            for s in r.steps:
                what = s.detail if s.detail.startswith(s.kind) else s.kind + (f": {s.detail}" if s.detail else "")
                via = f"  (via {s.kustomization})" if s.kustomization and s.kustomization != s.where else ""
                out.append(f"    {s.where:<{width}}  {what}{via}")
        return "\n".join(out) + ("\n" if out else "")

    def annotated(self) -> str:
        """The build's YAML with a trailing ``# file:line`` on each line that holds a value,
        naming the step that last set it (what ``git blame`` is to source)."""
        docs = self.yaml.split("\n---\n") if self.yaml else []
        out: List[str] = []
        for i, doc in enumerate(docs):
            text = doc if doc.endswith("\n") else doc + "\n"
            at = self.lines(i, text)
            for n, line in enumerate(text.split("\n")[:-1], start=1):
                chain = at.get(n)
                if chain and chain[-1].where:
                    line = f"{line}  # {chain[-1].where}"
                out.append(line)
            if i < len(docs) - 1:
                out.append("---")
        return "\n".join(out) + ("\n" if out else "")

    def lines(self, index: int, text: str) -> Dict[int, List[Origin]]:
        """Line of ``text`` (the YAML of output document ``index``) -> the steps of the value
        written on it (lines of block scalars and of keys above a block have none)."""
        from kzgit.yamlio.lines import parse_with_lines   # start-up: --annotate and diff only
        at: Dict[int, Path] = {}
        _lines_of(parse_with_lines(text), (), at)
        chains = self.chains[index] if index < len(self.chains) else {}
        return {n: chains[p] for n, p in at.items() if chains.get(p)}

    def blame(self) -> Dict[str, Dict[int, List[Origin]]]:
        """Per rendered resource (``Kind/namespace/name``), line of its YAML -> the steps of the
        value on it (what ``kzgit diff --explain`` reads)."""
        docs = self.yaml.split("\n---\n") if self.yaml else []
        out: Dict[str, Dict[int, List[Origin]]] = {}
        for i, doc in enumerate(docs):
            out[self.ids[i]] = self.lines(i, doc if doc.endswith("\n") else doc + "\n")
        return out


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) or value == "" \
        or "\n" in value else value


def _lines_of(node: Any, path: Path, at: Dict[int, Path]) -> None:
    """Line -> the path of the leaf written on it, in an emitted document (list items keyed as
    :func:`kzgit.trace.flatten` keys them)."""
    from kzgit.yamlio.lines import line_at   # start-up: --annotate only
    if isinstance(node, dict):
        for k, v in node.items():
            p = path + (str(k),)
            ln = line_at(node, k)
            if ln is not None and not (isinstance(v, (dict, list)) and v):
                at.setdefault(ln, p)
            _lines_of(v, p, at)
    elif isinstance(node, list):
        for i, (key, v) in enumerate(zip(item_keys(node), node)):
            p = path + (key,)
            ln = line_at(node, i)
            if ln is not None and not (isinstance(v, (dict, list)) and v):
                at.setdefault(ln, p)
            _lines_of(v, p, at)


def resource_name(r: Resource) -> str:
    """``Kind/name``, or ``Kind/namespace/name`` for a namespaced one, as rendered."""
    return "/".join([r.kind] + ([r.namespace] if r.namespace else []) + [r.name])


def _matches(r: Resource, wanted: str) -> bool:
    """Whether ``wanted`` (``Kind/name``, ``Kind/ns/name``, the kind group-qualified as
    ``Kind.group``) names ``r``."""
    parts = wanted.split("/")
    if len(parts) not in (2, 3):
        return False
    kind = parts[0]
    if "." in kind:
        kind, group = kind.split(".", 1)
        if r.gvk.group != group:
            return False
    if kind != r.kind or parts[-1] != r.name:
        return False
    return len(parts) == 2 or parts[1] == r.namespace


def _field_matches(path: Path, wanted: str) -> bool:
    """``path`` is the field ``wanted`` names, or lies under it (``spec.template``)."""
    text = path_text(path)
    return text == wanted or text.startswith(wanted + ".")


def explain(target: str, options: Optional[BuildOptions] = None, resource: Optional[str] = None,
            field: Optional[str] = None, display: Optional[Callable[[str], str]] = None) -> Explained:
    """Build ``target`` with a tracer and explain ``resource`` (every one when None) and
    ``field`` (every leaf when None).  ``display`` turns an absolute path into what messages
    show (default: relative to the current directory when under it)."""
    options = (options or BuildOptions()).replace(cache=None)   # no base reused unrecorded
    tracer = Tracer()
    token = TRACER.set(tracer)
    try:
        result = build(target, options)
    finally:
        TRACER.reset(token)
    fs = options.fs
    return _explained(tracer, result.resources, result.to_yaml(), result.warnings, target,
                      resource, field, display or _relative,
                      fs.read_bytes if fs is not None else _read_disk)


def explain_app(catalog: Any, app: Any, resource: Optional[str] = None, field: Optional[str] = None,
                display: Optional[Callable[[str], str]] = None) -> Explained:
    """An Argo CD Application or Flux Kustomization (:mod:`kzgit.gitops`) rendered as its
    controller deploys it, explained: the build's steps, then what the controller does after
    the build (Flux's ``postBuild`` substitution, ``commonMetadata``) as one step of the
    application's own file and line."""
    from kzgit.gitops.render import render_app   # start-up: --app only
    tracer = Tracer()
    token = TRACER.set(tracer)
    try:
        rendered = render_app(catalog, app)
        # what changed after the last phase of the build is the controller's own doing
        kfile = os.path.join(catalog.repo.top, app.file) if not os.path.isabs(app.file) else app.file
        tracer.settle(rendered.resources, Step("application", kfile, detail=f"{app.id} ({app.file}:{app.line})"))
    finally:
        TRACER.reset(token)
    return _explained(tracer, rendered.resources, rendered.to_yaml(), rendered.warnings,
                      app.id, resource, field, display or _relative, _read_disk)


def _explained(tracer: Tracer, resources: List[Resource], yaml: str, warnings: List[str],
               target: str, resource: Optional[str], field: Optional[str],
               show: Callable[[str], str], read: Callable[[str], bytes]) -> Explained:
    steps = _Steps(show, read)
    records: List[FieldRecord] = []
    all_chains: List[Dict[Path, List[Origin]]] = []
    selected = [r for r in resources if resource is None or _matches(r, resource)]
    if resource is not None and not selected:
        names = ", ".join(resource_name(r) for r in resources[:20])
        raise UsageError(f"no resource {resource!r} in the output of {target}",
                         tip=f"name one as rendered (Kind/name or Kind/namespace/name): {names}")
    for r in resources:
        hist = tracer.of(r)
        flat = flatten(r.obj)
        chains = {p: steps.chain(r, p, hist.get(p, [])) for p in flat}
        all_chains.append(chains)
        if resource is not None and r not in selected:
            continue
        name = resource_name(r)
        for p, v in flat.items():
            if field is not None and not _field_matches(p, field):
                continue
            records.append(FieldRecord(name, path_text(p), v, chains[p]))
    if field is not None and not records:
        raise UsageError(f"no field {field!r} in {resource or 'the output of ' + target}",
                         tip="name a field as kustomize writes field paths, e.g. spec.replicas "
                             "or spec.template.spec.containers.[name=web].image")
    return Explained(records, yaml, all_chains, [resource_name(r) for r in resources], warnings)


def _relative(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


class _Steps:
    """Steps of the trace as :class:`Origin` rows, each kustomization and file read once."""

    def __init__(self, show: Callable[[str], str], read: Callable[[str], bytes]) -> None:
        self.read = read   # the build's file system: a revision's files, for kzgit diff
        shown: Dict[str, str] = {}

        def memo(path: str) -> str:
            if path not in shown:
                shown[path] = show(path)
            return shown[path]
        self.show = memo
        self._at_memo: Dict[Tuple[Any, ...], str] = {}
        self._same: Dict[int, Origin] = {}   # id(step) -> its row, for steps that name no field
        self._doc_of: Dict[Tuple[str, int], Optional[Tuple[Any, int]]] = {}   # (file, id(r)) -> its document
        self._kust: Dict[str, Tuple[Any, Any]] = {}     # kfile -> (data with lines, raw text lines)
        self._files: Dict[str, List[Tuple[Any, int]]] = {}

    # -- reading ------------------------------------------------------------------------------
    def _kustomization(self, kfile: str) -> Any:
        if kfile not in self._kust:
            from kzgit.yamlio.lines import parse_with_lines   # start-up: explain only
            try:
                text = self.read(kfile).decode("utf-8", "replace")
            except Exception:  # noqa: BLE001 - unreadable now: no lines, never a guess
                text = ""
            self._kust[kfile] = (parse_with_lines(text), text.split("\n"))
        return self._kust[kfile][0]

    def _docs(self, path: str) -> List[Tuple[Any, int]]:
        """The YAML documents of a file with lines, each with the line it starts on."""
        if path not in self._files:
            from kzgit.yamlio.lines import parse_with_lines   # start-up: explain only
            from kzgit.yamlio.load import split_documents   # start-up: explain only
            try:
                text = self.read(path).decode("utf-8", "replace")
                docs = [(parse_with_lines(t), n) for t, n in split_documents(text, path) if t.strip()]
            except Exception:  # noqa: BLE001 - a file kzgit cannot point into: no lines
                docs = []
            self._files[path] = docs
        return self._files[path]

    def _entry_line(self, kfile: str, *parts: Any) -> Optional[int]:
        from kzgit.yamlio.lines import deepest_line   # start-up: explain only
        tree = self._kustomization(kfile)
        return deepest_line(tree, [str(p) for p in parts]) if tree is not None else None

    def _entry(self, kfile: str, field: str, index: Optional[int]) -> Any:
        tree = self._kustomization(kfile)
        v = tree.get(field) if isinstance(tree, dict) else None
        if index is not None:
            return v[index] if isinstance(v, list) and 0 <= index < len(v) else None
        return v

    def _at(self, kfile: str, *parts: Any) -> str:
        key = (kfile,) + parts
        if key not in self._at_memo:
            line = self._entry_line(kfile, *parts)
            self._at_memo[key] = f"{self.show(kfile)}:{line}" if line else self.show(kfile)
        return self._at_memo[key]

    # -- a value's chain ----------------------------------------------------------------------
    def chain(self, r: Resource, path: Path, history: Sequence[Step]) -> List[Origin]:
        out: List[Origin] = []
        for s in history:
            o = self.origin(r, path, s)
            if out and o.where == out[-1].where and o.kind == out[-1].kind:
                continue   # the same entry twice (a phase seen at two levels)
            out.append(o)
        return out

    def origin(self, r: Resource, path: Path, s: Step) -> Origin:
        if s.kind in ("resource", "generator", "patch", "replacements"):
            return self._origin(r, path, s)
        # the same row for every field the step set
        got = self._same.get(id(s))
        if got is None:
            got = self._same[id(s)] = self._origin(r, path, s)
        return got

    def _origin(self, r: Resource, path: Path, s: Step) -> Origin:
        kind = s.kind
        if kind == "resource":
            entry_at = self._at(s.kfile, "resources", *self._item_index(s.kfile, "resources", s.detail))
            line = self._line_in_file(s.file, r, path)
            return Origin("resource", self.show(s.file), line, entry_at)
        if kind == "generator":
            return self._generator(r, path, s)
        if kind == "patch":
            return self._patch(r, path, s)
        if kind == "replacements":
            found = self._replacement(s.kfile, path)
            if found is not None:
                return found
        if kind in _BUILTIN_FIELDS:
            parts: Tuple[Any, ...] = (s.field,) if s.index is None else (s.field, s.index)
            where = self._at(s.kfile, *parts)
            file, at_line = _split(where)
            label = s.field + (f"[{s.index}]" if s.index is not None else "")
            return Origin(kind, file, at_line, where, label)
        if kind == "application":
            file, _, rest = s.detail.rpartition("(")[2].rstrip(")").rpartition(":")
            return Origin("application", self.show(s.kfile), int(rest) if rest.isdigit() else None,
                          "", f"set by the controller after the build: {s.detail.split(' (')[0]} "
                              "(postBuild substitution, commonMetadata)")
        if kind in ("nameReference", "hashSuffix", "output"):
            what = {"nameReference": "a name reference updated after a rename",
                    "hashSuffix": "the content hash appended to a generated name",
                    "output": "the build's output (managed-by label, annotation texts)"}[kind]
            return Origin(kind, self.show(s.kfile), None, "", what)
        if kind in ("plugin", "helm"):
            where = self._at(s.kfile, s.field)
            what = f"the helm chart {s.detail}" if kind == "helm" else f"the plugin {s.detail}"
            return Origin(CANNOT_TRACE, self.show(s.kfile), None, where,
                          f"set by {what if s.detail else 'a ' + kind} ({s.field}); its output "
                          "carries no source lines")
        return Origin(CANNOT_TRACE, self.show(s.kfile) if s.kfile else "", None, "",
                      f"set by a step kzgit does not trace ({kind})")

    def _replacement(self, kfile: str, path: Path) -> Optional[Origin]:
        """The ``replacements`` entry (and target) whose field paths name ``path``, with its
        source; None when no inline entry does (a replacement file, a path kzgit cannot match)."""
        entries = self._entry(kfile, "replacements", None)
        want = path_text(path)
        for i, e in enumerate(entries if isinstance(entries, list) else []):
            if not isinstance(e, dict):
                continue
            for j, t in enumerate(e.get("targets") or []):
                paths = t.get("fieldPaths") if isinstance(t, dict) else None
                if isinstance(paths, list) and any(_same_field(p, want) for p in paths if isinstance(p, str)):
                    src = e.get("source") if isinstance(e.get("source"), dict) else {}
                    what = (f"from {src.get('kind', '?')}/{src.get('name', '?')} "
                            f"{src.get('fieldPath') or 'metadata.name'}") if src else "from sourceValue"
                    where = self._at(kfile, "replacements", i, "targets", j)
                    file, line = _split(where)
                    return Origin("replacements", file, line, self._at(kfile, "replacements", i),
                                  f"replacements[{i}] {what}")
        return None

    def _item_index(self, kfile: str, field: str, item: str) -> Tuple[Any, ...]:
        entries = self._entry(kfile, field, None)
        if isinstance(entries, list) and item in entries:
            return (entries.index(item),)
        return ()

    def _line_in_file(self, file: str, r: Resource, path: Path) -> Optional[int]:
        """The line of ``path`` (or of its deepest present part) in the document of ``r``'s
        kind and original name in ``file``."""
        key = (file, id(r))
        if key not in self._doc_of:
            names = {i.name for i in r.all_ids()}
            best = None
            for doc, first in self._docs(file):
                if not isinstance(doc, dict) or doc.get("kind") != r.kind:
                    continue
                md = doc.get("metadata")
                named = isinstance(md, dict) and md.get("name") in names
                if best is None or named:
                    best = (doc, first)
                if named:
                    break
            self._doc_of[key] = best
        best = self._doc_of[key]
        if best is None:
            return None
        line = _deepest(best[0], path)
        return best[1] + (line if line is not None else 1) - 1

    def _generator(self, r: Resource, path: Path, s: Step) -> Origin:
        entry_at = self._at(s.kfile, s.field, s.index)
        file, at_line = _split(entry_at)
        args = self._entry(s.kfile, s.field, s.index)
        key = str(path[1]) if len(path) == 2 and path[0] in ("data", "binaryData") else None
        if key is not None and isinstance(args, dict):
            lits = args.get("literals")
            for j, lit in enumerate(lits if isinstance(lits, list) else []):
                if isinstance(lit, str) and lit.split("=", 1)[0] == key:
                    return Origin("generator", file, self._entry_line(s.kfile, s.field, s.index, "literals", j),
                                  entry_at, f"{s.field}[{s.index}].literals")
            for fld in ("envs", "env"):
                envs = args.get(fld)
                for e in (envs if isinstance(envs, list) else [envs] if isinstance(envs, str) else []):
                    p = posixpath.join(os.path.dirname(s.kfile), e)
                    n = _env_line(self.read, p, key)
                    if n is not None:
                        return Origin("generator", self.show(p), n, entry_at, f"{s.field}[{s.index}].{fld}")
            files = args.get("files")
            for f in files if isinstance(files, list) else []:
                if isinstance(f, str):
                    k, _, src = f.partition("=")
                    src = src or k
                    if (k if "=" in f else posixpath.basename(src)) == key:
                        return Origin("generator", self.show(posixpath.join(os.path.dirname(s.kfile), src)),
                                      None, entry_at, f"{s.field}[{s.index}].files")
        return Origin("generator", file, at_line, entry_at, f"{s.field}[{s.index}]")

    def _patch(self, r: Resource, path: Path, s: Step) -> Origin:
        parts: Tuple[Any, ...] = (s.field,) if s.index is None else (s.field, s.index)
        entry_at = self._at(s.kfile, *parts)
        label = s.field + (f"[{s.index}]" if s.index is not None else "")
        entries = [self._entry(s.kfile, s.field, s.index)] if s.index is not None else \
            (self._entry(s.kfile, s.field, None) or [])
        for e in entries if isinstance(entries, list) else []:
            file = e.get("path") if isinstance(e, dict) else e if isinstance(e, str) and "\n" not in e else None
            if isinstance(file, str) and file:
                full = posixpath.normpath(posixpath.join(os.path.dirname(s.kfile), file))
                line = self._line_in_patch(full, r, path)
                if line is not None or s.index is not None:
                    return Origin("patch", self.show(full), line, entry_at, label)
        file, at_line = _split(entry_at)
        return Origin("patch", file, at_line, entry_at, label + " (inline)")

    def _line_in_patch(self, file: str, r: Resource, path: Path) -> Optional[int]:
        pointer = "/" + "/".join(str(p) for p in path)
        for doc, first in self._docs(file):
            if isinstance(doc, list):   # JSON 6902 operations
                for i, op in enumerate(doc):
                    p = op.get("path") if isinstance(op, dict) else None
                    if isinstance(p, str) and (pointer.startswith(p.rstrip("/") + "/") or p == pointer
                                               or _pointer_matches(p, path)):
                        from kzgit.yamlio.lines import line_at   # start-up: explain only
                        n = line_at(op, "path") or line_at(doc, i)
                        return first + (n or 1) - 1
            elif isinstance(doc, dict) and doc.get("kind") in (r.kind, None):
                n = _deepest(doc, path, exact=True)
                if n is not None:
                    return first + n - 1
        return None


def _same_field(written: str, path: str) -> bool:
    """A replacement's field path (``spec.template.spec.containers.[name=web].image``, an
    index as ``0``, a delimiter option aside) naming the leaf ``path``."""
    return written == path or path.startswith(written + ".")


def _split(where: str) -> Tuple[str, Optional[int]]:
    """``FILE:LINE`` -> (FILE, LINE); ``FILE`` -> (FILE, None)."""
    file, _, line = where.rpartition(":")
    return (file, int(line)) if file and line.isdigit() else (where, None)


def _pointer_matches(pointer: str, path: Path) -> bool:
    """A JSON 6902 path (``/spec/template/spec/containers/0/image``) naming ``path`` or a field
    above it, list items by index or ``-``."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
    if len(parts) > len(path):
        return False
    for want, got in zip(parts, path):
        if isinstance(got, str) and got.startswith("[name="):
            if not (want.isdigit() or want == "-"):
                return False
        elif str(got) != want and not (want == "-" and isinstance(got, int)):
            return False
    return True


def _deepest(doc: Any, path: Path, exact: bool = False) -> Optional[int]:
    """The line of ``path`` in a document read with lines (list items by ``[name=x]`` or
    index), or of its deepest present part; with ``exact``, only when all of it is there."""
    from kzgit.yamlio.lines import line_at   # start-up: explain only
    node, best = doc, None
    for p in path:
        if isinstance(node, dict) and str(p) in node:
            best, node = line_at(node, str(p)) or best, node[str(p)]
        elif isinstance(node, list):
            idx = None
            if isinstance(p, int):
                idx = p if 0 <= p < len(node) else None
            elif isinstance(p, str) and p.startswith("[name="):
                name = p[len("[name="):-1]
                idx = next((i for i, x in enumerate(node) if isinstance(x, dict) and x.get("name") == name), None)
            if idx is None:
                return None if exact else best
            best, node = line_at(node, idx) or best, node[idx]
        else:
            return None if exact else best
    return best


def _env_line(read: Callable[[str], bytes], path: str, key: str) -> Optional[int]:
    try:
        text = read(path).decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - unreadable now: no line
        return None
    for n, line in enumerate(text.split("\n"), start=1):
        if line.split("=", 1)[0].strip() == key:
            return n
    return None


def _read_disk(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()
