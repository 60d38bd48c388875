"""kustomize v5.5.0's build pipeline (api/krusty/kustomizer.go, api/internal/target/kusttarget.go).

``run`` is Kustomizer.Run; ``Target`` is one kustomization level (KustTarget)
and ``Accumulator`` is ResAccumulator.  The order of steps is kustomize's
exactly (KustTarget.AccumulateTarget, then Kustomizer.Run's fix-ups).
"""
from __future__ import annotations

import functools
import json
import os

import kzgit.openapi as oa
from kzgit.options import BuildOptions, BuildResult
from kzgit.accumulator import Accumulator
from kzgit.builder.context import BuildContext
from kzgit.builder.finish import finish
from kzgit.builtins.hashing import add_hashes
from kzgit.builtins.nameref import fix_back_references
from kzgit import trace
from kzgit.yamlio.tree import node_kind
from kzgit.errors import BuildError, KzgitError, RemoteError, YamlError
from kzgit.kustomization import Kustomization, KustomizationError, parse_kustomization
from kzgit.versions import V5_8
from kzgit.loader import KUSTOMIZATION_FILE_NAMES, Loader, new_root_loader
from kzgit.resource import ResMap, Resource
from kzgit.resource.factory import resources_from_bytes
from kzgit.plugins.helpers import PluginHelpers
from kzgit.remote import open_remote_repo, parse_repo_spec
from kzgit.builtins.config import TransformerConfig, parse_config_file

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, Generator, List, Optional, Tuple
    from kzgit.builder.cache import BuildCache
    from kzgit.plugins.builtin import Configs

# Most kustomizations use a few fields: the module of each builtin step (its transformer, the
# strategic-merge and JSON 6902 engines, field paths, vars, replacements, plugins) and the
# modules only an error needs (kzgit.builder.leads) are imported where that step or error is,
# so a small build loads only what its kustomization asks for (tests/cli/test_cli_startup.py).



def _check_json6902_target(config: Dict[str, Any]) -> None:
    """PatchJson6902Transformer.Config: a target with a name (the rest is checked when run)."""
    target = config.get("target")
    if target is not None and not target.get("name"):
        raise BuildError("must specify the target name")


def _check_annotatable(r: Resource, path: str) -> None:
    """kusttarget.go accumulateFile: the origin annotation is set through the metadata/annotations
    field spec (ResMap.AnnotateAll), which refuses annotations that are not a mapping (or null)."""
    md = r.obj.get("metadata")
    ann = md.get("annotations") if isinstance(md, dict) else None
    if ann is not None and not isinstance(ann, dict):
        raise BuildError(f"cannot add path annotation for '{path}': considering field "
                         f"'metadata/annotations' of object {r.cur_id()}: wrong node kind: "
                         f"expected MappingNode but got {node_kind(ann)}")


def _with_prefix(error: KzgitError, prefix: str) -> KzgitError:
    """``error`` with ``prefix``: made only once the file's error is shown (the directory failed
    too): most resource paths that are no file are directories, and a prefixed error is a copy
    (KzgitError.reworded imports copy)."""
    return error.prefixed(prefix) if prefix else error


def _entries(entries: Any) -> str:
    """A plugin field's entries for ``kzgit explain`` (config files; an inline config as such)."""
    return ", ".join(e if "\n" not in e else "an inline config" for e in entries or [] if isinstance(e, str))


def _go_quote(text: str) -> str:
    """Go's ``%q`` of a string (strconv.Quote) for the characters error messages hold."""
    return json.dumps(text, ensure_ascii=False)


class _Steps(list):
    """A list of (kind, step) built by appending steps; the kind is set per block, and each
    step's kustomization field and entry (for ``kzgit explain``) per step."""

    kind = ""

    def __init__(self) -> None:
        super().__init__()
        self.wheres: List[Tuple[str, Optional[int]]] = []

    def append(self, step: Any, field: str = "", index: Optional[int] = None) -> None:
        super().append((self.kind, step))
        self.wheres.append((field, index))


class _Accumulate:
    """What a level's walk asks of :func:`_drive`: accumulate ``target`` (into ``ra``, or a new
    accumulator) and send the accumulator back."""

    __slots__ = ("target", "ra")

    def __init__(self, target: "Target", ra: Optional[Accumulator]) -> None:
        self.target = target
        self.ra = ra


