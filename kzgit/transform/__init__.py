"""crane-compatible transform plugins with priorities (``kzgit transform``).

* :mod:`kzgit.transform.crane`: the binary plugin protocol (metadata, request, response);
* :mod:`kzgit.transform.kubernetes`: crane's builtin ``KubernetesPlugin``, run in process;
* :mod:`kzgit.transform.priority`: one operation per path, by plugin order and priorities;
* :mod:`kzgit.transform.runner`: read SOURCE, run the plugins concurrently, write the overlay.
"""
from kzgit.transform.crane import (BuiltinPlugin, CranePlugin, OptionalField, Plugin,
                                   discover_plugins, load_plugin, run_plugin)
from kzgit.transform.kubernetes import KubernetesPlugin
from kzgit.transform.priority import IgnoredOperation, PluginOperation, priority_map, resolve
from kzgit.transform.runner import (TransformResult, builtin_plugins, parse_optional_flags,
                                    plugin_list, read_source, run_transform, skip_plugins,
                                    transform_resources, write_overlay)

__all__ = ["BuiltinPlugin", "CranePlugin", "KubernetesPlugin", "OptionalField", "Plugin",
           "discover_plugins", "load_plugin", "run_plugin", "builtin_plugins", "plugin_list",
           "IgnoredOperation", "PluginOperation", "priority_map", "resolve",
           "TransformResult", "parse_optional_flags", "read_source", "run_transform",
           "skip_plugins", "transform_resources", "write_overlay"]
