"""crane's builtin ``KubernetesPlugin``, run inside kzgit.

Source: konveyor/crane-lib ``transform/kubernetes/kubernetes.go`` (with ``transform/plugin.go``,
``transform/util/{registry,persistentvolumeclaims}.go`` and ``transform/types/duck_type.go``);
crane (``internal/plugin/plugin_helper.go`` GetPlugins) puts it first in every plugin list.

**Whiteouts**, decided in this order:

1. with ``include-only``, every GroupKind not listed; without it, ``Endpoints``,
   ``EndpointSlice.discovery.k8s.io``, ``PersistentVolumeClaim`` and the ``extra-whiteouts``;
2. with ``disable-whiteout-owned`` true nothing else is whited out (not even the checks below,
   which crane only reaches when owned resources are whited out);
3. anything with owner references; the ServiceAccount ``default``, Secrets annotated
   ``kubernetes.io/service-account.name: default`` (both unless ``strip-default-rbac`` is
   false); the ConfigMap ``kube-root-ca.crt`` (unless ``strip-default-cabundle`` is false);
   everything in the API group ``extensions``.

**Patches** of a kept resource, in crane's order: remove ``metadata.uid``, ``selfLink``,
``resourceVersion``, ``creationTimestamp``, ``generation``, ``managedFields`` and ``status``
where present; add then remove the annotations of ``add-annotations``/``remove-annotations``;
per kind: a Pod loses ``spec.nodeName``, ``spec.nodeSelector`` and ``spec.priority`` (always
emitted, present or not), PVC claim names of CronJob, Pod, DaemonSet, Deployment, Job,
ReplicationController, ReplicaSet and StatefulSet volumes (and StatefulSet volume-claim
templates) are renamed by ``pvc-rename-map``, a RoleBinding's ServiceAccount subjects in its
own namespace lose their ``namespace``; container and init-container images of a Pod or of
anything with ``spec.template`` get their registry replaced by ``registry-replacement``; a
Service loses ``externalIPs`` (type LoadBalancer), ``clusterIP``/``clusterIPs`` (unless
``None``) and the node ports that ``kubectl.kubernetes.io/last-applied-configuration`` does not
set explicitly.

Quirks reproduced on purpose, so the operations are crane's:

* crane formats its operations as JSON text with ``%v`` and decodes them: annotation keys go
  into the path unescaped (``a/b`` is ``/metadata/annotations/a/b``, not ``a~1b``), and a
  ``"`` or ``\\`` in a key or value changes or breaks the JSON (a break is an error, as in crane);
  :func:`_crane_patch` builds and decodes the same text, and ``kzgit transform`` warns about
  keys with ``/`` or ``~`` (:func:`flag_warnings`);
* a flag's boolean is Go's ``strconv.ParseBool``; a value it rejects is false (so
  ``strip-default-rbac: yes`` turns stripping *off*, as in crane);
* a ``nodePort`` given as a string counts as 0 (crane's getNodePortInt shadows its result);
  one that is not a number is an error;
* a Pod, a RoleBinding and the workload kinds above are decoded into their Go types in crane:
  a field this plugin reads that has the wrong JSON type is an error here too.

Differences, on purpose: ``add-annotations`` keeps the order of the flag (crane iterates a Go
map: random order); a ``pvc-rename-map`` pair without ``:`` and a last-applied port whose name
is not a string are errors (crane panics); crane's typed decoding also fails on wrong types in
fields this plugin does not read, and matches JSON keys case-insensitively; kzgit does neither.

Its size has a reason: it is one builtin plugin, crane's KubernetesPlugin, with its option
parsing; its per-kind rules are small and read best side by side, as in crane's one Go file.
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from kzgit.errors import PluginError
from kzgit.crane.protocol import BuiltinPlugin, OptionalField, PluginResponse
from kzgit.yamlio.gostruct import go_json_kind

__all__ = ["KubernetesPlugin", "NAME", "VERSION", "Options", "parse_options", "whiteout",
           "patches", "flag_warnings"]

NAME = "KubernetesPlugin"
#: crane-lib ``version/version.go``
VERSION = "v0.0.6"

ADD_ANNOTATIONS = "add-annotations"
REMOVE_ANNOTATIONS = "remove-annotations"
REGISTRY_REPLACEMENT = "registry-replacement"
EXTRA_WHITEOUTS = "extra-whiteouts"
INCLUDE_ONLY = "include-only"
DISABLE_WHITEOUT_OWNED = "disable-whiteout-owned"
STRIP_DEFAULT_RBAC = "strip-default-rbac"
STRIP_DEFAULT_CABUNDLE = "strip-default-cabundle"
PVC_RENAME_MAP = "pvc-rename-map"

#: the optional fields in the order of crane's Metadata()
FIELDS: List[OptionalField] = [
    OptionalField(ADD_ANNOTATIONS, "Annotations to add to each resource",
                  "annotation1=value1,annotation2=value2"),
    OptionalField(REGISTRY_REPLACEMENT,
                  "Map of image registry paths to swap on transform, in the format "
                  "original-registry1=target-registry1,original-registry2=target-registry2...",
                  "docker-registry.default.svc:5000=image-registry.openshift-image-registry.svc:5000,"
                  "docker.io/foo=quay.io/bar"),
    OptionalField(REMOVE_ANNOTATIONS, "Annotations to remove", "annotation1,annotation2"),
    OptionalField(DISABLE_WHITEOUT_OWNED,
                  "Disable whiting out owned pods and pod template resources", "true"),
    OptionalField(EXTRA_WHITEOUTS,
                  "Additional resources to whiteout specified as a comma-separated list of "
                  "GroupKind strings.", "Deployment.apps,Service,Route.route.openshift.io"),
    OptionalField(INCLUDE_ONLY,
                  "If specified, every resource not listed here will be a whiteout. "
                  "extra-whiteouts is ignored when include-only is specified. Specified as a "
                  "comma-separated list of GroupKind strings.",
                  "Deployment.apps,Service,Route.route.openshift.io"),
    OptionalField(STRIP_DEFAULT_RBAC,
                  "Whether to strip default RBAC including default serviceAccount (default: true)",
                  "true"),
    OptionalField(STRIP_DEFAULT_CABUNDLE, "Whether to strip default CA Bundle (default: true)",
                  "true"),
    OptionalField(PVC_RENAME_MAP, "A comma-separated list of colon separated pvc renames.",
                  "old-pvc1-name:new-pvc1-name,old-pvc2-name:new-pvc2-name"),
]

GroupKind = Tuple[str, str]  # (group, kind)

#: kubernetes.go gksToWhiteout
ALWAYS_WHITED_OUT: FrozenSet[GroupKind] = frozenset({
    ("", "Endpoints"), ("discovery.k8s.io", "EndpointSlice"), ("", "PersistentVolumeClaim")})
#: kubernetes.go fieldsToStrip, in order
STRIPPED_FIELDS: Tuple[Tuple[str, ...], ...] = (
    ("metadata", "uid"), ("metadata", "selfLink"), ("metadata", "resourceVersion"),
    ("metadata", "creationTimestamp"), ("metadata", "generation"), ("metadata", "managedFields"),
    ("status",))
#: kubernetes.go removePodFields, in order
POD_FIELDS_REMOVED = ("/spec/nodeName", "/spec/nodeSelector", "/spec/priority")

POD: GroupKind = ("", "Pod")
SERVICE: GroupKind = ("", "Service")
ROLE_BINDING: GroupKind = ("rbac.authorization.k8s.io", "RoleBinding")
STATEFUL_SET: GroupKind = ("apps", "StatefulSet")
#: kinds whose PVC claim names crane renames, and where their pod spec is (util.PVCPath*String)
POD_SPEC_AT: Dict[GroupKind, Tuple[str, ...]] = {
    ("batch", "CronJob"): ("spec", "jobTemplate", "spec", "template", "spec"),
    POD: ("spec",),
    ("apps", "DaemonSet"): ("spec", "template", "spec"),
    ("apps", "Deployment"): ("spec", "template", "spec"),
    ("batch", "Job"): ("spec", "template", "spec"),
    ("", "ReplicationController"): ("spec", "template", "spec"),
    ("apps", "ReplicaSet"): ("spec", "template", "spec"),
    STATEFUL_SET: ("spec", "template", "spec"),
}
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
SA_NAME_ANNOTATION = "kubernetes.io/service-account.name"

# k8s.io/apimachinery v0.21.3 pkg/util/validation (the version crane-lib's go.mod pins)
_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = _DNS1123_LABEL + r"(\." + _DNS1123_LABEL + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    f"used for validation is '{_DNS1123_SUBDOMAIN}')")
_GO_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_GO_FALSE = ("0", "f", "F", "FALSE", "false", "False")


# ----------------------------------------------------------------------------- options

class Options:
    """The plugin's settings from a request's extras (kubernetes.go setOptionalFields)."""

    def __init__(self) -> None:
        self.add_annotations: Dict[str, str] = {}
        self.remove_annotations: List[str] = []
        self.registry_replacement: Dict[str, str] = {}
        self.extra_whiteouts: List[GroupKind] = []
        self.include_only: List[GroupKind] = []
        self.disable_whiteout_owned = False
        self.strip_default_rbac = True
        self.strip_default_cabundle = True
        self.pvc_rename_map: Dict[str, str] = {}


def _split_list(text: str) -> List[str]:
    """transform.ParseOptionalFieldSliceVal: ``strings.Split(text, ",")``, empty items kept."""
    return text.split(",")


def _split_map(text: str) -> Dict[str, str]:
    """transform.ParseOptionalFieldMapVal: ``k=v`` pairs; ``k`` alone maps to ""; ``k=v=w`` to v."""
    out: Dict[str, str] = {}
    for pair in text.split(","):
        parts = pair.split("=")
        out[parts[0]] = parts[1] if len(parts) > 1 else ""
    return out


def _go_bool(text: str) -> bool:
    """strconv.ParseBool; crane keeps the false it returns with an error."""
    return text in _GO_TRUE


def _group_kind(text: str) -> GroupKind:
    """schema.ParseGroupKind: ``Kind.group.with.dots`` (split at the first dot) or ``Kind``."""
    kind, dot, group = text.partition(".")
    return (group, kind) if dot else ("", text)


def _dns1123_subdomain_errors(value: str) -> List[str]:
    errs = []
    if len(value) > 253:
        errs.append("must be no more than 253 characters")
    if not re.fullmatch(_DNS1123_SUBDOMAIN, value):
        errs.append(_DNS1123_SUBDOMAIN_MSG)
    return errs


def _pvc_rename_map(text: str) -> Dict[str, str]:
    """util.ProcessPVCMap: ``old:new`` pairs, both DNS-1123 subdomains."""
    out: Dict[str, str] = {}
    for pair in text.split(","):
        parts = pair.split(":")
        for i in range(2):
            if i == len(parts):
                # crane indexes split[1] unchecked and panics
                raise PluginError(f"{PVC_RENAME_MAP}: invalid PVC remap {pair!r}: expected "
                                  f"old-name:new-name")
            errs = _dns1123_subdomain_errors(parts[i])
            if errs:
                raise PluginError(f"Invalid PVC remap: {pair}, {','.join(errs)}")
        out[parts[0]] = parts[1]
    return out


def _group_kinds(text: str) -> List[GroupKind]:
    return [_group_kind(t) for t in _split_list(text)]


#: Each extra, the Options attribute it sets and how its text is read (setOptionalFields).
_OPTION_FIELDS: Tuple[Tuple[str, str, Callable[[str], Any]], ...] = (
    (ADD_ANNOTATIONS, "add_annotations", _split_map),
    (REMOVE_ANNOTATIONS, "remove_annotations", _split_list),
    (REGISTRY_REPLACEMENT, "registry_replacement", _split_map),
    (EXTRA_WHITEOUTS, "extra_whiteouts", _group_kinds),
    (INCLUDE_ONLY, "include_only", _group_kinds),
    (DISABLE_WHITEOUT_OWNED, "disable_whiteout_owned", _go_bool),
    (STRIP_DEFAULT_RBAC, "strip_default_rbac", _go_bool),
    (STRIP_DEFAULT_CABUNDLE, "strip_default_cabundle", _go_bool),
    (PVC_RENAME_MAP, "pvc_rename_map", _pvc_rename_map),
)


def parse_options(extras: Dict[str, str]) -> Options:
    """Read the flags as crane does: an empty value is unset; defaults strip RBAC and CA bundle."""
    o = Options()
    for name, attr, parse in _OPTION_FIELDS:
        if extras.get(name):
            setattr(o, attr, parse(extras[name]))
    return o


def flag_warnings(extras: Dict[str, str]) -> List[str]:
    """What the user should know before trusting the flags' effect (crane says nothing).

    An annotation key with ``/`` or ``~`` goes into crane's JSON pointer unescaped: crane apply
    (EnsurePathExistsOnAdd) and kustomize then add ``example.com: {team: a}`` for
    ``example.com/team=a`` (kustomize renders it as ``example.com: ""``), and a remove of
    ``kubectl.kubernetes.io/last-applied-configuration`` removes nothing.
    """
    out = []
    keys = {ADD_ANNOTATIONS: list(_split_map(extras.get(ADD_ANNOTATIONS) or "")),
            REMOVE_ANNOTATIONS: _split_list(extras.get(REMOVE_ANNOTATIONS) or "")}
    for flag, names in keys.items():
        if not extras.get(flag):
            continue
        for k in names:
            if "/" in k or "~" in k:
                out.append(f"{NAME} {flag}: crane writes the annotation key {k!r} into the JSON "
                           f"pointer unescaped, so the patch addresses "
                           f"/metadata/annotations/{k} (a nested key), not the annotation")
    return out


# ----------------------------------------------------------------------------- reading objects
# Unstructured accessors of k8s.io/apimachinery: what they return for odd shapes matters.

def _go_type(v: Any) -> str:
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int64"
    if isinstance(v, float):
        return "float64"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "[]interface {}"
    return "map[string]interface {}"


def _nested(obj: Any, *fields: str) -> Tuple[Any, bool]:
    """unstructured.NestedFieldNoCopy: (value, found); a non-map on the way is an error."""
    val = obj
    for i, f in enumerate(fields):
        if val is None:
            return None, False
        if not isinstance(val, dict):
            raise PluginError(f".{'.'.join(fields[:i + 1])} accessor error: {val} is of the "
                              f"type {_go_type(val)}, expected map[string]interface{{}}")
        if f not in val:
            return None, False
        val = val[f]
    return val, True


def _string(obj: Dict[str, Any], *fields: str) -> str:
    """unstructured's getNestedString: "" unless a string is there."""
    try:
        v, _ = _nested(obj, *fields)
    except PluginError:
        return ""
    return v if isinstance(v, str) else ""


