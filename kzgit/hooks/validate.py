"""``kzgit-validate`` and ``kzgit validate``: render roots, validate what they render.

Roots are selected and rendered as the render hook does (:mod:`kzgit.hooks.render`:
affected roots, the same engine, build options and parallelism).  Every root of
the repository whose files mention ``CustomResourceDefinition`` is rendered too,
so a custom resource is validated against a CRD that another root installs.
The schemas are compiled once in this process (:class:`kzgit.validate.Validator`)
and shared by all roots; workers only render.  With the builtin engine renders go
through the persistent render cache (:mod:`kzgit.rendercache`): its entries hold
each resource with its source file and former names, which findings need.

Findings are placed in the repository with :class:`kzgit.validate.locate.Locator`:
the resource's own file, or the patch that set the field, with a line.
"""
from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from kzgit.options import BuildOptions
from kzgit.config import ValidatePolicy
from kzgit.sha import sha256
from kzgit.engine import Engine
from kzgit.errors import KzgitError, full_message
from kzgit.hooks import Workspace
from kzgit.hooks import _findings_cache as found
from kzgit.hooks.render import (Outcome, RootResult, SaidOnce, affected_apps, app_catalog,
                                options_for, plain_app, plain_roots, render_apps, render_each,
                                replaced_roots,
                                roots_to_build, shard_of)
from kzgit.record import Record
from kzgit.rendercache import BUILT, FAILED, Store, lookup, render_cached
from kzgit.validate import ERROR, Finding, Validator, once_per_kind

if TYPE_CHECKING:  # pragma: no cover
    from kzgit.gitops.catalog import Catalog
    from kzgit.gitops.model import App
    from kzgit.rendercache import Produce

CRD_MARK = b"CustomResourceDefinition"


class RenderedObject(Record):
    """One rendered resource: the object and, with the builtin engine, where it came from."""

    __slots__ = ("obj", "source", "names")

    def __init__(self, obj: Dict[str, Any], source: str = "", names: Tuple[str, ...] = ()) -> None:
        self.obj = obj
        self.source = source      # absolute path of its file ('' unknown)
        self.names = names        # its names before the build renamed it


class Report(Record):
    """What a validation run found and covered (for the text, JSON and JUnit outputs)."""

    __slots__ = ("findings", "roots", "resources", "kubernetes_version", "strict", "renders",
                 "silenced")

    def __init__(self, findings: List[Finding], roots: List[str], resources: Dict[str, int],
                 kubernetes_version: str, strict: bool,
                 renders: Optional[List[RootResult]] = None, silenced: int = 0) -> None:
        self.findings = findings
        self.roots = roots
        self.resources = resources       # root -> resources validated
        self.kubernetes_version = kubernetes_version
        self.strict = strict
        self.renders: List[RootResult] = [] if renders is None else renders   # how each root went
        self.silenced = silenced         # findings a ``# kzgit: ignore[...]`` comment silenced

    @property
    def errors(self) -> List[Finding]:
        return [f for f in self.findings if f.severity == ERROR]


# what the render cache stores for validation: each resource with its source and names
FLAVOUR = "resources"


def _produce_items(path: str) -> Produce:
    def produce(options: BuildOptions) -> Tuple[bytes, List[str]]:
        from kzgit.builder import build   # start-up: loaded only by the runs that need it
        result = build(path, options)
        items = [[r.obj, r.source, list(dict.fromkeys(i.name for i in r.all_ids()))]
                 for r in result.resources]
        if not all(_plain(item[0]) for item in items):
            # JSON would not give the same object back (a key that is not a string)
            from kzgit.loader import mark_uncacheable
            mark_uncacheable(f"{path} renders a key that is not a string")
        # the source files on a line of their own, ahead of the resources: the findings
        # cache needs them, and need not decode the resources to learn them
        sources = sorted({r.source for r in result.resources if r.source})
        return (json.dumps(sources).encode("utf-8") + b"\n" +
                json.dumps(items, separators=(",", ":")).encode("utf-8")), list(result.warnings)
    return produce


def _plain(v: Any) -> bool:
    if isinstance(v, dict):
        return all(isinstance(k, str) and _plain(x) for k, x in v.items())
    if isinstance(v, list):
        return all(_plain(x) for x in v)
    return v is None or isinstance(v, (str, int, float))


