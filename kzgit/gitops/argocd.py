"""Argo CD: an ``Application`` rendered as its repo-server renders it.

Sources (argoproj/argo-cd at v3.x, ``master`` of 2026-08):

- ``reposerver/repository/repository.go`` ``GetAppSourceType``: the parameter overrides of
  ``.argocd-source.yaml`` and ``.argocd-source-<app>.yaml`` at the path merged in first
  (``mergeSourceParameters``); then an explicit source type
  (``helm``, ``kustomize``, ``directory``, ``plugin`` blocks; more than one is an error,
  ``ApplicationSource.ExplicitType``), else ``util/app/discovery/discovery.go`` ``AppType``:
  the files directly in the path, in lexical order, a name ending ``Chart.yaml`` making it
  Helm and a kustomization file Kustomize (the later file wins, so a kustomization file
  wins over ``Chart.yaml``), else a directory.
- ``util/kustomize/kustomize.go`` ``Build``: ``kustomize edit`` commands in this order:
  ``set nameprefix``, ``set namesuffix``, ``set image`` (``${ARGOCD_APP_*}`` substituted),
  ``set replicas``, ``add label`` (``--force``, ``--without-selector``,
  ``--include-templates``), ``add annotation`` (``--force``), ``set namespace``; ``patches``
  appended to the file's own; ``add component`` (``ignoreMissingComponents`` drops the absent
  ones first); then ``kustomize build <path> <buildOptions>`` from the repository's top.
  The edits' semantics are kustomize's (kubernetes-sigs/kustomize ``kustomize/v5.8.1``
  ``kustomize/commands/edit/set/setimage.go``: an entry of the same name replaced whole, the
  list sorted by name; ``setreplicas.go`` likewise; ``add/addmetadata.go``: an existing key
  is an error without ``--force``; ``--without-selector`` writes a ``labels`` entry;
  ``add/addcomponent.go``: a path already listed is skipped).
- ``util/settings/settings.go`` ``GetKustomizeSettings`` / ``GetKustomizeBinaryPath``:
  ``kustomize.buildOptions`` (and ``kustomize.buildOptions.<v>``), ``kustomize.version.<v>``
  and ``kustomize.path.<v>`` of ``argocd-cm``; an Application's ``kustomize.version`` must
  name a registered ``<v>`` ("kustomize version ... is not registered").
- ``repository.go`` ``findManifests`` / ``getPotentiallyValidManifests``: a directory
  application reads ``.yaml``, ``.yml`` and ``.json`` files (``directory.recurse`` descends),
  ``exclude`` then ``include`` globs on the path relative to the application's (Argo CD's
  ``util/glob``: gobwas/glob without separators, so ``*`` crosses ``/``), skipping files
  containing ``+argocd:skip-file-rendering``; a JSON file holds one object.
"""
from __future__ import annotations

import posixpath
import re

from kzgit.errors import KzgitError
from kzgit.gitops.model import as_dict, json_type

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List, Optional, Tuple
    from kzgit.gitops.model import App
    from kzgit.loader import FileSystem

KUSTOMIZATION_FILE_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
SKIP_MARKER = b"+argocd:skip-file-rendering"
KUSTOMIZE = "Kustomize"
HELM = "Helm"
DIRECTORY = "Directory"
PLUGIN = "Plugin"


