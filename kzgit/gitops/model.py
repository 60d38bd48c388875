"""The model: an application as the cluster receives it, and the repository it comes from.

An :class:`App` is one Flux ``Kustomization`` or Argo CD ``Application`` (or an
``ApplicationSet`` kzgit did not expand) as delivered: its manifest is the one its parent
renders (a parent's patches applied), or the file's own for an entry point.  Its id
(``flux:<namespace>/<name>``, ``argocd:<namespace>/<name>``, with ``@<directory>`` or
``@<parent id>`` where two would share one) names it in every command.
"""
from __future__ import annotations

import os

from kzgit.config import GitopsPolicy
from kzgit.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, FrozenSet, List, Optional, Set, Tuple
    from kzgit.loader import FileSystem

FLUX = "flux"
ARGOCD = "argocd"

#: apiVersion groups and kinds (kustomize-controller api/v1, argo-cd pkg/apis/application/v1alpha1)
FLUX_KUSTOMIZE_GROUP = "kustomize.toolkit.fluxcd.io"
FLUX_SOURCE_GROUP = "source.toolkit.fluxcd.io"
ARGO_GROUP = "argoproj.io"
FLUX_KINDS = ("Kustomization",)
ARGO_KINDS = ("Application", "ApplicationSet")

#: the fields of a Flux Kustomization's spec that change the objects its path's kustomization
#: renders (``decryption`` aside: it changes only what SOPS encrypted, never an application's
#: manifest, so :mod:`kzgit.gitops.select` asks it alone)
FLUX_TRANSFORMING = ("targetNamespace", "namePrefix", "nameSuffix", "patches", "images",
                     "components", "patchesStrategicMerge", "patchesJson6902", "postBuild",
                     "commonMetadata")


def transforms(spec: Dict[str, Any]) -> bool:
    """Whether a Flux Kustomization's ``spec`` sets one of :data:`FLUX_TRANSFORMING`."""
    return any(spec.get(k) not in (None, "", [], {}) for k in FLUX_TRANSFORMING)


#: renderer values (``kzgit apps``' column)
DIRECTORY = "directory"
NOT_RENDERED = "not rendered"


def group_of(api_version: Any) -> str:
    return api_version.split("/", 1)[0] if isinstance(api_version, str) and "/" in api_version else ""


def app_kind(obj: Any) -> Optional[str]:
    """``"flux"``/``"argocd"`` when ``obj`` is an application kzgit knows, else None."""
    if not isinstance(obj, dict):
        return None
    group, kind = group_of(obj.get("apiVersion")), obj.get("kind")
    if group == FLUX_KUSTOMIZE_GROUP and kind in FLUX_KINDS:
        return FLUX
    if group == ARGO_GROUP and kind in ARGO_KINDS:
        return ARGOCD
    return None


#: ``[gitops]`` of ``.kzgit.toml`` (its keys live with the others in kzgit.config)
Settings = GitopsPolicy


class Repository(Record):
    """The tree applications are read from: its top (the absolute path builds see), its files
    (repo-relative, as git lists them), how to read one, the file system builds read through
    (None: the disk), this repository's normalised URLs and the settings."""

    __slots__ = ("top", "files", "read", "fs", "urls", "settings", "version", "version_origin",
                 "enable_helm", "enable_alpha_plugins", "enable_exec", "label", "_dirs", "_files",
                 "_kdirs", "git_top")

    def __init__(self, top: str, files: List[str], read: Callable[[str], Optional[bytes]],
                 fs: Optional[FileSystem], urls: FrozenSet[str], settings: Settings,
                 version: Tuple[int, int, int], version_origin: str, enable_helm: bool = False,
                 enable_alpha_plugins: bool = False, enable_exec: bool = False,
                 label: str = "", git_top: str = "") -> None:
        self.top = top
        self.files = files
        self.read = read
        self.fs = fs
        self.urls = urls
        self.settings = settings
        #: the Kustomize release applications render as unless their own spec picks one
        self.version = version
        self.version_origin = version_origin
        #: what the repository's kzgit configuration lets builds run (argocd buildOptions may
        #: ask for these; they are honoured only when the configuration enables them too)
        self.enable_helm = enable_helm
        self.enable_alpha_plugins = enable_alpha_plugins
        self.enable_exec = enable_exec
        self.label = label   # "" for the work tree; "BASE", "HEAD" in kzgit diff
        self._dirs: Optional[Set[str]] = None   # its directories (discover._directories)
        self._files: Optional[Set[str]] = None   # its files as a set (discover._file_set)
        self._kdirs: Optional[Set[str]] = None   # discover._kustomization_dirs
        #: the git work tree it comes from (another ref of it is read there); "" none
        self.git_top = git_top


def file_reader(top: str) -> Callable[[str], Optional[bytes]]:
    """A tree's reader: the bytes of a repository-relative file under ``top`` (None: none)."""
    def read(rel: str) -> Optional[bytes]:
        try:
            with open(os.path.join(top, rel), "rb") as f:
                return f.read()
        except OSError:
            return None
    return read


