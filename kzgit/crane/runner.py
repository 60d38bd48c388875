"""``kzgit transform``: run crane transform plugins over a tree and write a kustomization overlay.

The plugins are crane's builtin ``KubernetesPlugin`` (:mod:`kzgit.crane.kubernetes`), then
the executables of the plugin directory (:func:`plugin_list`).  Per resource, as crane-lib
``transform/runner.go`` (Runner.Run): every plugin is asked; a whiteout from any plugin drops
the resource whatever the priorities; otherwise the operations of all plugins are merged by
:func:`kzgit.crane.priority.resolve`, then rewritten to do under kustomize's rules what
they do under ``crane apply``'s (:mod:`kzgit.crane.apply`).  Where crane writes one
``transform-<file>`` JSON patch next to each exported file (crane ``cmd/transform``), kzgit
writes a kustomization overlay that ``kzgit build`` (and ``kubectl kustomize``) render:

* ``kustomization.yaml``: the SOURCE kustomization root as a base (resources whited out are
  removed by a ``$patch: delete`` strategic-merge patch), or, for a directory of exported YAML,
  copies of the kept resources under ``resources/``;
* ``patches/<n>-<kind>-<name>.json``: one RFC 6902 patch per patched resource, listed under
  ``patches:`` with an exact target;
* ``ignored-patches.yaml``: every discarded operation, the plugin that proposed it and the
  plugin that won.

OUT must not exist; it is written to a temporary directory next to it and renamed into place,
so a failed or interrupted run leaves nothing behind.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import os
import re
import shutil
import tempfile
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from kzgit.atomic import OutputError, new_dir_mode, os_error_reason
from kzgit.errors import BuildError, UsageError
from kzgit.loader import KUSTOMIZATION_FILE_NAMES
from kzgit.proc import kill_all
from kzgit.resource import split_api_version
from kzgit.crane.protocol import (BuiltinPlugin, CranePlugin, Plugin, PluginResponse,
                                   discover_plugins, run_plugin)
from kzgit.crane import apply as crane_apply
from kzgit.crane.kubernetes import KubernetesPlugin
from kzgit.crane.priority import IgnoredOperation, PluginOperation, priority_map, resolve
from kzgit.yamlio import dump_documents, load_documents

__all__ = ["SourceResource", "ResourceOutcome", "TransformResult", "read_source",
           "transform_resources", "write_overlay", "parse_optional_flags", "check_priorities",
           "builtin_plugins", "plugin_list", "skip_plugins", "run_transform"]

YAML_SUFFIXES = (".yaml", ".yml", ".json")
ProgressFn = Callable[[int, int], None]


@dataclasses.dataclass
class SourceResource:
    """A resource of SOURCE and, for a directory source, the file it came from (relative)."""

    obj: Dict[str, Any]
    file: Optional[str] = None
    #: the name an overlay sees, when it differs from the rendered one: kustomize appends
    #: ConfigMap/Secret hash suffixes only at the top level (kusttarget.go makeCustomizeResMap:
    #: "must be done last, not as part of the recursion"), so an overlay's patches target the
    #: base's generated resources by their names *without* the hash
    overlay_name: Optional[str] = None

    @property
    def ident(self) -> str:
        md = self.obj.get("metadata") or {}
        ns = md.get("namespace")
        return f"{self.obj.get('kind', '')} {ns + '/' if ns else ''}{md.get('name', '')}"


@dataclasses.dataclass
class ResourceOutcome:
    """What the plugins decided for one resource."""

    resource: SourceResource
    whiteout_by: List[str]
    operations: List[PluginOperation]
    ignored: List[IgnoredOperation]
    #: kept ``remove`` operations of absent paths: no-ops for crane, not written (crane_apply)
    noops: List[PluginOperation] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class TransformResult:
    outcomes: List[ResourceOutcome]
    out: str

    @property
    def whiteouts(self) -> int:
        return sum(1 for o in self.outcomes if o.whiteout_by)

    @property
    def patched(self) -> int:
        return sum(1 for o in self.outcomes if not o.whiteout_by and o.operations)

    @property
    def ignored(self) -> int:
        return sum(len(o.ignored) for o in self.outcomes)


# ----------------------------------------------------------------------------- input

def is_kustomization_root(path: str) -> bool:
    return any(os.path.isfile(os.path.join(path, n)) for n in KUSTOMIZATION_FILE_NAMES)


def read_source(source: str, build_options: Any = None) -> Tuple[List[SourceResource], bool]:
    """Resources of SOURCE and whether it is a kustomization root (rendered with kzgit.build)."""
    if not os.path.isdir(source):
        raise UsageError(f"SOURCE '{source}' is not a directory")
    if is_kustomization_root(source):
        from kzgit.builder import build   # the build loads only when SOURCE is a kustomization
        result = build(source, build_options)
        return [SourceResource(r.obj, overlay_name=_unhashed_name(r)) for r in result.resources], True
    out: List[SourceResource] = []
    for dirpath, dirnames, filenames in os.walk(source):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fn in sorted(filenames):
            if not fn.endswith(YAML_SUFFIXES) or fn.startswith("."):
                continue
            full = os.path.join(dirpath, fn)
            rel = os.path.relpath(full, source)
            with open(full, "rb") as f:
                docs = load_documents(f.read(), full)
            for d in docs:
                if not isinstance(d, dict):
                    raise BuildError(f"{full}: a document is not a mapping")
                items = d.get("items") if str(d.get("kind", "")).endswith("List") else None
                for obj in items if isinstance(items, list) else [d]:
                    md = obj.get("metadata") if isinstance(obj, dict) else None
                    if not isinstance(obj, dict) or not obj.get("kind") or not isinstance(md, dict) \
                            or not md.get("name"):
                        raise BuildError(f"{full}: every resource needs kind and metadata.name")
                    out.append(SourceResource(obj, rel))
    return out, False


def _unhashed_name(r: Any) -> Optional[str]:
    """The name of a hash-suffixed resource before the suffix (the id stored before hashing)."""
    if not getattr(r, "needs_hash", False) or not getattr(r, "prev_ids", None):
        return None
    before = r.prev_ids[-1].name
    return before if before and r.name.startswith(before + "-") else None


def parse_optional_flags(text: Optional[str]) -> Dict[str, str]:
    """crane ``--optional-flags``: a JSON object of string values; keys are lower-cased (as crane)."""
    if not text:
        return {}
    try:
        data = json.loads(text)
    except ValueError as e:
        raise UsageError(f"--optional-flags must be a JSON object such as "
                         f"'{{\"foo-flag\": \"value\"}}': {e}") from None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise UsageError("--optional-flags must be a JSON object whose values are strings")
    return {str(k).lower(): v for k, v in data.items()}


def builtin_plugins() -> List[BuiltinPlugin]:
    """The plugins compiled into crane, in crane's order: its ``KubernetesPlugin``."""
    return [KubernetesPlugin()]