class ArgoError(KzgitError):
    """An Application that does not render; ``field`` is the spec field to point at."""

    def __init__(self, message: str, field: Tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.field = field


# -- argocd-cm ------------------------------------------------------------------------------

class KustomizeSettings:
    """``argocd-cm``'s Kustomize keys."""

    def __init__(self, data: Dict[str, Any], where: str) -> None:
        self.where = where
        self.build_options: Optional[str] = None
        self.versions: Dict[str, str] = {}          # <v> -> the binary's path (or version)
        self.version_options: Dict[str, str] = {}   # <v> -> its own build options
        for k, v in data.items():
            k, v = str(k), str(v)
            if k == "kustomize.buildOptions":
                self.build_options = v
            elif k.startswith("kustomize.buildOptions."):
                self.version_options[k[len("kustomize.buildOptions."):]] = v
            elif k.startswith(("kustomize.version.", "kustomize.path.")):
                name = k.split(".", 2)[2]
                if name in self.versions:
                    raise ArgoError(f"{where}: failed to add kustomize version from {k!r}: "
                                    f"found duplicate kustomize version: {name}")
                self.versions[name] = v


def resolve_version(name: str, settings: Optional[KustomizeSettings]
                    ) -> Tuple[Tuple[int, int, int], str]:
    """The release an Application's ``kustomize.version`` names, through argocd-cm."""
    from kzgit.versions import resolve   # start-up: only versioned Applications
    where = settings.where if settings else "argocd-cm (not in this repository)"
    if settings is None or name not in settings.versions:
        raise ArgoError(f"kustomize version {name} is not registered (no kustomize.version."
                        f"{name} or kustomize.path.{name} in {where})",
                        ("spec", "source", "kustomize", "version"))
    origin = f"{where} kustomize.*.{name}"
    try:
        return resolve(name, origin), origin
    except KzgitError as first:
        m = re.search(r"(\d+)[._](\d+)[._](\d+)", settings.versions[name])
        if m is None:
            raise ArgoError(str(first), ("spec", "source", "kustomize", "version")) from None
        try:
            return resolve(".".join(m.groups()), origin), origin
        except KzgitError as e:
            raise ArgoError(str(e), ("spec", "source", "kustomize", "version")) from None


# -- the source type --------------------------------------------------------------------------

def explicit_type(source: Dict[str, Any]) -> Optional[str]:
    """ApplicationSource.ExplicitType."""
    found = [t for key, t in (("helm", HELM), ("kustomize", KUSTOMIZE),
                              ("directory", DIRECTORY), ("plugin", PLUGIN))
             if source.get(key) is not None]
    if len(found) > 1:
        raise ArgoError("multiple application sources defined", ("spec", "source"))
    return found[0] if found else None


def discovered_type(fs: FileSystem, app_dir: str) -> str:
    """discovery.go AppType: the files directly in the path decide."""
    got = DIRECTORY
    for name in fs.listdir(app_dir):
        p = posixpath.join(app_dir, name)
        if fs.is_dir(p):
            continue
        if name.endswith("Chart.yaml"):
            got = HELM
        if name in KUSTOMIZATION_FILE_NAMES:
            got = KUSTOMIZE
    return got


# -- parameter overrides (.argocd-source.yaml) ---------------------------------------------

def override_files(path: str, app: App) -> List[str]:
    """repository.go mergeSourceParameters: the files at the source's path whose parameters
    override the Application's (what Argo CD Image Updater writes back), in the order merged:
    ``.argocd-source.yaml``, then ``.argocd-source-<AppName>.yaml`` (its instance name)."""
    names = (".argocd-source.yaml", f".argocd-source-{instance_name(app)}.yaml")
    return [posixpath.join(path, n) if path else n for n in names]


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch (evanphx/json-patch MergePatch): a null removes a key."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def merged_source(source: Dict[str, Any], overrides: List[Tuple[str, bytes]]
                  ) -> Dict[str, Any]:
    """mergeSourceParameters: each override file (repo-relative name, bytes) merged into the
    source as a JSON merge patch, keeping only the config management fields: ``chart``,
    ``path``, ``repoURL`` and ``targetRevision`` stay the Application's."""
    from kzgit.yamlio import load_yaml11   # start-up: only sources with override files
    merged: Dict[str, Any] = source
    for rel, data in overrides:
        try:
            patch = load_yaml11(data, rel)
        except KzgitError as e:
            raise ArgoError(f"error while parsing source parameters: {rel}: {e}",
                            ("spec", "source")) from None
        if patch is None:
            continue   # YAMLToJSON gives null: unmarshalled into the source, it changes nothing
        if not isinstance(patch, dict):
            raise ArgoError(f"error while parsing source parameters: {rel}: Invalid JSON Patch",
                            ("spec", "source"))
        merged = merge_patch(merged, patch)
    if merged is source:
        return source
    for k in ("chart", "path", "repoURL", "targetRevision"):
        if k in source:
            merged[k] = source[k]
        else:
            merged.pop(k, None)
    return merged


