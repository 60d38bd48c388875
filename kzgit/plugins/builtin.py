"""``generators:`` / ``transformers:`` / ``validators:`` entries (api/internal/target/kusttarget.go
configureExternal*, api/internal/plugins/loader/loader.go).

An entry is inline YAML (one or more configs) or a path resolved like a
``resources`` entry (a file, or a kustomization directory whose output is the
list of configs).  Configs with ``apiVersion: builtin`` run in-process with no
default field specs; others go to :mod:`kzgit.plugins.external`, which refuses
them without ``--enable-alpha-plugins``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

from kzgit.build import BuildOptions
from kzgit.errors import BuildError, KzgitError, PluginError
from kzgit.resource import ResMap, Resource
from kzgit.plugins.common import config_meta, is_builtin
from kzgit.kustomization import (FIELDSPEC, GENERATOR_OPTIONS, IMAGE, LIST_STR, MAP_STR, METADATA,
                                 REPLICA, SELECTOR)
from kzgit.resource.factory import resources_from_bytes
from kzgit.yamlio import load_documents
from kzgit.yamlio.gostruct import (ANY, BOOL, STR, GoDecodeError, ListOf, MapOf, Named, Struct,
                                   decode_json, decode_yaml)

if TYPE_CHECKING:
    from kzgit.build.pipeline import Accumulator, Target


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
_FSLICE = ListOf(FIELDSPEC, "types.FsSlice")
_SELECTOR_PTR = Struct("Selector", dict(SELECTOR), go="*types.Selector")


def _plugin(kind: str, fields: Dict[str, Any]) -> Struct:
    return Struct(f"{kind}Plugin", fields, go=f"builtins.{kind}Plugin")


_GENERATOR_FIELDS = {"metadata": METADATA, "namespace": STR, "name": STR, "behavior": STR,
                     "literals": LIST_STR, "files": LIST_STR, "envs": LIST_STR, "env": STR,
                     "options": Struct("GeneratorOptions", dict(GENERATOR_OPTIONS),
                                       go="*types.GeneratorOptions")}
#: kind -> its config struct.  PrefixTransformer and SuffixTransformer read their config with
#: kyaml's yaml.Unmarshal (go-yaml v3: exact names, go-yaml's errors); every other builtin with
#: sigs.k8s.io/yaml.Unmarshal (JSON rules, numbers written into string fields as text).
CONFIG_STRUCTS: Dict[str, Struct] = {
    "AnnotationsTransformer": _plugin("AnnotationsTransformer", {
        "annotations": MAP_STR, "fieldSpecs": _FSLICE}),
    "LabelTransformer": _plugin("LabelTransformer", {"labels": MAP_STR, "fieldSpecs": _FSLICE}),
    "NamespaceTransformer": _plugin("NamespaceTransformer", {
        "metadata": METADATA, "fieldSpecs": _FSLICE, "unsetOnly": BOOL,
        "setRoleBindingSubjects": Named(STR, "namespace.RoleBindingSubjectMode")}),
    "PrefixTransformer": _plugin("PrefixTransformer", {"prefix": STR, "fieldSpecs": _FSLICE}),
    "SuffixTransformer": _plugin("SuffixTransformer", {"suffix": STR, "fieldSpecs": _FSLICE}),
    "PrefixSuffixTransformer": _plugin("PrefixSuffixTransformer", {
        "prefix": STR, "suffix": STR, "fieldSpecs": _FSLICE}),
    "ImageTagTransformer": _plugin("ImageTagTransformer", {"imageTag": IMAGE,
                                                           "fieldSpecs": _FSLICE}),
    "ReplicaCountTransformer": _plugin("ReplicaCountTransformer", {"replica": REPLICA,
                                                                   "fieldSpecs": _FSLICE}),
    "PatchTransformer": _plugin("PatchTransformer", {
        "path": STR, "patch": STR, "target": _SELECTOR_PTR, "options": MapOf(BOOL)}),
    "PatchStrategicMergeTransformer": _plugin("PatchStrategicMergeTransformer", {
        "paths": ListOf(Named(STR, "types.PatchStrategicMerge")), "patches": STR}),
    "PatchJson6902Transformer": _plugin("PatchJson6902Transformer", {
        "target": _SELECTOR_PTR, "path": STR, "jsonOp": STR}),
    "ReplacementTransformer": _plugin("ReplacementTransformer", {
        "replacements": ListOf(ANY, "[]types.ReplacementField")}),
    "HashTransformer": _plugin("HashTransformer", {}),
    "ValueAddTransformer": _plugin("ValueAddTransformer", {
        "value": STR, "targets": ListOf(ANY, "[]*builtins.TargetSpec")}),
    "SortOrderTransformer": _plugin("SortOrderTransformer", {}),
    "ConfigMapGenerator": _plugin("ConfigMapGenerator", dict(_GENERATOR_FIELDS)),
    "SecretGenerator": _plugin("SecretGenerator", dict(_GENERATOR_FIELDS, type=STR)),
    "IAMPolicyGenerator": _plugin("IAMPolicyGenerator", {
        "cloud": Named(STR, "types.Cloud"),
        "kubernetesService": Struct("KubernetesService", {"namespace": STR, "name": STR}),
        "serviceAccount": Struct("ServiceAccount", {"name": STR, "projectId": STR})}),
}
_YAML_V3_CONFIGS = ("PrefixTransformer", "SuffixTransformer")


def _field_lines(cfg: Dict[str, Any]) -> Dict[str, int]:
    """The line of each top-level field's value in the config as kustomize hands it to the
    plugin (Resource.AsYAML: keys sorted), for go-yaml's ``line N:`` in errors."""
    import yaml
    from kzgit.yamlio import dump_documents
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


