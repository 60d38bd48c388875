"""kustomize v5.5.0's build pipeline (api/krusty/kustomizer.go, api/internal/target/kusttarget.go).

``run`` is Kustomizer.Run; ``Target`` is one kustomization level (KustTarget)
and ``Accumulator`` is ResAccumulator.  The order of steps is kustomize's
exactly (KustTarget.AccumulateTarget, then Kustomizer.Run's fix-ups).
"""
from __future__ import annotations

import functools
import json
import os
from typing import Any, Callable, Dict, Generator, Iterable, List, Optional, Tuple, Union

import kzgit.openapi as oa
from kzgit.build import leads
from kzgit.build import BuildOptions, BuildResult
from kzgit.build.cache import UNCACHEABLE_FIELDS, Recording, cache_key
from kzgit.build.origin import annotate_origins
from kzgit.builtins import images, metadata, namespace, prefix_suffix, replicas
from kzgit.builtins import patches as patch_tf
from kzgit.builtins.hashing import add_hashes
from kzgit.builtins.nameref import fix_back_references
from kzgit.builtins.replacements import apply_replacements
from kzgit.builtins.sorting import apply_sort
from kzgit.builtins.vars import VarSet, resolve_vars
from kzgit.generators import make_configmap, make_secret
from kzgit.errors import BuildError, KzgitError, YamlError
from kzgit.konfig.general import LOCAL_CONFIG_ANNOTATION as LOCAL_CONFIG
from kzgit.konfig.general import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from kzgit.kustomization import Kustomization, parse_kustomization
from kzgit.loader import Loader, new_root_loader
from kzgit.resource import ResId, ResMap, Resource
from kzgit.resource.factory import resources_from_bytes
from kzgit.openapi import crd_fieldspecs
from kzgit.remote import looks_remote, open_remote, open_remote_repo, parse_repo_spec
from kzgit.resource.fieldspec import FieldSpec, merge_specs
from kzgit.resource.selector import metadata_texts
from kzgit.builtins.config import TransformerConfig, default_config, parse_config_file
from kzgit.yamlio import dump, load_documents, load_yaml11, plain_scalar_is_string
from kzgit.yamlio.tree import spelled



class Accumulator:
    """ResAccumulator: resources, the transformer config and the vars of a level."""

    def __init__(self) -> None:
        self.resmap = ResMap()
        self.config: TransformerConfig = default_config()
        self.vars: List[Dict[str, Any]] = []
        self.varset: Any = None

    def merge_config(self, other: TransformerConfig) -> None:
        self.config.merge(other)

    def absorb(self, res: Resource, where: str) -> None:
        """resWrangler.appendReplaceOrMerge for generated resources."""
        rid = res.cur_id()
        matches = self.resmap.lookup_any_id(rid)   # indexed: linear in generators + resources
        if not matches:
            if res.behavior in ("merge", "replace"):
                raise BuildError(f"merging from generator {where}: id {_go_id(rid)} does not exist; cannot merge or replace")
            self.resmap.append(res)
            return
        if len(matches) > 1:
            raise BuildError(f"merging from generator {where}: found multiple objects {[str(m.cur_id()) for m in matches]} that could accept merge of {rid}")
        old = matches[0]
        if res.behavior not in ("merge", "replace"):
            raise BuildError(f"merging from generator {where}: id {_go_id(rid)} exists; behavior must be merge or replace")
        _copy_merge_metadata(res, old)
        if res.behavior == "merge":
            for field in ("data", "binaryData"):
                # resource.go mergeDataMapFrom: GetDataMap reads each value's text, and
                # SetDataMap writes them all back as strings (1.50 stays "1.50", true "true").
                base = old.obj.get(field)
                merged = metadata_texts(base) if isinstance(base, dict) else {}
                merged.update(res.obj.get(field) or {})
                if merged:
                    res.obj[field] = merged
            if old.origin is not None:
                res.origin = old.origin
        items = self.resmap.resources()
        items[items.index(old)] = res
        self.resmap.replace_items(items)