# -- environment (ARGOCD_APP_*) -----------------------------------------------------------

# the namespace the controller runs in (the install's default), whose Applications are
# named by their name alone (controller/state.go: app.InstanceName(m.namespace))
CONTROLLER_NAMESPACE = "argocd"


def instance_name(app: App) -> str:
    """v1alpha1 Application.InstanceName of the controller's namespace (``argocd``): the
    request's AppName, ``<namespace>_<name>`` for an Application outside that namespace."""
    if not app.namespace or app.namespace == CONTROLLER_NAMESPACE:
        return app.name
    return f"{app.namespace}_{app.name}"


def app_env(app: App, source: Dict[str, Any]) -> Dict[str, str]:
    """repository.go newEnv: the build environment Argo CD gives an Application's source.  The
    revision is the one the source names (the repo-server has the commit it resolves to)."""
    revision = str(source.get("targetRevision") or "HEAD")
    return {"ARGOCD_APP_NAME": instance_name(app), "ARGOCD_APP_NAMESPACE": _dest_namespace(app.obj),
            "ARGOCD_APP_PROJECT_NAME": str((app.obj.get("spec") or {}).get("project") or ""),
            "ARGOCD_APP_REVISION": revision,
            "ARGOCD_APP_REVISION_SHORT": revision[:7],
            "ARGOCD_APP_REVISION_SHORT_8": revision[:8],
            "ARGOCD_APP_SOURCE_PATH": str(source.get("path") or ""),
            "ARGOCD_APP_SOURCE_REPO_URL": str(source.get("repoURL") or ""),
            "ARGOCD_APP_SOURCE_TARGET_REVISION": str(source.get("targetRevision") or "")}


def _dest_namespace(obj: Dict[str, Any]) -> str:
    spec = as_dict(obj.get("spec"))
    dest = as_dict(spec.get("destination"))
    return str(dest.get("namespace") or "")


_SHELL_SPECIAL = "*#$@!?-0123456789"


