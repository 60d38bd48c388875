"""crane's binary transform-plugin protocol (konveyor/crane-lib ``transform/``).

A plugin is an executable.  Sent ``{}`` on stdin it prints its metadata
(``transform.PluginMetadata``: ``name``, ``version``, ``requestVersion``, ``responseVersion``,
``optionalFields``); sent a resource as JSON with an ``extras`` map of optional flags
(``transform.PluginRequest``; crane-lib ``binary-plugin/binary_plugin.go`` binaryRunner.Run) it
prints ``{"version": "v1", "isWhiteOut": bool, "patches": [RFC 6902 operations]}``
(``transform.PluginResponse``).

kzgit runs every plugin through :func:`kzgit.proc.run_process` (timeout, own process
group, output cap).  Differences from crane, on purpose: only the executable regular files
directly in the plugin directory are plugins, in file-name order (crane walks sub-directories);
a plugin's stderr is not an error on its own
(crane's NewBinaryPlugin fails the metadata call on any stderr output); a response whose
``version`` is neither empty nor ``v1`` is rejected (crane does not check it).

crane also has plugins compiled into it (its ``KubernetesPlugin``); kzgit's run in process as
subclasses of :class:`BuiltinPlugin` (see :mod:`kzgit.crane.kubernetes`), and
:func:`run_plugin` runs either kind.
"""
from __future__ import annotations

import abc
import dataclasses
import json
import os
import stat
from typing import Any, ClassVar, Dict, List, Optional, Tuple, Union

from kzgit.errors import PluginError
from kzgit.proc import Result, run_process

__all__ = ["CranePlugin", "BuiltinPlugin", "Plugin", "PluginResponse", "OptionalField",
           "discover_plugins", "load_plugin", "run_plugin", "PROTOCOL_VERSION", "OPS"]

#: crane-lib transform/plugin.go: RequestVersion = ResponseVersion = V1
PROTOCOL_VERSION = "v1"
#: crane-lib binary_plugin.go MetadataRequest
METADATA_REQUEST = b"{}"
#: RFC 6902 operations and the members each needs besides ``op`` and ``path``.
OPS: Dict[str, Tuple[str, ...]] = {"add": ("value",), "remove": (), "replace": ("value",),
                         "move": ("from",), "copy": ("from",), "test": ("value",)}


@dataclasses.dataclass(frozen=True)
class OptionalField:
    """crane-lib ``transform.OptionalFields``: a flag a plugin reads from ``extras``."""

    flag_name: str
    help: str = ""
    example: str = ""


@dataclasses.dataclass
class CranePlugin:
    """One executable plugin and the metadata it reported."""

    path: str
    file_name: str
    metadata_name: str
    version: str
    request_versions: List[str]
    response_versions: List[str]
    optional_fields: List[OptionalField]

    @property
    def name(self) -> str:
        """The name used in ``--plugin-priorities``: the metadata name, else the file name."""
        return self.metadata_name or self.file_name

    @property
    def label(self) -> str:
        return f"crane plugin '{self.name}' ({self.path})"


@dataclasses.dataclass
class PluginResponse:
    """A validated ``transform.PluginResponse``."""

    is_whiteout: bool
    patches: List[Dict[str, Any]]


class BuiltinPlugin(abc.ABC):
    """A plugin that runs inside kzgit, as crane's compiled-in ones run inside crane.

    It has the attributes of :class:`CranePlugin` that the runner and ``--list-plugins`` read;
    :meth:`respond` answers one request.  It is called from several threads at once: it must
    not keep state between calls nor change ``obj``.
    """

    metadata_name: ClassVar[str]
    version: ClassVar[str]
    optional_fields: ClassVar[List[OptionalField]]
    request_versions: ClassVar[List[str]] = [PROTOCOL_VERSION]
    response_versions: ClassVar[List[str]] = [PROTOCOL_VERSION]
    path: ClassVar[str] = "(builtin)"

    @property
    def name(self) -> str:
        return self.metadata_name

    @property
    def label(self) -> str:
        return f"builtin crane plugin '{self.name}'"

    @abc.abstractmethod
    def respond(self, obj: Dict[str, Any], extras: Dict[str, str]) -> "PluginResponse":
        """The plugin's answer for ``obj``; raises :class:`PluginError` (without a label)."""


#: what the runner runs: an executable or a builtin
Plugin = Union[CranePlugin, BuiltinPlugin]


def _is_executable_file(path: str) -> bool:
    try:
        st = os.stat(path)
    except OSError:
        return False
    # crane internal/plugin IsExecAny: any x bit on a regular file
    return stat.S_ISREG(st.st_mode) and bool(st.st_mode & 0o111)


def _json_output(data: bytes, label: str, what: str) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        shown = data.decode("utf-8", errors="replace").strip()
        if len(shown) > 200:
            shown = shown[:200] + "..."
        raise PluginError(f"{label}: unable to decode the {what} it printed as JSON ({e}): "
                          f"{shown!r}") from None


def _versions(v: Any, label: str, field: str) -> List[str]:
    if v is None:
        return []
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise PluginError(f"{label}: metadata field '{field}' must be a list of strings")
    return list(v)