def group_kind(obj: Dict[str, Any]) -> GroupKind:
    """GroupVersionKind().GroupKind(): an apiVersion with two slashes gives an empty GroupKind."""
    api_version = _string(obj, "apiVersion")
    kind = _string(obj, "kind")
    if api_version in ("", "/"):
        return ("", kind)
    slashes = api_version.count("/")
    if slashes == 0:
        return ("", kind)
    if slashes == 1:
        return (api_version.split("/")[0], kind)
    return ("", "")


def _annotations(obj: Dict[str, Any]) -> Dict[str, str]:
    """GetAnnotations (NestedStringMap): nothing unless a map whose values are all strings."""
    try:
        v, _ = _nested(obj, "metadata", "annotations")
    except PluginError:
        return {}
    if not isinstance(v, dict) or not all(isinstance(x, str) for x in v.values()):
        return {}
    return v


def _has_owner_references(obj: Dict[str, Any]) -> bool:
    """len(GetOwnerReferences()) > 0: a non-empty list of maps (one non-map: none at all)."""
    try:
        v, _ = _nested(obj, "metadata", "ownerReferences")
    except PluginError:
        return False
    return isinstance(v, list) and bool(v) and all(isinstance(r, dict) for r in v)


def _typed(value: Any, want: type, where: str) -> Any:
    """encoding/json into a Go struct field: null is the zero value, another JSON type an error."""
    if value is None:
        return want()
    if isinstance(value, want):
        return value
    go = "struct" if want is dict else "slice" if want is list else "string"
    raise PluginError(f"json: cannot unmarshal {go_json_kind(value)} into Go struct "
                      f"field {where} of type {go}")