def expand(text: str, env: Dict[str, str]) -> str:
    """v1alpha1 Env.Envsubst: Go's os.Expand, ``$$`` a dollar, an unknown variable empty."""
    out: List[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c != "$" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "{":
            end = text.find("}", i + 2)
            if end < 0 or end == i + 2:
                # os.Expand: a bad syntax (no closing brace, or ${}) eats the "${"
                i += 2 if end < 0 else 3
                continue
            name = text[i + 2:end]
            i = end + 1
        elif nxt in _SHELL_SPECIAL:
            name = nxt
            i += 2
        else:
            j = i + 1
            while j < n and (text[j] == "_" or text[j].isascii() and text[j].isalnum()):
                j += 1
            if j == i + 1:
                out.append("$")   # "$" before a character that starts no name: kept (os.Expand)
                i += 1
                continue
            name = text[i + 1:j]
            i = j
        out.append("$" if name == "$" else env.get(name, ""))
    return "".join(out)


# -- kustomize edit ---------------------------------------------------------------------------

_IMAGE_FORMATS = """invalid format of image, use one of the following options:
- <image>=<newimage>:<newtag>
- <image>=<newimage>@<digest>
- <image>=<newimage>:<newtag>@<digest>
- <image>=<newimage>
- <image>:<newtag>
- <image>:<newtag>@<digest>
- <image>@<digest>"""


def parse_image(arg: str) -> Dict[str, str]:
    """setimage.go parse: ``[name=]newName[:tag][@digest]``."""
    from kzgit.builtins.images import split_image   # kustomize's image.Split, one port
    key, sep, value = arg.partition("=")
    if not sep:
        key, value = "", arg
    name, tag, digest = split_image(value)
    if name == arg:
        raise ArgoError(f"kustomize edit set image {arg}: {_IMAGE_FORMATS}",
                        ("spec", "source", "kustomize", "images"))
    out = {"name": key or name, "newName": name if key else "", "newTag": tag, "digest": digest}
    return out


# types.Image's fields, in its order (kustomize api/types/image.go)
_IMAGE_FIELDS = ("newName", "tagSuffix", "newTag", "digest")


def _set_images(kus: Dict[str, Any], args: List[str]) -> None:
    """setimage.go RunSetImage: the arguments replace entries of the same name whole; ``*``
    keeps the existing field; an entry no argument names is kept whole (its ``tagSuffix``
    too); the list sorted by name.  The file is read as kustfile.Read reads it:
    FixKustomization appends the deprecated ``imageTags`` to ``images`` first."""
    wanted: Dict[str, Dict[str, str]] = {}
    for arg in args:
        img = parse_image(arg)
        wanted[img["name"]] = img
    legacy = kus.pop("imageTags", None)
    for im in [*(kus.get("images") or []), *(legacy if isinstance(legacy, list) else [])]:
        if not isinstance(im, dict):
            continue
        name = str(im.get("name") or "")
        if name in wanted:
            arg_im = wanted[name]
            for f in ("newName", "newTag", "digest"):
                if arg_im[f] == "*":
                    arg_im[f] = str(im.get(f) or "")
            continue
        wanted[name] = {"name": name, **{f: str(im.get(f) or "") for f in _IMAGE_FIELDS}}
    images = []
    for name in sorted(wanted, key=lambda s: s.encode("utf-8")):
        v = wanted[name]
        entry = {"name": name}
        for f in _IMAGE_FIELDS:
            value = v.get(f, "")
            if value and value != "*":
                entry[f] = value
        images.append(entry)
    kus["images"] = images


def _set_replicas(kus: Dict[str, Any], replicas: List[Any]) -> None:
    wanted: Dict[str, Dict[str, Any]] = {}
    for r in replicas:
        if not isinstance(r, dict) or not isinstance(r.get("name"), str):
            raise ArgoError("kustomize.replicas: each entry needs a name and a count",
                            ("spec", "source", "kustomize", "replicas"))
        count = r.get("count")
        if isinstance(count, str):
            # Replica.GetIntCount: an int or a string holding one (intstr)
            if not re.fullmatch(r"-?\d+", count.strip()):
                raise ArgoError(f"kustomize.replicas: count {count!r} of {r['name']} is not "
                                "an integer", ("spec", "source", "kustomize", "replicas"))
            count = int(count)
        if not isinstance(count, int) or isinstance(count, bool):
            raise ArgoError(f"kustomize.replicas: count of {r['name']} is not an integer",
                            ("spec", "source", "kustomize", "replicas"))
        wanted[r["name"]] = {"name": r["name"], "count": count}
    for rep in kus.get("replicas") or []:
        if isinstance(rep, dict) and rep.get("name") not in wanted:
            wanted[str(rep.get("name"))] = rep
    kus["replicas"] = [wanted[k] for k in sorted(wanted, key=lambda s: s.encode("utf-8"))]


def _pairs(values: Dict[str, Any]) -> Dict[str, str]:
    """util.ConvertSliceToMap of Argo CD's ``name:value`` arguments."""
    out = {}
    for k, v in values.items():
        arg = f"{k}:{v}"
        c = arg.find(":")
        if c == 0:
            raise ArgoError(f"invalid label: '{arg}' (need k:v pair where v may be quoted)")
        value = arg[c + 1:]
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]   # trimQuotes
        out[arg[:c]] = value
    return out