def plugin_list(plugin_dir: str, timeout: Optional[float] = 60.0, builtins: bool = True
                ) -> Tuple[List[Plugin], List[CranePlugin]]:
    """crane's plugin list: the builtins, then the executables of ``plugin_dir``.

    crane (internal/plugin/plugin_helper.go GetPlugins, GetFilteredPlugins) keeps the first
    plugin of each metadata name, and the builtins come first: an executable named
    ``KubernetesPlugin`` never runs.  Returns (the plugins, the executables dropped that way)
    so the CLI can say so; crane drops them silently.  Two executables sharing a name both
    run, as before (crane keeps the first).
    """
    plugins: List[Plugin] = list(builtin_plugins()) if builtins else []
    taken = {p.name for p in plugins}
    dropped: List[CranePlugin] = []
    for p in discover_plugins(plugin_dir, timeout):
        if p.name in taken:
            dropped.append(p)
        else:
            plugins.append(p)
    return plugins, dropped


def check_priorities(names: Sequence[str], plugins: Sequence[Plugin]) -> Dict[str, int]:
    """``--plugin-priorities`` as a map; an unknown name is a usage error."""
    known = {p.name for p in plugins}
    unknown = [n for n in names if n and n not in known]
    if unknown:
        raise UsageError(f"--plugin-priorities names unknown plugin(s): {', '.join(unknown)}; "
                         f"the plugins are: {', '.join(sorted(known)) or '(none)'}")
    return priority_map(names)