def _field(parent: Dict[str, Any], key: str, want: type, where: str) -> Any:
    return _typed(parent.get(key), want, f"{where}.{key}")


def _typed_path(obj: Dict[str, Any], path: Sequence[str], where: str) -> Dict[str, Any]:
    cur = obj
    for key in path:
        cur = _field(cur, key, dict, where)
        where = f"{where}.{key}"
    return cur


class _PodSpec:
    """The fields of a decoded v1.PodSpec this plugin reads (volumes' claims, images)."""

    def __init__(self, spec: Dict[str, Any], where: str) -> None:
        self.claims: List[Optional[str]] = []  # per volume: claimName, None without a PVC
        for vol in _field(spec, "volumes", list, where):
            vol = _typed(vol, dict, f"{where}.volumes")
            pvc = vol.get("persistentVolumeClaim")
            if pvc is None:
                self.claims.append(None)
                continue
            pvc = _typed(pvc, dict, f"{where}.volumes.persistentVolumeClaim")
            self.claims.append(_field(pvc, "claimName", str,
                                      f"{where}.volumes.persistentVolumeClaim"))
        self.images = self._images(spec, "containers", where)
        self.init_images = self._images(spec, "initContainers", where)

    @staticmethod
    def _images(spec: Dict[str, Any], key: str, where: str) -> List[str]:
        out = []
        for c in _field(spec, key, list, where):
            c = _typed(c, dict, f"{where}.{key}")
            out.append(_field(c, "image", str, f"{where}.{key}"))
        return out