def _add_metadata(kus: Dict[str, Any], kind: str, values: Dict[str, str], force: bool,
                  without_selector: bool = False, include_templates: bool = False) -> None:
    """addmetadata.go: commonLabels / commonAnnotations, or a ``labels`` entry."""
    field = ("spec", "source", "kustomize", "commonLabels" if kind == "label" else
             "commonAnnotations")
    if include_templates and not without_selector:
        raise ArgoError("--without-selector flag must be specified for --include-templates "
                        "to work", field)

    def put(m: Dict[str, Any], k: str, v: str) -> None:
        if k in m and not force:
            raise ArgoError(f"{kind} {k} already in kustomization file. Use --force to "
                            "override.", field)
        m[k] = v

    if kind == "label" and without_selector:
        labels = kus.get("labels")
        if not isinstance(labels, list):
            labels = []
            kus["labels"] = labels
        for k, v in values.items():
            entry = next((e for e in labels if isinstance(e, dict)
                          and bool(e.get("includeSelectors")) is False
                          and bool(e.get("includeTemplates")) is include_templates), None)
            if entry is None:
                entry = {"pairs": {}, "includeSelectors": False}
                if include_templates:
                    entry["includeTemplates"] = True
                labels.append(entry)
            if not isinstance(entry.get("pairs"), dict):
                entry["pairs"] = {}
            put(entry["pairs"], k, v)
        return
    key = "commonLabels" if kind == "label" else "commonAnnotations"
    m = kus.get(key)
    if not isinstance(m, dict):
        m = {}
        kus[key] = m
    for k, v in values.items():
        put(m, k, v)


def _add_components(kus: Dict[str, Any], fs: FileSystem, app_dir: str, paths: List[str]) -> None:
    """addcomponent.go: each path (a glob) must match, else be a loadable root."""
    found: List[str] = []
    for pattern in paths:
        matched = _glob(fs, app_dir, pattern)
        if matched is None:
            raise ArgoError(f"{pattern} has no match: must build at directory: not a valid "
                            "directory", ("spec", "source", "kustomize", "components"))
        found.extend(matched)
    comps = kus.get("components")
    if not isinstance(comps, list):
        comps = []
    for c in found:
        if c not in comps:
            comps.append(c)
    if comps:
        kus["components"] = comps


def _glob(fs: FileSystem, base: str, pattern: str) -> Optional[List[str]]:
    """filepath.Glob relative to ``base`` (literal paths as written when they exist)."""
    from kzgit.gitops.gomatch import BadPattern, match   # start-up
    if not any(ch in pattern for ch in "*?[\\"):
        p = posixpath.normpath(posixpath.join(base, pattern))
        return [pattern] if fs.exists(p) else None
    parts = pattern.split("/")
    results = [""]
    for part in parts:
        nxt = []
        for prefix in results:
            d = posixpath.normpath(posixpath.join(base, prefix)) if prefix else base
            if part in ("", ".", "..") or not any(ch in part for ch in "*?[\\"):
                cand = posixpath.join(prefix, part) if prefix else part
                if fs.exists(posixpath.normpath(posixpath.join(base, cand))):
                    nxt.append(cand)
                continue
            if not fs.is_dir(d):
                continue
            for name in fs.listdir(d):
                try:
                    if match(part, name):
                        nxt.append(posixpath.join(prefix, name) if prefix else name)
                except BadPattern:
                    return None
        results = nxt
    return sorted(results) or None


# v1alpha1 ApplicationSourceKustomize as the Application CRD's schema types it
# (manifests/crds/application-crd.yaml): scalar fields, and the lists and maps of scalars
_KUSTOMIZE_TYPES: Dict[str, str] = {
    "namePrefix": "string", "nameSuffix": "string", "namespace": "string", "version": "string",
    "kubeVersion": "string", "forceCommonLabels": "boolean",
    "forceCommonAnnotations": "boolean", "commonAnnotationsEnvsubst": "boolean",
    "labelWithoutSelector": "boolean", "labelIncludeTemplates": "boolean",
    "ignoreMissingComponents": "boolean", "images": "array", "components": "array",
    "apiVersions": "array", "replicas": "array", "patches": "array",
    "commonLabels": "object", "commonAnnotations": "object"}
_ITEM_TYPES = {"images": "string", "components": "string", "apiVersions": "string",
               "replicas": "object", "patches": "object", "commonLabels": "string",
               "commonAnnotations": "string"}


