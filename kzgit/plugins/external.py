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

Deliberate differences, all listed in docs/kustomize.md: ``--enable-alpha-plugins`` alone enables exec
KRM functions (kubectl kustomize silently skips them, having no ``--enable-exec``); kzgit sets
``KUSTOMIZE_PLUGIN_MODE`` as the kustomize plugin guide documents; every process runs under
:mod:`kzgit.proc` (timeout, process group, output cap); Go ``.so`` plugins are refused
with a clear message; a KRM function's ``results`` of severity ``error`` fail the build.
The three concerns live in :mod:`kzgit.plugins.execplugin`, :mod:`kzgit.plugins.fnplugin` and
:mod:`kzgit.plugins.reconcile`; this module gates and dispatches.
"""
from __future__ import annotations

import copy
import os
from typing import Any, Dict, List, Optional

from kzgit.options import BuildOptions
from kzgit.errors import PluginError
from kzgit.konfig.general import VALIDATED_BY_LABEL
from kzgit.loader import Loader
from kzgit.plugins.common import config_meta, describe, is_builtin, set_labels
from kzgit.plugins.execplugin import legacy_plugin_path, plugin_home, run_legacy
from kzgit.plugins.fnplugin import function_spec, run_function
from kzgit.plugins.groupplugin import find as find_group_plugin
from kzgit.plugins.reconcile import (resources_from_output, update_resmap_values,
                                     update_resource_options, with_id_annotations)
from kzgit.loader import mark_uncacheable
from kzgit.resource import Resource, ResMap
from kzgit.yamlio import dump_documents

__all__ = ["group_plugin", "protocol", "generate", "transform", "validate", "plugin_home",
           "legacy_plugin_path", "function_spec", "is_builtin"]

_ENABLE_TIP = ("pass --enable-alpha-plugins to run it, or set enable-alpha-plugins = true in the "
               "repository's .kzgit.toml (it applies once you grant it: the same key in your "
               "~/.config/kzgit/config.toml, or kzgit trust); only for kustomizations you trust: "
               "plugins run arbitrary programs")


def _check_enabled(config: Dict[str, Any], source: str, options: BuildOptions) -> None:
    # an external plugin's output depends on its binary, the plugin home and what it reads:
    # none of it is content-addressed, so the build is not stored in the render cache
    mark_uncacheable(f"{describe(config, source)} is an external plugin")
    if not options.enable_alpha_plugins:
        # api/types/erronlybuiltinpluginsallowed.go
        raise PluginError(
            f"external plugins disabled; unable to load external plugin '{config.get('kind', '')}' "
            f"configured by {describe(config, source)}", tip=_ENABLE_TIP)


# --------------------------------------------------------------------------- public API

def group_plugin(config: Dict[str, Any], source: str, options: BuildOptions) -> Optional[str]:
    """The executable of the proposal's group protocol (:mod:`kzgit.plugins.groupplugin`) that
    handles ``config``, or None when the shipped protocols do: a KRM function annotation, or a
    shipped-style plugin for its kind, takes precedence over a group executable."""
    _check_enabled(config, source, options)
    if function_spec(config, source) is not None:
        return None
    try:
        legacy = legacy_plugin_path(config)
    except PluginError:
        legacy = ""   # no plugin home at all: only the group protocol can handle it
    if legacy and (os.path.exists(legacy) or os.path.exists(legacy + ".so")):
        return None
    return find_group_plugin(config, source)


def protocol(config: Dict[str, Any], source: str) -> str:
    """Which shipped protocol runs ``config``, for ``-v``."""
    spec = function_spec(config, source)
    if spec is not None:
        path = (spec.get("exec") or {}).get("path")
        image = (spec.get("container") or {}).get("image")
        return f"KRM function (exec {path})" if path else f"KRM function (container {image})"
    try:
        return f"legacy exec plugin {legacy_plugin_path(config)}"
    except PluginError:
        return "legacy exec plugin (no plugin home)"


def generate(config: Dict[str, Any], source: str, loader: Loader,
             options: BuildOptions) -> List[Resource]:
    """Run the external generator configured by ``config``; return the generated resources.

    ``kustomize.config.k8s.io/needs-hash`` and ``.../behavior`` annotations are moved into
    :attr:`Resource.needs_hash` and :attr:`Resource.behavior` and removed from the objects.
    """
    _check_enabled(config, source, options)
    spec = function_spec(config, source)
    if spec is not None:
        objs = run_function(config, source, spec, loader, options, None)
        label = f"function {describe(config, source)}"
    else:
        out, label = run_legacy(config, source, loader, options, "generate", None)
        objs, _ = resources_from_output(out, label)
    return update_resource_options(objs, label)


def transform(config: Dict[str, Any], source: str, loader: Loader, resmap: ResMap,
              options: BuildOptions) -> None:
    """Run the external transformer configured by ``config`` over ``resmap`` (in place)."""
    _check_enabled(config, source, options)
    spec = function_spec(config, source)
    items = with_id_annotations(resmap)
    if spec is not None:
        objs = run_function(config, source, spec, loader, options, items)
        # fnplugin names itself "api: <apiVersion>, kind: <Kind>, name: <name>"
        label = (f"api: {config.get('apiVersion', '')}, kind: {config.get('kind', '')}, "
                 f"name: {config_meta(config).get('name', '')}")
    else:
        stdin = dump_documents(items).encode() if items else b""
        out, label = run_legacy(config, source, loader, options, "transform", stdin)
        objs, _ = resources_from_output(out, label)
    update_resmap_values(label, objs, resmap)


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
            set_labels(obj, {k: v for k, v in md["labels"].items() if k != VALIDATED_BY_LABEL})
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