class Resources:
    """What one root rendered: from a render cache entry, decoded only when a resource is
    needed (a root whose findings are cached and which renders no CRD never is)."""

    def __init__(self, payload: bytes = b"", items: Optional[List[RenderedObject]] = None,
                 digest: str = "") -> None:
        self._payload = payload
        self._items = items
        self._digest = digest    # the payload's sha256 when the render cache verified it

    @property
    def digest(self) -> str:
        """What the resources are, for the findings cache ('': not from the render cache)."""
        if not self._digest and self._payload:
            self._digest = sha256(self._payload).hexdigest()
        return self._digest

    @property
    def sources(self) -> List[str]:
        """The absolute paths of the files the resources were read from."""
        if self._items is not None:
            return sorted({i.source for i in self._items if i.source})
        return [str(s) for s in json.loads(self._payload.partition(b"\n")[0])]

    @property
    def items(self) -> List[RenderedObject]:
        if self._items is None:
            body = json.loads(self._payload.partition(b"\n")[2]) if self._payload else []
            self._items = [RenderedObject(obj, source, tuple(names)) for obj, source, names in body]
        return self._items

    def may_hold_crds(self) -> bool:
        return self._items is not None or CRD_MARK in self._payload


def _render(engine: Engine, path: str, options: BuildOptions, store: Optional[Store]) -> Outcome:
    """Render one root in a worker: the resources, through the render cache with the builtin
    engine.  Exceptions may not pickle: an error travels as its message."""
    if engine.name == "builtin":
        got = render_cached(path, options, store, FLAVOUR, _produce_items(path), looked=True)
        if got.error is not None:
            return got.status, got.seconds, full_message(got.error), Resources()
        return got.status, got.seconds, None, Resources(got.payload)
    start = time.monotonic()
    try:
        from kzgit.yamlio import load_documents   # start-up: loaded only by the runs that need it
        text = engine.render(path, options)
        items = [RenderedObject(d) for d in load_documents(text.encode("utf-8"), path) if d is not None]
    except KzgitError as e:
        return FAILED, time.monotonic() - start, full_message(e), Resources()
    return BUILT, time.monotonic() - start, None, Resources(items=items)


def _look_up(path: str, options: BuildOptions, store: Store, checker: Any) -> Optional[Outcome]:
    hit = lookup(path, options, store, FLAVOUR, checker)
    if hit is None:
        return None
    if hit.error is not None:
        return hit.status, hit.seconds, full_message(hit.error), Resources()
    return hit.status, hit.seconds, None, Resources(hit.payload, digest=hit.digest)


def crd_roots(ws: Workspace) -> List[str]:
    """Roots of the repository that reach a file mentioning CustomResourceDefinition."""
    g = ws.graph
    marked: Dict[str, bool] = {}
    out = []
    for root in g.roots:
        for f in sorted(g.reach(root).files):
            if f not in marked:
                data = ws.read(f)
                marked[f] = data is not None and CRD_MARK in data
            if marked[f]:
                out.append(root)
                break
    return out