def decode_config(cfg: Dict[str, Any]) -> Dict[str, Any]:
    """A builtin plugin config decoded into its Go struct (loader.go: ``plugin %s fails
    configuration``); the result keeps ``apiVersion``, ``kind`` and ``metadata`` for messages."""
    kind = cfg.get("kind")
    struct = CONFIG_STRUCTS.get(kind) if isinstance(kind, str) else None
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


class PluginRunner:
    """Runs plugin configs for one build."""

    def __init__(self, options: BuildOptions) -> None:
        self.options = options

    # -- loading configs -------------------------------------------------------------------
    def configs(self, t: "Target", entries: List[str]) -> List[Tuple[Dict[str, Any], Optional[Dict[str, Any]]]]:
        """The plugin configs of ``entries`` with their origin (OriginFromCustomPlugin)."""
        from kzgit.build.pipeline import Accumulator
        out: List[Tuple[Dict[str, Any], Optional[Dict[str, Any]]]] = []
        ra = Accumulator()
        paths: List[str] = []
        for e in entries:
            # kusttarget.go configureExternal*: an entry that reads as resources (NewResMapFromBytes)
            # is inline, even with none at all (``null``, ``""``, ``---``); anything else is a path
            try:
                inline = resources_from_bytes(e.encode("utf-8"), f"inline config in {t.kfile}")
            except KzgitError:
                paths.append(e)
                continue
            for r in inline:
                r.source = t.kfile
                if t.origin is not None:
                    r.origin = {"path": t.origin_of(t.kfile_name)}
                ra.resmap.append(r)
        t.accumulate_resources(ra, paths)
        for r in ra.resmap.resources():
            origin = None
            if r.origin is not None:
                md = config_meta(r.obj)
                origin = {"repo": r.origin.get("repo"), "ref": r.origin.get("ref"),
                          "configuredIn": r.origin.get("path"),
                          "configuredBy": {"apiVersion": r.api_version, "kind": r.kind,
                                           "name": md.get("name"), "namespace": md.get("namespace")}}
            out.append((r.obj, origin))
        return out

    # -- the three lists ---------------------------------------------------------------------
    def generate_all(self, t: "Target", entries: List[str], ra: "Accumulator") -> None:
        for cfg, origin in self.configs(t, entries):
            where = f"{cfg.get('kind')} {config_meta(cfg).get('name', '')} in {t.kfile}"
            if is_builtin(cfg):
                gens = _builtin_generator(decode_config(cfg), t, where)
            else:
                from kzgit.plugins import external
                gens = external.generate(cfg, t.kfile, t.loader, self.options)
            for res in gens:
                if res.origin is None:
                    res.origin = origin
                ra.absorb(res, where)

    def transform_all(self, t: "Target", entries: List[str], m: ResMap) -> None:
        for cfg, origin in self.configs(t, entries):
            where = f"{cfg.get('kind')} {config_meta(cfg).get('name', '')} in {t.kfile}"
            if is_builtin(cfg):
                _builtin_transformer(decode_config(cfg), t, where, self.options)(m)
            else:
                from kzgit.plugins import external
                external.transform(cfg, t.kfile, t.loader, m, self.options)
            t.after_transformer(m, origin)

    def validate_all(self, t: "Target", entries: List[str], m: ResMap) -> None:
        for cfg, _origin in self.configs(t, entries):
            if is_builtin(cfg):
                raise PluginError(f"{t.kfile}: builtin {cfg.get('kind')} cannot be used as a validator")
            from kzgit.plugins import external
            external.validate(cfg, t.kfile, t.loader, m, self.options)


