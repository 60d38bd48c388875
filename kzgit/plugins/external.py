"""External (non-builtin) plugins: legacy exec plugins and KRM functions.

The build pipeline calls :func:`generate`, :func:`transform` and :func:`validate` for every
entry of ``generators:``, ``transformers:`` and ``validators:`` whose ``apiVersion`` is not
``builtin`` (builtins run in-process, see ``kzgit.plugins.builtin``).  The semantics are those of
kustomize api/v0.18.0:

* gating: ``api/internal/plugins/loader/loader.go`` (``loadAndConfigurePlugin``): without
  ``--enable-alpha-plugins`` every non-builtin config fails with
  ``external plugins disabled; unable to load external plugin '<Kind>'``;
* KRM functions (``config.kubernetes.io/function`` annotation):
  ``api/internal/plugins/fnplugin/fnplugin.go``, ``kyaml/runfn/runfn.go``,
  ``kyaml/fn/runtime/{runtimeutil,exec,container}``;
* legacy exec plugins: ``api/internal/plugins/execplugin/execplugin.go`` with the plugin home of
  ``api/konfig/plugins.go``;
* reconciliation of a transformer's output: ``api/internal/plugins/utils/utils.go``
  (``UpdateResMapValues``, ``UpdateResourceOptions``).

Deliberate differences, all listed in the README: ``--enable-alpha-plugins`` alone enables exec
KRM functions (kubectl kustomize silently skips them, having no ``--enable-exec``); kzgit sets
``KUSTOMIZE_PLUGIN_MODE`` as the kustomize plugin guide documents; every process runs under
:mod:`kzgit.proc` (timeout, process group, output cap); Go ``.so`` plugins are refused
with a clear message; a KRM function's ``results`` of severity ``error`` fail the build.
"""
from __future__ import annotations

import copy
import os
import shlex
import shutil
import tempfile
from typing import Any, Dict, List, Optional, Tuple

from kzgit.build import BuildOptions
from kzgit.errors import PluginError, YamlError
from kzgit.loader import Loader
from kzgit.proc import run_process
from kzgit.resource import Resource, ResMap, split_api_version
from kzgit.yamlio import dump_documents, load_documents

__all__ = ["generate", "transform", "validate", "plugin_home", "legacy_plugin_path",
           "function_spec", "is_builtin"]

# api/internal/plugins/utils/utils.go
ID_ANNOTATION = "kustomize.config.k8s.io/id"
HASH_ANNOTATION = "kustomize.config.k8s.io/needs-hash"
BEHAVIOR_ANNOTATION = "kustomize.config.k8s.io/behavior"
# api/konfig/general.go
VALIDATED_BY_LABEL = "validated-by"
LOCAL_CONFIG_ANNOTATION = "config.kubernetes.io/local-config"
# kyaml/fn/runtime/runtimeutil/functiontypes.go
FUNCTION_ANNOTATIONS = ("config.kubernetes.io/function", "config.k8s.io/function")
CONTAINER_ANNOTATION = "config.kubernetes.io/container"
# kyaml/kio/kioutil/kioutil.go: annotations the function pipeline adds; stripped from output
# (kustomize strips them from the final output in Resource.RemoveBuildAnnotations).
KIO_INDEX_ANNOTATIONS = ("internal.config.kubernetes.io/index", "config.kubernetes.io/index")
KIO_ID_ANNOTATIONS = ("internal.config.kubernetes.io/id", "config.k8s.io/id")
KIO_PATH_ANNOTATIONS = ("internal.config.kubernetes.io/path", "config.kubernetes.io/path")
# kyaml/kio/kio.go PreprocessResourcesForInternalAnnotationMigration marks every item with it
KIO_MIGRATION_ANNOTATION = "internal.config.kubernetes.io/annotations-migration-resource-id"
KIO_ANNOTATIONS = KIO_INDEX_ANNOTATIONS + KIO_ID_ANNOTATIONS + KIO_PATH_ANNOTATIONS + (
    "internal.config.kubernetes.io/seqindent", KIO_MIGRATION_ANNOTATION)
