"""``generators:`` / ``transformers:`` / ``validators:`` entries (api/internal/target/kusttarget.go
configureExternal*, api/internal/plugins/loader/loader.go).

The build reads the configs (kzgit.builder.pipeline ``Target.plugin_configs``); configs with
``apiVersion: builtin`` are decoded into their Go struct (:data:`CONFIG_STRUCTS`) and made by
the registry (:data:`GENERATORS`, :data:`TRANSFORMERS`, as kustomize's builtinhelpers), with no
default field specs; others go to :mod:`kzgit.plugins.external`, which refuses them without
``--enable-alpha-plugins``.  Plugins get a :class:`~kzgit.plugins.helpers.PluginHelpers`,
never the build itself.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar

from kzgit.options import BuildOptions
from kzgit.accumulator import Accumulator
from kzgit.builtins import images, metadata, namespace, patches, prefix_suffix, replicas
from kzgit.builtins.hashing import add_hashes
from kzgit.builtins.replacements import apply_replacements, resolve_entries
from kzgit.builtins.valueadd import transform as valueadd
from kzgit.generators import make_configmap, make_secret
from kzgit.loader import Loader
from kzgit.plugins.helpers import PluginHelpers
from kzgit.errors import BuildError, KzgitError, PluginError
from kzgit.resource import ResMap, Resource
from kzgit.plugins.common import config_meta, is_builtin
from kzgit.kustomization import (FSLICE, GENERATOR_OPTIONS, IMAGE, LIST_STR, MAP_STR, METADATA,
                                 PATCH_ARGS, REPLACEMENT, REPLACEMENT_FIELD, REPLICA, SELECTOR_PTR, schema)
from kzgit.versions import V5_7, V5_8
from kzgit.yamlio import dump, load_documents
from kzgit.yamlio.gostruct import (ANY, BOOL, STR, GoDecodeError, ListOf, MapOf, Named, Struct,
                                   decode_json, decode_yaml)



def _generator_args(config: Dict[str, Any]) -> Dict[str, Any]:
    """ConfigMapGenerator/SecretGenerator plugins: name and namespace default to the config's metadata."""
    args = {k: v for k, v in config.items() if k not in ("apiVersion", "kind", "metadata")}
    md = config_meta(config)
    args.setdefault("name", md.get("name"))
    if not args.get("namespace") and md.get("namespace"):
        args["namespace"] = md["namespace"]
    if args.get("env"):
        args["envs"] = list(args.get("envs") or []) + [args.pop("env")]
    return args


# The Go structs of the builtin plugins' configs (api/internal/builtins/<Kind>.go, json tags).


def _plugin(kind: str, fields: Dict[str, Any], embedded: bool = False) -> Struct:
    """``embedded``: every field but metadata comes from an embedded args struct
    (types.ConfigMapArgs, types.IAMPolicyGeneratorArgs), see Struct.promoted."""
    return Struct(f"{kind}Plugin", fields, go=f"builtins.{kind}Plugin",
                  promoted=[f for f in fields if f != "metadata"] if embedded else ())


_GENERATOR_FIELDS = {"metadata": METADATA, "namespace": STR, "name": STR, "behavior": STR,
                     "literals": LIST_STR, "files": LIST_STR, "envs": LIST_STR, "env": STR,
                     "options": Struct("GeneratorOptions", dict(GENERATOR_OPTIONS),
                                       go="*types.GeneratorOptions")}