def _check_json6902_target(config: Dict[str, Any]) -> None:
    """PatchJson6902Transformer.Config: a target with a name (the rest is checked when run)."""
    target = config.get("target")
    if target is not None and not target.get("name"):
        raise BuildError("must specify the target name")


def _go_quote(text: str) -> str:
    """Go's ``%q`` of a string (strconv.Quote) for the characters error messages hold."""
    return json.dumps(text, ensure_ascii=False)


def _go_id(rid: ResId) -> str:
    return str(rid)


def _copy_merge_metadata(res: Resource, old: Resource) -> None:
    """Resource.CopyMergeMetaDataFieldsFrom: labels/annotations merged (new wins), old name/namespace,
    and the old resource's build state (previous ids, affixes); the hash only if both want it."""
    labels = dict(old.labels())
    labels.update(res.labels())
    ann = dict(old.annotations())
    ann.update(res.annotations())
    md = res.metadata
    if labels:
        md["labels"] = labels
    else:
        md.pop("labels", None)
    if ann:
        md["annotations"] = ann
    else:
        md.pop("annotations", None)
    md["name"] = old.name
    if old.namespace:
        md["namespace"] = old.namespace
    else:
        md.pop("namespace", None)
    res.needs_hash = res.needs_hash and old.needs_hash
    res.prev_ids = list(old.prev_ids)
    res.prefixes = list(old.prefixes)
    res.suffixes = list(old.suffixes)
    res.refby = list(old.refby)
    # kustomize keeps build metadata as annotations, merged like the others (new wins): a
    # generated resource carries no transformations yet, so the old one's survive a merge or
    # replace (api/resource/resource.go CopyMergeMetaDataFieldsFrom)
    if not res.transformations:
        res.transformations = list(old.transformations)
    if res.origin is None:
        res.origin = old.origin


class _Steps(list):
    """A list of (kind, step) built by appending steps; the kind is set per block."""

    kind = ""

    def append(self, step: Any) -> None:
        super().append((self.kind, step))


class _Accumulate:
    """What a level's walk asks of :func:`_drive`: accumulate ``target`` (into ``ra``, or a new
    accumulator) and send the accumulator back."""

    __slots__ = ("target", "ra")

    def __init__(self, target: "Target", ra: Optional[Accumulator]) -> None:
        self.target = target
        self.ra = ra


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