# ----------------------------------------------------------------------------- whiteouts

def whiteout(obj: Dict[str, Any], o: Options) -> bool:
    """kubernetes.go getWhiteOuts."""
    gk = group_kind(obj)
    if o.include_only:
        if gk not in o.include_only:
            return True
    elif gk in ALWAYS_WHITED_OUT or gk in o.extra_whiteouts:
        return True
    if o.disable_whiteout_owned:
        return False
    if _has_owner_references(obj):
        return True
    name = _string(obj, "metadata", "name")
    if gk == ("", "ServiceAccount") and name == "default" and o.strip_default_rbac:
        return True
    if gk == ("", "Secret") and o.strip_default_rbac \
            and _annotations(obj).get(SA_NAME_ANNOTATION) == "default":
        return True
    if gk == ("", "ConfigMap") and name == "kube-root-ca.crt" and o.strip_default_cabundle:
        return True
    return gk[0] == "extensions"


# ----------------------------------------------------------------------------- patches

def _crane_patch(text: str, what: str) -> List[Dict[str, Any]]:
    """Decode the JSON patch text crane formats with ``%v`` (jsonpatch.DecodePatch)."""
    try:
        ops = json.loads(text)
    except ValueError as e:
        raise PluginError(f"the JSON patch crane formats for {what} is not valid JSON ({e}): "
                          f"{text}") from None
    if not isinstance(ops, list) or not all(isinstance(op, dict) for op in ops):
        raise PluginError(f"the JSON patch crane formats for {what} is not a list of "
                          f"operations: {text}")
    return ops