#: kind -> its config struct.  PrefixTransformer and SuffixTransformer read their config with
#: kyaml's yaml.Unmarshal (go-yaml v3: exact names, go-yaml's errors); every other builtin with
#: sigs.k8s.io/yaml.Unmarshal (JSON rules, numbers written into string fields as text).
CONFIG_STRUCTS: Dict[str, Struct] = {
    "AnnotationsTransformer": _plugin("AnnotationsTransformer", {
        "annotations": MAP_STR, "fieldSpecs": FSLICE}),
    "LabelTransformer": _plugin("LabelTransformer", {"labels": MAP_STR, "fieldSpecs": FSLICE}),
    "NamespaceTransformer": _plugin("NamespaceTransformer", {
        "metadata": METADATA, "fieldSpecs": FSLICE, "unsetOnly": BOOL,
        "setRoleBindingSubjects": Named(STR, "namespace.RoleBindingSubjectMode")}),
    "PrefixTransformer": _plugin("PrefixTransformer", {"prefix": STR, "fieldSpecs": FSLICE}),
    "SuffixTransformer": _plugin("SuffixTransformer", {"suffix": STR, "fieldSpecs": FSLICE}),
    "PrefixSuffixTransformer": _plugin("PrefixSuffixTransformer", {
        "prefix": STR, "suffix": STR, "fieldSpecs": FSLICE}),
    "ImageTagTransformer": _plugin("ImageTagTransformer", {"imageTag": IMAGE,
                                                           "fieldSpecs": FSLICE}),
    "ReplicaCountTransformer": _plugin("ReplicaCountTransformer", {"replica": REPLICA,
                                                                   "fieldSpecs": FSLICE}),
    "PatchTransformer": _plugin("PatchTransformer", {
        "path": STR, "patch": STR, "target": SELECTOR_PTR, "options": MapOf(BOOL)}),
    "PatchStrategicMergeTransformer": _plugin("PatchStrategicMergeTransformer", {
        "paths": ListOf(Named(STR, "types.PatchStrategicMerge")), "patches": STR}),
    "PatchJson6902Transformer": _plugin("PatchJson6902Transformer", {
        "target": SELECTOR_PTR, "path": STR, "jsonOp": STR}),
    # before 5.7 the struct's already-loaded list had the Go tag `yaml:"omitempty"`, so a
    # top-level `omitempty:` key is a list of replacements applied first (kustomize
    # e3f034931, api v0.20.0 / Kustomize 5.7.0, made the field private)
    "ReplacementTransformer": _plugin("ReplacementTransformer", {
        "replacements": ListOf(REPLACEMENT_FIELD), "omitempty": ListOf(REPLACEMENT)}),
    "HashTransformer": _plugin("HashTransformer", {}),
    "ValueAddTransformer": _plugin("ValueAddTransformer", {
        "value": STR, "targets": ListOf(ANY, "[]*builtins.TargetSpec"), "targetFilePath": STR}),
    "SortOrderTransformer": _plugin("SortOrderTransformer", {}),
    "ConfigMapGenerator": _plugin("ConfigMapGenerator", dict(_GENERATOR_FIELDS), embedded=True),
    "SecretGenerator": _plugin("SecretGenerator", dict(_GENERATOR_FIELDS, type=STR), embedded=True),
    "IAMPolicyGenerator": _plugin("IAMPolicyGenerator", embedded=True, fields={
        "cloud": Named(STR, "types.Cloud"),
        "kubernetesService": Struct("KubernetesService", {"namespace": STR, "name": STR}),
        "serviceAccount": Struct("ServiceAccount", {"name": STR, "projectId": STR})}),
}
_YAML_V3_CONFIGS = ("PrefixTransformer", "SuffixTransformer")


def _field_lines(cfg: Dict[str, Any]) -> Dict[str, int]:
    """The line of each top-level field's value in the config as kustomize hands it to the
    plugin (Resource.AsYAML: keys sorted), for go-yaml's ``line N:`` in errors."""
    import yaml   # only a config that fails to decode needs its lines
    from kzgit.yamlio import dump_documents   # (with yaml above)
    lines: Dict[str, int] = {}
    try:
        root = yaml.compose(dump_documents([cfg]), Loader=yaml.CSafeLoader)
    except yaml.YAMLError:
        return lines
    if isinstance(root, yaml.MappingNode):
        for k, v in root.value:
            if isinstance(k, yaml.ScalarNode):
                lines[k.value] = v.start_mark.line + 1
    return lines


def config_struct(kind: str, version: Tuple[int, int, int]) -> Optional[Struct]:
    """The config struct of builtin ``kind`` in Kustomize ``version``: :data:`CONFIG_STRUCTS`
    (5.5.0's) with the fields later releases added (kzgit.kustomization.schema)."""
    struct = CONFIG_STRUCTS.get(kind)
    if kind == "ReplacementTransformer" and version >= V5_7:   # sourceValue (6c2797001)
        field = Struct("ReplacementField", dict(schema(version)["Replacement"], path=STR))
        struct = _plugin(kind, {"replacements": ListOf(field)})
    elif kind == "PatchTransformer" and version >= V5_8:       # options: PatchArgs (9043c223d)
        struct = _plugin(kind, dict(CONFIG_STRUCTS[kind], options=PATCH_ARGS))
    return struct