# kyaml/kio/byteio_reader.go
RESOURCE_LIST_API_VERSION = "config.kubernetes.io/v1"
# api/internal/plugins/execplugin/execplugin.go
MAX_ARG_STRING_LENGTH = 131071
TMP_CONFIG_PREFIX = "kust-plugin-config-"
# api/konfig/plugins.go
PLUGIN_HOME_ENV = "KUSTOMIZE_PLUGIN_HOME"
BUILTIN_API_VERSION = "builtin"

_ENABLE_TIP = ("pass --enable-alpha-plugins to run it (only for kustomizations you trust: "
               "plugins run arbitrary programs)")
_SO_TIP = ("Go plugins can only be loaded by a kustomize binary built with the same Go toolchain; "
           "rebuild it as an exec plugin (an executable named like the .so, without the suffix) "
           "or as a KRM function (config.kubernetes.io/function annotation)")


# --------------------------------------------------------------------------- helpers

def is_builtin(config: Dict[str, Any]) -> bool:
    """kustomize loader.go isBuiltinPlugin: no group and version ``builtin``."""
    api = config.get("apiVersion")
    group, version = split_api_version(api if isinstance(api, str) else "")
    return group == "" and version == BUILTIN_API_VERSION


def _meta(config: Dict[str, Any]) -> Dict[str, Any]:
    md = config.get("metadata")
    return md if isinstance(md, dict) else {}


def _annotations(obj: Dict[str, Any]) -> Dict[str, Any]:
    md = obj.get("metadata")
    if not isinstance(md, dict):
        return {}
    a = md.get("annotations")
    return a if isinstance(a, dict) else {}


def _set_annotations(obj: Dict[str, Any], ann: Dict[str, Any]) -> None:
    """kyaml RNode.SetAnnotations: keys sorted, an empty map removes the field."""
    md = obj.get("metadata")
    if not isinstance(md, dict):
        md = {}
        obj["metadata"] = md
    md.pop("annotations", None)
    if ann:
        md["annotations"] = {k: ann[k] for k in sorted(ann)}


def _set_labels(obj: Dict[str, Any], labels: Dict[str, Any]) -> None:
    md = obj.get("metadata")
    if not isinstance(md, dict):
        return
    md.pop("labels", None)
    if labels:
        md["labels"] = {k: labels[k] for k in sorted(labels)}