def check_kustomize(opts: Dict[str, Any]) -> None:
    """The API server's validation of ``spec.source.kustomize`` against the CRD's schema: an
    Application whose fields have another type is refused (never rendered by Argo CD); the
    error in its words ("... in body must be of type array: \"integer\"")."""
    def bad(where: str, want: str, got: Any, field: str) -> ArgoError:
        return ArgoError(f"malformed: spec.source.kustomize.{where} in body must be of type "
                         f'{want}: "{json_type(got)}"', ("spec", "source", "kustomize", field))
    for field, want in _KUSTOMIZE_TYPES.items():
        value = opts.get(field)
        if value is None:
            continue
        if json_type(value) != want:
            raise bad(field, want, value, field)
        item = _ITEM_TYPES.get(field)
        entries = (list(value.items()) if isinstance(value, dict)
                   else list(enumerate(value)) if isinstance(value, list) else [])
        for k, v in entries:
            where = f"{field}.{k}" if isinstance(value, dict) else f"{field}[{k}]"
            if item is not None and json_type(v) != item:
                raise bad(where, item, v, field)
            if field == "replicas":
                if not isinstance(v.get("name"), str):
                    raise bad(f"{where}.name", "string", v.get("name"), field)
                if not isinstance(v.get("count"), (int, str)) or isinstance(v.get("count"), bool):
                    raise ArgoError(f"malformed: spec.source.kustomize.{where}.count in body "
                                    "must be of type integer or string", (
                                        "spec", "source", "kustomize", field))
            if field == "patches":
                for key in ("path", "patch"):
                    if v.get(key) is not None and not isinstance(v[key], str):
                        raise bad(f"{where}.{key}", "string", v[key], field)
                if v.get("target") is not None and not isinstance(v["target"], dict):
                    raise bad(f"{where}.target", "object", v["target"], field)


def edited_kustomization(fs: FileSystem, app_dir: str, opts: Dict[str, Any],
                         env: Dict[str, str], repo_top: str) -> Optional[Tuple[str, bytes]]:
    """(the kustomization file, its text after Argo CD's ``kustomize edit`` commands), or None
    when ``opts`` asks for no edit."""
    from kzgit.yamlio import dump_read_back, load_yaml11   # start-up: only edited Applications
    check_kustomize(opts)
    edits = [k for k in ("namePrefix", "nameSuffix", "images", "replicas", "commonLabels",
                         "commonAnnotations", "namespace", "patches", "components") if opts.get(k)]
    if not edits:
        return None
    kfile = next((posixpath.join(app_dir, n) for n in KUSTOMIZATION_FILE_NAMES
                  if fs.is_file(posixpath.join(app_dir, n))), None)
    if kfile is None:
        if edits == ["patches"]:
            raise ArgoError("kustomization file not found in the path",
                            ("spec", "source", "kustomize", "patches"))
        raise ArgoError("Missing kustomization file 'kustomization.yaml'.",
                        ("spec", "source", "kustomize"))
    raw = load_yaml11(fs.read_bytes(kfile), kfile)
    kus: Dict[str, Any] = dict(raw) if isinstance(raw, dict) else {}
    for field in ("namePrefix", "nameSuffix"):
        if isinstance(opts.get(field), str) and opts[field]:
            kus[field] = opts[field]
    if opts.get("images"):
        _set_images(kus, [expand(str(i), env) for i in opts["images"]])
    if opts.get("replicas"):
        _set_replicas(kus, list(opts["replicas"]))
    if isinstance(opts.get("commonLabels"), dict) and opts["commonLabels"]:
        labels = {k: expand(str(v), env) for k, v in opts["commonLabels"].items()}
        _add_metadata(kus, "label", _pairs(labels), bool(opts.get("forceCommonLabels")),
                      bool(opts.get("labelWithoutSelector")),
                      bool(opts.get("labelIncludeTemplates")))
    if isinstance(opts.get("commonAnnotations"), dict) and opts["commonAnnotations"]:
        ann = opts["commonAnnotations"]
        if opts.get("commonAnnotationsEnvsubst"):
            ann = {k: expand(str(v), env) for k, v in ann.items()}
        _add_metadata(kus, "annotation", _pairs(ann), bool(opts.get("forceCommonAnnotations")))
    if isinstance(opts.get("namespace"), str) and opts["namespace"]:
        kus["namespace"] = opts["namespace"]
    if opts.get("patches"):
        existing = kus.get("patches")
        if existing is not None and not isinstance(existing, list):
            raise ArgoError("expected 'patches' field in kustomization.yaml to be []any",
                            ("spec", "source", "kustomize", "patches"))
        kus["patches"] = list(existing or []) + [dict(p) for p in opts["patches"]]
    if opts.get("components"):
        comps = [str(c) for c in opts["components"]]
        if opts.get("ignoreMissingComponents"):
            comps = [c for c in comps
                     if fs.exists(posixpath.normpath(posixpath.join(app_dir, c)))
                     and _inside(posixpath.normpath(posixpath.join(app_dir, c)), repo_top)]
        if comps:
            _add_components(kus, fs, app_dir, comps)
    return kfile, dump_read_back(kus).encode("utf-8")