def decode_config(cfg: Dict[str, Any], version: Tuple[int, int, int]) -> Dict[str, Any]:
    """A builtin plugin config decoded into its Go struct in Kustomize ``version`` (loader.go:
    ``plugin %s fails configuration``); the result keeps ``apiVersion``, ``kind`` and
    ``metadata`` for messages."""
    kind = cfg.get("kind")
    struct = config_struct(kind, version) if isinstance(kind, str) else None
    if struct is None:
        return cfg
    fields = {k: v for k, v in cfg.items() if k not in ("apiVersion", "kind")}
    try:
        if kind in _YAML_V3_CONFIGS:
            decoded = decode_yaml(fields, struct, _field_lines(cfg))
        else:
            decoded = decode_json(fields, struct, to_target=True)
    except GoDecodeError as e:
        rid = Resource(cfg, "").cur_id()
        what = str(e) if kind in _YAML_V3_CONFIGS else \
            f"error unmarshaling JSON: while decoding JSON: {e}"
        raise BuildError(f"plugin {rid} fails configuration: {what}") from None
    out = {"apiVersion": cfg.get("apiVersion"), "kind": kind, "metadata": cfg.get("metadata")}
    out.update(decoded)
    return out


#: (config, origin): a plugin config and the origin it gives what it generates or transforms
Configs = List[Tuple[Dict[str, Any], Optional[Dict[str, Any]]]]
Step = Callable[[ResMap], None]


class PluginRunner:
    """Runs the plugin configs of ``generators:``, ``transformers:`` and ``validators:``
    (kustomize api/internal/plugins/loader/loader.go: builtins from the registry below, the
    rest by :mod:`kzgit.plugins.external`, or by :mod:`kzgit.plugins.groupplugin` for the
    configs whose API group has an executable of the proposal's protocol)."""

    def __init__(self, options: BuildOptions, notes: Optional[List[str]] = None) -> None:
        self.options = options
        # what ran how, for ``kzgit build -v`` (BuildContext.notes)
        self.notes: List[str] = [] if notes is None else notes

    def split(self, configs: Configs, h: PluginHelpers) -> Tuple[Configs, Dict[str, Configs]]:
        """The configs the shipped protocols run, and the group protocol's by executable (in
        the order their groups first appear)."""
        shipped: Configs = []
        grouped: Dict[str, Configs] = {}
        for cfg, origin in configs:
            if not is_builtin(cfg):
                from kzgit.plugins import external   # start-up: only builds with exec plugins pay
                path = external.group_plugin(cfg, h.kfile, self.options)
                if path is not None:
                    grouped.setdefault(path, []).append((cfg, origin))
                    continue
            shipped.append((cfg, origin))
        return shipped, grouped

    def _note_external(self, cfg: Dict[str, Any], where: str, what: str) -> None:
        from kzgit.plugins import external   # start-up: only builds with exec plugins pay
        self.notes.append(f"{what} {where}: {external.protocol(cfg, where)}")

    def generate_all(self, configs: Configs, h: PluginHelpers, ra: Accumulator) -> None:
        for cfg, origin in configs:
            where = _where(cfg, h)
            if is_builtin(cfg):
                gens = _builtin(GENERATORS, "generator",
                                decode_config(cfg, self.options.kustomize_version), where)(h, where)
            else:
                from kzgit.plugins import external   # start-up: only builds with exec plugins pay
                gens = external.generate(cfg, h.kfile, h.loader, self.options)
                self._note_external(cfg, where, "generator")
            for res in gens:
                if res.origin is None:
                    res.origin = origin
                ra.absorb(res, where)

    def group_generate(self, grouped: Dict[str, Configs], h: PluginHelpers, ra: Accumulator) -> None:
        """The proposal's phase 5: ``<group> generate`` once per group; exit 127 generates
        nothing (the plugin only transforms)."""
        from kzgit.plugins import groupplugin   # start-up: only builds with group plugins pay
        for path, configs in grouped.items():
            gens, label = groupplugin.generate(path, [c for c, _ in configs], h.loader, self.options)
            self.notes.append(f"generators in {h.kfile}: {label}"
                              + (": exit 127, it does not generate" if gens is None else
                                 f": {len(gens)} resource(s)"))
            for res in gens or ():
                if res.origin is None:
                    res.origin = configs[0][1]
                ra.absorb(res, label)

    def group_transform(self, grouped: Dict[str, Configs], h: PluginHelpers, m: ResMap,
                        after: Callable[[ResMap, Optional[Dict[str, Any]]], None]) -> None:
        """The proposal's phase 6: ``<group> transform`` once per group, with the configs of
        its generators and transformers; exit 127 passes the resources through."""
        from kzgit.plugins import groupplugin   # start-up: only builds with group plugins pay
        for path, configs in grouped.items():
            ran, label = groupplugin.transform(path, [c for c, _ in configs], m, h.loader,
                                               self.options, h.kfile)
            self.notes.append(f"generators and transformers in {h.kfile}: {label}"
                              + ("" if ran else ": exit 127, its input passes through"))
            if ran:
                after(m, configs[0][1])

    def transform_all(self, configs: Configs, h: PluginHelpers, m: ResMap,
                      after: Callable[[ResMap, Optional[Dict[str, Any]]], None]) -> None:
        """Configure and run each transformer in turn; ``after`` records it on the resources
        (multitransformer.go)."""
        for cfg, origin in configs:
            where = _where(cfg, h)
            if is_builtin(cfg):
                _builtin(TRANSFORMERS, "transformer",
                         decode_config(cfg, self.options.kustomize_version), where)(h, where)(m)
            else:
                from kzgit.plugins import external   # start-up: only builds with exec plugins pay
                external.transform(cfg, h.kfile, h.loader, m, self.options)
                self._note_external(cfg, where, "transformer")
            after(m, origin)

    def validate_all(self, configs: Configs, h: PluginHelpers, m: ResMap) -> None:
        for cfg, _origin in configs:
            if is_builtin(cfg):
                raise PluginError(f"{h.kfile}: builtin {cfg.get('kind')} cannot be used as a validator")
            from kzgit.plugins import external   # start-up: only builds with exec plugins pay
            external.validate(cfg, h.kfile, h.loader, m, self.options)


