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
from kzgit.resource.factory import objects_from_bytes

if TYPE_CHECKING:
    from kzgit.build.pipeline import Accumulator, Target


def _is_builtin(config: Dict[str, Any]) -> bool:
    """loader.go isBuiltinPlugin: group "" and version "builtin"."""
    return config.get("apiVersion") == "builtin"


def _meta(config: Dict[str, Any]) -> Dict[str, Any]:
    md = config.get("metadata")
    return md if isinstance(md, dict) else {}


def _generator_args(config: Dict[str, Any]) -> Dict[str, Any]:
    """ConfigMapGenerator/SecretGenerator plugins: name and namespace default to the config's metadata."""
    args = {k: v for k, v in config.items() if k not in ("apiVersion", "kind", "metadata")}
    md = _meta(config)
    args.setdefault("name", md.get("name"))
    if not args.get("namespace") and md.get("namespace"):
        args["namespace"] = md["namespace"]
    if args.get("env"):
        args["envs"] = list(args.get("envs") or []) + [args.pop("env")]
    return args


# Builtin plugin configs are decoded into Go structs through JSON, so field
# names match case-insensitively (Go encoding/json).  Known nested shapes:
_FS = {"group": None, "version": None, "kind": None, "path": None, "create": None}
_SEL = {"group": None, "version": None, "kind": None, "name": None, "namespace": None,
        "labelSelector": None, "annotationSelector": None}
_SHAPES: Dict[str, Any] = {
    "fieldSpecs": [_FS], "imageTag": {"name": None, "newName": None, "newTag": None, "digest": None,
                                      "tagSuffix": None},
    "replica": {"name": None, "count": None}, "target": _SEL, "options": None,
    "labels": None, "annotations": None, "prefix": None, "suffix": None, "paths": None,
    "patches": None, "patch": None, "path": None, "jsonOp": None, "replacements": None,
    "unsetOnly": None, "setRoleBindingSubjects": None, "literals": None, "files": None,
    "envs": None, "env": None, "behavior": None, "type": None, "name": None, "namespace": None,
    "value": None, "targets": None, "targetFilePath": None, "cloud": None,
    "kubernetesService": {"name": None, "namespace": None},
    "serviceAccount": {"name": None, "projectId": None},
}


def canonical_keys(value: Any, shape: Any = _SHAPES) -> Any:
    """Rename keys to their canonical spelling where they differ only in case."""
    if isinstance(shape, list) and isinstance(value, list):
        return [canonical_keys(v, shape[0]) for v in value]
    if not isinstance(shape, dict) or not isinstance(value, dict):
        return value
    folded = {k.lower(): k for k in shape}
    out = {}
    for k, v in value.items():
        canon = k if k in shape or not isinstance(k, str) else folded.get(k.lower(), k)
        out[canon] = canonical_keys(v, shape.get(canon)) if canon in shape else v
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
            try:
                objs = objects_from_bytes(e.encode("utf-8"), f"inline config in {t.kfile}")
            except KzgitError:
                objs = []
            if objs:
                for o in objs:
                    r = Resource(o, t.kfile)
                    if t.origin is not None:
                        r.origin = {"path": t.origin_of(t.kfile_name)}
                    ra.resmap.append(r)
            else:
                paths.append(e)
        t.accumulate_resources(ra, paths)
        for r in ra.resmap.resources():
            origin = None
            if r.origin is not None:
                md = _meta(r.obj)
                origin = {"repo": r.origin.get("repo"), "ref": r.origin.get("ref"),
                          "configuredIn": r.origin.get("path"),
                          "configuredBy": {"apiVersion": r.api_version, "kind": r.kind,
                                           "name": md.get("name"), "namespace": md.get("namespace")}}
            out.append((r.obj, origin))
        return out

    # -- the three lists ---------------------------------------------------------------------
    def generate_all(self, t: "Target", entries: List[str], ra: "Accumulator") -> None:
        for cfg, origin in self.configs(t, entries):
            where = f"{cfg.get('kind')} {_meta(cfg).get('name', '')} in {t.kfile}"
            if _is_builtin(cfg):
                gens = _builtin_generator(canonical_keys(cfg), t, where)
            else:
                from kzgit.plugins import external
                gens = external.generate(cfg, t.kfile, t.loader, self.options)
            for res in gens:
                if res.origin is None:
                    res.origin = origin
                ra.absorb(res, where)

    def transform_all(self, t: "Target", entries: List[str], m: ResMap) -> None:
        for cfg, origin in self.configs(t, entries):
            where = f"{cfg.get('kind')} {_meta(cfg).get('name', '')} in {t.kfile}"
            if _is_builtin(cfg):
                _builtin_transformer(canonical_keys(cfg), t, where, self.options)(m)
            else:
                from kzgit.plugins import external
                external.transform(cfg, t.kfile, t.loader, m, self.options)
            t.after_transformer(m, origin)

    def validate_all(self, t: "Target", entries: List[str], m: ResMap) -> None:
        for cfg, _origin in self.configs(t, entries):
            if _is_builtin(cfg):
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
    """IAMPolicyGenerator (api/filters/iampolicygenerator): a GKE workload-identity ServiceAccount."""
    if cfg.get("cloud") != "gke":
        raise BuildError(f"{where}: cloud provider {cfg.get('cloud')!r} not currently supported")
    ks = cfg.get("kubernetesService") or {}
    sa = cfg.get("serviceAccount") or {}
    project = sa.get("projectId") or ""
    obj: Dict[str, Any] = {"apiVersion": "v1", "kind": "ServiceAccount",
           "metadata": {"name": ks.get("name") or "",
                        "annotations": {"iam.gke.io/gcp-service-account":
                                        f"{sa.get('name')}@{project}.iam.gserviceaccount.com"}}}
    if ks.get("namespace"):
        obj["metadata"]["namespace"] = ks["namespace"]
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