def _ann_str(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return "" if v is None else str(v)


def describe(config: Dict[str, Any], source: str) -> str:
    """``Kind 'name' (from source)`` for messages."""
    kind = config.get("kind") or "<no kind>"
    name = _meta(config).get("name")
    out = f"{kind} '{name}'" if name else f"{kind}"
    return f"{out} (from {source})" if source else out


def _check_enabled(config: Dict[str, Any], source: str, options: BuildOptions) -> None:
    if not options.enable_alpha_plugins:
        # api/types/erronlybuiltinpluginsallowed.go
        raise PluginError(
            f"external plugins disabled; unable to load external plugin '{config.get('kind', '')}' "
            f"configured by {describe(config, source)}", tip=_ENABLE_TIP)


def _timeout(options: BuildOptions) -> Optional[float]:
    t = options.plugin_timeout
    return t if t and t > 0 else None


# --------------------------------------------------------------------------- plugin home

def _home_dir() -> str:
    """api/konfig/plugins.go HomeDir: $HOME, else a literal ``~``."""
    return os.environ.get("HOME") or "~"


def plugin_home() -> str:
    """The first existing plugin home, as kustomize v5.5 resolves it (konfig.DefaultAbsPluginHome)."""
    candidates: List[Tuple[str, str]] = []
    env_home = os.environ.get(PLUGIN_HOME_ENV, "")
    candidates.append((f"homed in ${PLUGIN_HOME_ENV}", env_home))
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    candidates.append(("homed in $XDG_CONFIG_HOME",
                       os.path.join(xdg, "kustomize", "plugin") if xdg else ""))
    candidates.append(("homed in default value of $XDG_CONFIG_HOME",
                       os.path.join(_home_dir(), ".config", "kustomize", "plugin")))
    candidates.append(("homed in home directory", os.path.join(_home_dir(), "kustomize", "plugin")))
    tried = []
    for note, d in candidates:
        if d and os.path.exists(d):
            return d
        tried.append(f"('{d or '<no value>'}'; {note})")
    # api/types/errunabletofind.go
    raise PluginError("unable to find plugin root - tried: " + ", ".join(tried),
                      tip=f"put exec plugins under ${PLUGIN_HOME_ENV}/<group>/<version>/<lowercase kind>/<Kind>")


def legacy_plugin_path(config: Dict[str, Any], home: Optional[str] = None) -> str:
    """``<home>/<group>/<version>/<lowercase kind>/<Kind>`` (loader.go AbsolutePluginPath)."""
    api = config.get("apiVersion")
    group, version = split_api_version(api if isinstance(api, str) else "")
    kind = str(config.get("kind") or "")
    parts = [p for p in (group, version, kind.lower()) if p]
    return os.path.join(home if home is not None else plugin_home(), *parts, kind)


# --------------------------------------------------------------------------- KRM function spec

_SPEC_KEYS = {"deferFailure", "container", "exec"}
_CONTAINER_KEYS = {"image", "network", "mounts", "envs"}
_MOUNT_KEYS = {"type", "src", "dst", "rw"}


def function_spec(config: Dict[str, Any], source: str = "") -> Optional[Dict[str, Any]]:
    """The KRM function spec of a plugin config, or None for a legacy exec plugin.

    kyaml runtimeutil.GetFunctionSpec: the ``config.kubernetes.io/function`` (or legacy
    ``config.k8s.io/function``) annotation, else ``metadata.configFn``, else the
    ``config.kubernetes.io/container`` annotation.  The spec is decoded strictly (unknown fields
    are errors, as ``k8syaml.UnmarshalStrict``).
    """
    ann = _annotations(config)
    raw: Any = None
    where = ""
    for key in FUNCTION_ANNOTATIONS:
        v = ann.get(key)
        if v:
            where = key
            try:
                docs = load_documents(_ann_str(v).encode(), f"{source}: annotation {key}")
            except YamlError as e:
                raise PluginError(f"{describe(config, source)}: {key} unmarshal error: {e}") from None
            raw = docs[0] if docs else {}
            break
    else:
        cfn = _meta(config).get("configFn")
        if cfn is not None:
            raw, where = cfn, "configFn"
        else:
            image = ann.get(CONTAINER_ANNOTATION)
            if image:
                return {"container": {"image": _ann_str(image)}, "exec": {}}
            return None
    if not isinstance(raw, dict):
        raise PluginError(f"{describe(config, source)}: {where} unmarshal error: "
                          f"the function spec must be a mapping")
    if "starlark" in raw:
        raise PluginError(
            f"{describe(config, source)}: Starlark functions are not supported by kzgit "
            f"(nor by kustomize v5, which removed them)",
            tip="run the Starlark program as a container function (container: {image: ...}) "
                "or an exec function (exec: {path: ...})")
    unknown = sorted(set(raw) - _SPEC_KEYS)
    if unknown:
        raise PluginError(f"{describe(config, source)}: {where} unmarshal error: "
                          f"unknown field \"{unknown[0]}\"")
    container = raw.get("container") or {}
    ex = raw.get("exec") or {}
    if not isinstance(container, dict) or not isinstance(ex, dict):
        raise PluginError(f"{describe(config, source)}: {where}: container and exec must be mappings")
    bad = sorted(set(container) - _CONTAINER_KEYS) or sorted(set(ex) - {"path"})
    if bad:
        raise PluginError(f"{describe(config, source)}: {where} unmarshal error: "
                          f"unknown field \"{bad[0]}\"")
    mounts = container.get("mounts") or []
    if not isinstance(mounts, list) or not all(isinstance(m, dict) for m in mounts):
        raise PluginError(f"{describe(config, source)}: {where}: container.mounts must be a list "
                          f"of mappings")
    for m in mounts:
        extra = sorted(set(m) - _MOUNT_KEYS)
        if extra:
            raise PluginError(f"{describe(config, source)}: {where} unmarshal error: "
                              f"unknown field \"{extra[0]}\"")
    envs = container.get("envs") or []
    if not isinstance(envs, list):
        raise PluginError(f"{describe(config, source)}: {where}: container.envs must be a list")
    return {"deferFailure": bool(raw.get("deferFailure")), "container": container, "exec": ex}


def _string_to_mount(s: str) -> Dict[str, Any]:
    """kyaml runtimeutil.StringToStorageMount (``--mount type=bind,src=...,dst=...``)."""
    m: Dict[str, Any] = {}
    for option in s.split(","):
        kv = option.split("=", 1)
        if len(kv) != 2:
            continue
        k, v = kv
        if k == "type":
            m["type"] = v
        elif k in ("src", "source"):
            m["src"] = v
        elif k in ("dst", "target"):
            m["dst"] = v
        elif k == "rw" and v == "true":
            m["rw"] = True
    return m


def _check_mounts(config: Dict[str, Any], source: str, mounts: List[Dict[str, Any]]) -> None:
    """loader.go loadPlugin: mounts must be relative and under the kustomization directory (#4489)."""
    for m in mounts:
        src = str(m.get("src") or "")
        if os.path.isabs(src):
            raise PluginError(
                f"plugin {describe(config, source)} with mount path '{src}' is not permitted; "
                f"mount paths must be relative to the current kustomization directory")
        if os.path.normpath(src).startswith("../") or os.path.normpath(src) == "..":
            raise PluginError(
                f"plugin {describe(config, source)} with mount path '{src}' is not permitted; "
                f"mount paths must be under the current kustomization directory")


def _container_env_flags(spec_envs: List[Any], cli_envs: List[str]) -> List[str]:
    """runfn.mergeContainerEnv + ContainerEnv.GetDockerFlags: ``-e K=V`` sorted, then ``-e K``."""
    values: Dict[str, str] = {"LOG_TO_STDERR": "true", "STRUCTURED_RESULTS": "true"}
    exported: List[str] = []
    for e in [str(x) for x in spec_envs] + list(cli_envs):  # imperative (CLI) wins
        if "=" in e:
            k, v = e.split("=", 1)
            values[k] = v
        elif e not in exported:
            exported.append(e)
    flags: List[str] = []
    for k in sorted(values):
        flags += ["-e", f"{k}={values[k]}"]
    for k in exported:
        flags += ["-e", k]
    return flags


def _function_argv(config: Dict[str, Any], source: str, spec: Dict[str, Any], loader: Loader,
                   options: BuildOptions) -> Tuple[List[str], str]:
    """argv and a label for a KRM function (kyaml runfn.ffp, container.getCommand, exec.Filter)."""
    container = spec["container"]
    image = container.get("image")
    if image:
        mounts = [dict(m) for m in container.get("mounts") or []]
        _check_mounts(config, source, mounts)
        if container.get("network") and not options.network:
            raise PluginError(f"{describe(config, source)}: network required but not enabled "
                              f"with --network")
        docker = shutil.which("docker")
        if docker is None:
            raise PluginError(
                f"container function '{image}' of {describe(config, source)} needs docker, "
                f"which is not on PATH",
                tip="install docker (or a docker-compatible CLI named docker), or rewrite the "
                    "function as an exec function")
        args = [docker, "run", "--rm", "-i", "-a", "STDIN", "-a", "STDOUT", "-a", "STDERR",
                "--network", "host" if container.get("network") else "none",
                "--user", f"{os.getuid()}:{os.getgid()}" if options.as_current_user else "nobody",
                "--security-opt=no-new-privileges"]
        for m in mounts + [_string_to_mount(s) for s in options.mounts]:
            src = str(m.get("src") or "")
            if not os.path.isabs(src):
                src = os.path.join(loader.root, src)
            mode = "" if m.get("rw") else ",readonly"
            args += ["--mount", f"type={m.get('type', '')},source={src},target={m.get('dst', '')}{mode}"]
        args += _container_env_flags(container.get("envs") or [], options.env)
        args.append(str(image))
        return args, f"container function '{image}' ({describe(config, source)})"
    path = spec["exec"].get("path")
    if path:
        path = str(path)
        if "/" not in path:
            found = shutil.which(path)  # Go exec.Command looks bare names up in PATH
            resolved = found or path
        else:
            resolved = os.path.normpath(os.path.join(loader.root, path))
        if not os.path.exists(resolved):
            raise PluginError(f"exec function '{path}' of {describe(config, source)} not found "
                              f"(looked for {resolved})")
        if not os.access(resolved, os.X_OK):
            raise PluginError(f"exec function '{resolved}' of {describe(config, source)} "
                              f"is not executable")
        return [resolved], f"exec function '{resolved}' ({describe(config, source)})"
    raise PluginError(f"{describe(config, source)}: the function spec names neither "
                      f"container.image nor exec.path")


# --------------------------------------------------------------------------- parsing output

def _resources_from_output(data: bytes, label: str) -> Tuple[List[Dict[str, Any]], List[Any]]:
    """Objects (and ResourceList results) from a plugin's stdout.

    Like kyaml's ByteReader (a ResourceList or List with ``items`` is unwrapped, its ``results``
    kept) followed by kustomize's resource factory (``dropBadNodes``: empty documents skipped,
    ``kind`` and ``metadata.name`` required; ``inlineAnyEmbeddedLists``: ``*List`` kinds inlined).
    """
    try:
        docs = load_documents(data, f"output of {label}")
    except YamlError as e:
        raise PluginError(f"{label} printed invalid YAML: {e}") from None
    objs: List[Dict[str, Any]] = []
    results: List[Any] = []
    queue = list(docs)
    while queue:
        d = queue.pop(0)
        if d is None or d == {}:
            continue
        if not isinstance(d, dict):
            raise PluginError(f"{label} printed a document that is not a mapping: {str(d)[:80]!r}")
        kind = d.get("kind")
        if kind in ("ResourceList", "List") and ("items" in d or "functionConfig" in d):
            items = d.get("items") or []
            if not isinstance(items, list):
                raise PluginError(f"{label}: the items of its {kind} are not a list")
            if kind == "ResourceList" and isinstance(d.get("results"), list):
                results.extend(d["results"])
            queue[0:0] = items
            continue
        if isinstance(kind, str) and kind.endswith("List") and isinstance(d.get("items"), list):
            queue[0:0] = d["items"]
            continue
        if not kind:
            raise PluginError(f"{label} printed an object without kind: {str(d)[:120]}")
        md = d.get("metadata")
        if not isinstance(md, dict) or not md.get("name"):
            raise PluginError(f"{label} printed a {kind} without metadata.name")
        objs.append(d)
    return objs, results


def _check_results(results: List[Any], label: str) -> None:
    """Fail when a function reports a result of severity ``error`` (kzgit; kustomize ignores them)."""
    errors = [r for r in results if isinstance(r, dict) and r.get("severity") == "error"]
    if not errors:
        return
    lines = []
    for r in errors:
        line = f"  - [error] {r.get('message', '')}"
        ref = r.get("resourceRef")
        if isinstance(ref, dict):
            ns = ref.get("namespace")
            line += f" ({ref.get('kind', '')}/{(ns + '/') if ns else ''}{ref.get('name', '')}"
            field = r.get("field")
            if isinstance(field, dict) and field.get("path"):
                line += f" field {field['path']}"
            line += ")"
        lines.append(line)
    raise PluginError(f"{label} reported {len(errors)} error result(s):\n" + "\n".join(lines))


def _strip_kio_annotations(obj: Dict[str, Any]) -> None:
    ann = _annotations(obj)
    if any(k in ann for k in KIO_ANNOTATIONS):
        _set_annotations(obj, {k: v for k, v in ann.items() if k not in KIO_ANNOTATIONS})


def _resource_id_yaml(r: Resource) -> str:
    """``yaml.Marshal(r.CurId())`` (sigs.k8s.io/yaml: JSON field order = sorted, omitempty)."""
    rid = r.cur_id()
    fields = {"group": rid.group, "kind": rid.kind, "name": rid.name,
              "namespace": rid.namespace, "version": rid.version}
    return "".join(f"{k}: {v}\n" for k, v in fields.items() if v)


def _with_id_annotations(resmap: ResMap) -> List[Dict[str, Any]]:
    """utils.GetResMapWithIDAnnotation: deep copies annotated with their current id."""
    out = []
    for r in resmap:
        obj = copy.deepcopy(r.obj)
        ann = dict(_annotations(obj))
        ann[ID_ANNOTATION] = _resource_id_yaml(r)
        _set_annotations(obj, ann)
        out.append(obj)
    return out


# --------------------------------------------------------------------------- reconciliation

def _update_resource_options(objs: List[Dict[str, Any]], label: str) -> List[Resource]:
    """utils.UpdateResourceOptions: needs-hash / behavior annotations become resource state."""
    out = []
    for obj in objs:
        ann = dict(_annotations(obj))
        needs_hash = False
        if HASH_ANNOTATION in ann:
            val = _ann_str(ann[HASH_ANNOTATION])
            # strconv.ParseBool
            if val in ("1", "t", "T", "TRUE", "true", "True"):
                needs_hash = True
            elif val in ("0", "f", "F", "FALSE", "false", "False"):
                needs_hash = False
            else:
                raise PluginError(f"{label}: the annotation \"{HASH_ANNOTATION}\" contains an "
                                  f"invalid value (\"{val}\")")
        behavior = _ann_str(ann.pop(BEHAVIOR_ANNOTATION, ""))
        ann.pop(HASH_ANNOTATION, None)
        _set_annotations(obj, ann)
        r = Resource(obj, source=label)
        r.needs_hash = needs_hash
        # types.NewGenerationBehavior: anything else is "unspecified"
        r.behavior = behavior if behavior in ("create", "merge", "replace") else ""
        out.append(r)
    return out


def _update_resmap_values(label: str, objs: List[Dict[str, Any]], resmap: ResMap) -> None:
    """utils.UpdateResMapValues: match the output to the map by *current* id.

    A resource whose id is already in the map is updated in place (its build state, e.g. rename
    history, is kept, as ``ResetRNode``); a new id is appended; ids the plugin did not print are
    removed.  Note that kustomize matches by the id of the *output* resource, so a plugin that
    renames a resource produces a new resource and drops the old one.
    """
    new_keys = set()
    for obj in objs:
        ann = _annotations(obj)
        if ID_ANNOTATION in ann:
            _set_annotations(obj, {k: v for k, v in ann.items() if k != ID_ANNOTATION})
        else:
            _set_annotations(obj, dict(ann))  # SetAnnotations is always called: sorted/cleared
        r = Resource(obj, source=label)
        key = r.cur_id().key()
        if key in new_keys:
            raise PluginError(f"plugin {label} generated duplicate resource: {r.cur_id()}")
        new_keys.add(key)
        old = resmap.get_by_current_id(r.cur_id())
        if old is not None:
            old.obj = obj
        else:
            resmap.append(r)
    for r in list(resmap):
        if r.cur_id().key() not in new_keys:
            resmap.remove(r)


# --------------------------------------------------------------------------- running

def _run_function(config: Dict[str, Any], source: str, spec: Dict[str, Any], loader: Loader,
                  options: BuildOptions, items: Optional[List[Dict[str, Any]]]) -> List[Dict[str, Any]]:
    """Run a KRM function with the ResourceList protocol; return the output objects.

    fnplugin.invokePlugin: the function config gets ``config.kubernetes.io/local-config: "true"``;
    a generator's input is the function config itself.  kio.ByteReader adds index annotations,
    runtimeutil.FunctionFilter.setIds adds id annotations; all are removed from the output.
    """
    argv, label = _function_argv(config, source, spec, loader, options)
    fn_config = copy.deepcopy(config)
    ann = dict(_annotations(fn_config))
    ann[LOCAL_CONFIG_ANNOTATION] = "true"
    _set_annotations(fn_config, ann)
    inputs = copy.deepcopy(items) if items is not None else [copy.deepcopy(fn_config)]
    for i, obj in enumerate(inputs):
        a = dict(_annotations(obj))
        for key in KIO_INDEX_ANNOTATIONS:
            a[key] = str(i)
        a[KIO_MIGRATION_ANNOTATION] = str(i)
        for key in KIO_ID_ANNOTATIONS:
            a[key] = str(i + 1)
        _set_annotations(obj, a)
    rl = {"apiVersion": RESOURCE_LIST_API_VERSION, "kind": "ResourceList",
          "items": inputs, "functionConfig": fn_config}
    stdin = dump_documents([rl]).encode()
    res = run_process(argv, label=label, input=stdin, cwd=loader.root,
                      timeout=_timeout(options), check=False)
    objs, results = _resources_from_output(res.stdout, label) if res.returncode == 0 else ([], [])
    if res.returncode != 0:
        try:
            _, results = _resources_from_output(res.stdout, label)
        except PluginError:
            results = []
        _check_results(results, label)
        from kzgit.proc import failure_message
        raise PluginError(failure_message(label, res))
    _check_results(results, label)
    for obj in objs:
        _strip_kio_annotations(obj)
    return objs


def _legacy_args(config: Dict[str, Any], source: str, loader: Loader) -> List[str]:
    """execplugin.processOptionalArgsFields: ``argsOneLiner`` (shlex) then ``argsFromFile`` lines."""
    args: List[str] = []
    one = config.get("argsOneLiner")
    if one:
        try:
            args += shlex.split(str(one))
        except ValueError:
            pass  # kustomize ignores shlex errors (`p.args, _ = shlex.Split(...)`)
    from_file = config.get("argsFromFile")
    if from_file:
        content = loader.load(str(from_file)).decode("utf-8", errors="replace")
        for line in content.split("\n"):
            line = line.lstrip(" ")
            if line:
                args.append(line)
    return args


def _legacy_plugin(config: Dict[str, Any], source: str) -> str:
    """Path of the legacy exec plugin for ``config`` (loader.go loadExecOrGoPlugin)."""
    path = legacy_plugin_path(config)
    if os.path.exists(path):
        # execplugin.ErrIfNotExecutable: no x bit at all
        if os.path.isdir(path) or (os.stat(path).st_mode & 0o111) == 0:
            raise PluginError(f"unexecutable plugin at: {path} (configured by "
                              f"{describe(config, source)})", tip=f"chmod +x {path}")
        return path
    if os.path.exists(path + ".so"):
        raise PluginError(f"Go plugin '{path}.so' (configured by {describe(config, source)}) "
                          f"is not supported by kzgit", tip=_SO_TIP)
    raise PluginError(f"external plugin '{config.get('kind', '')}' configured by "
                      f"{describe(config, source)} not found: no executable at {path}",
                      tip=f"install the plugin at {path}, or turn the config into a KRM "
                          f"function with a config.kubernetes.io/function annotation")


def _run_legacy(config: Dict[str, Any], source: str, loader: Loader, options: BuildOptions,
                mode: str, stdin: Optional[bytes]) -> Tuple[bytes, str]:
    """execplugin.invokePlugin: argv[1] is a temp file with the config; cwd the kustomization root."""
    path = _legacy_plugin(config, source)
    label = f"plugin {path} ({describe(config, source)})"
    cfg = dump_documents([config])
    args = _legacy_args(config, source, loader)
    env = dict(os.environ)
    # execplugin.getEnv: variables longer than the hard limit are omitted (kustomize logs it)
    if len("KUSTOMIZE_PLUGIN_CONFIG_STRING=" + cfg) <= MAX_ARG_STRING_LENGTH:
        env["KUSTOMIZE_PLUGIN_CONFIG_STRING"] = cfg
    else:
        env.pop("KUSTOMIZE_PLUGIN_CONFIG_STRING", None)
    if len("KUSTOMIZE_PLUGIN_CONFIG_ROOT=" + loader.root) <= MAX_ARG_STRING_LENGTH:
        env["KUSTOMIZE_PLUGIN_CONFIG_ROOT"] = loader.root
    env["KUSTOMIZE_PLUGIN_MODE"] = mode  # the plugin guide's variable; kustomize 5.5 omits it
    fd, cfg_path = tempfile.mkstemp(prefix=TMP_CONFIG_PREFIX)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(cfg)
        cwd = loader.root if os.path.isdir(loader.root) else None
        res = run_process([path, cfg_path, *args], label=label, input=stdin, cwd=cwd, env=env,
                          timeout=_timeout(options))
    finally:
        try:
            os.unlink(cfg_path)
        except OSError:
            pass
    return res.stdout, label


# --------------------------------------------------------------------------- public API

def generate(config: Dict[str, Any], source: str, loader: Loader,
             options: BuildOptions) -> List[Resource]:
    """Run the external generator configured by ``config``; return the generated resources.

    ``kustomize.config.k8s.io/needs-hash`` and ``.../behavior`` annotations are moved into
    :attr:`Resource.needs_hash` and :attr:`Resource.behavior` and removed from the objects.
    """
    _check_enabled(config, source, options)
    spec = function_spec(config, source)
    if spec is not None:
        objs = _run_function(config, source, spec, loader, options, None)
        label = f"function {describe(config, source)}"
    else:
        out, label = _run_legacy(config, source, loader, options, "generate", None)
        objs, _ = _resources_from_output(out, label)
    return _update_resource_options(objs, label)


def transform(config: Dict[str, Any], source: str, loader: Loader, resmap: ResMap,
              options: BuildOptions) -> None:
    """Run the external transformer configured by ``config`` over ``resmap`` (in place)."""
    _check_enabled(config, source, options)
    spec = function_spec(config, source)
    items = _with_id_annotations(resmap)
    if spec is not None:
        objs = _run_function(config, source, spec, loader, options, items)
        # fnplugin names itself "api: <apiVersion>, kind: <Kind>, name: <name>"
        label = (f"api: {config.get('apiVersion', '')}, kind: {config.get('kind', '')}, "
                 f"name: {_meta(config).get('name', '')}")
    else:
        stdin = dump_documents(items).encode() if items else b""
        out, label = _run_legacy(config, source, loader, options, "transform", stdin)
        objs, _ = _resources_from_output(out, label)
    _update_resmap_values(label, objs, resmap)


def validate(config: Dict[str, Any], source: str, loader: Loader, resmap: ResMap,
             options: BuildOptions) -> None:
    """Run an external validator: a transformer that may only add the ``validated-by`` label.

    kusttarget.go runValidators: the map keeps what the validator printed (so a
    ``validated-by`` label reaches the output); any other change is an error.
    """
    before = {r.cur_id().key(): (r.cur_id(), copy.deepcopy(r.obj)) for r in resmap}
    transform(config, source, loader, resmap, options)
    after = {}
    for r in resmap:
        obj = copy.deepcopy(r.obj)
        md = obj.get("metadata")
        if isinstance(md, dict) and isinstance(md.get("labels"), dict) and VALIDATED_BY_LABEL in md["labels"]:
            _set_labels(obj, {k: v for k, v in md["labels"].items() if k != VALIDATED_BY_LABEL})
        after[r.cur_id().key()] = (r.cur_id(), obj)
    who = f"validator {describe(config, source)}"
    for key, (rid, obj) in before.items():
        if key not in after:
            raise PluginError(f"{who} shouldn't modify the resource map: it removed {rid}")
        if after[key][1] != obj:
            raise PluginError(f"{who} shouldn't modify the resource map: it changed {rid}")
    for key, (rid, _) in after.items():
        if key not in before:
            raise PluginError(f"{who} shouldn't modify the resource map: it added {rid}")