if TYPE_CHECKING:  # pragma: no cover
    # A level's walk: yields _Accumulate requests, is sent their accumulators, returns its result
    _Walk = Generator[_Accumulate, Any, Any]


def _drive(walk: _Walk) -> Any:
    """Run ``walk`` and every level it asks for with an explicit stack (no recursion); an error
    of a level is thrown into the level that asked for it, as a return would have raised it."""
    stack: List[_Walk] = [walk]
    sent: Any = None
    error: Optional[BaseException] = None
    while True:
        top = stack[-1]
        try:
            if error is not None:
                err, error = error, None
                request = top.throw(err)
            else:
                request = top.send(sent)
        except StopIteration as done:
            stack.pop()
            if not stack:
                return done.value
            sent = done.value
            continue
        except BaseException as e:
            stack.pop()
            if not stack:
                raise
            error, sent = e, None
            continue
        sent = None
        stack.append(request.target._accumulate(request.ra))


def _in_remote_terms(err: KzgitError, loader: Loader) -> KzgitError:
    """``err`` from inside a remote base, with the cached checkout's directory (a path under
    kzgit's cache the user never wrote) written as the repository's URL, and the lead naming
    the entry as written: ``file:///srv/repo//base/kustomization.yaml:2: resources: 'gone.yaml'
    does not exist (in file:///srv/repo//base?ref=v1)``."""
    tree, label = loader.repo_root, loader.remote_label
    spec = parse_repo_spec(label) if tree and label else None
    if spec is None or tree is None:
        return err
    url = spec.clone_url()

    def shown(text: str) -> str:
        return text.replace(tree + os.sep, url + "//").replace(tree, url)
    lead = err.lead
    out = err.reworded(shown(err.message))
    if lead is not None and tree in lead:
        out.lead = f"{shown(lead)} (in {label})"
    return out