def _run_plugin_process(path: str, label: str, stdin: bytes, timeout: Optional[float]) -> Result:
    """A binary plugin with the plugin environment (kzgit.sandbox.plugin_environment: the
    allow-list, ``allow-env`` of the user's ``[sandbox]``, a fresh HOME), never kzgit's own: a
    token in the environment must not reach a plugin that came with the resources."""
    import shutil   # start-up: only a binary plugin
    import tempfile
    from kzgit.config import user_config
    from kzgit.sandbox import plugin_environment
    home = tempfile.mkdtemp(prefix="kzgit-plugin-")
    try:
        return run_process([path], label=label, input=stdin, timeout=timeout,
                           env=plugin_environment(None, user_config().sandbox.allow_env, home))
    finally:
        shutil.rmtree(home, ignore_errors=True)


def load_plugin(path: str, timeout: Optional[float] = 60.0) -> CranePlugin:
    """Ask the plugin at ``path`` for its metadata and check the protocol versions."""
    file_name = os.path.basename(path)
    label = f"crane plugin {path}"
    res = _run_plugin_process(path, label, METADATA_REQUEST, timeout)
    md = _json_output(res.stdout, label, "metadata")
    if not isinstance(md, dict):
        raise PluginError(f"{label}: its metadata must be a JSON object")
    name = md.get("name") or ""
    version = md.get("version") or ""
    if not isinstance(name, str) or not isinstance(version, str):
        raise PluginError(f"{label}: metadata 'name' and 'version' must be strings")
    req = _versions(md.get("requestVersion"), label, "requestVersion")
    resp = _versions(md.get("responseVersion"), label, "responseVersion")
    if PROTOCOL_VERSION not in req or PROTOCOL_VERSION not in resp:
        # crane-lib binary_plugin.go NewBinaryPlugin
        raise PluginError(
            f"{label}: invalid versions supported by plugin: requestVersion {req}, "
            f"responseVersion {resp}; kzgit speaks {PROTOCOL_VERSION}")
    fields = []
    raw_fields = md.get("optionalFields") or []
    if not isinstance(raw_fields, list):
        raise PluginError(f"{label}: metadata 'optionalFields' must be a list")
    for f in raw_fields:
        if not isinstance(f, dict) or not isinstance(f.get("flagName"), str):
            raise PluginError(f"{label}: every optionalFields entry needs a string flagName")
        fields.append(OptionalField(f["flagName"], str(f.get("help") or ""),
                                    str(f.get("example") or "")))
    return CranePlugin(path, file_name, name, version, req, resp, fields)


def discover_plugins(plugin_dir: str, timeout: Optional[float] = 60.0) -> List[CranePlugin]:
    """The plugins of ``plugin_dir``: its executable regular files, sorted by file name."""
    try:
        names = sorted(os.listdir(plugin_dir))
    except FileNotFoundError:
        raise PluginError(f"plugin directory '{plugin_dir}' does not exist") from None
    except NotADirectoryError:
        raise PluginError(f"plugin directory '{plugin_dir}' is not a directory") from None
    paths = [os.path.join(plugin_dir, n) for n in names]
    return [load_plugin(p, timeout) for p in paths if _is_executable_file(p)]


def _check_op(op: Any, label: str) -> Dict[str, Any]:
    if not isinstance(op, dict):
        raise PluginError(f"{label}: a patch operation is not a JSON object: {op!r}")
    kind = op.get("op")
    if kind not in OPS:
        raise PluginError(f"{label}: unknown patch operation {kind!r} in {json.dumps(op)}")
    if not isinstance(op.get("path"), str):
        raise PluginError(f"{label}: patch operation without a string path: {json.dumps(op)}")
    for member in OPS[kind]:
        if member not in op:
            raise PluginError(f"{label}: '{kind}' operation without '{member}': {json.dumps(op)}")
    if "from" in OPS[kind] and not isinstance(op["from"], str):
        raise PluginError(f"{label}: 'from' must be a string: {json.dumps(op)}")
    return op


def run_plugin(plugin: Plugin, obj: Dict[str, Any], extras: Dict[str, str],
               timeout: Optional[float] = 60.0, resource: str = "") -> PluginResponse:
    """Send one resource to ``plugin`` and validate its answer."""
    label = plugin.label + (f" on {resource}" if resource else "")
    if isinstance(plugin, BuiltinPlugin):
        try:
            answer = plugin.respond(obj, dict(extras))
        except PluginError as e:
            raise PluginError(f"{label}: {e}") from None
        return PluginResponse(answer.is_whiteout, [_check_op(op, label) for op in answer.patches])
    request = dict(obj)
    request["extras"] = dict(extras)  # binaryRunner.Run: objMap["extras"] = request.Extras
    res = _run_plugin_process(plugin.path, label, json.dumps(request).encode(), timeout)
    data = _json_output(res.stdout, label, "response")
    if not isinstance(data, dict):
        raise PluginError(f"{label}: its response must be a JSON object")
    version = data.get("version") or ""
    if version not in ("", PROTOCOL_VERSION):
        raise PluginError(f"{label}: response version {version!r} is not {PROTOCOL_VERSION!r}")
    whiteout = data.get("isWhiteOut", False)
    if not isinstance(whiteout, bool):
        raise PluginError(f"{label}: 'isWhiteOut' must be a boolean")
    patches = data.get("patches") or []
    if not isinstance(patches, list):
        raise PluginError(f"{label}: 'patches' must be a list of JSON patch operations")
    return PluginResponse(whiteout, [_check_op(op, label) for op in patches])
