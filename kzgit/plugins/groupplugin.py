"""The group-named plugin protocol of the generators-and-transformers proposal.

The sig-cli proposal "Kustomize Generators and Transformers" (@pwittrock, 2019-03-25, status
implementable; the design that introduced ``generators:`` and ``transformers:``) specified a
protocol kustomize never shipped, and organisations built plugins to it:

* one executable per API **group**, ``$XDG_CONFIG_HOME/kustomize/plugins/<group>`` (``plugins``,
  plural; shipped kustomize looks in ``.../kustomize/plugin/<group>/<version>/<kind>/<Kind>``);
* ``<group> generate``: the group's configuration objects ("virtual resources") on stdin, the
  generated resources on stdout; run once per group;
* ``<group> transform``: the group's configuration objects, then **all** non-virtual resources,
  on stdin; the replacement set on stdout.  "All ``generators`` are implicitly invoked as
  transformers";
* exit 127: the subcommand is not supported (a ``transform`` then passes its input through);
  any other non-zero exit fails the build, stderr being the error text;
* "For the initial iteration, transformers cannot add/remove Resources, or change their
  names/namespaces" (Restrictions): enforced here, naming the plugin and the resource;
* the working directory is the kustomization's; files outside its tree are not the plugin's
  (kzgit's sandbox, :mod:`kzgit.sandbox`, confines it to that read set).

Where it sits in a build (the proposal's Phases, per kustomization): targeted ``patches`` apply
to the virtual resources first (phase 3), built-in generators run (4), then plugin generators
(5), then plugin transforms of every generator and transformer config (6), then the built-in
transformers including ``patches`` (7).  The pipeline (:mod:`kzgit.builder.pipeline`) calls the
functions below at those points; :mod:`kzgit.plugins.builtin` decides which configs are ours.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

from kzgit import sandbox
from kzgit.options import BuildOptions
from kzgit.errors import PluginError
from kzgit.loader import Loader
from kzgit.plugins.common import describe, plugin_timeout
from kzgit.plugins.reconcile import resources_from_output, update_resource_options
from kzgit.resource import Resource, ResMap, split_api_version
from kzgit.yamlio import dump_documents

__all__ = ["UNSUPPORTED", "plugins_dir", "group_of", "group_plugin_path", "find", "generate",
           "transform"]

#: "If executed with an unrecognized subcommand, plugins should exit 127 signalling to
#: kustomize that the operation is not supported" (the proposal's plugin guidelines).
UNSUPPORTED = 127


def plugins_dir() -> str:
    """``$XDG_CONFIG_HOME/kustomize/plugins``, ``~/.config/kustomize/plugins`` without it."""
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(
        os.environ.get("HOME") or os.path.expanduser("~"), ".config")
    return os.path.join(xdg, "kustomize", "plugins")


def group_of(config: Dict[str, Any]) -> str:
    api = config.get("apiVersion")
    return split_api_version(api if isinstance(api, str) else "")[0]


def group_plugin_path(config: Dict[str, Any]) -> Optional[str]:
    """Where the group's executable would be; None for the core group (it has no name)."""
    group = group_of(config)
    if not group or group in (".", "..") or "/" in group:
        return None
    return os.path.join(plugins_dir(), group)


def find(config: Dict[str, Any], source: str) -> Optional[str]:
    """The group executable that handles ``config``, or None when there is none."""
    path = group_plugin_path(config)
    if path is None or not os.path.lexists(path):
        return None
    if os.path.isdir(path) or not os.access(path, os.X_OK):
        raise PluginError(f"unexecutable group plugin at: {path} (configured by "
                          f"{describe(config, source)})", tip=f"chmod +x {path}")
    return path


def _label(path: str, sub: str) -> str:
    return f"group plugin {os.path.basename(path)} ({path} {sub})"


def _run(path: str, sub: str, stdin: bytes, loader: Loader,
         options: BuildOptions) -> Tuple[Optional[bytes], str]:
    """Run ``<path> <sub>`` in the kustomization's directory: its stdout, or None on exit 127."""
    label = _label(path, sub)
    cwd = loader.root if os.path.isdir(loader.root) else None
    res = sandbox.run([path, sub], options=options, label=label, root=loader.root, input=stdin,
                      cwd=cwd, env=None, timeout=plugin_timeout(options),
                      check=False)
    if res.returncode == UNSUPPORTED:
        return None, label
    if res.returncode != 0:
        text = res.stderr.decode("utf-8", errors="replace").strip()
        raise PluginError(f"{label} exited with code {res.returncode}"
                          + (f": {text}" if text else ""), tip=res.hint)
    return res.stdout, label


def generate(path: str, configs: List[Dict[str, Any]], loader: Loader,
             options: BuildOptions) -> Tuple[Optional[List[Resource]], str]:
    """``<group> generate`` with the group's configs; None when the plugin does not generate."""
    out, label = _run(path, "generate", dump_documents(configs).encode(), loader, options)
    if out is None:
        return None, label
    objs, _ = resources_from_output(out, label)
    return update_resource_options(objs, label), label


def transform(path: str, configs: List[Dict[str, Any]], resmap: ResMap, loader: Loader,
              options: BuildOptions, source: str) -> Tuple[bool, str]:
    """``<group> transform`` over every resource of ``resmap`` (in place); False on exit 127.

    The output replaces the resources' contents; adding, removing or renaming (name or
    namespace) a resource is an error naming the plugin and the resource.
    """
    stdin = dump_documents([*configs, *(r.obj for r in resmap)]).encode()
    out, label = _run(path, "transform", stdin, loader, options)
    if out is None:
        return False, label
    objs, _ = resources_from_output(out, label)
    who = f"{label}, configured by {', '.join(describe(c, source) for c in configs)},"
    rule = "a transformer may not add or remove resources or change their names or namespaces"
    before: Dict[Any, Resource] = {}
    for r in resmap:
        before[r.cur_id().key()] = r
    after: Dict[Any, Dict[str, Any]] = {}
    for obj in objs:
        rid = Resource(obj).cur_id()
        if rid.key() in after:
            raise PluginError(f"{who} printed {rid} twice: {rule}")
        after[rid.key()] = obj
    added = [Resource(o).cur_id() for k, o in after.items() if k not in before]
    removed = [r.cur_id() for k, r in before.items() if k not in after]
    if added and removed and len(added) == len(removed):
        raise PluginError(f"{who} changed the name or namespace of {removed[0]} (it printed "
                          f"{added[0]} instead): {rule}")
    if added:
        raise PluginError(f"{who} added {added[0]}: {rule}")
    if removed:
        raise PluginError(f"{who} removed {removed[0]}: {rule}")
    for key, r in before.items():
        r.obj = after[key]
    resmap.invalidate()
    return True, label