class Target:
    """One kustomization (or component) root."""

    def __init__(self, loader: Loader, options: BuildOptions, ctx: "BuildContext",
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
        self.k: Kustomization = parse_kustomization(loader.fs.read_bytes(path), path)
        ctx.warnings.extend(self.k.warnings)
        ctx.record_target(self)

    # -- the recursion ----------------------------------------------------------------------
    # kustomize recurses into bases in Go, whose stack grows; here each level is a generator
    # that yields the levels it needs (_Accumulate) to _drive, which keeps them on an explicit
    # stack: a chain of bases is as deep as memory allows, not as Python's recursion limit.
    def accumulate(self, ra: Optional[Accumulator] = None) -> Accumulator:
        """KustTarget.AccumulateTarget (into ``ra``, or a new accumulator)."""
        result: Accumulator = _drive(self._accumulate(ra))
        return result

    def _accumulate(self, ra: Optional[Accumulator]) -> "_Walk":
        ra = ra if ra is not None else Accumulator()
        k = self.k
        try:
            yield from self._resources(ra, k.get("resources", []))
        except KzgitError as e:
            raise e.prefixed("accumulating resources: ") from None
        cfg = TransformerConfig()
        for p in k.get("configurations", []):
            data = load_documents(self.loader.load(p), p)
            cfg.merge(parse_config_file(data[0] if data else None, p))
        ra.merge_config(cfg)
        for p in k.get("crds", []):
            self.ctx.merge_crds(ra, self.loader, p)
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
                got = self.ctx.open_remote(self.loader, path, self.options)
                if isinstance(got, bytes):
                    self.ctx.mark_uncacheable()  # an HTTP file: not keyed by any commit
                    self._append_file_resources(ra, got, path)
                else:
                    yield from self._accumulate_loader(ra, got, path, component=False)
                continue
            # kusttarget.go accumulateResources: a file first, then a directory; when both
            # fail, the file's error is quoted before the directory's.
            try:
                self._accumulate_file(ra, path)
                continue
            except KzgitError as e:
                file_err = e
            try:
                sub = self.loader.new_dir_loader(path)
            except KzgitError as dir_err:
                if isinstance(file_err, YamlError):
                    raise file_err from None  # malformed YAML in a file: the directory error would confuse
                raise leads.resource(dir_err.prefixed(f"accumulation err='{file_err.message}': "),
                                     self.kfile, path) from None
            try:
                yield from self._accumulate_loader(ra, sub, path, component=False)
            except KzgitError as e:
                raise e.prefixed(f"accumulation err='{file_err.message}': ") from None

    def origin_of(self, path: str) -> str:
        """Origin.Append: filepath.Join of this level's origin path and ``path``."""
        return os.path.normpath(os.path.join(self.origin or "", path))

    def builtin_origin(self, kind: str) -> Optional[Dict[str, Any]]:
        if self.origin is None:
            return None
        return {"configuredIn": self.origin_of(self.kfile_name),
                "configuredBy": {"apiVersion": "builtin", "kind": kind}}

    def _accumulate_file(self, ra: Accumulator, path: str) -> None:
        try:
            data = self.loader.load(path)
        except KzgitError as e:
            raise e.prefixed(f"accumulating resources from '{path}': ") from None
        self._append_file_resources(ra, data, path)

    def _append_file_resources(self, ra: Accumulator, data: bytes, path: str) -> None:
        """kusttarget.go accumulateFile: read the resources of one file, then append them."""
        try:
            res = resources_from_bytes(data, os.path.join(self.loader.root, path))
        except KzgitError as e:
            raise e.prefixed(f"accumulating resources from '{path}': ") from None
        try:
            for r in res:
                if self.origin is not None:
                    r.origin = {"path": self.origin_of(path)}
                ra.resmap.append(r)
        except KzgitError as e:
            raise e.prefixed(f"merging resources from '{path}': ") from None

    def _component(self, ra: Accumulator, path: str) -> "_Walk":
        """kusttarget.go accumulateComponents; its errors quote the cause Go-style (%q)."""
        if self.ctx.looks_remote(path):
            got = self.ctx.open_remote(self.loader, path, self.options)
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
            raise e.reworded(f"accumulateDirectory: {_go_quote(e.message)}") from None

    def _accumulate_loader(self, ra: Accumulator, loader: Loader, path: str, component: bool
                           ) -> "_Walk":
        try:
            sub = Target(loader, self.options, self.ctx,
                         None if self.origin is None else self.origin_of(path))
        except KzgitError as e:
            raise BuildError(f"couldn't make target for path '{loader.root}': {e}") from None
        sub.k.data["buildMetadata"] = self.k.get("buildMetadata")
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
        """Accumulate a base, or reuse the run's cached accumulation of it (kzgit.build.cache)."""
        cache = self.options.cache
        schema = self.ctx.schema_state()
        if cache is None or schema is None:
            fresh: Accumulator = yield _Accumulate(sub, None)
            return fresh
        # kyaml's lazy parse of the builtin schema (delayed by a custom resource type, see
        # oa.note_resource_type) is state a base leaves behind: keyed and replayed
        parse_state = oa.builtin_parse_state()
        key = cache_key(sub.loader, sub.origin, sub.k.get("buildMetadata"), self.options,
                        (schema, parse_state))
        hit = cache.get(key, self.loader.roots_chain())
        if hit is not None:
            ra, warnings, roots, after = hit
            self.ctx.warnings.extend(warnings)
            self.ctx.record_roots(roots)
            oa.restore_builtin_parse_state(after)
            return ra
        first_warning = len(self.ctx.warnings)
        rec = self.ctx.start_recording()
        self.ctx.record_target(sub)
        try:
            ra = yield _Accumulate(sub, None)
        finally:
            self.ctx.stop_recording(rec)
        if self.ctx.schema_state() != schema:
            rec.cacheable = False
        cache.put(key, ra, rec, self.ctx.warnings[first_warning:], oa.builtin_parse_state())
        return ra

    # -- generators, transformers, validators ---------------------------------------------------
    def run_generators(self, ra: Accumulator) -> None:
        k = self.k
        gopts = k.get("generatorOptions")
        for args in k.get("configMapGenerator", []):
            res = make_configmap(args or {}, self.loader, gopts, self.kfile)
            res.origin = self.builtin_origin("ConfigMapGenerator")
            ra.absorb(res, "ConfigMapGenerator")
        for args in k.get("secretGenerator", []):
            res = make_secret(args or {}, self.loader, gopts, self.kfile)
            res.origin = self.builtin_origin("SecretGenerator")
            ra.absorb(res, "SecretGenerator")
        if k.get("helmCharts") or k.get("helmChartInflationGenerator"):
            self.ctx.helm(self, ra)
        if k.get("generators"):
            self.ctx.plugins.generate_all(self, k.get("generators"), ra)

    def builtin_transformers(self, cfg: TransformerConfig) -> List[Tuple[str, Callable[[ResMap], None]]]:
        """configureBuiltinTransformers, in kustomize's order: (plugin kind, step)."""
        k, out = self.k, _Steps()
        t = cfg.tables
        out.kind = "PatchStrategicMergeTransformer"
        if k.get("patchesStrategicMerge"):
            out.append(lambda m: patch_tf.patch_strategic_merge(m, k.get("patchesStrategicMerge"), self.loader, self.kfile))
        out.kind = "PatchTransformer"
        for i, p in enumerate(k.get("patches", [])):
            self._leading("patches", i, p, functools.partial(
                self._configure, "PatchTransformer", p or {}, ("path", "patch", "target", "options"),
                self._load_patch_file))
            out.append(lambda m, p=p, i=i: self._leading("patches", i, p, lambda: patch_tf.patch(
                m, p or {}, self.loader, self.kfile)))
        out.kind = "NamespaceTransformer"
        if k.get("namespace"):
            cfg_ns = {"metadata": {"namespace": k.get("namespace")}, "fieldSpecs": t["namespace"]}
            out.append(lambda m: namespace.transform(m, cfg_ns))
        out.kind = "PrefixTransformer"
        if k.get("namePrefix"):
            out.append(lambda m: prefix_suffix.prefix(m, {"prefix": k.get("namePrefix"), "fieldSpecs": t["namePrefix"]}))
        out.kind = "SuffixTransformer"
        if k.get("nameSuffix"):
            out.append(lambda m: prefix_suffix.suffix(m, {"suffix": k.get("nameSuffix"), "fieldSpecs": t["nameSuffix"]}))
        out.kind = "LabelTransformer"
        if k.get("labels") or k.get("commonLabels"):
            for lab in k.get("labels", []):
                lab = lab or {}
                fss = [FieldSpec.from_dict(f, self.kfile) for f in lab.get("fields") or []]
                fss = merge_specs(fss, t["labels"])
                if lab.get("includeSelectors"):
                    fss = merge_specs(fss, t["commonLabels"])
                else:
                    if lab.get("includeTemplates"):
                        fss = merge_specs(fss, t["templateLabels"])
                    fss = merge_specs(fss, [FieldSpec("", "", "", "metadata/labels", True)])
                out.append(lambda m, lab=lab, fss=fss: metadata.labels(m, {"labels": lab.get("pairs"), "fieldSpecs": fss}))
            out.append(lambda m: metadata.labels(m, {"labels": k.get("commonLabels"), "fieldSpecs": t["commonLabels"]}))
        out.kind = "AnnotationsTransformer"
        if k.get("commonAnnotations"):
            out.append(lambda m: metadata.annotations(m, {"annotations": k.get("commonAnnotations"), "fieldSpecs": t["commonAnnotations"]}))
        out.kind = "PatchJson6902Transformer"
        for i, p in enumerate(k.get("patchesJson6902", [])):
            self._leading("patchesJson6902", i, p, functools.partial(
                self._configure, "PatchJson6902Transformer",
                {**(p or {}), "jsonOp": (p or {}).get("patch")}, ("target", "path", "jsonOp"),
                _check_json6902_target))
            out.append(lambda m, p=p, i=i: self._leading("patchesJson6902", i, p, lambda: patch_tf.patch_json6902(
                m, p or {}, self.loader, self.kfile)))
        out.kind = "ReplicaCountTransformer"
        for rep in k.get("replicas", []):
            out.append(lambda m, rep=rep: replicas.transform(m, {"replica": rep or {}, "fieldSpecs": t["replicas"]}))
        out.kind = "ImageTagTransformer"
        for img in k.get("images", []):
            out.append(lambda m, img=img: images.transform(m, {"imageTag": img or {}, "fieldSpecs": t["images"]}))
        out.kind = "ReplacementTransformer"
        if k.get("replacements"):
            out.append(lambda m: self.ctx.replacements(self, m, k.get("replacements")))
        return out

    def _leading(self, field: str, index: int, entry: Any, step: Callable[[], None]) -> None:
        """Run one patch entry's step; its error gets a lead naming ``field[index]``."""
        try:
            step()
        except KzgitError as e:
            raise leads.patch(e, self.kfile, field, index, entry, self.loader.load) from None

    def _configure(self, kind: str, config: Dict[str, Any], fields: Tuple[str, ...],
                   check: Callable[[Dict[str, Any]], None]) -> None:
        """What the builtin's Config checks, wrapped as kusttarget_configplugin.go
        configureBuiltinPlugin wraps it: the config as yaml.Marshal writes it (keys sorted,
        empty fields omitted)."""
        try:
            check(config)
        except KzgitError as e:
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
        for kind, step in self.builtin_transformers(ra.config):
            step(ra.resmap)
            self.after_transformer(ra.resmap, self.builtin_origin(kind))
        if self.k.get("transformers"):
            self.ctx.plugins.transform_all(self, self.k.get("transformers"), ra.resmap)

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

    def run_validators(self, ra: Accumulator) -> None:
        if self.k.get("validators"):
            self.ctx.plugins.validate_all(self, self.k.get("validators"), ra.resmap)


class BuildContext:
    """State shared by every level of one build: warnings, plugin runner, remote access."""

    def __init__(self, options: BuildOptions) -> None:
        self.options = options
        self.warnings: List[str] = []
        from kzgit.plugins.builtin import PluginRunner   # plugins import this module's types
        self.plugins = PluginRunner(options)
        self._recordings: List[Any] = []   # kzgit.build.cache.Recording, innermost last
        self._helm_api_versions: Optional[List[str]] = None  # kzgit.plugins.helm's one shared copy

    # reuse of bases (kzgit.build.cache) -----------------------------------------------------
    def start_recording(self) -> Any:
        rec = Recording()
        self._recordings.append(rec)
        return rec

    def stop_recording(self, rec: Any) -> None:
        self._recordings.remove(rec)

    def record_target(self, t: "Target") -> None:
        """Note a kustomization directory entered, and whether its result can be reused."""
        if not self._recordings:
            return
        cacheable = not any(t.k.get(f) for f in UNCACHEABLE_FIELDS)
        for rec in self._recordings:
            rec.roots.add(t.loader.root)
            rec.cacheable = rec.cacheable and cacheable

    def record_roots(self, roots: Iterable[str]) -> None:
        """Note the directories of a reused base (part of any base being recorded)."""
        for rec in self._recordings:
            rec.roots.update(roots)

    def mark_uncacheable(self) -> None:
        for rec in self._recordings:
            rec.cacheable = False

    def schema_state(self) -> Optional[Tuple[str, str, str]]:
        """The OpenAPI schema in force, as a cache key part; None with a custom schema."""
        version = oa.schema_version()
        if version.startswith("using custom"):
            return None
        # an explicit version differs from none chosen yet: under it a base's custom path is ignored
        return ("openapi", version, "set" if oa.schema_is_set() else "unset")

    # remote references ---------------------------------------------------------------------
    def looks_remote(self, path: str) -> bool:
        return looks_remote(path)

    def open_remote(self, parent: Loader, path: str, options: BuildOptions) -> Union[Loader, bytes]:
        got = open_remote(parent, path, options)
        self.note_repo_warnings(path)
        return got

    def note_repo_warnings(self, path: str) -> None:
        """What kustomize logs while parsing a repository URL (repospec.go), once per URL."""
        spec = parse_repo_spec(path)
        for w in spec.warnings() if spec is not None else ():
            if w not in self.warnings:
                self.warnings.append(w)

    # optional features ----------------------------------------------------------------------
    def helm(self, t: Target, ra: Accumulator) -> None:
        """helmCharts (kzgit.plugins.helm); origin as for the other builtin generators."""
        from kzgit.plugins.helm import generate as helm_generate   # only builds with charts pay
        for res in helm_generate(t, self.options):
            res.origin = t.builtin_origin("HelmChartInflationGenerator")
            ra.absorb(res, f"HelmChartInflationGenerator in {t.kfile}")

    def replacements(self, t: Target, m: ResMap, entries: List[Any]) -> None:
        resolved: List[Dict[str, Any]] = []
        for e in entries:
            if isinstance(e, dict) and "path" in e and len(e) == 1:
                docs = load_documents(t.loader.load(e["path"]), e["path"])
                for d in docs:
                    resolved.extend(d if isinstance(d, list) else [d])
            else:
                resolved.append(e)
        apply_replacements(m, resolved, t.kfile)

    def merge_vars(self, ra: Accumulator, t: Target, vars_: List[Any]) -> None:
        if not vars_:
            return
        if ra.varset is None:
            ra.varset = VarSet()
        ra.varset.merge(vars_, ra.resmap, t.kfile)

    def merge_sub_vars(self, ra: Accumulator, sub: Accumulator) -> None:
        if sub.varset is None:
            return
        if ra.varset is None:
            ra.varset = sub.varset
        else:
            ra.varset.absorb(sub.varset)

    def resolve_vars(self, ra: Accumulator) -> None:
        if ra.varset is None:
            return
        rows = [[fs.group, fs.version, fs.kind, fs.path, fs.create] for fs in ra.config.tables["varReference"]]
        self.warnings.extend(resolve_vars(ra.resmap, ra.varset, rows))

    def merge_crds(self, ra: Accumulator, loader: Loader, path: str) -> None:
        docs = load_documents(loader.load(path), path)
        cfg = TransformerConfig()
        for d in docs:
            if isinstance(d, dict):
                cfg.add_rows(crd_fieldspecs(d))
        ra.merge_config(cfg)

    def set_openapi(self, t: Target, reset: bool) -> None:
        """The kustomization's ``openapi`` field, as kustomize hands it to kyaml ``SetSchema``.

        ``api/krusty/kustomizer.go`` (top, ``reset``) and ``api/internal/target/kusttarget.go``
        ``accumulateDirectory`` (each base and component): the first kustomization that names
        a ``path`` or a ``version`` decides, so an overlay's ``version: v1.21.2`` hides a
        base's custom schema.  The ``path`` file is loaded (load errors surface) even when
        an earlier choice wins, but only parsed when it is used.
        """
        spec = t.k.get("openapi") or {}
        if reset:
            # kubectl starts each build with no schema; kzgit may build many in one process
            self._openapi(lambda oa: oa.reset_schema())
        data: Optional[bytes] = None
        if "path" in spec:
            data = t.loader.load(spec["path"])
        if not spec:
            return

        def apply(oa: Any) -> None:
            if not reset and oa.schema_is_set():
                return
            doc = None
            if data is not None:
                doc = _openapi_document(data, spec["path"])
            oa.set_schema(spec, doc, str(t.kfile), reset=True)

        self._openapi(apply)

    def _openapi(self, fn: Callable[[Any], None]) -> None:
        fn(oa)


def _check_annotation_keys(r: Resource) -> None:
    """kustomize fails on an annotation key that reads as a non-string YAML scalar.

    kyaml rebuilds every resource's annotations with plain keys, and the final conversion
    to a Go map then meets a ``true``, ``1`` or ``null`` key: ``json: unsupported type:
    map[interface {}]interface {}`` (reproduced with kubectl kustomize v5.5.0, quoted keys
    in the source included).  Label keys fail the same way only where a label transformer
    rewrote the map; kzgit does not reproduce that half.
    """
    ann = r.metadata.get("annotations")
    if not isinstance(ann, dict):
        return
    for k in ann:
        if not plain_scalar_is_string(str(k)):
            raise BuildError(
                f"{r.cur_id()}: annotation key {json.dumps(str(k))} reads as a non-string YAML "
                "value; kustomize cannot serialise it (json: unsupported type: "
                "map[interface {}]interface {}); quoting does not help")


def _scalar_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"  # a null without source text came from JSON (a JSON 6902 patch)
    if isinstance(v, float):
        return repr(v) if not v.is_integer() else str(int(v))
    return str(v)


def _stringify_annotations(r: Resource) -> None:
    """Resource.RemoveBuildAnnotations re-sets a non-empty annotation map through
    SetAnnotations(map[string]string): every value comes out as a string."""
    md = r.obj.get("metadata")
    if not isinstance(md, dict) or "annotations" not in md:
        return
    ann = md["annotations"]
    if ann is None or ann == {}:
        # kustomize stores build annotations during the build and re-sets the map
        # afterwards; an empty map is removed then [verified with kubectl v1.32]
        del md["annotations"]
        return
    if not isinstance(ann, dict):
        return
    for k, v in ann.items():
        text = spelled(ann, k)  # rnode.go getMapFromMeta reads each value's text
        if text is not None:
            ann[k] = text
        elif isinstance(v, (dict, list)):
            ann[k] = ""  # a mapping or sequence node's Value
        elif not isinstance(v, str):
            ann[k] = _scalar_text(v)


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
    add_hashes(ra.resmap)
    fix_back_references(ra.resmap, ra.config.name_reference)
    ctx.resolve_vars(ra)
    kept = []
    for r in ra.resmap.resources():
        ann = r.annotations()
        if LOCAL_CONFIG in ann:
            # factory.go DropLocalNodes decodes the annotations into strings: a null is "",
            # a scalar its text (a bare false is "false"); only "false" keeps the resource.
            v = ann[LOCAL_CONFIG]
            if v is None or metadata_texts(ann)[LOCAL_CONFIG] != "false":
                continue
        kept.append(r)
    resources = apply_sort(kept, top.k.get("sortOptions"), options.reorder)
    build_md = top.k.get("buildMetadata", [])
    if options.enable_managedby_label or "managedByLabel" in build_md:
        for r in resources:
            labels = r.metadata.get("labels")
            if not isinstance(labels, dict):
                labels = r.metadata["labels"] = {}
            labels[MANAGED_BY_LABEL] = MANAGED_BY_VALUE
    for r in resources:
        _stringify_annotations(r)
        _check_annotation_keys(r)
    annotate_origins(resources, "originAnnotations" in build_md, "transformerAnnotations" in build_md)
    return BuildResult(resources=resources, warnings=ctx.warnings)


def _openapi_document(data: bytes, path: str) -> Any:
    """A custom schema file as kyaml openapi.go parse reads it: JSON when it starts with
    ``{`` (a duplicate key there fails), anything else through yaml.YAMLToJSON (its first
    document, YAML 1.1, and of a key written twice the last wins)."""
    if data[:1] == b"{":
        docs = load_documents(data, path)
        return docs[0] if docs else {}
    doc = load_yaml11(data, path, first_only=True)
    return doc if doc is not None else {}