class Doc(Record):
    """One YAML document of a repository file, with the line its object starts on."""

    __slots__ = ("obj", "file", "line", "text")

    def __init__(self, obj: Dict[str, Any], file: str, line: int, text: str) -> None:
        self.obj = obj
        self.file = file
        self.line = line
        self.text = text   # the document's own text (field lines for messages)

    def field_line(self, *path: str) -> int:
        """The line of ``path``'s last key within this document (its first line when absent)."""
        return field_line(self, path)


class App(Record):
    """One application as the cluster receives it."""

    __slots__ = ("controller", "kind", "namespace", "name", "id", "obj", "doc", "parent",
                 "path", "renderer", "reason", "expanded", "appset", "error", "version",
                 "version_origin", "extra")

    def __init__(self, controller: str, obj: Dict[str, Any], doc: Doc,
                 parent: Optional[str] = None) -> None:
        self.controller = controller
        self.obj = obj
        self.kind: str = obj.get("kind", "")
        meta = as_dict(obj.get("metadata"))
        self.name: str = str(meta.get("name") or "")
        self.namespace: str = str(meta.get("namespace") or "")
        self.doc = doc                  # where it is defined (file and line)
        self.parent = parent            # the id of the application that delivers it
        self.id = ""                    # set once every application is known (discover.assign_ids)
        self.path: Optional[str] = None  # the repo-relative directory it renders ("" the top)
        self.renderer = NOT_RENDERED    # "kustomize 5.8.1", "directory", "helm: not rendered" ...
        self.reason: Optional[str] = None   # why it is not rendered
        self.expanded: Optional[bool] = None   # ApplicationSets: whether kzgit expanded it
        self.appset: Optional[str] = None   # the ApplicationSet that generated it
        self.error: Optional[str] = None    # a malformed spec: the finding's message
        self.version: Optional[Tuple[int, int, int]] = None
        self.version_origin = ""
        self.extra: Dict[str, Any] = {}     # per-controller facts (the Flux source, ...)

    def field_line(self, field: Tuple[str, ...]) -> int:
        """The line of the spec field ``field`` (the application's own line without one).  An
        Argo CD Application with ``spec.sources`` is pointed at that list where an error names
        ``spec.source`` (the entry is not known by its index)."""
        if not field or not self.doc.text:
            return self.line
        spec = self.obj.get("spec")
        if field[:2] == ("spec", "source") and isinstance(spec, dict) and "source" not in spec \
                and "sources" in spec:
            field = ("spec", "sources")
        return self.doc.field_line(*field)

    @property
    def base_id(self) -> str:
        return f"{self.controller}:{self.namespace}/{self.name}"

    @property
    def file(self) -> str:
        return self.doc.file

    @property
    def line(self) -> int:
        return self.doc.line

    @property
    def rendered(self) -> bool:
        return self.reason is None and self.error is None and self.path is not None

    def as_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"id": self.id, "kind": self.kind, "path": self.path,
                               "renderer": self.renderer, "file": self.file, "line": self.line}
        if self.parent:
            out["parent"] = self.parent
        if self.appset:
            out["applicationSet"] = self.appset
        if self.expanded is not None:
            out["expanded"] = self.expanded
        if self.reason:
            out["reason"] = self.reason
        if self.error:
            out["error"] = self.error
        return out


def as_dict(value: Any) -> Dict[str, Any]:
    """``value`` when it is a mapping, else an empty one (a manifest's optional object fields)."""
    return value if isinstance(value, dict) else {}


def json_type(v: Any) -> str:
    """The OpenAPI type of a value, as the API server names it in a schema error
    (apiextensions-apiserver's "in body must be of type string: \"integer\"")."""
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object" if isinstance(v, dict) else "null"


def field_line(doc: Doc, path: Tuple[str, ...]) -> int:
    """The line of the key ``path[-1]`` under ``path[:-1]`` in ``doc``'s text (by
    indentation), else of the deepest key found, else the document's first line."""
    lines = doc.text.split("\n")
    best = doc.line
    indent = -1
    i = doc.line - doc.line   # index into the document's own lines
    start_offset = first_line_offset(doc.text)
    i = start_offset
    for key in path:
        found = None
        for j in range(i, len(lines)):
            raw = lines[j]
            stripped = raw.lstrip(" -")
            ind = len(raw) - len(stripped)
            if stripped.startswith((f"{key}:", f'"{key}":')) and ind > indent:
                found = j
                indent = ind
                break
            if stripped and not stripped.startswith("#") and ind <= indent and j > i:
                break
        if found is None:
            return best
        best = doc.line - start_offset + found
        i = found + 1
    return best


def first_line_offset(text: str) -> int:
    """The index of the first line of ``text`` holding content (not blank, comment or ``---``)."""
    for i, line in enumerate(text.split("\n")):
        s = line.strip()
        if s and not s.startswith("#") and not s.startswith("---"):
            return i
    return 0