def run(ws: Workspace, engine: Engine, policy: ValidatePolicy, *, roots: Optional[Sequence[str]] = None,
        jobs: int = 0, offline: bool = False, names: Optional[Dict[str, str]] = None,
        store: Optional[Store] = None, shard: Optional[Tuple[int, int]] = None,
        on_render: Optional[Callable[[RootResult], None]] = None) -> Report:
    """Validate what ``roots`` (default: the roots the change affects) render, part ``shard``
    (I, N) of them if given; renders go through ``store`` (the render cache) if given, and
    ``on_render`` hears of each as it finishes."""
    validator = Validator(policy, ws.root, names)
    with_crds = crd_roots(ws)
    if roots is not None:
        targets = list(roots)
    elif _policy_changed(ws, policy, with_crds):
        targets = list(ws.graph.roots)
    else:
        targets = roots_to_build(ws)
    # Argo CD Applications and Flux Kustomizations: validated as their controllers render them
    # (after Flux's substitution), in place of the plain roots at their paths
    catalog = app_catalog(ws)
    apps = _apps_to_validate(ws, catalog, roots, targets) if catalog is not None else []
    if apps and catalog is not None:
        replaced = set(replaced_roots(ws, catalog, apps))
        targets = [t for t in targets if t not in replaced]
        targets += [r for r in plain_roots(ws, catalog, apps) if r not in targets]
    if shard is not None:
        # every shard still renders the roots that render CRDs (cached after the first run):
        # its custom resources are checked against them
        targets = shard_of(ws, targets, *shard)
        if shard[0] != 1:
            apps = []   # the applications are the first shard's
    extra = [r for r in with_crds if r not in targets] if targets else []
    wanted = targets + extra
    hear = None if on_render is None else (lambda r, o: on_render(RootResult(r, o[0], o[1])))
    outcomes = render_each(ws, engine, wanted, options_for(ws, offline), jobs, store,
                           _render, _look_up, on_done=hear)
    rendered: Dict[str, Tuple[Optional[str], Resources]] = {r: (o[2], o[3]) for r, o in outcomes.items()}
    for r in wanted:
        if not rendered[r][1].may_hold_crds():
            continue
        for item in rendered[r][1].items:
            o = item.obj
            if isinstance(o, dict) and o.get("kind") == "CustomResourceDefinition" \
                    and o.get("apiVersion") == "apiextensions.k8s.io/v1":
                validator.add_crd(o, _shown_source(ws, item) or r)
    state = found.schema_state(policy, validator) if store is not None else None
    findings: List[Finding] = []
    counts: Dict[str, int] = {}
    said = SaidOnce()
    for r in targets:
        # once per kind and root: what a root reports never depends on which others ran
        warned: Set[Tuple[str, str]] = set()
        err, resources = rendered[r]
        if err is not None:
            findings.append(Finding(r, "", "", "", "", "build", "",
                                    "does not render: " + said.message(r, ws.relative_message(err))))
            continue
        key = None
        if store is not None and state is not None and resources.digest:
            key = found.key_for(ws, r, resources.digest, found.source_files(ws, resources.sources), state)
        hit = found.load(store, key) if store is not None and key is not None else None
        if hit is None:
            hit = _validate_root(ws, validator, r, resources.items)
            if store is not None and key is not None:
                found.save(store, key, *hit)
        counts[r] = hit[1]
        for f in hit[0]:
            if once_per_kind(f.code, f.path, f.severity):
                if (f.api_version, f.kind) in warned:
                    continue  # listed once per kind
                warned.add((f.api_version, f.kind))
            findings.append(f)
    renders = [RootResult(r, outcomes[r][0], outcomes[r][1]) for r in wanted]
    if apps and catalog is not None:
        app_renders = _validate_apps(ws, engine, jobs, validator, catalog, apps, findings, counts,
                                     on_render)
        renders += app_renders
        targets = targets + [r.root for r in app_renders]
    findings, silenced = _silence(ws, findings)
    return Report(findings, targets, counts, validator.version, policy.strict, renders, silenced)


def _apps_to_validate(ws: Workspace, catalog: "Catalog", roots: Optional[Sequence[str]],
                      targets: Sequence[str]) -> "List[App]":
    """The hook's: the applications the change reaches; a command naming roots: those whose
    path is one of them or below one (every one for all the roots)."""
    if roots is None:
        return affected_apps(ws, catalog)
    if set(roots) >= set(ws.graph.roots):
        return list(catalog.apps)
    tops = [t.strip("/") for t in roots]
    return [a for a in catalog.apps if a.path is not None and any(
        t in (".", "") or a.path == t or a.path.startswith(t + "/") for t in tops)]


def _validate_apps(ws: Workspace, engine: Engine, jobs: int, validator: Validator,
                   catalog: "Catalog", apps: "List[App]", findings: List[Finding],
                   counts: Dict[str, int],
                   on_render: Optional[Callable[[RootResult], None]]) -> List[RootResult]:
    """Validate what each application that is not plain renders (renders in parallel, as
    roots); one build finding for each that does not render (or whose manifest is malformed)."""
    todo = []
    for a in apps:
        if a.error:
            findings.append(Finding(a.id, "", "", "", "", "build", "", a.error))
        elif a.rendered and not plain_app(ws, catalog, a):
            todo.append(a)
    hear = None if on_render is None else \
        (lambda a, got: on_render(RootResult(a.id, got.status, got.seconds)))
    outcomes = render_apps(ws, engine, catalog, todo, jobs, want_items=True, on_done=hear)
    out: List[RootResult] = []
    for a in todo:
        got = outcomes[a.id]
        out.append(RootResult(a.id, got.status, got.seconds))
        if got.error is not None:
            findings.append(Finding(a.id, "", "", "", "", "build", "",
                                    f"does not render ({a.file}:{got.line}): "
                                    + ws.relative_message(got.error)))
            continue
        items = [RenderedObject(o, src, names) for o, src, names in got.items or []]
        hit, n = _validate_root(ws, validator, a.id, items)
        counts[a.id] = n
        warned: Set[Tuple[str, str]] = set()
        for f in hit:
            if _unknown_value(items, f):
                continue   # a value only an encrypted Secret gives: unknown, not wrong
            if once_per_kind(f.code, f.path, f.severity):
                if (f.api_version, f.kind) in warned:
                    continue
                warned.add((f.api_version, f.kind))
            findings.append(f)
    return out


