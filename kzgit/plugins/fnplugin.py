"""KRM functions: a container or an executable run with the ResourceList protocol (kustomize
api/internal/plugins/fnplugin/fnplugin.go, kyaml/runfn/runfn.go,
kyaml/fn/runtime/{runtimeutil,exec,container}).

Deliberate differences: ``--enable-alpha-plugins`` alone enables exec KRM functions (kubectl
kustomize silently skips them, having no ``--enable-exec``); a function's ``results`` of
severity ``error`` fail the build.
"""
from __future__ import annotations

import copy
import os
import shutil
from typing import Any, Dict, List, Optional, Tuple

from kzgit import sandbox
from kzgit.options import BuildOptions
from kzgit.errors import PluginError, YamlError
from kzgit.konfig.general import CONTAINER_ANNOTATION, FUNCTION_ANNOTATIONS, LOCAL_CONFIG_ANNOTATION
from kzgit.loader import Loader
from kzgit.plugins.common import (ann_str, annotations_of, config_meta, describe, plugin_timeout,
                                  set_annotations)
from kzgit.proc import failure_message, run_process
from kzgit.plugins.reconcile import resources_from_output
from kzgit.versions import V5_7, V5_8
from kzgit.yamlio import dump_documents, load_documents

__all__ = ["function_spec", "run_function"]

# kyaml/kio/byteio_reader.go
RESOURCE_LIST_API_VERSION = "config.kubernetes.io/v1"

# kyaml/kio/kioutil/kioutil.go: annotations the function pipeline adds; stripped from output
# (kustomize strips them from the final output in Resource.RemoveBuildAnnotations).
KIO_INDEX_ANNOTATIONS = ("internal.config.kubernetes.io/index", "config.kubernetes.io/index")
KIO_ID_ANNOTATIONS = ("internal.config.kubernetes.io/id", "config.k8s.io/id")
KIO_PATH_ANNOTATIONS = ("internal.config.kubernetes.io/path", "config.kubernetes.io/path")
# kyaml/kio/kio.go PreprocessResourcesForInternalAnnotationMigration marks every item with it
KIO_MIGRATION_ANNOTATION = "internal.config.kubernetes.io/annotations-migration-resource-id"
KIO_ANNOTATIONS = KIO_INDEX_ANNOTATIONS + KIO_ID_ANNOTATIONS + KIO_PATH_ANNOTATIONS + (
    "internal.config.kubernetes.io/seqindent", KIO_MIGRATION_ANNOTATION)

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
    ann = annotations_of(config)
    raw: Any = None
    where = ""
    for key in FUNCTION_ANNOTATIONS:
        v = ann.get(key)
        if v:
            where = key
            try:
                docs = load_documents(ann_str(v).encode(), f"{source}: annotation {key}")
            except YamlError as e:
                raise PluginError(f"{describe(config, source)}: {key} unmarshal error: {e}") from None
            raw = docs[0] if docs else {}
            break
    else:
        cfn = config_meta(config).get("configFn")
        if cfn is not None:
            raw, where = cfn, "configFn"
        else:
            image = ann.get(CONTAINER_ANNOTATION)
            if image:
                return {"container": {"image": ann_str(image)}, "exec": {}}
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
    bad = sorted(set(container) - _CONTAINER_KEYS) or sorted(set(ex) - {"path", "args", "envs"})
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
    return {"deferFailure": bool(raw.get("deferFailure")), "container": container, "exec": ex,
            "where": where}


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


def _check_mounts(config: Dict[str, Any], source: str, mounts: List[Dict[str, Any]],
                  version: Tuple[int, int, int]) -> None:
    """loader.go loadPlugin: mounts must be relative and under the kustomization directory (#4489).

    Before 5.8 the test is ``HasPrefix(filepath.Clean(src), "../")``, which lets ``..`` itself
    through; from 5.8 it is ``HasPrefix(..., "..")``, which also refuses a name starting with
    two dots (kustomize e115ba624).  kzgit's sandbox then applies its own rule (check_mount)."""
    for m in mounts:
        src = str(m.get("src") or "")
        if os.path.isabs(src):
            raise PluginError(
                f"plugin {describe(config, source)} with mount path '{src}' is not permitted; "
                f"mount paths must be relative to the current kustomization directory")
        if os.path.normpath(src).startswith(".." if version >= V5_8 else "../"):
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
        _check_mounts(config, source, mounts, options.kustomize_version)
        if container.get("network") and not options.network:
            raise PluginError(f"{describe(config, source)}: network required but not enabled "
                              f"with --network")
        envs = [str(e) for e in container.get("envs") or []]
        # "-e NAME" hands docker the user's value of NAME: only a granted one
        sandbox.check_env_names([e for e in envs if "=" not in e], options,
                                f"container function '{image}' ({describe(config, source)}): "
                                "container.envs")
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
            sandbox.check_mount(src, loader.root, options.sandbox, bool(m.get("rw")),
                                lambda: f"container function '{image}' ({describe(config, source)})")
            mode = "" if m.get("rw") else ",readonly"
            args += ["--mount", f"type={m.get('type', '')},source={src},target={m.get('dst', '')}{mode}"]
        args += _container_env_flags(envs, options.env)
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
        return [resolved, *_exec_args(config, source, spec, options)], \
            f"exec function '{resolved}' ({describe(config, source)})"
    raise PluginError(f"{describe(config, source)}: the function spec names neither "
                      f"container.image nor exec.path")