def _where(cfg: Dict[str, Any], h: PluginHelpers) -> str:
    return f"{cfg.get('kind')} {config_meta(cfg).get('name', '')} in {h.kfile}"


F = TypeVar("F")


def _builtin(registry: Dict[str, Callable[[Dict[str, Any]], F]], what: str, cfg: Dict[str, Any],
             where: str) -> F:
    kind = cfg.get("kind")
    factory = registry.get(kind) if isinstance(kind, str) else None
    if factory is None:
        if kind == "SortOrderTransformer":
            raise BuildError(f"{where}: unable to load builtin SortOrderTransformer: it is internal "
                             "to kustomize; use the kustomization's sortOptions field")
        raise BuildError(f"{where}: unable to load builtin {what} kind '{kind}'")
    return factory(cfg)


def apply_replacement_entries(m: ResMap, entries: List[Any], loader: Loader, kfile: str,
                              version: Tuple[int, int, int]) -> None:
    """ReplacementTransformer: configured (``path:`` entries read, see
    :func:`~kzgit.builtins.replacements.resolve_entries`), then applied."""
    try:
        resolved = resolve_entries(entries, loader.load, version)
    except KzgitError as e:
        text = dump({"Replacements": entries})
        raise e.prefixed(f"{kfile}: trouble configuring builtin ReplacementTransformer with config: `\n{text}`: ") from None
    apply_replacements(m, resolved, kfile, version)


def _iam_policy(cfg: Dict[str, Any], where: str) -> Resource:
    """IAMPolicyGenerator (api/filters/iampolicygenerator): a GKE workload-identity ServiceAccount.

    kustomize fills a YAML template with the config's strings and parses the result, so a
    config cut short (no service account name) makes YAML that does not parse, as here.
    """
    if cfg.get("cloud") != "gke":
        raise BuildError(f"{where}: cloud provider {cfg.get('cloud') or ''} not supported yet")
    ks = cfg.get("kubernetesService") or {}
    sa = cfg.get("serviceAccount") or {}
    text = ("\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  annotations:\n"
            f"    iam.gke.io/gcp-service-account: {sa.get('name') or ''}@{sa.get('projectId') or ''}"
            f".iam.gserviceaccount.com\n  name: {ks.get('name') or ''}\n")
    if ks.get("namespace"):
        text += f"\n  namespace: {ks['namespace']}"
    docs = load_documents(text, f"{where}: the generated ServiceAccount")
    obj = docs[0] if docs else None
    if not isinstance(obj, dict):
        raise BuildError(f"{where}: the generated ServiceAccount is not a mapping")
    return Resource(obj, where)


def _fieldspecs(cfg: Dict[str, Any]) -> List[Any]:
    return cfg.get("fieldSpecs") or []