_UNKNOWN = "kzgit-unknown-"   # kzgit.gitops.flux renders a SOPS-only variable so


def _unknown_value(items: List[RenderedObject], f: Finding) -> bool:
    """Whether the field ``f`` points at holds a value Flux would take from an encrypted Secret."""
    for item in items:
        md = item.obj.get("metadata")
        if item.obj.get("kind") != f.kind or not isinstance(md, dict) or md.get("name") != f.name:
            continue
        value: Any = item.obj
        parts = [p for p in (f.path.split("/") if f.path.startswith("/") else
                             f.path.replace("[", ".").replace("]", "").split(".")) if p]
        for p in parts:
            if isinstance(value, dict):
                value = value.get(p)
            elif isinstance(value, list) and p.isdigit() and int(p) < len(value):
                value = value[int(p)]
            else:
                break
        return _UNKNOWN in json.dumps(value)
    return False


def _validate_root(ws: Workspace, validator: Validator, root: str,
                   items: List[RenderedObject]) -> Tuple[List[Finding], int]:
    """The findings of one root's resources (every missing schema listed), and how many
    resources were validated."""
    out: List[Finding] = []
    count = 0
    placer = _Placer(ws, root, items)
    for item in items:
        issues = validator.check(item.obj)
        if issues is None:
            continue
        count += 1
        for issue in issues:
            out.append(placer.finding(item, issue.code, issue.path, issue.message, issue.severity))
    return out, count


def _policy_changed(ws: Workspace, policy: ValidatePolicy, with_crds: Sequence[str]) -> bool:
    """Whether the change reaches what every root is validated with: the configuration, the
    ``crds`` and ``schema-locations`` files, or a root that renders CRDs."""
    if ws.changed is None:
        return True
    from kzgit.config import KZGIT_TOML, PYPROJECT   # start-up: loaded only by the runs that need it
    dirs = [c.strip("/") for c in policy.crds]
    dirs += [t.split("{{", 1)[0].rstrip("/").rsplit("/", 1)[0] if "{{" in t else t for t in policy.schema_locations]
    for path in ws.changed:
        if path in (KZGIT_TOML, PYPROJECT):
            return True
        if any(d and (path == d or path.startswith(d.rstrip("/") + "/")) for d in dirs):
            return True
    return any(ws.graph.reach(r).touches(p) for r in with_crds for p in ws.changed)


def run_manifests(sources: Sequence[Tuple[str, bytes]], policy: ValidatePolicy, base: str,
                  names: Optional[Dict[str, str]] = None) -> Report:
    """Validate already-rendered YAML streams ``(name, bytes)`` (``-`` is stdin), as kubeconform does.

    CRDs among the documents are used for the custom resources beside them.
    """
    from kzgit.validate.locate import Locator   # start-up: loaded only by the runs that need it
    from kzgit.yamlio import load_documents   # start-up: loaded only by the runs that need it
    validator = Validator(policy, base, names)
    loaded: List[Tuple[str, Optional[str], List[Any]]] = []
    for name, data in sources:
        try:
            docs = [d for d in load_documents(data, name) if d is not None]
        except KzgitError as e:
            loaded.append((name, str(e), []))
            continue
        loaded.append((name, None, docs))
        for d in docs:
            if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition" \
                    and d.get("apiVersion") == "apiextensions.k8s.io/v1":
                validator.add_crd(d, name)
    findings: List[Finding] = []
    counts: Dict[str, int] = {}
    warned: Set[Tuple[str, str]] = set()
    for name, err, docs in loaded:
        if err is not None:
            findings.append(Finding(name, "", "", "", "", "yaml", "", err))
            continue
        counts[name] = 0
        locator = Locator(".", _constant_reader(dict(sources)[name]))
        for d in docs:
            issues = validator.check(d)
            if issues is None:
                continue
            counts[name] += 1
            o: Dict[str, Any] = d if isinstance(d, dict) else {}
            md = o["metadata"] if isinstance(o.get("metadata"), dict) else {}
            for issue in issues:
                key = (_s(o.get("apiVersion")), _s(o.get("kind")))
                if once_per_kind(issue.code, issue.path, issue.severity):
                    if key in warned:
                        continue
                    warned.add(key)
                f = Finding(name, key[0], key[1], _s(md.get("namespace")), _s(md.get("name")),
                            issue.code, issue.path, issue.message, issue.severity)
                f.file, f.line = locator.in_resource_file(name, key[1], (f.name,), issue.path)
                findings.append(f)
    return Report(findings, [n for n, _, _ in loaded], counts, validator.version, policy.strict)