def _remove(path: str) -> List[Dict[str, Any]]:
    return _crane_patch('[\n{"op": "remove", "path": "%s"}\n]' % path, path)


def _replace(path: str, value: str) -> List[Dict[str, Any]]:
    return _crane_patch('[\n{"op": "replace", "path": "%s", "value": "%s"}\n]' % (path, value),
                        path)


def _annotation_patch(op: str, items: Sequence[Tuple[str, Optional[str]]]) -> List[Dict[str, Any]]:
    """crane's annotationInitial/Next (add) and removeAnnotationInitial/Next texts, joined."""
    text = "["
    for i, (key, value) in enumerate(items):
        text += "\n" if i == 0 else ",\n"
        text += '{"op": "%s", "path": "/metadata/annotations/%s"' % (op, key)
        text += ', "value": "%s"}' % value if value is not None else "}"
    return _crane_patch(text + "]", f"{op} annotations")


def _registry(replacements: Dict[str, str], image: str) -> Optional[str]:
    """util.UpdateImageRegistry: the longest ``/``-prefix of ``image`` in the map is replaced."""
    parts = image.split("/")
    for i in range(len(parts), 0, -1):
        new = replacements.get("/".join(parts[:i]))
        if new is not None:
            return new if i == len(parts) else f"{new}/{'/'.join(parts[i:])}"
    return None


