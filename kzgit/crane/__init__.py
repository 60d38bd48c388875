"""crane-compatible transform plugins with priorities (``kzgit transform``).

* :mod:`kzgit.crane.protocol`: the binary plugin protocol (metadata, request, response);
* :mod:`kzgit.crane.kubernetes`: crane's builtin ``KubernetesPlugin``, run in process;
* :mod:`kzgit.crane.priority`: one operation per path, by plugin order and priorities;
* :mod:`kzgit.crane.runner`: read SOURCE, run the plugins concurrently, write the overlay.
"""
from kzgit.crane.protocol import (BuiltinPlugin, CranePlugin, OptionalField, Plugin,
                                   discover_plugins, load_plugin, run_plugin)
from kzgit.crane.kubernetes import KubernetesPlugin
from kzgit.crane.priority import IgnoredOperation, PluginOperation, priority_map, resolve
from kzgit.crane.runner import (TransformResult, builtin_plugins, parse_optional_flags,
                                    plugin_list, read_source, run_transform, skip_plugins,
                                    transform_resources, write_overlay)

__all__ = ["BuiltinPlugin", "CranePlugin", "KubernetesPlugin", "OptionalField", "Plugin",
           "discover_plugins", "load_plugin", "run_plugin", "builtin_plugins", "plugin_list",
           "IgnoredOperation", "PluginOperation", "priority_map", "resolve",
           "TransformResult", "parse_optional_flags", "read_source", "run_transform",
           "skip_plugins", "transform_resources", "write_overlay"]