def _constant_reader(data: bytes) -> Callable[[str], Optional[bytes]]:
    def read(rel: str) -> Optional[bytes]:
        return data
    return read


def _silence(ws: Workspace, findings: List[Finding]) -> Tuple[List[Finding], int]:
    """``findings`` without those a ``# kzgit: ignore[validate]`` (or ``ignore[CODE]``, the
    finding's code: ``pattern``, ``type``, ``cel``...) comment on their line silences, as
    ``kzgit lint``'s comments do, and how many it silenced (:func:`kzgit.ignores.silence`)."""
    if not any(f.file for f in findings):
        return findings, 0
    from kzgit.ignores import silence   # start-up: only runs with findings
    return silence(findings, ws.read, lambda f: {"validate", f.code})


def _s(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _shown_source(ws: Workspace, item: RenderedObject) -> Optional[str]:
    if not item.source:
        return None
    return ws.relative(item.source)


class _Placer:
    """Turns issues of one root's resources into findings with a file and line."""

    def __init__(self, ws: Workspace, root: str, items: List[RenderedObject]) -> None:
        self.ws = ws
        self.root = root
        self.items = items
        self._locator: Any = None
        self._patches: Optional[List[str]] = None

    def _setup(self) -> None:
        from kzgit.validate.locate import Locator   # start-up: loaded only by the runs that need it
        self._locator = Locator(self.ws.root, self.ws.read)
        resource_files = {_shown_source(self.ws, i) for i in self.items}
        try:
            reach = self.ws.graph.reach(self.root)
            files, kdirs = sorted(reach.files), sorted(reach.kustomization_dirs)
        except KeyError:  # not a node of the graph (a directory named on the command line)
            files, kdirs = [], [self.root]
        self._patches = [f for f in files if f not in resource_files
                         and f.endswith((".yaml", ".yml", ".json"))
                         and f.rsplit("/", 1)[-1] not in ("kustomization.yaml", "kustomization.yml")]
        self._kdirs = kdirs

    def finding(self, item: RenderedObject, code: str, path: str, message: str, severity: str) -> Finding:
        o = item.obj
        md = o["metadata"] if isinstance(o.get("metadata"), dict) else {}
        f = Finding(self.root, _s(o.get("apiVersion")), _s(o.get("kind")), _s(md.get("namespace")),
                    _s(md.get("name")), code, path, message, severity)
        own = _shown_source(self.ws, item)
        if own is None:
            return f
        if self._locator is None:
            self._setup()
        loc = self._locator
        assert self._patches is not None
        names = item.names or (f.name,)
        if path and code not in ("required", "missing-schema"):
            hit = loc.in_patches(self._patches, f.kind, names, path, named_only=True)
            if hit[0] is None:
                own_hit = loc.exact_in_resource_file(own, f.kind, names, path)
                if own_hit is not None:
                    hit = (own, own_hit)
            if hit[0] is None:
                hit = loc.in_patches(self._patches, f.kind, names, path, named_only=False)
            if hit[0] is None:
                hit = loc.inline_patches(self._kdirs, f.kind, names, path)
            if hit[0] is not None:
                f.file, f.line = hit
                return f
        f.file, f.line = loc.in_resource_file(own, f.kind, names, path)
        return f