def _prefix_suffix(cfg: Dict[str, Any]) -> Callable[[PluginHelpers, str], Step]:
    def both(m: ResMap, where: str) -> None:
        prefix_suffix.prefix(m, {"prefix": cfg.get("prefix"), "fieldSpecs": _fieldspecs(cfg)}, where)
        prefix_suffix.suffix(m, {"suffix": cfg.get("suffix"), "fieldSpecs": _fieldspecs(cfg)}, where)
    return lambda h, where: lambda m: both(m, where)


def _patch(cfg: Dict[str, Any]) -> Callable[[PluginHelpers, str], Step]:
    entry = {k: cfg.get(k) for k in ("path", "patch", "target", "options") if cfg.get(k) is not None}
    return lambda h, where: lambda m: patches.patch(m, entry, h.loader, h.kfile,
                                                    h.options.kustomize_version)


def _patch_strategic_merge(cfg: Dict[str, Any]) -> Callable[[PluginHelpers, str], Step]:
    paths = list(cfg.get("paths") or [])
    inline = cfg.get("patches") or ""

    def make(h: PluginHelpers, where: str) -> Step:
        if not paths and not inline:
            raise BuildError(f"{where}: empty file path and empty patch content")
        return lambda m: patches.patch_strategic_merge(m, paths, h.loader, h.kfile, content=inline)
    return make


def _patch_json6902(cfg: Dict[str, Any]) -> Callable[[PluginHelpers, str], Step]:
    entry = {"target": cfg.get("target"), "path": cfg.get("path"), "patch": cfg.get("jsonOp")}
    return lambda h, where: lambda m: patches.patch_json6902(m, entry, h.loader, h.kfile)


#: The builtin transformers by kind (kustomize api/internal/plugins/builtinhelpers/builtins.go):
#: a decoded config -> (helpers, where) -> the step over the resource map.
TRANSFORMERS: Dict[str, Callable[[Dict[str, Any]], Callable[[PluginHelpers, str], Step]]] = {
    "AnnotationsTransformer":
        lambda cfg: lambda h, where: lambda m: metadata.annotations(m, cfg, where),
    "LabelTransformer": lambda cfg: lambda h, where: lambda m: metadata.labels(m, cfg, where),
    "NamespaceTransformer":
        lambda cfg: lambda h, where: lambda m: namespace.transform(
            m, cfg, where, skip_helm=h.options.kustomize_version >= V5_8),
    "PrefixTransformer": lambda cfg: lambda h, where: lambda m: prefix_suffix.prefix(m, cfg, where),
    "SuffixTransformer": lambda cfg: lambda h, where: lambda m: prefix_suffix.suffix(m, cfg, where),
    "PrefixSuffixTransformer": _prefix_suffix,
    "ImageTagTransformer": lambda cfg: lambda h, where: lambda m: images.transform(m, cfg, where),
    "ReplicaCountTransformer":
        lambda cfg: lambda h, where: lambda m: replicas.transform(m, cfg, where),
    "PatchTransformer": _patch,
    "PatchStrategicMergeTransformer": _patch_strategic_merge,
    "PatchJson6902Transformer": _patch_json6902,
    "ReplacementTransformer": lambda cfg: lambda h, where: lambda m: apply_replacement_entries(
        m, [*(cfg.get("omitempty") or []), *(cfg.get("replacements") or [])], h.loader, h.kfile,
        h.options.kustomize_version),
    "HashTransformer": lambda cfg: lambda h, where: add_hashes,
    "ValueAddTransformer": lambda cfg: lambda h, where: lambda m: valueadd(m, cfg, h.loader, where),
}


def _helm_chart(cfg: Dict[str, Any]) -> Callable[[PluginHelpers, str], List[Resource]]:
    def make(h: PluginHelpers, where: str) -> List[Resource]:
        from kzgit.plugins.helm import generate_from_config   # helm's modules: only charts pay
        return generate_from_config(cfg, h)
    return make


#: The builtin generators by kind: a decoded config -> (helpers, where) -> the resources.
GENERATORS: Dict[str, Callable[[Dict[str, Any]], Callable[[PluginHelpers, str], List[Resource]]]] = {
    "ConfigMapGenerator": lambda cfg: lambda h, where: [
        make_configmap(_generator_args(cfg), h.loader, None, h.kfile)],
    "SecretGenerator": lambda cfg: lambda h, where: [
        make_secret(_generator_args(cfg), h.loader, None, h.kfile)],
    "HelmChartInflationGenerator": _helm_chart,
    "IAMPolicyGenerator": lambda cfg: lambda h, where: [_iam_policy(cfg, where)],
}