def skip_plugins(plugins: Sequence[Plugin], names: Sequence[str]) -> List[Plugin]:
    """``--skip-plugins``: the plugins whose metadata name is not in ``names``.

    crane (internal/plugin/plugin_helper.go GetFilteredPlugins) ignores a name
    that matches no plugin; a typo would then run the plugin the user meant to
    skip, so here an unknown name is a usage error.
    """
    known = {p.name for p in plugins}
    unknown = [n for n in names if n and n not in known]
    if unknown:
        raise UsageError(f"--skip-plugins names unknown plugin(s): {', '.join(unknown)}; "
                         f"the plugins are: {', '.join(sorted(known)) or '(none)'}")
    skipped = set(names)
    return [p for p in plugins if p.name not in skipped]


# ----------------------------------------------------------------------------- running

def transform_resources(resources: List[SourceResource], plugins: Sequence[Plugin],
                        priorities: Dict[str, int], extras: Dict[str, str],
                        timeout: Optional[float] = 60.0, workers: Optional[int] = None,
                        progress: Optional[ProgressFn] = None) -> List[ResourceOutcome]:
    """Ask every plugin about every resource (concurrently, bounded by cores) and merge answers."""
    total = len(resources) * len(plugins)
    responses: Dict[Tuple[int, int], PluginResponse] = {}
    if total:
        workers = workers or min(32, os.cpu_count() or 1)
        ex = concurrent.futures.ThreadPoolExecutor(max_workers=workers,
                                                   thread_name_prefix="kzgit-transform")
        futures = {}
        try:
            for ri, res in enumerate(resources):
                for pi, plugin in enumerate(plugins):
                    fut = ex.submit(run_plugin, plugin, res.obj, extras, timeout, res.ident)
                    futures[fut] = (ri, pi)
            done = 0
            for fut in concurrent.futures.as_completed(futures):
                responses[futures[fut]] = fut.result()
                done += 1
                if progress is not None:
                    progress(done, total)
        except BaseException:
            for f in futures:
                f.cancel()
            # Plugins of the other workers: nothing outlives the failure.  Kill until every
            # worker has returned (one may be between starting a process and registering it).
            while not all(f.done() for f in futures):
                kill_all()
                concurrent.futures.wait(futures, timeout=0.05)
            ex.shutdown(wait=True)
            raise
        ex.shutdown(wait=True)
    outcomes = []
    for ri, res in enumerate(resources):
        whiteout_by = [p.name for pi, p in enumerate(plugins) if responses[(ri, pi)].is_whiteout]
        if whiteout_by:  # runner.go: a whiteout discards every patch
            outcomes.append(ResourceOutcome(res, whiteout_by, [], []))
            continue
        ops = [PluginOperation(p.name, op, (pi, oi))
               for pi, p in enumerate(plugins)
               for oi, op in enumerate(responses[(ri, pi)].patches)]
        kept, ignored = resolve(ops, priorities)
        written, noops = crane_apply.for_kustomize(res.obj, kept, res.ident)
        outcomes.append(ResourceOutcome(res, [], written, ignored, noops))
    return outcomes


# ----------------------------------------------------------------------------- output

_REGEX_META = re.compile(r"([.\\+*?()|\[\]{}^$])")


def _exact(name: str) -> str:
    """kustomize selector names are regular expressions (anchored): escape metacharacters."""
    return _REGEX_META.sub(r"\\\1", name)


def _target(res: SourceResource) -> Dict[str, str]:
    obj = res.obj
    group, version = split_api_version(str(obj.get("apiVersion") or ""))
    md = obj.get("metadata") or {}
    t: Dict[str, str] = {}
    if group:
        t["group"] = group
    t["version"] = version
    t["kind"] = str(obj.get("kind"))
    t["name"] = _exact(res.overlay_name or str(md.get("name")))
    if md.get("namespace"):
        t["namespace"] = _exact(str(md["namespace"]))
    return t


def _file_stem(obj: Dict[str, Any]) -> str:
    md = obj.get("metadata") or {}
    parts = [str(obj.get("kind", "")).lower()]
    if md.get("namespace"):
        parts.append(str(md["namespace"]))
    parts.append(str(md.get("name", "")))
    return re.sub(r"[^A-Za-z0-9._-]+", "_", "-".join(parts))


def _ref(obj: Dict[str, Any]) -> Dict[str, str]:
    md = obj.get("metadata") or {}
    ref = {"apiVersion": str(obj.get("apiVersion", "")), "kind": str(obj.get("kind", "")),
           "name": str(md.get("name", ""))}
    if md.get("namespace"):
        ref["namespace"] = str(md["namespace"])
    return ref