class Target:
    """One kustomization (or component) root."""

    def __init__(self, loader: Loader, options: BuildOptions, ctx: BuildContext,
                 origin: Optional[str] = None) -> None:
        self.loader = loader
        self.options = options
        self.ctx = ctx
        path, name = loader.find_kustomization_file()
        self.kfile = path
        self.kfile_name = name
        # origin.go: the directory of this level relative to the top, or None when
        # the top kustomization asks for no buildMetadata (no tracking at all)
        self.origin = origin
        # the namespace helmCharts without one render into (5.8): set by the parent level
        self.helm_root_namespace = ""
        # the group plugins' generator configs, which also transform (kzgit.plugins.groupplugin)
        self._group_generators: "Dict[str, Configs]" = {}
        try:
            self.k: Kustomization = parse_kustomization(loader.fs.read_bytes(path), path,
                                                        options.kustomize_version)
        except KustomizationError as e:
            if e.needs is not None:   # a field of a later release: say so first
                from kzgit.versions import needs   # start-up: only a failed build needs it
                e.with_lead(needs(e.needs[0], e.needs[1], options.kustomize_version,
                                  options.kustomize_version_origin))
            raise
        self.helpers = PluginHelpers(loader, options, path, ctx.shared)
        ctx.warnings.extend(self.k.warnings)
        ctx.record_target(self)

    def ktext(self) -> Optional[bytes]:
        """The kustomization file's bytes, for the line an error lead names (read again: only
        a failed build asks)."""
        try:
            return self.loader.fs.read_bytes(self.kfile)
        except (OSError, KzgitError):
            return None

    # -- the recursion ----------------------------------------------------------------------
    # kustomize recurses into bases in Go, whose stack grows; here each level is a generator
    # that yields the levels it needs (_Accumulate) to _drive, which keeps them on an explicit
    # stack: a chain of bases is as deep as memory allows, not as Python's recursion limit.
    def accumulate(self, ra: Optional[Accumulator] = None) -> Accumulator:
        """KustTarget.AccumulateTarget (into ``ra``, or a new accumulator)."""
        result: Accumulator = _drive(self._accumulate(ra))
        return result

    def _accumulate(self, ra: Optional[Accumulator]) -> "_Walk":
        ra = ra if ra is not None else Accumulator(self.options.kustomize_version)
        k = self.k
        try:
            yield from self._resources(ra, k.get("resources", []))
        except KzgitError as e:
            raise e.prefixed("accumulating resources: ") from None
        cfg = TransformerConfig()
        for p in k.get("configurations", []):
            cfg.merge(parse_config_file(self.loader.load(p), p))
        ra.merge_config(cfg)
        for p in k.get("crds", []):
            self.ctx.merge_crds(ra, self.loader, p, k.get("crds", []))
        self.run_generators(ra)
        try:
            for c in k.get("components", []):
                yield from self._component(ra, c)
        except KzgitError as e:
            raise e.prefixed("accumulating components: ") from None
        self.run_transformers(ra)
        self.run_validators(ra)
        self.ctx.merge_vars(ra, self, k.get("vars", []))
        return ra

    def accumulate_resources(self, ra: Accumulator, paths: List[str]) -> None:
        """kusttarget.go accumulateResources (plugin configs read from files and directories)."""
        _drive(self._resources(ra, paths))

    def _resources(self, ra: Accumulator, paths: List[str]) -> "_Walk":
        for path in paths:
            if self.ctx.looks_remote(path):
                got = self._open_remote(path, "resources")
                if isinstance(got, bytes):
                    self.ctx.mark_uncacheable()  # an HTTP file: not keyed by any commit
                    self._append_file_resources(ra, got, path)
                else:
                    try:
                        yield from self._accumulate_loader(ra, got, path, component=False)
                    except KzgitError as e:
                        raise _in_remote_terms(e, got) from None
                continue
            # kusttarget.go accumulateResources: a file first, then a directory; when both
            # fail, the file's error is quoted before the directory's.
            failed = self._accumulate_file(ra, path)
            if failed is None:
                continue
            try:
                sub = self.loader.new_dir_loader(path)
            except KzgitError as dir_err:
                from kzgit.builder import leads   # start-up: only a failed build needs it
                file_err = _with_prefix(*failed)
                if isinstance(file_err, YamlError):
                    # malformed YAML in a file: the directory error would confuse
                    raise leads.yaml_resource(file_err, self.kfile, path, text=self.ktext()) from None
                raise leads.resource(dir_err.prefixed(f"accumulation err='{file_err.message}': "),
                                     self.kfile, path, text=self.ktext()) from None
            try:
                yield from self._accumulate_loader(ra, sub, path, component=False)
            except KzgitError as e:
                raise e.prefixed(f"accumulation err='{_with_prefix(*failed).message}': ") from None

    def _open_remote(self, path: str, field: str) -> Any:
        try:
            return self.ctx.open_remote(self.loader, path, self.options)
        except RemoteError as e:
            from kzgit.builder import leads   # start-up: only a failed build needs it
            raise leads.remote(e, self.kfile, field, path) from None

    def origin_of(self, path: str) -> str:
        """Origin.Append: filepath.Join of this level's origin path and ``path``."""
        return os.path.normpath(os.path.join(self.origin or "", path))

    def builtin_origin(self, kind: str) -> Optional[Dict[str, Any]]:
        if self.origin is None:
            return None
        return {"configuredIn": self.origin_of(self.kfile_name),
                "configuredBy": {"apiVersion": "builtin", "kind": kind}}

    def _accumulate_file(self, ra: Accumulator, path: str) -> Optional[Tuple[KzgitError, str]]:
        """kusttarget.go accumulateFile: None when ``path`` was read as a file, else its error
        and the prefix kustomize gives that error (see :func:`_with_prefix`)."""
        try:
            data = self.loader.load(path)
        except KzgitError as e:
            return e, f"accumulating resources from '{path}': "
        try:
            self._append_file_resources(ra, data, path)
        except KzgitError as e:
            return e, ""
        return None

    def _append_file_resources(self, ra: Accumulator, data: bytes, path: str) -> None:
        """kusttarget.go accumulateFile: read the resources of one file, then append them."""
        try:
            res = resources_from_bytes(data, os.path.join(self.loader.root, path))
        except KzgitError as e:
            raise e.prefixed(f"accumulating resources from '{path}': ") from None
        trace.made(res, trace.Step("resource", self.kfile, "resources",
                                   file=os.path.join(self.loader.root, path), detail=path))
        try:
            for r in res:
                if self.origin is not None:
                    _check_annotatable(r, path)
                    r.origin = {"path": self.origin_of(path)}
                ra.resmap.append(r)
        except KzgitError as e:
            raise e.prefixed(f"merging resources from '{path}': ") from None

    def _component(self, ra: Accumulator, path: str) -> "_Walk":
        """kusttarget.go accumulateComponents; its errors quote the cause Go-style (%q)."""
        if self.ctx.looks_remote(path):
            got = self._open_remote(path, "components")
            if isinstance(got, bytes):
                raise BuildError(f"component '{path}' must be a directory, not a file")
            sub = got
        else:
            try:
                sub = self.loader.new_dir_loader(path)
            except KzgitError as e:
                raise e.reworded(f"loader.New {_go_quote(e.message)}") from None
        try:
            yield from self._accumulate_loader(ra, sub, path, component=True)
        except KzgitError as e:
            raise _in_remote_terms(e.reworded(f"accumulateDirectory: {_go_quote(e.message)}"), sub) from None

    def _accumulate_loader(self, ra: Accumulator, loader: Loader, path: str, component: bool
                           ) -> "_Walk":
        try:
            sub = Target(loader, self.options, self.ctx,
                         None if self.origin is None else self.origin_of(path))
        except KzgitError as e:
            raise BuildError(f"couldn't make target for path '{loader.root}': {e}") from None
        sub.k.data["buildMetadata"] = self.k.get("buildMetadata")
        if self.options.kustomize_version >= V5_8:
            # the nearest ancestor's namespace, for helmCharts without one (kusttarget.go
            # accumulateDirectory helmRootNamespace; kustomize 4e75138d2, PR #6044, 5.8.1)
            sub.helm_root_namespace = self.k.get("namespace") or self.helm_root_namespace
        self.ctx.set_openapi(sub, reset=False)
        if component and not sub.k.is_component():
            raise BuildError(f"expected kind 'Component' for path '{loader.root}' but got '{sub.k.kind}'")
        if not component and sub.k.is_component():
            raise BuildError(f"expected kind != 'Component' for path '{loader.root}'")
        try:
            if component:
                yield _Accumulate(sub, ra)
                return
            sub_ra = yield from self._accumulate_base(sub)
        except KzgitError as e:
            err = type(e)(f"recursed accumulation of path '{loader.root}': {e}")
            err.lead = e.lead  # the base's own lead names the file nearest the problem
            raise err from None
        try:
            ra.resmap.append_all(sub_ra.resmap.resources())
        except KzgitError as e:
            raise BuildError(f"recursed merging from path '{loader.root}': {e}") from None
        self.ctx.merge_sub_vars(ra, sub_ra)
        ra.merge_config(sub_ra.config)

    def _accumulate_base(self, sub: "Target") -> "_Walk":
        """Accumulate a base, or reuse the run's cached accumulation of it (kzgit.builder.cache)."""
        cache: Optional[BuildCache] = self.options.cache
        schema = self.ctx.schema_state() if cache is not None else None
        if cache is None or schema is None:
            fresh: Accumulator = yield _Accumulate(sub, None)
            return fresh
        from kzgit.builder.cache import cache_key, view_of   # start-up: only runs sharing bases load it
        # kyaml's lazy parse of the builtin schema (delayed by a custom resource type, see
        # oa.note_resource_type) is state a base leaves behind: keyed and replayed
        parse_state = oa.builtin_parse_state()
        key = cache_key(sub.loader, sub.origin, sub.k.get("buildMetadata"), self.options,
                        (schema, parse_state))
        # a controller's view (kzgit.gitops.render) notes the kustomization files asked about
        view = view_of(sub.loader)
        log: Optional[List[str]] = getattr(view, "kustomization_log", None)
        overlaid = getattr(view, "overlaid", None)
        hit = cache.get(key, self.loader.roots_chain(), overlaid)
        if hit is not None:
            ra, warnings, roots, after, asked = hit
            self.ctx.warnings.extend(warnings)
            self.ctx.record_roots(roots)
            oa.restore_builtin_parse_state(after)
            if log is not None:
                log.extend(asked)   # (a base holding this one asked them too)
            return ra
        first_warning = len(self.ctx.warnings)
        first_asked = len(log) if log is not None else 0
        rec = self.ctx.start_recording()
        self.ctx.record_target(sub)
        try:
            ra = yield _Accumulate(sub, None)
        finally:
            self.ctx.stop_recording(rec)
        if self.ctx.schema_state() != schema:
            rec.cacheable = False
        # (the base's own kustomization file was found before its accumulation began)
        asked = tuple(dict.fromkeys([*(os.path.join(sub.loader.root, n)
                                       for n in KUSTOMIZATION_FILE_NAMES),
                                     *log[first_asked:]])) if log is not None else ()
        if overlaid and any(p in overlaid for p in asked):
            rec.cacheable = False   # it read what this view rewrites
        cache.put(key, ra, rec, self.ctx.warnings[first_warning:], oa.builtin_parse_state(),
                  asked)
        return ra

    # -- generators, transformers, validators ---------------------------------------------------
    def run_generators(self, ra: Accumulator) -> None:
        k = self.k
        gopts = k.get("generatorOptions")
        if k.get("configMapGenerator") or k.get("secretGenerator"):
            from kzgit.generators import make_configmap, make_secret   # start-up: generators only
        for field, make, kind in (("configMapGenerator", "make_configmap", "ConfigMapGenerator"),
                                  ("secretGenerator", "make_secret", "SecretGenerator")):
            for i, args in enumerate(k.get(field, [])):
                try:
                    res = (make_configmap if make == "make_configmap" else make_secret)(
                        args or {}, self.loader, gopts, self.kfile)
                except KzgitError as e:
                    from kzgit.builder import leads   # start-up: only a failed build needs it
                    raise leads.generator(e, self.kfile, field, i, args, self.ktext()) from None
                res.origin = self.builtin_origin(kind)
                trace.made([res], trace.Step("generator", self.kfile, field, i))
                ra.absorb(res, kind)
        if k.get("helmCharts") or k.get("helmChartInflationGenerator"):
            charts = [str(c.get("name")) for c in (k.get("helmCharts") or []) + (k.get("helmChartInflationGenerator") or [])
                      if isinstance(c, dict)]
            with trace.phase(ra.resmap.resources, trace.Step("helm", self.kfile, "helmCharts",
                                                             detail=", ".join(charts))):
                self.ctx.helm(self, ra)
        if k.get("generators"):
            shipped, grouped = self.ctx.plugins.split(self.plugin_configs(k.get("generators")),
                                                      self.helpers)
            with trace.phase(ra.resmap.resources, trace.Step("plugin", self.kfile, "generators",
                                                             detail=_entries(k.get("generators")))):
                self.ctx.plugins.generate_all(shipped, self.helpers, ra)
            if grouped:
                # the proposal's phases 3 and 5 (kzgit.plugins.groupplugin)
                self._group_generators = self._patch_virtual(grouped)
                self.ctx.plugins.group_generate(self._group_generators, self.helpers, ra)

    def builtin_transformers(self, cfg: TransformerConfig) -> _Steps:
        """configureBuiltinTransformers, in kustomize's order: (plugin kind, step).

        Each block imports the module of its step when its field is set (start-up: a build
        loads only the transformers its kustomization uses)."""
        k, out = self.k, _Steps()
        t = cfg.tables
        out.kind = "PatchStrategicMergeTransformer"
        psm = k.get("patchesStrategicMerge")
        if psm:
            from kzgit.builder import leads   # start-up
            from kzgit.builtins import patches as patch_tf
            out.append(lambda m: patch_tf.patch_strategic_merge(
                m, psm, self.loader, self.kfile,
                lambda e, i, inline: leads.strategic_merge(e, self.kfile, i, psm[i], inline, self.loader.load,
                                                           self.ktext())), "patchesStrategicMerge")
        out.kind = "PatchTransformer"
        if k.get("patches"):
            from kzgit.builtins import patches as patch_tf   # start-up
            for i, p in enumerate(k.get("patches")):
                self._leading("patches", i, p, functools.partial(
                    self._configure, "PatchTransformer", p or {}, ("path", "patch", "target", "options"),
                    self._load_patch_file))
                out.append(lambda m, p=p, i=i: self._leading("patches", i, p, lambda: patch_tf.patch(
                    m, p or {}, self.loader, self.kfile, self.options.kustomize_version)), "patches", i)
        out.kind = "NamespaceTransformer"
        if k.get("namespace"):
            from kzgit.builtins import namespace   # start-up
            cfg_ns = {"metadata": {"namespace": k.get("namespace")}, "fieldSpecs": t["namespace"]}
            out.append(lambda m: namespace.transform(
                m, cfg_ns, skip_helm=self.options.kustomize_version >= V5_8), "namespace")
        out.kind = "PrefixTransformer"
        if k.get("namePrefix"):
            from kzgit.builtins import prefix_suffix   # start-up
            out.append(lambda m: prefix_suffix.prefix(m, {"prefix": k.get("namePrefix"), "fieldSpecs": t["namePrefix"]}),
                       "namePrefix")
        out.kind = "SuffixTransformer"
        if k.get("nameSuffix"):
            from kzgit.builtins import prefix_suffix   # start-up
            out.append(lambda m: prefix_suffix.suffix(m, {"suffix": k.get("nameSuffix"), "fieldSpecs": t["nameSuffix"]}),
                       "nameSuffix")
        out.kind = "LabelTransformer"
        if k.get("labels") or k.get("commonLabels"):
            from kzgit.builtins import metadata   # start-up
            from kzgit.resource.fieldspec import FieldSpec, merge_specs
            for li, lab in enumerate(k.get("labels", [])):
                lab = lab or {}
                fss = [FieldSpec.from_dict(f, self.kfile) for f in lab.get("fields") or []]
                fss = merge_specs(fss, t["labels"])
                if lab.get("includeSelectors"):
                    fss = merge_specs(fss, t["commonLabels"])
                else:
                    if lab.get("includeTemplates"):
                        fss = merge_specs(fss, t["templateLabels"])
                    fss = merge_specs(fss, [FieldSpec("", "", "", "metadata/labels", True)])
                out.append(lambda m, lab=lab, fss=fss: metadata.labels(m, {"labels": lab.get("pairs"), "fieldSpecs": fss}),
                           "labels", li)
            out.append(lambda m: metadata.labels(m, {"labels": k.get("commonLabels"), "fieldSpecs": t["commonLabels"]}),
                       "commonLabels")
        out.kind = "AnnotationsTransformer"
        if k.get("commonAnnotations"):
            from kzgit.builtins import metadata   # start-up
            out.append(lambda m: metadata.annotations(m, {"annotations": k.get("commonAnnotations"), "fieldSpecs": t["commonAnnotations"]}),
                       "commonAnnotations")
        out.kind = "PatchJson6902Transformer"
        if k.get("patchesJson6902"):
            from kzgit.builtins import patches as patch_tf   # start-up
            for i, p in enumerate(k.get("patchesJson6902")):
                self._leading("patchesJson6902", i, p, functools.partial(
                    self._configure, "PatchJson6902Transformer",
                    {**(p or {}), "jsonOp": (p or {}).get("patch")}, ("target", "path", "jsonOp"),
                    _check_json6902_target))
                out.append(lambda m, p=p, i=i: self._leading("patchesJson6902", i, p, lambda: patch_tf.patch_json6902(
                    m, p or {}, self.loader, self.kfile)), "patchesJson6902", i)
        out.kind = "ReplicaCountTransformer"
        if k.get("replicas"):
            from kzgit.builtins import replicas   # start-up
            for ri, rep in enumerate(k.get("replicas")):
                out.append(lambda m, rep=rep: replicas.transform(m, {"replica": rep or {}, "fieldSpecs": t["replicas"]}),
                           "replicas", ri)
        out.kind = "ImageTagTransformer"
        if k.get("images"):
            from kzgit.builtins import images   # start-up
            for ii, img in enumerate(k.get("images")):
                out.append(lambda m, img=img: images.transform(m, {"imageTag": img or {}, "fieldSpecs": t["images"]}),
                           "images", ii)
        out.kind = "ReplacementTransformer"
        if k.get("replacements"):
            from kzgit.plugins.builtin import apply_replacement_entries   # start-up
            out.append(lambda m: apply_replacement_entries(m, k.get("replacements"), self.loader,
                                                           self.kfile, self.options.kustomize_version),
                       "replacements")
        return out

    def _leading(self, field: str, index: int, entry: Any, step: Callable[[], None]) -> None:
        """Run one patch entry's step; its error gets a lead naming ``field[index]``."""
        try:
            step()
        except KzgitError as e:
            from kzgit.builder import leads   # start-up: only a failed build needs it
            raise leads.patch(e, self.kfile, field, index, entry, self.loader.load, self.ktext()) from None

    def _configure(self, kind: str, config: Dict[str, Any], fields: Tuple[str, ...],
                   check: Callable[[Dict[str, Any]], None]) -> None:
        """What the builtin's Config checks, wrapped as kusttarget_configplugin.go
        configureBuiltinPlugin wraps it: the config as yaml.Marshal writes it (keys sorted,
        empty fields omitted)."""
        try:
            check(config)
        except KzgitError as e:
            from kzgit.yamlio import dump   # start-up: only a failed build needs it
            shown = {f: config[f] for f in sorted(fields) if config.get(f)}
            text = dump(shown) if shown else "{}\n"
            raise e.prefixed(f"trouble configuring builtin {kind} with config: `\n{text}`: ") from None

    def _load_patch_file(self, config: Dict[str, Any]) -> None:
        """PatchTransformer.Config reads the patch file while configuring."""
        path = config.get("path")
        if path and not config.get("patch"):
            try:
                self.loader.load(path)
            except KzgitError as e:
                raise e.prefixed(f"failed to get the patch file from path({path}): ") from None

    def run_transformers(self, ra: Accumulator) -> None:
        shipped: Optional[Configs] = None
        grouped = dict(self._group_generators)
        if self.k.get("transformers") and self.options.enable_alpha_plugins:
            from kzgit.plugins.groupplugin import plugins_dir   # start-up: plugin builds only
            if os.path.isdir(plugins_dir()):
                # group plugins transform before the builtins (the proposal's phase 6), so their
                # configs are read first; without a group plugin directory the order is kustomize's
                shipped, group_transformers = self.ctx.plugins.split(
                    self.plugin_configs(self.k.get("transformers")), self.helpers)
                for path, configs in self._patch_virtual(group_transformers).items():
                    grouped[path] = grouped.get(path, []) + configs
        if grouped:
            with trace.phase(ra.resmap.resources, trace.Step("plugin", self.kfile, "transformers",
                                                             detail=_entries(self.k.get("transformers")))):
                self.ctx.plugins.group_transform(grouped, self.helpers, ra.resmap, self.after_transformer)
        steps = self.builtin_transformers(ra.config)
        for (kind, step), (field, index) in zip(steps, steps.wheres):
            with trace.phase(ra.resmap.resources, trace.Step(
                    "patch" if "atch" in kind else field, self.kfile, field, index, detail=kind)):
                step(ra.resmap)
            self.after_transformer(ra.resmap, self.builtin_origin(kind))
        if self.k.get("transformers"):
            if shipped is None:
                shipped = self.plugin_configs(self.k.get("transformers"))
            with trace.phase(ra.resmap.resources, trace.Step("plugin", self.kfile, "transformers",
                                                             detail=_entries(self.k.get("transformers")))):
                self.ctx.plugins.transform_all(shipped, self.helpers, ra.resmap, self.after_transformer)

    def _patch_virtual(self, grouped: "Dict[str, Configs]") -> "Dict[str, Configs]":
        """The proposal's phase 3: the ``patches`` entries with a ``target`` apply to the group
        plugins' configs ("virtual resources") before they run; an entry without a target
        patches resources only, as kustomize's PatchTransformer does."""
        entries = [(i, p) for i, p in enumerate(self.k.get("patches") or [])
                   if isinstance(p, dict) and p.get("target")]
        if not entries:
            return grouped
        from kzgit.builtins import patches as patch_tf   # start-up: group plugins only
        rows = [(path, Resource(cfg, source=self.kfile), origin)
                for path, configs in grouped.items() for cfg, origin in configs]
        m = ResMap(r for _, r, _ in rows)
        for i, p in entries:
            self._leading("patches", i, p, functools.partial(
                patch_tf.patch, m, p, self.loader, self.kfile, self.options.kustomize_version))
        out: "Dict[str, Configs]" = {}
        kept = {id(r) for r in m}
        for path, r, origin in rows:
            if id(r) in kept:
                out.setdefault(path, []).append((r.obj, origin))
        return out

    def after_transformer(self, m: ResMap, origin: Optional[Dict[str, Any]]) -> None:
        """multitransformer.go: record the transformer on every resource, drop emptied ones."""
        if any(not r.obj for r in m.resources()):
            m.replace_items([r for r in m.resources() if r.obj])
        if origin is not None:
            for r in m.resources():
                if r.origin is None:
                    r.origin = origin
                else:
                    r.transformations.append(origin)

    def plugin_configs(self, entries: List[str]) -> Configs:
        """The plugin configs of ``entries`` with their origin (kusttarget.go configureExternal*,
        OriginFromCustomPlugin)."""
        from kzgit.plugins.common import config_meta   # start-up: only plugin configs need them
        from kzgit.yamlio.tree import undecodable
        out: Configs = []
        ra = Accumulator(self.options.kustomize_version)
        paths: List[str] = []
        for e in entries:
            # an entry that reads as resources (NewResMapFromBytes) is inline, even with none at
            # all (``null``, ``""``, ``---``); anything else is a path
            try:
                inline = resources_from_bytes(e.encode("utf-8"), f"inline config in {self.kfile}")
            except KzgitError:
                paths.append(e)
                continue
            for r in inline:
                r.source = self.kfile
                if self.origin is not None:
                    r.origin = {"path": self.origin_of(self.kfile_name)}
                ra.resmap.append(r)
        self.accumulate_resources(ra, paths)
        for r in ra.resmap.resources():
            why = undecodable(r.obj)
            if why is not None:
                # kusttarget.go configureExternal*: each config is marshalled (decoded) first
                raise BuildError(f"marshalling yaml from res {r.cur_id()}: {why}")
            origin = None
            if r.origin is not None:
                md = config_meta(r.obj)
                origin = {"repo": r.origin.get("repo"), "ref": r.origin.get("ref"),
                          "configuredIn": r.origin.get("path"),
                          "configuredBy": {"apiVersion": r.api_version, "kind": r.kind,
                                           "name": md.get("name"), "namespace": md.get("namespace")}}
            out.append((r.obj, origin))
        return out

    def run_validators(self, ra: Accumulator) -> None:
        if self.k.get("validators"):
            self.ctx.plugins.validate_all(self.plugin_configs(self.k.get("validators")),
                                          self.helpers, ra.resmap)