def _inside(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


# -- build options ------------------------------------------------------------------------------

#: kustomize build flags an Argo CD buildOptions string may carry, and what kzgit does with each
_VALUE_FLAGS = ("--load-restrictor", "--load_restrictor", "--reorder", "--helm-command",
                "--helm-kube-version", "--helm-api-versions")
_BOOL_FLAGS = ("--enable-helm", "--enable-alpha-plugins", "--enable-exec",
               "--enable-managedby-label", "--helm-debug")


def parse_build_options(text: str, origin: str) -> Dict[str, Any]:
    """``kustomize build`` flags of an Argo CD buildOptions string (``strings.Fields``)."""
    out: Dict[str, Any] = {}
    words = text.split()
    i = 0
    while i < len(words):
        w = words[i]
        flag, eq, value = w.partition("=")
        if flag in _BOOL_FLAGS:
            out[flag] = (value.lower() in ("", "true", "1")) if eq else True
        elif flag in _VALUE_FLAGS:
            if not eq:
                i += 1
                if i >= len(words):
                    raise ArgoError(f"{origin}: flag needs an argument: {flag}")
                value = words[i]
            out[flag.replace("_", "-")] = value
        else:
            raise ArgoError(f"{origin}: kzgit does not know the kustomize build option "
                            f"{w!r}")
        i += 1
    return out


# -- directory applications ----------------------------------------------------------------

def _gobwas(pattern: str) -> "re.Pattern[str]":
    """Argo CD util/glob.Match: gobwas/glob without separators (``*`` crosses ``/``),
    ``{a,b}`` alternatives, ``[...]``/``[!...]`` classes."""
    out: List[str] = []
    i, depth = 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append(".*")
            while i + 1 < len(pattern) and pattern[i + 1] == "*":
                i += 1
        elif c == "?":
            out.append(".")
        elif c == "{":
            out.append("(?:")
            depth += 1
        elif c == "}" and depth:
            out.append(")")
            depth -= 1
        elif c == "," and depth:
            out.append("|")
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:end]
                neg = body[:1] == "!"
                body = body[1:] if neg else body
                out.append("[" + ("^" if neg else "") + body.replace("\\", "\\\\") + "]")
                i = end
        elif c == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def _glob_match(pattern: str, path: str) -> bool:
    try:
        return _gobwas(pattern).fullmatch(path) is not None
    except re.error:
        return False


def _json_object(data: bytes, name: str) -> Optional[Dict[str, Any]]:
    """getObjsFromYAMLOrJSON of a ``.json`` file: one value read by Go's json.Decoder into an
    Unstructured; a value after it (``decoder.More()``) is an error, as is one that decodes
    neither as an object with a kind nor (Argo CD 3.1 and later, "potentially an OCI
    manifest") as an image manifest struct, which any JSON object does: such an object adds
    an empty one, nothing kzgit renders (None)."""
    import json   # start-up: only directory applications with JSON files
    text = data.decode("utf-8", "replace").lstrip("\ufeff")   # utfutil: a BOM is no content
    try:
        value, end = json.JSONDecoder().raw_decode(text, len(text) - len(text.lstrip(" \t\r\n")))
    except ValueError as e:
        raise ArgoError(f'Failed to unmarshal "{name}": {e}') from None
    rest = text[end:].lstrip(" \t\r\n")
    if value is None:
        return None   # null: decoded into the manifest struct, it is an empty object too
    if not isinstance(value, dict):
        go_type = {list: "array", str: "string", bool: "bool"}.get(type(value), "number")
        raise ArgoError(f'Failed to unmarshal "{name}": json: cannot unmarshal {go_type} into '
                        "Go value of type map[string]interface {}")
    if rest and rest[0] not in "]}":
        raise ArgoError(f'Found multiple objects in "{name}". Only single objects are allowed '
                        "in JSON files.")
    if not isinstance(value.get("kind"), str) or not value["kind"]:
        return None
    return value