def _image_patches(images: List[str], path: str, replacements: Dict[str, str]
                   ) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    for i, image in enumerate(images):
        new = _registry(replacements, image)
        if new is not None:
            out += _replace(path % i, new)
    return out


def _pod_template(obj: Dict[str, Any]) -> Optional[_PodSpec]:
    """types.IsPodSpecable: ``spec.template`` that decodes as a PodTemplateSpec, else None."""
    spec = obj.get("spec")
    if not isinstance(spec, dict) or "template" not in spec:
        return None
    try:
        template = _typed(spec["template"], dict, "PodTemplateSpec")
        return _PodSpec(_field(template, "spec", dict, "PodTemplateSpec"), "PodTemplateSpec.spec")
    except PluginError:
        return None


def _node_port(v: Any) -> int:
    """getNodePortInt: numbers truncated; a numeric string is 0 (crane's shadowed variable)."""
    if isinstance(v, bool) or v is None:
        return 0
    if isinstance(v, (int, float)):
        return int(v)
    if isinstance(v, str):
        if not re.fullmatch(r"[+-]?[0-9]+", v):
            raise PluginError(f'strconv.Atoi: parsing "{v}": invalid syntax')
        if not -2**63 <= int(v) < 2**63:
            raise PluginError(f'strconv.Atoi: parsing "{v}": value out of range')
        return 0
    return 0


def _node_port_patches(obj: Dict[str, Any]) -> List[Dict[str, Any]]:
    """getNodePortPatch: drop node ports that last-applied-configuration did not set."""
    spec = obj.get("spec")
    if not isinstance(spec, dict) or "type" not in spec or spec["type"] == "ExternalName":
        return []
    ports = spec.get("ports")
    if not isinstance(ports, list):
        return []
    named: Set[str] = set()
    unnamed: Set[int] = set()
    applied_text = _annotations(obj).get(LAST_APPLIED)
    if applied_text is not None:
        try:
            applied = json.loads(applied_text)
        except ValueError as e:
            raise PluginError(f"annotation {LAST_APPLIED}: {e}") from None
        if applied is not None and not isinstance(applied, dict):
            raise PluginError(f"annotation {LAST_APPLIED}: json: cannot unmarshal "
                              f"{go_json_kind(applied)} into Go value of type "
                              f"map[string]interface {{}}")
        applied_ports, found = _nested(applied or {}, "spec", "ports")
        if found and not isinstance(applied_ports, list):
            raise PluginError(f".spec.ports accessor error: {applied_ports} is of the type "
                              f"{_go_type(applied_ports)}, expected []interface{{}}")
        for p in applied_ports or []:
            if not isinstance(p, dict) or "nodePort" not in p or _node_port(p["nodePort"]) <= 0:
                continue
            if "name" not in p:
                unnamed.add(_node_port(p["nodePort"]))
            elif isinstance(p["name"], str):
                named.add(p["name"])
            else:  # crane: portName.(string) panics
                raise PluginError(f"annotation {LAST_APPLIED}: a port's name is not a string: "
                                  f"{json.dumps(p['name'])}")
    out: List[Dict[str, Any]] = []
    for i, p in enumerate(ports):
        if not isinstance(p, dict) or "nodePort" not in p:
            continue
        node_port = _node_port(p["nodePort"])
        if node_port == 0:
            continue
        name = p["name"] if isinstance(p.get("name"), str) else ""
        if (name not in named) if name else (node_port not in unnamed):
            out += _remove(f"/spec/ports/{i}/nodePort")
    return out