def _root_loader(path: str, options: BuildOptions) -> Loader:
    """api/internal/loader/loader.go NewLoader: a target that parses as a git repository URL is
    cloned (kustomize tries that before looking for a local directory); else a local root."""
    if parse_repo_spec(path) is not None:
        return open_remote_repo(None, path, options)
    return new_root_loader(path, options.fs, options.load_restrictor)


def run(path: str, options: BuildOptions) -> BuildResult:
    """Kustomizer.Run."""

    ctx = BuildContext(options)
    loader = _root_loader(path, options)
    ctx.note_repo_warnings(path)
    top = Target(loader, options, ctx)
    if top.k.get("buildMetadata"):
        top.origin = ""
    ctx.set_openapi(top, reset=True)
    ra = top.accumulate()
    # makeCustomizedResMap: these run once, on the final content, at the top only
    every = ra.resmap.resources
    with trace.phase(every, trace.Step("hashSuffix", top.kfile)):
        add_hashes(ra.resmap)
    with trace.phase(every, trace.Step("nameReference", top.kfile)):
        fix_back_references(ra.resmap, ra.config.name_reference)
    with trace.phase(every, trace.Step("vars", top.kfile, "vars")):
        ctx.resolve_vars(ra)
    with trace.phase(every, trace.Step("output", top.kfile)):
        resources = finish(ra.resmap.resources(), top.k.get("sortOptions"),
                           top.k.get("buildMetadata", []), options)
    return BuildResult(resources=resources, warnings=ctx.warnings, notes=ctx.notes)
