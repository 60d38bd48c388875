"""Flux: a ``Kustomization`` rendered as the kustomize-controller renders it.

Sources, all at the tags named:

- fluxcd/kustomize-controller ``internal/controller/kustomization_controller.go`` (v1.9.x):
  ``reconcile`` joins ``spec.path`` to the artifact (``securejoin``: ``..`` cannot leave it)
  and fails with "kustomization path not found" when it is absent; ``generate`` then
  ``build`` (``SecureBuild``: load restrictions off, nothing outside the artifact, no
  plugins); post-build substitution of each resource; ``commonMetadata`` at apply.
- fluxcd/pkg ``kustomize/kustomize_generator.go`` (``kustomize/v1.39.0``) ``GenerateManifest``:
  a directory without a kustomization file gets one listing its manifests
  (``scanManifests``: the walk in lexical order, every ``.yaml``/``.yml`` that decodes as
  Kubernetes YAML, a subdirectory holding a kustomization file as one entry, no resources at
  all -> ``namespace: _placeholder``); an existing file is read into ``types.Kustomization``
  (unknown fields dropped: ``sigs.k8s.io/yaml.Unmarshal`` is not strict) and, when it lists no
  resources, gets ``buildMetadata: [originAnnotations]``; then ``targetNamespace`` ->
  ``namespace``, ``namePrefix``, ``nameSuffix``, ``patches`` appended, ``components``
  (local and relative; ``ignoreMissingComponents`` skips absent ones), ``patchesStrategicMerge``
  and ``patchesJson6902`` (v1beta2), ``images`` merged into an entry of the same name (a new
  tag or digest replaces both).
- fluxcd/pkg ``kustomize/kustomize_varsub.go`` ``SubstituteVariables``: skipped for a resource
  labelled or annotated ``kustomize.toolkit.fluxcd.io/substitute: disabled``; variables from
  ``substituteFrom`` (ConfigMap ``data``, Secret ``data``; ``optional`` ones may be absent),
  then ``substitute`` over them, newlines removed from values, names checked against
  ``^[_[:alpha:]][_[:alpha:][:digit:]]*$``; run only when a variable is defined or
  ``substituteStrategy: Always``; the resource's YAML is substituted as text and read back
  as ``sigs.k8s.io/yaml.YAMLToJSON`` reads it (YAML 1.1).
- fluxcd/pkg ``ssa/utils`` ``SetCommonMetadata``: labels and annotations merged into each
  object's own metadata.

The owner labels the controller adds at apply (``kustomize.toolkit.fluxcd.io/name``,
``/namespace``) are the apply's bookkeeping, not the rendering: kzgit leaves them out, as
``flux build kustomization`` does without ``--dry-run`` server state.
"""
from __future__ import annotations

import posixpath
import re

from kzgit.errors import BuildError, KzgitError
from kzgit.gitops import envsubst
from kzgit.gitops.model import Doc, as_dict, json_type

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List, Optional, Set, Tuple
    from kzgit.gitops.model import App
    from kzgit.loader import FileSystem
    from kzgit.resource import Resource

KUSTOMIZATION_FILE_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
SUBSTITUTE_KEY = "kustomize.toolkit.fluxcd.io/substitute"
DISABLED = "disabled"
_VAR_NAME = re.compile(r"^[_A-Za-z][_A-Za-z0-9]*$")
# kustomize_generator.go IsLocalRelativePath: the remote prefixes, in its order
_REMOTE_PREFIXES = ("git::", "gh:", "ssh://", "https://", "http://", "git@", "github.com:",
                    "github.com/")