def _service_patches(obj: Dict[str, Any]) -> List[Dict[str, Any]]:
    """removeServiceFields."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    out: List[Dict[str, Any]] = []
    if spec.get("type", None) == "LoadBalancer":
        out += _remove("/spec/externalIPs")
    if "clusterIP" in spec and spec["clusterIP"] != "None":
        out += _remove("/spec/clusterIP")
    if "clusterIPs" in spec:
        ips = spec["clusterIPs"]
        if not isinstance(ips, list) or not ips or ips[0] != "None":
            out += _remove("/spec/clusterIPs")
    return out + _node_port_patches(obj)


def _claim_patches(claims: List[Optional[str]], path: str, renames: Dict[str, str]
                   ) -> List[Dict[str, Any]]:
    """util.RenamePVCs (and renamePVCTemplates with template names as claims)."""
    out: List[Dict[str, Any]] = []
    for i, claim in enumerate(claims):
        if claim is not None and claim in renames:
            out += _replace(path % i, renames[claim])
    return out


def patches(obj: Dict[str, Any], o: Options) -> List[Dict[str, Any]]:
    """kubernetes.go getKubernetesTransforms: the operations for a kept resource, in order."""
    gk = group_kind(obj)
    out: List[Dict[str, Any]] = []
    for field in STRIPPED_FIELDS:
        if _nested(obj, *field)[1]:
            out += _remove("/" + "/".join(field))
    if o.add_annotations:
        out += _annotation_patch("add", list(o.add_annotations.items()))
    if o.remove_annotations:
        out += _annotation_patch("remove", [(k, None) for k in o.remove_annotations])
    pod_spec: Optional[_PodSpec] = None
    if gk in POD_SPEC_AT:
        at = POD_SPEC_AT[gk]
        where = gk[1]
        pod_spec = _PodSpec(_typed_path(obj, at, where), ".".join((where,) + at))
        if gk == POD:
            for path in POD_FIELDS_REMOVED:
                out += _remove(path)
        pointer = "".join(f"/{k}" for k in at) + "/volumes/%d/persistentVolumeClaim/claimName"
        if o.pvc_rename_map:
            out += _claim_patches(pod_spec.claims, pointer, o.pvc_rename_map)
    if gk == ROLE_BINDING:
        namespace = _field(_typed(obj.get("metadata"), dict, "RoleBinding.metadata"),
                           "namespace", str, "RoleBinding.metadata")
        for i, subject in enumerate(_field(obj, "subjects", list, "RoleBinding")):
            subject = _typed(subject, dict, "RoleBinding.subjects")
            if _field(subject, "kind", str, "Subject") == "ServiceAccount" \
                    and _field(subject, "namespace", str, "Subject") == namespace:
                out += _remove(f"/subjects/{i}/namespace")
    if gk == STATEFUL_SET:
        templates = _field(_typed(obj.get("spec"), dict, "StatefulSet.spec"),
                           "volumeClaimTemplates", list, "StatefulSet.spec")
        names = []
        for t in templates:
            md = _field(_typed(t, dict, "StatefulSet.spec.volumeClaimTemplates"), "metadata",
                        dict, "StatefulSet.spec.volumeClaimTemplates")
            names.append(_field(md, "name", str, "StatefulSet.spec.volumeClaimTemplates.metadata"))
        if o.pvc_rename_map:
            out += _claim_patches(list(names), "/spec/volumeClaimTemplates/%d/metadata/name",
                                  o.pvc_rename_map)
    if o.registry_replacement:
        if gk == POD:
            assert pod_spec is not None
            out += _image_patches(pod_spec.images, "/spec/containers/%d/image",
                                  o.registry_replacement)
            out += _image_patches(pod_spec.init_images, "/spec/initContainers/%d/image",
                                  o.registry_replacement)
        else:
            template = _pod_template(obj)
            if template is not None:
                out += _image_patches(template.images, "/spec/template/spec/containers/%d/image",
                                      o.registry_replacement)
                out += _image_patches(template.init_images,
                                      "/spec/template/spec/initContainers/%d/image",
                                      o.registry_replacement)
    if gk == SERVICE:
        out += _service_patches(obj)
    return out


class KubernetesPlugin(BuiltinPlugin):
    """crane's ``KubernetesTransformPlugin``: first in every plugin list unless skipped."""

    metadata_name = NAME
    version = VERSION
    optional_fields = FIELDS

    def respond(self, obj: Dict[str, Any], extras: Dict[str, str]) -> PluginResponse:
        """Run: options first (a bad ``pvc-rename-map`` fails every resource), then whiteout."""
        options = parse_options(extras)
        if whiteout(obj, options):
            return PluginResponse(True, [])
        return PluginResponse(False, patches(obj, options))