def _builtin_generator(cfg: Dict[str, Any], t: "Target", where: str) -> List[Resource]:
    from kzgit.generators import make_configmap, make_secret
    kind = cfg.get("kind")
    if kind == "ConfigMapGenerator":
        return [make_configmap(_generator_args(cfg), t.loader, None, t.kfile)]
    if kind == "SecretGenerator":
        return [make_secret(_generator_args(cfg), t.loader, None, t.kfile)]
    if kind == "HelmChartInflationGenerator":
        from kzgit.plugins.helm import generate_from_config
        return generate_from_config(cfg, t)
    if kind == "IAMPolicyGenerator":
        return [_iam_policy(cfg, where)]
    raise BuildError(f"{where}: unable to load builtin generator kind '{kind}'")


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


def _builtin_transformer(cfg: Dict[str, Any], t: "Target", where: str,
                         options: BuildOptions) -> Callable[[ResMap], None]:
    from kzgit.builtins import images, metadata, namespace, patches, prefix_suffix, replicas
    kind = cfg.get("kind")
    if kind == "AnnotationsTransformer":
        return lambda m: metadata.annotations(m, cfg, where)
    if kind == "LabelTransformer":
        return lambda m: metadata.labels(m, cfg, where)
    if kind == "NamespaceTransformer":
        return lambda m: namespace.transform(m, cfg, where)
    if kind == "PrefixTransformer":
        return lambda m: prefix_suffix.prefix(m, cfg, where)
    if kind == "SuffixTransformer":
        return lambda m: prefix_suffix.suffix(m, cfg, where)
    if kind == "PrefixSuffixTransformer":
        def both(m: ResMap) -> None:
            prefix_suffix.prefix(m, {"prefix": cfg.get("prefix"), "fieldSpecs": _fieldspecs(cfg)}, where)
            prefix_suffix.suffix(m, {"suffix": cfg.get("suffix"), "fieldSpecs": _fieldspecs(cfg)}, where)
        return both
    if kind == "ImageTagTransformer":
        return lambda m: images.transform(m, cfg, where)
    if kind == "ReplicaCountTransformer":
        return lambda m: replicas.transform(m, cfg, where)
    if kind == "PatchTransformer":
        entry = {k: cfg.get(k) for k in ("path", "patch", "target", "options") if cfg.get(k) is not None}
        return lambda m: patches.patch(m, entry, t.loader, t.kfile)
    if kind == "PatchStrategicMergeTransformer":
        paths = list(cfg.get("paths") or [])
        inline = cfg.get("patches") or ""
        if not paths and not inline:
            raise BuildError(f"{where}: empty file path and empty patch content")
        return lambda m: patches.patch_strategic_merge(m, paths + ([inline] if inline else []), t.loader, t.kfile)
    if kind == "PatchJson6902Transformer":
        entry = {"target": cfg.get("target"), "path": cfg.get("path"), "patch": cfg.get("jsonOp")}
        return lambda m: patches.patch_json6902(m, entry, t.loader, t.kfile)
    if kind == "ReplacementTransformer":
        return lambda m: t.ctx.replacements(t, m, list(cfg.get("replacements") or []))
    if kind == "HashTransformer":
        from kzgit.builtins.hashing import add_hashes
        return add_hashes
    if kind == "ValueAddTransformer":
        from kzgit.builtins.valueadd import transform as valueadd
        return lambda m: valueadd(m, cfg, t.loader, where)
    if kind == "SortOrderTransformer":
        raise BuildError(f"{where}: unable to load builtin SortOrderTransformer: it is internal to kustomize; "
                         "use the kustomization's sortOptions field")
    raise BuildError(f"{where}: unable to load builtin transformer kind '{kind}'")