def _manifest_files(fs: FileSystem, app_dir: str, directory: Dict[str, Any]
                    ) -> List[Tuple[str, str]]:
    """getPotentiallyValidManifests: (path, path relative to the application's) of each file
    a directory application reads, in the walk's order, before the skip marker is looked for."""
    recurse = directory.get("recurse") is True
    include = str(directory.get("include") or "")
    exclude = str(directory.get("exclude") or "")
    files: List[str] = []

    def walk(d: str) -> None:
        for name in fs.listdir(d):
            p = posixpath.join(d, name)
            if fs.is_dir(p):
                if recurse:
                    walk(p)
                continue
            files.append(p)
    walk(app_dir)
    out = []
    for p in files:
        if not re.match(r"^.*\.(yaml|yml|json|jsonnet)$", posixpath.basename(p)):
            continue
        rel = p[len(app_dir) + 1:]
        if exclude and _glob_match(exclude, rel):
            continue
        if include and not _glob_match(include, rel):
            continue
        out.append((p, rel))
    return out


def jsonnet_file(fs: FileSystem, app_dir: str, directory: Dict[str, Any]) -> Optional[str]:
    """The first ``.jsonnet`` file a directory application evaluates (relative to its path),
    or None: Argo CD evaluates them (findManifests, makeJsonnetVM); kzgit does not, so such an
    application is listed as not rendered."""
    for p, rel in _manifest_files(fs, app_dir, directory):
        if rel.endswith(".jsonnet") and SKIP_MARKER not in fs.read_bytes(p):
            return rel
    return None


def directory_objects(fs: FileSystem, app_dir: str, directory: Dict[str, Any]) -> List[Dict[str, Any]]:
    """findManifests: the objects of a plain directory application, in the walk's order."""
    from kzgit.yamlio import load_documents   # start-up: only directory applications
    objs: List[Dict[str, Any]] = []
    for p, rel in _manifest_files(fs, app_dir, directory):
        name = posixpath.basename(p)
        data = fs.read_bytes(p)
        if SKIP_MARKER in data:
            continue
        if name.endswith(".jsonnet"):
            raise ArgoError(f"{rel}: jsonnet is not rendered by kzgit", ("spec", "source"))
        if name.endswith(".json"):
            obj = _json_object(data, name)
            if obj is not None:
                objs.append(obj)
            continue
        try:
            docs = load_documents(data, p)
        except KzgitError as e:
            if b"apiVersion:" in data and b"kind:" in data and b"metadata:" in data:
                raise ArgoError(f'Failed to unmarshal "{name}": {e}') from None
            continue   # "it might be an unrelated YAML file which we will ignore"
        found: List[Dict[str, Any]] = []
        for d in docs:
            if d is None:
                continue   # an empty document ("if u == nil { continue }")
            if not isinstance(d, dict) or not isinstance(d.get("kind"), str) or not d["kind"]:
                # unstructured's decoder: "Object 'Kind' is missing"; a file that does not look
                # like a manifest and yielded nothing before is an unrelated YAML file
                if found or (b"apiVersion:" in data and b"kind:" in data and b"metadata:" in data):
                    raise ArgoError(f'Failed to unmarshal "{name}": failed to unmarshal manifest: '
                                    "Object 'Kind' is missing")
                break
            if d["kind"].endswith("List") and isinstance(d.get("items"), list):
                found.extend(x for x in d["items"] if isinstance(x, dict))
                continue
            found.append(d)
        objs.extend(found)
    return objs