def write_overlay(outcomes: List[ResourceOutcome], tree: str, base: Optional[str]) -> None:
    """Write the overlay into the (empty, existing) directory ``tree``.

    ``base`` is the path of the SOURCE kustomization relative to the final OUT, or None for a
    directory source (kept resources are then copied).
    """
    kust: Dict[str, Any] = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization"}
    patches: List[Dict[str, Any]] = []
    if base is not None:
        kust["resources"] = [base]
        deletes = [o for o in outcomes if o.whiteout_by]
        for n, o in enumerate(deletes, 1):
            obj = o.resource.obj
            rel = f"patches/{n:04d}-delete-{_file_stem(obj)}.yaml"
            md = obj.get("metadata") or {}
            meta = {k: md[k] for k in ("name", "namespace") if md.get(k)}
            if o.resource.overlay_name:
                meta["name"] = o.resource.overlay_name
            doc = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"),
                   "metadata": meta, "$patch": "delete"}
            _write(tree, rel, dump_documents([doc]))
            patches.append({"path": rel})
    else:
        by_file: Dict[str, List[Dict[str, Any]]] = {}
        for o in outcomes:
            if not o.whiteout_by:
                by_file.setdefault(o.resource.file or "resources.yaml", []).append(o.resource.obj)
        files = []
        for f in sorted(by_file):
            rel = "resources/" + f.replace(os.sep, "/")
            _write(tree, rel, dump_documents(by_file[f]))
            files.append(rel)
        kust["resources"] = files
    n = 0
    for o in outcomes:
        if o.whiteout_by or not o.operations:
            continue
        n += 1
        rel = f"patches/{n:04d}-{_file_stem(o.resource.obj)}.json"
        _write(tree, rel, json.dumps([p.operation for p in o.operations], indent=2) + "\n")
        patches.append({"path": rel, "target": _target(o.resource)})
    if patches:
        kust["patches"] = patches
    _write(tree, "kustomization.yaml", dump_documents([kust]))
    report = []
    for o in outcomes:
        for ig in o.ignored:
            report.append({"resource": _ref(o.resource.obj), "plugin": ig.plugin,
                           "operation": ig.operation, "wonBy": ig.won_by})
    header = ("# Operations kzgit transform discarded: another plugin's operation on the same\n"
              "# path won (plugin order, or --plugin-priorities).\n")
    _write(tree, "ignored-patches.yaml", header + (dump_documents([report]) if report else "[]\n"))


def _write(tree: str, rel: str, text: str) -> None:
    path = os.path.join(tree, *rel.split("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def run_transform(source: str, plugins: Sequence[Plugin], out: str, *,
                  priorities: Sequence[str] = (), extras: Optional[Dict[str, str]] = None,
                  timeout: Optional[float] = 60.0, build_options: Any = None,
                  progress: Optional[ProgressFn] = None) -> TransformResult:
    """The whole ``kzgit transform``: read SOURCE, run plugins, write OUT atomically."""
    out_abs = os.path.abspath(out)
    if os.path.lexists(out_abs):
        raise UsageError(f"output '{out}' already exists; kzgit transform writes a new directory")
    prio = check_priorities(priorities, plugins)
    if is_kustomization_root(source):
        src_real = os.path.realpath(source)
        parent_real = os.path.realpath(os.path.dirname(out_abs))
        if parent_real == src_real or parent_real.startswith(src_real.rstrip("/") + "/"):
            # the overlay's base would contain the overlay: kustomize refuses such a cycle
            raise UsageError(f"output '{out}' must not be inside the SOURCE kustomization '{source}'")
    resources, is_kust = read_source(source, build_options)
    outcomes = transform_resources(resources, plugins, prio, extras or {}, timeout,
                                   progress=progress)
    parent = os.path.dirname(out_abs)
    try:
        os.makedirs(parent, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(out_abs)}.tmp-", dir=parent)
    except OSError as e:
        raise OutputError(out, os_error_reason(out, e), "create") from None
    # mkdtemp's 0700 is not what a new directory gets; OUT looks as `mkdir` would make it.
    os.chmod(tmp, new_dir_mode())
    try:
        rel = os.path.relpath(os.path.realpath(source), os.path.realpath(parent))
        base = os.path.join("..", rel).replace(os.sep, "/") if is_kust else None
        write_overlay(outcomes, tmp, base)
        if os.path.lexists(out_abs):
            raise UsageError(f"output '{out}' appeared while kzgit transform was running")
        os.rename(tmp, out_abs)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return TransformResult(outcomes, out_abs)