class FluxError(KzgitError):
    """A Flux Kustomization that does not render; ``field`` is the spec field to point at."""

    def __init__(self, message: str, field: Tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.field = field


def spec_path(spec: Dict[str, Any]) -> str:
    """``spec.path`` joined to the artifact as ``securejoin`` joins it: repo-relative, ``..``
    clamped at the top ("" the top itself)."""
    raw = spec.get("path")
    if raw is not None and not isinstance(raw, str):
        # the CRD types it: the API server refuses the object (apiextensions' schema error)
        raise FluxError(f'malformed: spec.path in body must be of type string: '
                        f'"{json_type(raw)}"', ("spec", "path"))
    text = raw if isinstance(raw, str) else ""
    parts: List[str] = []
    for p in text.replace("\\", "/").split("/"):
        if p in ("", "."):
            continue
        if p == "..":
            if parts:
                parts.pop()
            continue
        parts.append(p)
    return "/".join(parts)


def is_local_relative(path: str) -> bool:
    """kustomize_generator.go IsLocalRelativePath."""
    low = path.lower()
    for p in _REMOTE_PREFIXES:
        if len(p) < len(path) and low[:len(p)] == p:
            return False
    return not (path.startswith("/") or low.startswith("file:///"))


# -- the generated kustomization ----------------------------------------------------------

def _kustomization_fields(version: Tuple[int, int, int]) -> Dict[str, str]:
    """The JSON names of ``types.Kustomization``'s fields, by their lower-case spelling
    (encoding/json matches names case-insensitively); made once per release."""
    got = _FIELDS.get(version)
    if got is None:
        from kzgit.kustomization import schema   # start-up: only Flux renders need it
        got = _FIELDS[version] = {k.lower(): k for k in schema(version)["Kustomization"]}
    return got


_FIELDS: Dict[Tuple[int, int, int], Dict[str, str]] = {}


def _scan_manifests(fs: FileSystem, base: str, check: bool = True) -> List[str]:
    """kustomize_generator.go scanManifests: absolute paths, in filepath.Walk's order;
    ``check``: each manifest must decode (else Flux's error), as scanManifests checks."""
    from kzgit.yamlio import load_documents   # start-up: only generated kustomizations
    out: List[str] = []

    def walk(d: str) -> None:
        for name in fs.listdir(d):   # sorted, as filepath.Walk reads a directory
            p = posixpath.join(d, name)
            if fs.is_dir(p):
                if any(fs.exists(posixpath.join(p, k)) and not fs.is_dir(posixpath.join(p, k))
                       for k in KUSTOMIZATION_FILE_NAMES):
                    out.append(p)
                    continue
                walk(p)
                continue
            if posixpath.splitext(p)[1] not in (".yaml", ".yml"):
                continue
            if check:
                try:
                    load_documents(fs.read_bytes(p), p)
                except KzgitError as e:
                    raise BuildError(f"failed to decode Kubernetes YAML from {p}: {e}") from None
            out.append(p)
    walk(base)
    return out


def generate(fs: FileSystem, dir_path: str, spec: Dict[str, Any],
             version: Tuple[int, int, int], check: bool = True) -> Tuple[str, bytes, bool]:
    """(the kustomization file's path, its text, whether Flux created it) for ``dir_path``.

    ``check=False``: a created kustomization's manifests are listed without decoding them
    first; the caller builds it (which decodes each) and, when the build fails, generates
    again with ``check`` so that a manifest that does not decode fails as Flux fails."""
    from kzgit.yamlio import dump_read_back, load_yaml11   # start-up: only Flux renders need them
    kfile = ""
    for name in KUSTOMIZATION_FILE_NAMES:
        p = posixpath.join(dir_path, name)
        if fs.exists(p) and not fs.is_dir(p):
            kfile = p
            break
    created = not kfile
    kus: Dict[str, Any] = {"apiVersion": "kustomize.config.k8s.io/v1beta1",
                           "kind": "Kustomization"}
    if created:
        kfile = posixpath.join(dir_path, "kustomization.yaml")
        resources = ["." + p[len(dir_path):] for p in _scan_manifests(fs, dir_path, check)]
        if resources:
            kus["resources"] = resources
        else:
            kus["namespace"] = "_placeholder"
    else:
        raw = load_yaml11(fs.read_bytes(kfile), kfile)
        if raw is not None and not isinstance(raw, dict):
            raise BuildError(f"{kfile}: error unmarshaling JSON: json: cannot unmarshal into "
                             "Go value of type types.Kustomization")
        known = _kustomization_fields(version)
        for k, v in (raw or {}).items():
            canon = known.get(str(k).lower())
            if canon is not None and v is not None:
                kus[canon] = v   # an unknown field is dropped, as yaml.Unmarshal drops it
        if not kus.get("resources"):
            # "if there are no resources, set the build metadata to avoid
            # 'kustomization.yaml is empty' build error"
            kus["buildMetadata"] = ["originAnnotations"]
    for field in ("targetNamespace", "namePrefix", "nameSuffix"):
        value = spec.get(field)
        if value is None:
            continue
        if not isinstance(value, str):
            # the CRD types each a string: the API server refuses the object
            raise FluxError(f"malformed: spec.{field} in body must be of type string: "
                            f'"{json_type(value)}"', ("spec", field))
        kus["namespace" if field == "targetNamespace" else field] = value
    for patch in _dicts(spec.get("patches"), "patches"):
        entry: Dict[str, Any] = {"patch": patch.get("patch", "")}
        if isinstance(patch.get("target"), dict):
            entry["target"] = _selector(patch["target"])
        kus.setdefault("patches", []).append(entry)
    components = spec.get("components") or []
    if not isinstance(components, list) or not all(isinstance(c, str) for c in components):
        raise FluxError("unable to get components: .spec.components accessor error: "
                        "expected a list of strings", ("spec", "components"))
    for c in components:
        if not is_local_relative(c):
            raise FluxError(f"component path '{c}' must be local and relative",
                            ("spec", "components"))
        if spec.get("ignoreMissingComponents") is True and \
                not fs.exists(posixpath.normpath(posixpath.join(dir_path, c))):
            continue
        kus.setdefault("components", []).append(c)
    from kzgit.yamlio import go_json_dumps   # start-up: as above
    for patch in _dicts(spec.get("patchesStrategicMerge"), "patchesStrategicMerge"):
        kus.setdefault("patchesStrategicMerge", []).append(go_json_dumps(patch))
    for patch in _dicts(spec.get("patchesJson6902"), "patchesJson6902"):
        entry = {"patch": go_json_dumps(patch.get("patch") or [])}
        if isinstance(patch.get("target"), dict):
            entry["target"] = _selector(patch["target"])
        kus.setdefault("patchesJson6902", []).append(entry)
    for image in _dicts(spec.get("images"), "images"):
        _merge_image(kus, image)
    return kfile, dump_read_back(kus).encode("utf-8"), created


def _dicts(v: Any, field: str) -> List[Dict[str, Any]]:
    if v is None:
        return []
    if not isinstance(v, list) or not all(isinstance(x, dict) for x in v):
        raise FluxError(f"unable to get {field}: each entry must be an object", ("spec", field))
    return v


def _selector(target: Dict[str, Any]) -> Dict[str, Any]:
    """kustomize_generator.go adaptSelector: the fields kustypes.Selector has."""
    return {k: target[k] for k in ("group", "version", "kind", "name", "namespace",
                                   "labelSelector", "annotationSelector")
            if isinstance(target.get(k), str) and target[k]}


def _merge_image(kus: Dict[str, Any], image: Dict[str, Any]) -> None:
    """Merge into the entry of the same name: a new name replaces the name, a new tag or
    digest replaces both (the image transformer replaces both, kustomize
    api/filters/imagetag/updater.go); else append."""
    images = kus.setdefault("images", [])
    name = image.get("name", "")
    new = {k: image[k] for k in ("newName", "newTag", "digest") if image.get(k)}
    for entry in images:
        if isinstance(entry, dict) and entry.get("name") == name:
            if new.get("newName"):
                entry["newName"] = new["newName"]
            if new.get("newTag") or new.get("digest"):
                entry.pop("newTag", None)
                entry.pop("digest", None)
                entry.update({k: new[k] for k in ("newTag", "digest") if k in new})
            return
    images.append({"name": name, **new})


# -- post-build -----------------------------------------------------------------------------

class Variables:
    """The values of a Kustomization's ``postBuild``: defined ones, and those only a Secret
    the repository holds encrypted (SOPS) could give, whose values are unknown offline."""

    def __init__(self) -> None:
        self.values: Dict[str, str] = {}
        self.encrypted: Dict[str, str] = {}   # variable -> "Secret ns/name (SOPS)"

    def __len__(self) -> int:
        return len(self.values) + len(self.encrypted)


def load_variables(app: App, spec: Dict[str, Any], lookup: Any) -> Variables:
    """``substituteFrom`` then ``substitute`` (kustomize_varsub.go LoadVariables and
    SubstituteVariables).  ``lookup(kind, namespace, name)`` returns the object's Doc (a
    ConfigMap or Secret the repository delivers), or None."""
    out = Variables()
    post = spec.get("postBuild")
    if not isinstance(post, dict):
        return out
    refs = post.get("substituteFrom") or []
    if not isinstance(refs, list):
        raise FluxError("unable to get subsituteFrom: expected a list",
                        ("spec", "postBuild", "substituteFrom"))
    for ref in refs:
        if not isinstance(ref, dict):
            continue
        kind, name = ref.get("kind"), ref.get("name")
        if kind not in ("ConfigMap", "Secret"):
            continue
        doc: Optional[Doc] = lookup(kind, app.namespace, name)
        if doc is None:
            if ref.get("optional") is True:
                continue
            raise FluxError(f"substitute from '{kind}/{name}' error: {kind} "
                            f"\"{name}\" not found in namespace {app.namespace} (neither this "
                            "repository nor what its applications deliver defines it)",
                            ("spec", "postBuild", "substituteFrom"))
        obj = doc.obj
        if kind == "ConfigMap":
            for k, v in (obj.get("data") or {}).items():
                out.values[str(k)] = str(v).replace("\n", "")
            continue
        if isinstance(obj.get("sops"), dict):
            where = f"Secret {app.namespace}/{name} ({doc.file}, SOPS-encrypted)"
            for k in [*(obj.get("data") or {}), *(obj.get("stringData") or {})]:
                out.values.pop(str(k), None)
                out.encrypted[str(k)] = where
            continue
        import base64   # start-up: only Secrets
        for k, v in (obj.get("stringData") or {}).items():
            out.values[str(k)] = str(v).replace("\n", "")
        for k, v in (obj.get("data") or {}).items():
            try:
                text = base64.b64decode(str(v), validate=True).decode("utf-8", "replace")
            except ValueError:
                raise FluxError(f"substitute from 'Secret/{name}' error: data.{k} is not "
                                f"base64 ({doc.file}:{doc.line})",
                                ("spec", "postBuild", "substituteFrom")) from None
            out.values[str(k)] = text.replace("\n", "")
    subst = post.get("substitute")
    if subst is not None:
        if not isinstance(subst, dict):
            raise FluxError(".spec.postBuild.substitute accessor error: expected a map of "
                            "strings", ("spec", "postBuild", "substitute"))
        for k, v in subst.items():
            if not isinstance(v, str):
                raise FluxError(f".spec.postBuild.substitute.{k} accessor error: {v!r} is of "
                                "the type " + type(v).__name__ + ", expected string",
                                ("spec", "postBuild", "substitute"))
            out.encrypted.pop(str(k), None)
            out.values[str(k)] = v.replace("\n", "")
    return out


def _gvk_text(obj: Dict[str, Any]) -> str:
    """resid.Gvk String(): group_version_kind, ``~G`` for the core group."""
    api = str(obj.get("apiVersion") or "")
    group, _, ver = api.rpartition("/")
    return f"{group or '~G'}_{ver or '~V'}_{obj.get('kind') or '~K'}"


def substitute(resources: List[Resource], spec: Dict[str, Any], variables: Variables,
               strict: bool, notes: List[str]) -> None:
    """Post-build substitution of each resource, in place (kustomize_varsub.go)."""
    post = spec.get("postBuild")
    if not isinstance(post, dict):
        return
    always = post.get("substituteStrategy") == "Always"
    if not (len(variables) or always):
        return
    for name in [*variables.values, *variables.encrypted]:
        if not _VAR_NAME.match(name):
            raise FluxError(f"'{name}' var name is invalid, must match "
                            "'^[_[:alpha:]][_[:alpha:][:digit:]]*$'",
                            ("spec", "postBuild"))
    from kzgit.yamlio import dump, load_yaml11   # start-up: only substitutions
    unknown_seen: Dict[str, str] = {}

    def lookup(name: str) -> Tuple[str, bool]:
        if name in variables.values:
            return variables.values[name], True
        if name in variables.encrypted:
            unknown_seen[name] = variables.encrypted[name]
            return f"kzgit-unknown-{name}", True
        return "", not strict

    for r in resources:
        meta = as_dict(r.obj.get("metadata"))
        labels = as_dict(meta.get("labels"))
        annotations = as_dict(meta.get("annotations"))
        if labels.get(SUBSTITUTE_KEY) == DISABLED or annotations.get(SUBSTITUTE_KEY) == DISABLED:
            continue
        if not _has_dollar(r.obj):
            continue   # nothing for envsubst to read: its output is the text itself
        where = f"{_gvk_text(r.obj)}/{meta.get('name', '')}"
        fast = _substituted_in_place(r.obj, lookup, where)
        if fast is not None:
            r.obj = fast
            continue
        text = dump(r.obj)
        try:
            out = envsubst.evaluate(text, lookup)
        except envsubst.SubstitutionError as e:
            raise FluxError(f"post build failed for '{where}': envsubst error: variable "
                            f"substitution failed: {e}", ("spec", "postBuild")) from None
        if out == text:
            continue
        try:
            obj = load_yaml11(out, where)
        except KzgitError as e:
            raise FluxError(f"post build failed for '{where}': envsubst error: YAMLToJSON: "
                            f"{e}", ("spec", "postBuild")) from None
        if not isinstance(obj, dict):
            raise FluxError(f"post build failed for '{where}': UnmarshalJSON: the substituted "
                            "resource is not an object", ("spec", "postBuild"))
        r.obj = obj
    for name, where in sorted(unknown_seen.items()):
        notes.append(f"${{{name}}} comes from {where}: its value is unknown offline "
                     f"(rendered as 'kzgit-unknown-{name}')")


# What _substituted_in_place reads without asking the parser: a value of one line whose YAML
# text is itself whatever it is next to, starting with a letter or "/" (YAML 1.1 reads such a
# plain scalar as a string, but for the words the writer quotes); a value spelled with "$" as
# the writer writes it plain; a substituted value short of anything YAML reads specially.
_PLAIN_STR = re.compile(r"[A-Za-z/][\x20-\x7e]*\Z")
_DOLLAR_TEXT = re.compile(r"[A-Za-z0-9_./:${}=+~^-]*[A-Za-z0-9_./{}=+~^-]\Z")
_SUBSTITUTED = re.compile(r"(?:[A-Za-z0-9_./+=~^][A-Za-z0-9_./:+=~^-]*|-[A-Za-z0-9_./:+=~^-]+)?"
                          r"(?<!:)\Z")
_CHANGED = object()   # marks the containers on the way to a substituted value


def _substituted_in_place(obj: Dict[str, Any], lookup: Any, where: str
                          ) -> Optional[Dict[str, Any]]:
    """``obj`` substituted as :func:`substitute`'s text round trip gives it (its YAML written,
    substituted as text and read back), without writing and reading the whole object, where
    that is sure to give the same: None where it is not (then the round trip runs).

    The round trip changes an object in two ways: a string holding an expression becomes
    what YAML 1.1 reads in the substituted text, and every other value becomes what YAML 1.1
    reads in the text the writer gave it (mappings in the writer's key order).  Here each
    expression is substituted in its own string, which is the same text as in the whole
    object when the writer writes that string plain on its line and the expression ends
    within it (a ``${`` left open, a trailing ``$``, anything else: None); the substituted
    values, and the values whose reading is not plainly a string (not starting with a
    letter or ``/``: numbers, dates, ``-1``...), are read back by the same reader in one small
    document where each stands as it stands in the object; a float, a multi-line string, a
    character outside printable ASCII, a key holding ``$`` or not plainly a string: None.  A
    string a transformer shares between places (:class:`kzgit.yamlio.tree.SharedStr`) comes
    back a string of its own at each, as from the round trip."""
    from kzgit.yamlio import dump, load_yaml11, sorted_keys   # start-up: only substitutions
    from kzgit.yamlio.tree import SharedStr   # start-up: as above
    checks: List[Tuple[str, Any]] = []   # (YAML text of the value, what it must read as)
    subs: List[str] = []   # substituted texts, in the order of the walk
    slots: List[Tuple[Any, Any]] = []   # where each goes in the copy: (container, key or index)
    seen = _PLAIN_TEXT

    def walk(node: Any) -> Any:
        """The node's copy in the writer's key order (``_CHANGED`` for a value substituted,
        its place noted in ``slots``), or raises LookupError where this way does not hold."""
        t = type(node)
        if t is SharedStr:   # (one value a transformer wrote at several places: the round
            node, t = str(node), str   # trip gives each place its own string)
        if t is str:
            if "$" in node:
                if not _DOLLAR_TEXT.match(node) or not _written_plain(node):
                    raise LookupError
                try:
                    got = envsubst.evaluate(node, lookup)
                except envsubst.SubstitutionError:
                    raise LookupError from None
                if got == node:
                    return node
                if not _SUBSTITUTED.match(got):
                    raise LookupError
                subs.append(got)
                return _CHANGED
            if node and not (seen.get(node) or _plain_text(node)):
                if "\n" in node or not node.isascii() or not node.isprintable():
                    raise LookupError
                checks.append((dump({"k": node})[3:], node))
            return node
        if t is dict:
            out: Dict[str, Any] = {}
            for k in sorted_keys(node):
                if "$" in k or not (seen.get(k) or _plain_text(k)):
                    raise LookupError
                v = walk(node[k])
                if v is _CHANGED:
                    slots.append((out, k))
                out[k] = v
            return out
        if t is list:
            items: List[Any] = []
            for v in node:
                v = walk(v)
                if v is _CHANGED:
                    slots.append((items, len(items)))
                items.append(v)
            return items
        if t is bool or node is None:
            return node
        if t is int and -(1 << 31) < node < (1 << 31):
            return node
        raise LookupError

    try:
        copy = walk(obj)
    except (LookupError, KzgitError):
        return None
    if not subs:
        return obj   # nothing changed: the round trip gives back the same text
    if copy is _CHANGED:
        return None   # (a resource is a mapping)
    text = "".join(f"c{i}: {yaml}" for i, (yaml, _) in enumerate(checks)) + \
        "".join(f"s{i}: {sub}\n" for i, sub in enumerate(subs))
    read = _READ.get(text)
    if read is None:
        try:
            read = load_yaml11(text, where)
        except KzgitError:
            return None
        if len(_READ) > 10_000:
            _READ.clear()
        _READ[text] = read   # (scalars only, never changed: the substituted text holds no
        # flow collection, and the checked values are single strings)
    if not isinstance(read, dict) or len(read) != len(checks) + len(subs):
        return None
    for i, (_, want) in enumerate(checks):
        got = read.get(f"c{i}")
        if type(got) is not str or got != want:
            return None
    for i, (container, at) in enumerate(slots):
        container[at] = read[f"s{i}"]
    return copy


# what _substituted_in_place learned of a text: whether the writer writes a string plain as
# it is, what the reader reads in a small document (many applications deploy one manifest)
_PLAIN: Dict[str, bool] = {}
_READ: Dict[str, Any] = {}


def _plain_text(text: str) -> bool:
    """Whether ``text`` reads plainly as a string (``_PLAIN_STR``); kept in ``_PLAIN_TEXT``
    (the keys and values of resources repeat from one application to the next)."""
    got = _PLAIN_TEXT[text] = _PLAIN_STR.match(text) is not None
    if len(_PLAIN_TEXT) > 10_000:
        _PLAIN_TEXT.clear()
    return got


_PLAIN_TEXT: Dict[str, bool] = {}


def _written_plain(text: str) -> bool:
    got = _PLAIN.get(text)
    if got is None:
        from kzgit.yamlio import dump   # start-up: only substitutions
        got = dump({"k": text}) == f"k: {text}\n"
        if len(_PLAIN) > 10_000:
            _PLAIN.clear()
        _PLAIN[text] = got
    return got


def _has_dollar(node: Any) -> bool:
    """Whether a key or string of ``node`` holds ``$`` (else its YAML text holds none: a
    number, a boolean or null is written without one), without writing the YAML text: its
    JSON text holds a ``$`` exactly where a key or a string does (JSON escapes no ``$``, and
    writes a number, a boolean or null without one), and C writes it fastest."""
    import json   # start-up: only substitutions
    try:
        return "$" in json.dumps(node, check_circular=False)
    except (TypeError, ValueError, RecursionError):
        return _walk_has_dollar(node)   # a key JSON cannot write, a node nested too deep


def _walk_has_dollar(node: Any) -> bool:
    if isinstance(node, str):
        return "$" in node
    if isinstance(node, dict):
        return any(("$" in k if isinstance(k, str) else _walk_has_dollar(k))
                   or _walk_has_dollar(v) for k, v in node.items())
    if isinstance(node, list):
        return any(_walk_has_dollar(v) for v in node)
    return False


# kustomize-controller internal/decryptor/decryptor.go sopsFormatToMarkerBytes: what shows a
# file of each format SOPS-encrypted
_SOPS_MARKERS = {"binary": b'"mac": "ENC[', "dotenv": b"sops_mac=ENC[", "ini": b"[sops]",
                 "json": b'"mac": "ENC[', "yaml": b"mac: ENC["}


def decrypts(spec: Dict[str, Any]) -> bool:
    """Whether the Kustomization decrypts with SOPS (``spec.decryption.provider: sops``)."""
    dec = spec.get("decryption")
    return isinstance(dec, dict) and dec.get("provider") == "sops"


def _sops_format(path: str) -> str:
    """formatForPath (sops formats.FormatForPath, with .dockerconfigjson as JSON)."""
    if path.endswith(".dockerconfigjson") or path.endswith(".json"):
        return "json"
    if path.endswith((".yaml", ".yml")):
        return "yaml"
    if path.endswith(".env"):
        return "dotenv"
    if path.endswith(".ini"):
        return "ini"
    return "binary"


def decrypted_sources(fs: FileSystem, dir_path: str, top: str, spec: Dict[str, Any],
                      notes: List[str]) -> Dict[str, bytes]:
    """decryptor.go DecryptSources: with ``decryption.provider: sops``, the controller decrypts
    in place, before the build, each SOPS-encrypted file a kustomization under ``dir_path``
    (and the directories its resources and components name, recursively) reads through a
    ``secretGenerator``'s ``files`` or ``envs`` or a ``patches[].path``.  kzgit holds no key:
    the file is shown decrypted with its values unknown (empty: a dotenv's ``KEY=``, a YAML or
    JSON file's encrypted strings ""; an INI or binary file empty), its SOPS metadata gone,
    and a note says which.  Returns the files to show in place of those on disk."""
    if not decrypts(spec):
        return {}
    from kzgit.yamlio import load_yaml11   # start-up: only decrypting Kustomizations
    out: Dict[str, bytes] = {}
    visited: Set[str] = set()

    def source(rel: str, base: str, fmt: str) -> None:
        p = posixpath.normpath(rel if rel.startswith("/") else posixpath.join(base, rel))
        if p in out or not (p == top or p.startswith(top + "/")) or not fs.is_file(p):
            return
        data = fs.read_bytes(p)
        if _SOPS_MARKERS[fmt] not in data:
            return
        out[p] = _unknown_plaintext(data, fmt, p)
        notes.append(f"{p[len(top) + 1:]} is SOPS-encrypted: the controller decrypts it "
                     "before the build; kzgit renders its values as unknown (empty)")

    def walk(d: str) -> None:
        if d in visited or not fs.is_dir(d):
            return
        visited.add(d)
        kfile = next((posixpath.join(d, n) for n in KUSTOMIZATION_FILE_NAMES
                      if fs.is_file(posixpath.join(d, n))), None)
        if kfile is None:
            return
        try:
            kus = load_yaml11(fs.read_bytes(kfile), kfile)
        except KzgitError:
            return   # the build says what is wrong with it
        if not isinstance(kus, dict):
            return
        for gen in kus.get("secretGenerator") or []:
            if not isinstance(gen, dict):
                continue
            for f in gen.get("files") or []:
                if isinstance(f, str):
                    key, _, path = f.partition("=")
                    source(path or key, d, _sops_format(key))
            for e in gen.get("envs") or []:
                if isinstance(e, str):
                    fmt = _sops_format(e)
                    source(e, d, "dotenv" if fmt == "binary" else fmt)
        for patch in kus.get("patches") or []:
            patch_path = patch.get("path") if isinstance(patch, dict) else None
            if isinstance(patch_path, str) and patch_path and "://" not in patch_path:
                source(patch_path, d, _sops_format(patch_path))
        for r in [*(kus.get("resources") or []), *(kus.get("components") or [])]:
            if isinstance(r, str) and "://" not in r:
                walk(posixpath.normpath(r if r.startswith("/") else posixpath.join(d, r)))
    walk(dir_path)
    return out


def _unknown_plaintext(data: bytes, fmt: str, where: str) -> bytes:
    """What decrypting ``data`` (a SOPS file of format ``fmt``) gives, its values unknown."""
    if fmt == "dotenv":
        lines = []
        for line in data.decode("utf-8", "replace").splitlines():
            key, eq, value = line.partition("=")
            if eq and key.startswith("sops_"):
                continue   # the SOPS metadata decryption drops
            lines.append(f"{key}=" if eq and value.startswith("ENC[") else line)
        return ("\n".join(lines) + "\n").encode("utf-8")
    if fmt in ("yaml", "json"):
        from kzgit.yamlio import dump, go_json_dumps, load_yaml11   # start-up: as above
        try:
            doc = load_yaml11(data, where)
        except KzgitError:
            return b""
        if isinstance(doc, dict):
            doc.pop("sops", None)
        doc = _blank_encrypted(doc)
        return (go_json_dumps(doc) + "\n" if fmt == "json" else dump(doc)).encode("utf-8")
    return b""


# kustomize-controller: the annotation (or label value) that leaves an object alone
DECRYPT_KEY = "kustomize.toolkit.fluxcd.io/decrypt"


def _decrypt_disabled(obj: Dict[str, Any]) -> bool:
    """decryptor.go IsDecryptionDisabled: ``kustomize.toolkit.fluxcd.io/decrypt: disabled``
    (any case) among the object's annotations."""
    value = as_dict(as_dict(obj.get("metadata")).get("annotations")).get(DECRYPT_KEY)
    return isinstance(value, str) and value.lower() == DISABLED


def decrypted(resources: List[Resource], spec: Dict[str, Any], notes: List[str]) -> None:
    """``spec.decryption`` (provider ``sops``): the controller decrypts each resource before
    applying it (kustomization_controller.go build, decryptor.go DecryptResource), unless it
    carries ``kustomize.toolkit.fluxcd.io/decrypt: disabled``: a resource SOPS encrypted
    (``sops.mac`` set) loses its ``sops`` metadata, and a Secret's data entry that is a
    SOPS-encrypted file (a secretGenerator's) is decrypted as that file.  kzgit holds no key:
    what decryption gives is rendered unknown (an encrypted value, an entry: empty), and a
    note names the resource."""
    if not decrypts(spec):
        return
    import base64   # start-up: only decrypting Kustomizations
    for r in resources:
        if _decrypt_disabled(r.obj):
            continue
        sops = r.obj.get("sops")
        if isinstance(sops, dict) and sops.get("mac"):   # isSOPSEncryptedResource
            del r.obj["sops"]
            r.obj = _blank_encrypted(r.obj)
        elif r.obj.get("kind") == "Secret" and isinstance(r.obj.get("data"), dict):
            data = r.obj["data"]
            changed = False
            for k, v in list(data.items()):
                try:
                    raw = base64.b64decode(str(v), validate=True)
                except ValueError:
                    continue   # "let it bubble up during the actual build"
                if any(m in raw for m in _SOPS_MARKERS.values()):
                    data[k] = ""
                    changed = True
            if not changed:
                continue
        else:
            continue
        meta = as_dict(r.obj.get("metadata"))
        notes.append(f"{r.obj.get('kind')} {meta.get('namespace') or '-'}/{meta.get('name')} is "
                     "SOPS-encrypted: the controller decrypts it; kzgit renders its values as "
                     "unknown (empty)")


def _blank_encrypted(v: Any) -> Any:
    """``v`` with each SOPS-encrypted string (``ENC[...]``) empty: its plain value is unknown."""
    if isinstance(v, str):
        return "" if v.startswith("ENC[") else v
    if isinstance(v, dict):
        return {k: _blank_encrypted(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_blank_encrypted(x) for x in v]
    return v


def common_metadata(resources: List[Resource], spec: Dict[str, Any]) -> None:
    """ssa/utils SetCommonMetadata: merged into each object's own labels and annotations."""
    cm = spec.get("commonMetadata")
    if cm is None:
        return
    if not isinstance(cm, dict):
        raise FluxError(f'malformed: spec.commonMetadata in body must be of type object: '
                        f'"{json_type(cm)}"', ("spec", "commonMetadata"))
    for field in ("labels", "annotations"):
        extra = cm.get(field)
        if extra is None:
            continue
        # the CRD's map[string]string: the API server refuses another shape
        if not isinstance(extra, dict):
            raise FluxError(f"malformed: spec.commonMetadata.{field} in body must be of type "
                            f'object: "{json_type(extra)}"', ("spec", "commonMetadata", field))
        for k, v in extra.items():
            if not isinstance(v, str):
                raise FluxError(f"malformed: spec.commonMetadata.{field}.{k} in body must be of "
                                f'type string: "{json_type(v)}"',
                                ("spec", "commonMetadata", field))
        if not extra:
            continue
        for r in resources:
            meta = r.obj.setdefault("metadata", {})
            current = meta.get(field)
            if not isinstance(current, dict):
                current = {}
            current.update({str(k): str(v) for k, v in extra.items()})
            meta[field] = current


def check_objects(resources: List[Resource]) -> None:
    """kustomization_controller.go build: every object needs apiVersion, kind and name."""
    for r in resources:
        meta = as_dict(r.obj.get("metadata"))
        if not (r.obj.get("apiVersion") and r.obj.get("kind") and meta.get("name")):
            from kzgit.yamlio import go_json_dumps   # start-up: an error path only
            raise FluxError("failed to decode Kubernetes apiVersion, kind and name from: "
                            + go_json_dumps(r.obj))


def gitrepository_revision(doc: Optional[Doc]) -> Optional[Tuple[str, str]]:
    """(kind, value) of what a GitRepository follows (``("branch", "main")``, ``("tag",
    "v1.2")``, ...), source-controller's precedence: commit, name, semver, tag, then branch;
    None without a ref."""
    if doc is None:
        return None
    ref = as_dict(as_dict(doc.obj.get("spec")).get("ref"))
    for k in ("commit", "name", "semver", "tag", "branch"):
        if isinstance(ref.get(k), str) and ref[k]:
            return k, ref[k]
    return None