def _exec_args(config: Dict[str, Any], source: str, spec: Dict[str, Any],
               options: BuildOptions) -> List[str]:
    """``exec.args`` (5.7: kyaml ExecSpec Args, kustomize cc7a71c28); before 5.7 the spec has
    only ``path`` and a strict decode refuses the rest."""
    ex = spec["exec"]
    if options.kustomize_version < V5_7:
        extra = sorted(set(ex) - {"path"})
        if extra:
            raise PluginError(f"{describe(config, source)}: {spec.get('where', 'function spec')} "
                              f"unmarshal error: unknown field \"{extra[0]}\"",
                              tip="exec.args and exec.envs need Kustomize 5.7 or later")
        return []
    args = ex.get("args") or []
    if not isinstance(args, list):
        raise PluginError(f"{describe(config, source)}: exec.args must be a list of strings")
    return [ann_str(a) for a in args]


def exec_env(spec: Dict[str, Any], options: BuildOptions, where: str = "") -> Dict[str, str]:
    """What an exec function from 5.7 gets on top of the plugin environment
    (:func:`kzgit.sandbox.plugin_environment`), kyaml runfn mergeExecEnv: ``exec.envs`` and
    ``--env`` entries of exactly one ``=`` (``KEY=VALUE``; any other form is dropped, as
    kustomize's Split does), the flag winning; nothing before 5.7.

    kustomize passes its whole environment, so an ``exec.envs`` entry ``NAME`` (no value) is
    how a function says it reads ``NAME`` of the user's: the repository wrote it, so it
    reaches the function only when the user grants it, and is refused otherwise
    (:func:`kzgit.sandbox.check_env_names`)."""
    if options.kustomize_version < V5_7:
        return {}
    entries = [ann_str(e) for e in spec["exec"].get("envs") or []]
    sandbox.check_env_names([e for e in entries if "=" not in e], options, f"{where}: exec.envs")
    merged: Dict[str, str] = {}
    for entry in [*entries, *options.env]:
        parts = ann_str(entry).split("=")
        if len(parts) == 2:
            merged[parts[0]] = parts[1]
        elif len(parts) == 1 and parts[0] in os.environ:
            # NAME, granted (checked above, or the user's own -e): the user's value, which
            # kustomize's function has through its whole environment
            merged[parts[0]] = os.environ[parts[0]]
    return merged


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
    ann = annotations_of(obj)
    if any(k in ann for k in KIO_ANNOTATIONS):
        set_annotations(obj, {k: v for k, v in ann.items() if k not in KIO_ANNOTATIONS})


def run_function(config: Dict[str, Any], source: str, spec: Dict[str, Any], loader: Loader,
                  options: BuildOptions, items: Optional[List[Dict[str, Any]]]) -> List[Dict[str, Any]]:
    """Run a KRM function with the ResourceList protocol; return the output objects.

    fnplugin.invokePlugin: the function config gets ``config.kubernetes.io/local-config: "true"``;
    a generator's input is the function config itself.  kio.ByteReader adds index annotations,
    runtimeutil.FunctionFilter.setIds adds id annotations; all are removed from the output.
    """
    argv, label = _function_argv(config, source, spec, loader, options)
    fn_config = copy.deepcopy(config)
    ann = dict(annotations_of(fn_config))
    ann[LOCAL_CONFIG_ANNOTATION] = "true"
    set_annotations(fn_config, ann)
    inputs = copy.deepcopy(items) if items is not None else [copy.deepcopy(fn_config)]
    for i, obj in enumerate(inputs):
        a = dict(annotations_of(obj))
        for key in KIO_INDEX_ANNOTATIONS:
            a[key] = str(i)
        a[KIO_MIGRATION_ANNOTATION] = str(i)
        for key in KIO_ID_ANNOTATIONS:
            a[key] = str(i + 1)
        set_annotations(obj, a)
    rl = {"apiVersion": RESOURCE_LIST_API_VERSION, "kind": "ResourceList",
          "items": inputs, "functionConfig": fn_config}
    stdin = dump_documents([rl]).encode()
    if spec["container"].get("image"):   # docker isolates the container itself
        res = run_process(argv, label=label, input=stdin, cwd=loader.root,
                          timeout=plugin_timeout(options), check=False)
    else:
        res = sandbox.run(argv, options=options, label=label, root=loader.root, input=stdin,
                          cwd=loader.root, env=exec_env(spec, options, label),
                          timeout=plugin_timeout(options), check=False)
    objs, results = resources_from_output(res.stdout, label) if res.returncode == 0 else ([], [])
    if res.returncode != 0:
        try:
            _, results = resources_from_output(res.stdout, label)
        except PluginError:
            results = []
        _check_results(results, label)
        raise PluginError(failure_message(label, res), tip=res.hint)
    _check_results(results, label)
    for obj in objs:
        _strip_kio_annotations(obj)
    return objs
