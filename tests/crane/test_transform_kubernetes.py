"""crane's builtin KubernetesPlugin (kzgit/crane/kubernetes.py) and its place in ``kzgit transform``.

The first table ports konveyor/crane-lib ``transform/kubernetes/kubernetes_test.go`` (TestRun).
crane compares patches as sets; here the list is the exact order crane's code emits them in.
"""
from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from kzgit.cli.main import main
from kzgit.errors import PluginError
from kzgit.crane import KubernetesPlugin, run_plugin
from kzgit.crane.apply import for_kustomize
from kzgit.crane.kubernetes import parse_options
from kzgit.crane.priority import PluginOperation
from kzgit.yamlio import dump_documents, load_documents
from tests.crane.test_transform import plugin, read_overlay, replicas

pytestmark = pytest.mark.usefixtures("isolated_home")   # conftest.py

KUBECTL = shutil.which("kubectl")
K = KubernetesPlugin()


def rm(path: str) -> Dict[str, Any]:
    return {"op": "remove", "path": path}


def rep(path: str, value: Any) -> Dict[str, Any]:
    return {"op": "replace", "path": path, "value": value}


def add(path: str, value: Any) -> Dict[str, Any]:
    return {"op": "add", "path": path, "value": value}


OWNER = {"ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "ame": "PodOwner",
                              "uid": "1de6b4d2-ea5b-11eb-b902-021bddcaf6e4"}]}
# v1.PodTemplateSpec as the Go test marshals it into the object
TEMPLATE = {"metadata": {"creationTimestamp": None},
            "spec": {"initContainers": [{"name": "", "image": "quay.io/shawn_hurley/testing-image",
                                         "resources": {}}],
                     "containers": [{"name": "", "image": "quay.io/shawn_hurley/testing-image-real",
                                     "resources": {}}]}}
POD_SPEC = TEMPLATE["spec"]
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def svc(spec: Dict[str, Any], applied: Optional[str] = None) -> Dict[str, Any]:
    obj: Dict[str, Any] = {"kind": "Service", "apiVersion": "v1", "spec": spec}
    if applied is not None:
        obj["metadata"] = {"name": "svc-1", "annotations": {LAST_APPLIED: applied}}
    return obj


NODE_PORTS = {"type": "CustomType", "ports": [{"port": 31000, "nodePort": 31000},
                                              {"port": 31001, "nodePort": 31001}]}
NAMED_PORTS = {"type": "CustomType", "ports": [{"name": "foo", "port": 31000, "nodePort": 31000},
                                               {"name": "bar", "port": 31001, "nodePort": 31001}]}

# (name, object, extras, whiteout, patches); patches None: crane's test does not check them
CRANE_CASES = [
    ("EnpointWhiteOut", {"kind": "Endpoints", "apiVersion": "v1"}, {}, True, []),
    ("EnpointSliceWhiteOut", {"kind": "EndpointSlice", "apiVersion": "discovery.k8s.io/v1"}, {},
     True, []),
    ("PVCWhiteOut", {"kind": "PersistentVolumeClaim", "apiVersion": "v1"}, {}, True, []),
    ("NoDeploymentWhiteoutByDefault", {"kind": "Deployment", "apiVersion": "apps/v1"}, {}, False, []),
    ("DeploymentAdditionalWhiteout", {"kind": "Deployment", "apiVersion": "apps/v1"},
     {"extra-whiteouts": "Deployment.apps"}, True, []),
    ("DeploymentWhiteoutWithIncludeOnly", {"kind": "Deployment", "apiVersion": "apps/v1"},
     {"include-only": "Pod"}, True, []),
    ("OwnedPodWhiteOut", {"kind": "Pod", "apiVersion": "v1", "metadata": OWNER}, {}, True, []),
    ("OwnedPodSpecableWhiteOut", {"kind": "InvalidGVK", "apiVersion": "v1", "metadata": OWNER,
                                  "spec": {"template": TEMPLATE}}, {}, True, []),
    ("OwnedPodWhiteOutDisabled", {"kind": "Pod", "apiVersion": "v1", "metadata": OWNER},
     {"disable-whiteout-owned": "true"}, False,
     [rm("/spec/nodeName"), rm("/spec/nodeSelector"), rm("/spec/priority")]),
    ("OwnedPodSpecableWhiteOutDisabled", {"kind": "InvalidGVK", "apiVersion": "v1", "metadata": OWNER,
                                          "spec": {"template": TEMPLATE}},
     {"disable-whiteout-owned": "true"}, False, []),
    ("PodSpecableContainersUpdated", {"kind": "InvalidGVK", "apiVersion": "v1",
                                      "spec": {"template": TEMPLATE}},
     {"registry-replacement": "quay.io=dockerhub.io"}, False,
     [rep("/spec/template/spec/containers/0/image", "dockerhub.io/shawn_hurley/testing-image-real"),
      rep("/spec/template/spec/initContainers/0/image", "dockerhub.io/shawn_hurley/testing-image")]),
    ("NonPodSpecable", {"kind": "InvalidGVK", "apiVersion": "v1", "spec": {"podTemplate": TEMPLATE}},
     {"registry-replacement": "quay.io=dockerhub.io"}, False, []),
    ("RemoveMetadataAndStatus", {"kind": "InvalidGVK", "apiVersion": "v1",
                                 "metadata": {"uid": "1de6b4d2-ea5b-11eb-b902-021bddcaf6e4",
                                              "resourceVersion": "19281149"},
                                 "status": {"something": "12345", "something-else": "abcde"}},
     {}, False, [rm("/metadata/uid"), rm("/metadata/resourceVersion"), rm("/status")]),
    # crane iterates a Go map (random order); kzgit keeps the flag's order
    ("AddAnnotations", {"kind": "InvalidGVK", "apiVersion": "v1"},
     {"add-annotations": "testing.io=adding-new-thing,multiple-testing=two-new-anno"}, False,
     [add("/metadata/annotations/testing.io", "adding-new-thing"),
      add("/metadata/annotations/multiple-testing", "two-new-anno")]),
    ("RemoveAnnotations", {"kind": "InvalidGVK", "apiVersion": "v1"},
     {"remove-annotations": "testing.io,multiple-testing"}, False,
     [rm("/metadata/annotations/testing.io"), rm("/metadata/annotations/multiple-testing")]),
    ("HandlePod", {"kind": "Pod", "apiVersion": "v1", "spec": POD_SPEC}, {}, False,
     [rm("/spec/nodeName"), rm("/spec/nodeSelector"), rm("/spec/priority")]),
    ("HandleBaseService", {"kind": "Service", "apiVersion": "v1"}, {}, False, []),
    ("HandleLoadBalancerService", svc({"type": "LoadBalancer"}), {}, False, [rm("/spec/externalIPs")]),
    ("HandleLoadBalancerServiceWithClusterIP", svc({"type": "LoadBalancer", "clusterIP": "1.2.3.4"}),
     {}, False, [rm("/spec/externalIPs"), rm("/spec/clusterIP")]),
    ("HandleLoadBalancerServiceWithClusterIPs",
     svc({"type": "LoadBalancer", "clusterIPs": ["1.2.3.4"]}), {}, False,
     [rm("/spec/externalIPs"), rm("/spec/clusterIPs")]),
    ("HandleLoadBalancerServiceWithClusterIPNone",
     svc({"type": "LoadBalancer", "clusterIP": "None"}), {}, False, [rm("/spec/externalIPs")]),
    ("HandleLoadBalancerNodePort", svc(NODE_PORTS), {}, False,
     [rm("/spec/ports/0/nodePort"), rm("/spec/ports/1/nodePort")]),
    ("HandleNodePortUnnamedAnnotation",
     svc(NODE_PORTS, '\n      {"apiVersion":"v1","kind":"Service","metadata":{"name":"svc-1",'
                     '"namespace":"foo"},"spec":{"ports":[{"nodePort":31001}]}}'),
     {}, False, [rm("/spec/ports/0/nodePort")]),
    ("HandleNodePortNamedAnnotation",
     svc(NAMED_PORTS, '\n      {"apiVersion":"v1","kind":"Service","metadata":{"name":"svc-1",'
                      '"namespace":"foo"},"spec":{"ports":[{"name": "foo","nodePort":31000}]}}'),
     {}, False, [rm("/spec/ports/1/nodePort")]),
]


@pytest.mark.parametrize("name,obj,extras,whiteout,patches", CRANE_CASES,
                         ids=[c[0] for c in CRANE_CASES])
def test_crane_lib_cases(name: str, obj: Dict[str, Any], extras: Dict[str, str], whiteout: bool,
                         patches: List[Dict[str, Any]]) -> None:
    before = copy.deepcopy(obj)
    resp = K.respond(obj, extras)
    assert resp.is_whiteout is whiteout
    assert resp.patches == patches
    assert obj == before, "the plugin must not change the resource (it runs on shared objects)"


# ------------------------------------------------------------------ more whiteouts

def res(kind: str, name: str = "x", api: str = "v1", **md: Any) -> Dict[str, Any]:
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, **md}}


SA_SECRET = res("Secret", "default-token-abc",
                annotations={"kubernetes.io/service-account.name": "default"})


@pytest.mark.parametrize("obj,extras,whiteout", [
    (res("ServiceAccount", "default"), {}, True),
    (res("ServiceAccount", "builder"), {}, False),
    (res("ServiceAccount", "default"), {"strip-default-rbac": "false"}, False),
    # Go strconv.ParseBool rejects "yes": crane keeps the false it returns, so stripping stops
    (res("ServiceAccount", "default"), {"strip-default-rbac": "yes"}, False),
    (res("ServiceAccount", "default"), {"strip-default-rbac": "T"}, True),
    (res("ServiceAccount", "default"), {"strip-default-rbac": ""}, True),  # empty: unset
    (SA_SECRET, {}, True),
    (SA_SECRET, {"strip-default-rbac": "0"}, False),
    (res("Secret", "s", annotations={"kubernetes.io/service-account.name": "builder"}), {}, False),
    # annotations with a non-string value read as none at all (unstructured GetAnnotations)
    (res("Secret", "s", annotations={"kubernetes.io/service-account.name": "default", "n": 1}),
     {}, False),
    (res("ConfigMap", "kube-root-ca.crt"), {}, True),
    (res("ConfigMap", "kube-root-ca.crt"), {"strip-default-cabundle": "False"}, False),
    (res("Deployment", api="extensions/v1beta1"), {}, True),
    (res("Ingress", api="extensions/v1beta1"), {"include-only": "Ingress.extensions"}, True),
    # disable-whiteout-owned returns before the default-RBAC, CA bundle and extensions checks
    (res("ServiceAccount", "default"), {"disable-whiteout-owned": "1"}, False),
    (res("Deployment", api="extensions/v1beta1"), {"disable-whiteout-owned": "true"}, False),
    (res("Pod", ownerReferences=[{"kind": "Job"}]), {"disable-whiteout-owned": "nope"}, True),
    (res("Pod", ownerReferences=[]), {}, False),
    (res("Pod", ownerReferences=[{"kind": "Job"}, "junk"]), {}, False),  # not all maps: none
    # include-only wins over extra-whiteouts (which it ignores) and over the default list
    (res("Endpoints"), {"include-only": "Endpoints", "extra-whiteouts": "Endpoints"}, False),
    (res("Service"), {"include-only": "Endpoints,Route.route.openshift.io"}, True),
    (res("Route", api="route.openshift.io/v1"), {"include-only": "Route.route.openshift.io"}, False),
    (res("Route", api="route.openshift.io/v1"), {"extra-whiteouts": "Route.route.openshift.io"}, True),
    (res("Route", api="route.openshift.io/v1"), {"extra-whiteouts": "Route"}, False),
    (res("PersistentVolumeClaim"), {"extra-whiteouts": "Service"}, True),
    # an apiVersion with two slashes gives an empty GroupKind (schema.ParseGroupVersion fails)
    (res("Endpoints", api="a/b/v1"), {}, False),
    (res("Endpoints", api="a/b/v1"), {"include-only": "."}, False),
])
def test_whiteouts(obj: Dict[str, Any], extras: Dict[str, str], whiteout: bool) -> None:
    assert K.respond(obj, extras).is_whiteout is whiteout


# ------------------------------------------------------------------ more patches

def test_strip_fields_in_crane_order_and_null_values_count() -> None:
    obj = res("ConfigMap", status={"x": 1})
    obj["metadata"].update({"managedFields": [], "generation": 3, "creationTimestamp": None,
                            "resourceVersion": "1", "selfLink": "/api", "uid": "u"})
    obj["status"] = None
    assert K.respond(obj, {}).patches == [
        rm("/metadata/uid"), rm("/metadata/selfLink"), rm("/metadata/resourceVersion"),
        rm("/metadata/creationTimestamp"), rm("/metadata/generation"),
        rm("/metadata/managedFields"), rm("/status")]
    with pytest.raises(PluginError, match=r"\.metadata\.uid accessor error: x is of the type "
                                          r"string, expected map\[string\]interface\{\}"):
        K.respond({"apiVersion": "v1", "kind": "ConfigMap", "metadata": "x"}, {})


def test_annotations_are_formatted_like_crane() -> None:
    obj = res("ConfigMap")
    # add before remove; a key alone adds ""; k=v=w keeps v; the last value of a key wins
    got = K.respond(obj, {"add-annotations": "a=1,b,c=2=3,a=4", "remove-annotations": "x,,y"})
    assert got.patches == [add("/metadata/annotations/a", "4"), add("/metadata/annotations/b", ""),
                           add("/metadata/annotations/c", "2"), rm("/metadata/annotations/x"),
                           rm("/metadata/annotations/"), rm("/metadata/annotations/y")]
    # crane puts the key into the path unescaped (no ~1), as its %v-formatted JSON text does
    assert K.respond(obj, {"add-annotations": "example.com/team=a"}).patches == [
        add("/metadata/annotations/example.com/team", "a")]
    assert K.respond(obj, {"add-annotations": r"k=a\tb"}).patches == [
        add("/metadata/annotations/k", "a\tb")]
    with pytest.raises(PluginError, match="not valid JSON"):
        K.respond(obj, {"add-annotations": 'k=say "hi"'})


def test_registry_replacement() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"image": "docker.io/foo/app:1"}, {"image": "nginx"},
                                   {"image": "registry.local:5000/team/x"}],
                    "initContainers": [{"image": "docker.io/other/init"}]}}
    flags = {"registry-replacement": "docker.io=mirror.io,docker.io/foo=quay.io/bar,"
                                     "registry.local:5000/team/x=pinned/x:2"}
    assert K.respond(pod, flags).patches == [
        rm("/spec/nodeName"), rm("/spec/nodeSelector"), rm("/spec/priority"),
        rep("/spec/containers/0/image", "quay.io/bar/app:1"),      # the longest prefix wins
        rep("/spec/containers/2/image", "pinned/x:2"),             # the whole image matched
        rep("/spec/initContainers/0/image", "mirror.io/other/init")]
    for kind, api in [("Deployment", "apps/v1"), ("StatefulSet", "apps/v1"),
                      ("DaemonSet", "apps/v1"), ("ReplicaSet", "apps/v1"), ("Job", "batch/v1"),
                      ("ReplicationController", "v1"), ("Widget", "example.com/v1")]:
        obj = {"apiVersion": api, "kind": kind, "metadata": {"name": "w"},
               "spec": {"template": {"spec": copy.deepcopy(pod["spec"])}}}
        assert K.respond(obj, flags).patches == [
            rep("/spec/template/spec/containers/0/image", "quay.io/bar/app:1"),
            rep("/spec/template/spec/containers/2/image", "pinned/x:2"),
            rep("/spec/template/spec/initContainers/0/image", "mirror.io/other/init")], kind
    # crane looks for spec.template only: a CronJob's images are left alone
    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
            "spec": {"jobTemplate": {"spec": {"template": {"spec": pod["spec"]}}}}}
    assert K.respond(cron, flags).patches == []
    # a template that does not decode as a PodTemplateSpec is not pod-specable: no patch, no error
    odd = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
           "spec": {"template": {"spec": {"containers": "nope"}}}}
    assert K.respond(odd, flags).patches == []


PVC_VOLUMES = [{"name": "cache", "emptyDir": {}},
               {"name": "data", "persistentVolumeClaim": {"claimName": "old-data"}},
               {"name": "logs", "persistentVolumeClaim": {"claimName": "logs"}}]


@pytest.mark.parametrize("kind,api,spec,pointer", [
    ("Pod", "v1", {"volumes": PVC_VOLUMES}, "/spec/volumes"),
    ("Deployment", "apps/v1", {"template": {"spec": {"volumes": PVC_VOLUMES}}},
     "/spec/template/spec/volumes"),
    ("DaemonSet", "apps/v1", {"template": {"spec": {"volumes": PVC_VOLUMES}}},
     "/spec/template/spec/volumes"),
    ("Job", "batch/v1", {"template": {"spec": {"volumes": PVC_VOLUMES}}},
     "/spec/template/spec/volumes"),
    ("ReplicaSet", "apps/v1", {"template": {"spec": {"volumes": PVC_VOLUMES}}},
     "/spec/template/spec/volumes"),
    ("ReplicationController", "v1", {"template": {"spec": {"volumes": PVC_VOLUMES}}},
     "/spec/template/spec/volumes"),
    ("CronJob", "batch/v1beta1",
     {"jobTemplate": {"spec": {"template": {"spec": {"volumes": PVC_VOLUMES}}}}},
     "/spec/jobTemplate/spec/template/spec/volumes"),
])
def test_pvc_rename(kind: str, api: str, spec: Dict[str, Any], pointer: str) -> None:
    obj = {"apiVersion": api, "kind": kind, "metadata": {"name": "w"}, "spec": spec}
    got = K.respond(obj, {"pvc-rename-map": "old-data:new-data,unused:x"}).patches
    pod = [rm("/spec/nodeName"), rm("/spec/nodeSelector"), rm("/spec/priority")] if kind == "Pod" else []
    assert got == pod + [rep(f"{pointer}/1/persistentVolumeClaim/claimName", "new-data")]


def test_statefulset_pvc_rename_volumes_then_claim_templates() -> None:
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
           "spec": {"template": {"spec": {"volumes": PVC_VOLUMES}},
                    "volumeClaimTemplates": [{"metadata": {"name": "www"}},
                                             {"metadata": {"name": "old-data"}}]}}
    assert K.respond(sts, {"pvc-rename-map": "old-data:new-data,www:web"}).patches == [
        rep("/spec/template/spec/volumes/1/persistentVolumeClaim/claimName", "new-data"),
        rep("/spec/volumeClaimTemplates/0/metadata/name", "web"),
        rep("/spec/volumeClaimTemplates/1/metadata/name", "new-data")]


@pytest.mark.parametrize("flag,message", [
    ("Old:new", "Invalid PVC remap: Old:new, a lowercase RFC 1123 subdomain must consist of lower "
                "case alphanumeric characters, '-' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'example.com', regex used for validation is "
                r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
    ("a:b,", "Invalid PVC remap: , a lowercase RFC 1123"),
    ("a:" + "B" * 254, "must be no more than 253 characters,a lowercase"),
    ("a:" + "b" * 254, "must be no more than 253 characters"),
    ("a-b", "invalid PVC remap 'a-b': expected old-name:new-name"),   # crane panics
])
def test_pvc_rename_map_errors(flag: str, message: str) -> None:
    # the options are read before the whiteout decision: every resource fails, as in crane
    with pytest.raises(PluginError) as e:
        K.respond({"apiVersion": "v1", "kind": "Endpoints"}, {"pvc-rename-map": flag})
    assert message in str(e.value)
    assert parse_options({"pvc-rename-map": "a:b:c"}).pvc_rename_map == {"a": "b"}


def test_typed_kinds_fail_on_mistyped_fields_they_read() -> None:
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
           "spec": {"template": {"spec": {"volumes": "x"}}}}
    with pytest.raises(PluginError, match="cannot unmarshal string into Go struct field "
                                          "Deployment.spec.template.spec.volumes of type slice"):
        K.respond(dep, {})
    # the label names the plugin and the resource
    with pytest.raises(PluginError, match=r"^builtin crane plugin 'KubernetesPlugin' on "
                                          r"Deployment d: json: cannot unmarshal"):
        run_plugin(K, dep, {}, resource="Deployment d")


def test_rolebinding_subjects_in_own_namespace() -> None:
    rb = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
          "metadata": {"name": "rb", "namespace": "app"},
          "subjects": [{"kind": "ServiceAccount", "name": "a", "namespace": "app"},
                       {"kind": "ServiceAccount", "name": "b", "namespace": "other"},
                       {"kind": "User", "name": "c", "namespace": "app"},
                       {"kind": "ServiceAccount", "name": "d", "namespace": "app"}]}
    assert K.respond(rb, {}).patches == [rm("/subjects/0/namespace"), rm("/subjects/3/namespace")]
    # no namespace on either side: "" == "" (crane emits it; crane_apply drops it)
    rb = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
          "metadata": {"name": "rb"}, "subjects": [{"kind": "ServiceAccount", "name": "a"}]}
    assert K.respond(rb, {}).patches == [rm("/subjects/0/namespace")]
    crb = dict(rb, kind="ClusterRoleBinding")
    assert K.respond(crb, {}).patches == []


@pytest.mark.parametrize("spec,applied,patches", [
    ({"type": "ExternalName", "ports": [{"nodePort": 1}]}, None, []),
    ({"ports": [{"nodePort": 1}]}, None, []),                   # no type: ports are not looked at
    ({"type": "NodePort", "ports": [{"nodePort": 0}, {"port": 1}, "x"]}, None, []),
    # a nodePort string counts as 0 (crane's getNodePortInt shadows its result)
    ({"type": "NodePort", "ports": [{"nodePort": "31000"}]}, None, []),
    ({"type": "NodePort", "ports": [{"nodePort": 31000.7}]}, '{"spec":{"ports":[{"nodePort":31000}]}}',
     []),
    ({"type": "NodePort", "ports": [{"name": "", "nodePort": 5}]}, '{"spec":{"ports":[{"nodePort":5}]}}',
     []),
    ({"type": "NodePort", "ports": [{"name": 7, "nodePort": 5}]}, None, [rm("/spec/ports/0/nodePort")]),
    ({"type": "NodePort", "ports": [{"nodePort": 5}]}, "null", [rm("/spec/ports/0/nodePort")]),
    ({"clusterIPs": []}, None, [rm("/spec/clusterIPs")]),
    ({"clusterIPs": "10.0.0.1"}, None, [rm("/spec/clusterIPs")]),
    ({"clusterIPs": ["None", "x"], "clusterIP": None}, None, [rm("/spec/clusterIP")]),
    ({"type": "LoadBalancer", "clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"],
      "ports": [{"name": "http", "nodePort": 30080}, {"name": "https", "nodePort": 30443}]},
     '{"spec":{"ports":[{"name":"https","nodePort":30443}]}}',
     [rm("/spec/externalIPs"), rm("/spec/clusterIP"), rm("/spec/clusterIPs"),
      rm("/spec/ports/0/nodePort")]),
])
def test_service_rules(spec: Dict[str, Any], applied: Optional[str],
                       patches: List[Dict[str, Any]]) -> None:
    assert K.respond(svc(spec, applied), {}).patches == patches


@pytest.mark.parametrize("spec,applied,message", [
    ({"type": "NodePort", "ports": [{"nodePort": "abc"}]}, None,
     'strconv.Atoi: parsing "abc": invalid syntax'),
    ({"type": "NodePort", "ports": []}, "{not json", "last-applied-configuration"),
    ({"type": "NodePort", "ports": []}, "[1]", "cannot unmarshal array into Go value"),
    ({"type": "NodePort", "ports": []}, '{"spec":{"ports":null}}',
     r"\.spec\.ports accessor error: None is of the type <nil>, expected \[\]interface\{\}"),
    ({"type": "NodePort", "ports": []}, '{"spec":{"ports":[{"name":null,"nodePort":1}]}}',
     "a port's name is not a string"),   # crane panics
])
def test_service_errors(spec: Dict[str, Any], applied: Optional[str], message: str) -> None:
    with pytest.raises(PluginError, match=message):
        K.respond(svc(spec, applied), {})


def test_metadata() -> None:
    assert (K.name, K.version, K.request_versions, K.response_versions) == (
        "KubernetesPlugin", "v0.0.6", ["v1"], ["v1"])
    assert [f.flag_name for f in K.optional_fields] == [
        "add-annotations", "registry-replacement", "remove-annotations", "disable-whiteout-owned",
        "extra-whiteouts", "include-only", "strip-default-rbac", "strip-default-cabundle",
        "pvc-rename-map"]
    assert K.optional_fields[7].help == "Whether to strip default CA Bundle (default: true)"


# ------------------------------------------------------------------ crane apply semantics

def test_for_kustomize_follows_crane_apply_options() -> None:
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"nodeName": "n1", "containers": []}}
    ops = [PluginOperation("K", op, (0, i)) for i, op in enumerate([
        rm("/spec/nodeName"), rm("/spec/nodeSelector"), rm("/metadata/annotations/x"),
        add("/metadata/annotations/a", "1"), add("/metadata/annotations/b", "2"),
        add("/metadata/labels/deep/er", "3"), rm("/spec/containers/4")])]
    written, dropped = for_kustomize(obj, ops)
    assert [w.operation for w in written] == [
        rm("/spec/nodeName"), add("/metadata/annotations", {}), add("/metadata/annotations/a", "1"),
        add("/metadata/annotations/b", "2"), add("/metadata/labels", {}),
        add("/metadata/labels/deep", {}), add("/metadata/labels/deep/er", "3")]
    assert [d.operation["path"] for d in dropped] == [
        "/spec/nodeSelector", "/metadata/annotations/x", "/spec/containers/4"]
    with pytest.raises(PluginError, match="missing array or list item '/spec/volumes/0'"):
        for_kustomize(obj, [PluginOperation("K", add("/spec/volumes/0/name", "v"), (0, 0))])


# ------------------------------------------------------------------ kzgit transform end to end

LIVE_DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "apps", "uid": "0b7c", "resourceVersion": "4711",
                 "generation": 2, "creationTimestamp": "2024-01-02T03:04:05Z",
                 "managedFields": [{"manager": "kubectl", "operation": "Update"}]},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "c", "image": "docker.io/library/nginx"}]}}},
    "status": {"replicas": 1, "readyReplicas": 1}}
LIVE: List[Dict[str, Any]] = [
    LIVE_DEPLOYMENT,
    {"apiVersion": "v1", "kind": "Service",
     "metadata": {"name": "web", "namespace": "apps", "uid": "1a2b"},
     "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.12", "clusterIPs": ["10.96.0.12"],
              "ports": [{"port": 80}], "selector": {"app": "web"}},
     "status": {"loadBalancer": {}}},
    {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web", "namespace": "apps"}},
    {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
     "metadata": {"name": "data", "namespace": "apps"}},
    {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": "apps"}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "debug", "namespace": "apps", "uid": "p1"},
     "spec": {"nodeName": "node-1", "priority": 0, "containers": [{"name": "c", "image": "busybox"}]},
     "status": {"phase": "Running"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "apps"},
     "data": {"k": "v"}},
]


@pytest.fixture()
def live(tmp_path: Path) -> Path:
    """An export of live objects, as ``crane export`` writes them: one file per resource."""
    d = tmp_path / "export"
    d.mkdir()
    for o in LIVE:
        (d / f"{o['kind']}_{o['metadata']['name']}.yaml").write_text(dump_documents([o]))
    return d


def render(out: Path) -> List[Dict[str, Any]]:
    from kzgit.builder import build
    mine = build(str(out)).to_yaml()
    if KUBECTL is not None:
        res = subprocess.run([KUBECTL, "kustomize", str(out)], capture_output=True, timeout=60)
        assert res.returncode == 0, res.stderr.decode()
        assert mine == res.stdout.decode()
    return load_documents(mine.encode())


def by_kind(objs: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    return {o["kind"]: o for o in objs}


def test_builtin_runs_by_default(live: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pd = tmp_path / "plugins"
    pd.mkdir()
    out = tmp_path / "out"
    assert main(["transform", str(live), "-p", str(pd), "-o", str(out)]) == 0
    # whited out: Endpoints, PersistentVolumeClaim, the default ServiceAccount
    assert "7 resources, 1 plugins: 3 patched, 3 whited out" in capsys.readouterr().err
    got = by_kind(render(out))
    assert sorted(got) == ["ConfigMap", "Deployment", "Pod", "Service"]
    # crane removes nodeName, nodeSelector and priority; the absent ones are not written
    # (kzgit.crane.apply), else kustomize would refuse the patch
    pod_patch = json.loads(next((out / "patches").glob("*-pod-apps-debug.json")).read_text())
    assert pod_patch == [rm("/metadata/uid"), rm("/status"), rm("/spec/nodeName"),
                         rm("/spec/priority")]
    assert got["Pod"] == {"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": "debug", "namespace": "apps"},
                          "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    dep = got["Deployment"]
    assert "status" not in dep and dep["metadata"] == {"name": "web", "namespace": "apps"}
    assert dep["spec"] == LIVE_DEPLOYMENT["spec"]
    assert got["Service"]["spec"] == {"type": "ClusterIP", "ports": [{"port": 80}],
                                      "selector": {"app": "web"}}
    assert "status" not in got["Service"]
    assert got["ConfigMap"] == LIVE[-1]


def test_skip_builtin_gives_the_previous_behaviour(live: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    pd = tmp_path / "plugins"
    pd.mkdir()
    out = tmp_path / "out"
    assert main(["transform", str(live), "-p", str(pd), "-s", "KubernetesPlugin",
                 "-o", str(out)]) == 0
    assert "7 resources, 0 plugins: 0 patched, 0 whited out" in capsys.readouterr().err
    key = lambda o: (o["kind"], o["metadata"]["name"])  # noqa: E731
    assert sorted(render(out), key=key) == sorted(LIVE, key=key)


def test_flags_priorities_and_conflicts(live: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    pd = tmp_path / "plugins"
    plugin(pd, "a", patches={"*": [add("/metadata/annotations/team", "from-a")]})
    flags = json.dumps({"add-annotations": "team=from-builtin", "registry-replacement":
                        "docker.io/library=mirror.local", "Strip-Default-RBAC": "false"})
    out = tmp_path / "out"
    assert main(["transform", str(live), "-p", str(pd), "--optional-flags", flags, "-q",
                 "-o", str(out)]) == 0
    got = by_kind(render(out))
    # the builtin comes first: without priorities its operation wins
    assert got["ConfigMap"]["metadata"]["annotations"] == {"team": "from-builtin"}
    assert got["ServiceAccount"]["metadata"]["annotations"] == {"team": "from-builtin"}
    assert got["Deployment"]["spec"]["template"]["spec"]["containers"][0]["image"] == \
        "mirror.local/nginx"
    ignored = read_overlay(out)["ignored"]
    assert {(i["plugin"], i["wonBy"]) for i in ignored} == {("a", "KubernetesPlugin")}
    assert len(ignored) == 5   # Deployment, Service, ServiceAccount, Pod, ConfigMap
    out2 = tmp_path / "out2"
    assert main(["transform", str(live), "-p", str(pd), "--optional-flags", flags, "-q",
                 "--plugin-priorities", "a", "-o", str(out2)]) == 0
    assert by_kind(render(out2))["ConfigMap"]["metadata"]["annotations"] == {"team": "from-a"}
    assert {(i["plugin"], i["wonBy"]) for i in read_overlay(out2)["ignored"]} == {
        ("KubernetesPlugin", "a")}
    # whiteouts win over any priority
    out3 = tmp_path / "out3"
    plugin(pd, "a", patches={"data": replicas(2)})
    assert main(["transform", str(live), "-p", str(pd), "-q", "--plugin-priorities", "a",
                 "-o", str(out3)]) == 0
    assert "PersistentVolumeClaim" not in by_kind(render(out3))


def test_binary_named_kubernetesplugin_is_shadowed(live: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """crane keeps the first plugin of a name, and its builtin comes first."""
    pd = tmp_path / "plugins"
    impostor = plugin(pd, "kube", name="KubernetesPlugin", patches={"*": replicas(7)})
    plugin(pd, "b")
    assert main(["transform", "--list-plugins", "-p", str(pd)]) == 0
    cap = capsys.readouterr()
    assert cap.out.count("Plugin: KubernetesPlugin") == 1 and "(builtin)" in cap.out
    assert f"warning: {impostor} is not run" in cap.err
    out = tmp_path / "out"
    assert main(["transform", str(live), "-p", str(pd), "-o", str(out)]) == 0
    assert "2 plugins" in capsys.readouterr().err
    assert by_kind(render(out))["Deployment"]["spec"]["replicas"] == 1
    # skipping the name skips both, as crane filters after dropping duplicates
    out2 = tmp_path / "out2"
    assert main(["transform", str(live), "-p", str(pd), "-s", "KubernetesPlugin", "-q",
                 "-o", str(out2)]) == 0
    assert by_kind(render(out2))["Deployment"] == LIVE_DEPLOYMENT


def test_kustomization_source(tmp_path: Path) -> None:
    """SOURCE a kustomization with live objects: OUT deletes the whiteouts, strips the rest."""
    src = tmp_path / "app"
    src.mkdir()
    (src / "kustomization.yaml").write_text("resources:\n- live.yaml\n")
    (src / "live.yaml").write_text(dump_documents(LIVE))
    pd = tmp_path / "plugins"
    pd.mkdir()
    out = tmp_path / "out"
    assert main(["transform", str(src), "-p", str(pd), "-q", "-o", str(out),
                 "--optional-flags", '{"pvc-rename-map": "data:data2", "remove-annotations": "x"}']) == 0
    got = by_kind(render(out))
    assert sorted(got) == ["ConfigMap", "Deployment", "Pod", "Service"]
    assert "status" not in got["Deployment"] and "nodeName" not in got["Pod"]["spec"] and "uid" not in got["Service"]["metadata"]


def test_annotation_keys_with_slashes_warn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """crane's patch addresses a nested key: faithful, so kzgit says what it does."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "c.yaml").write_text(dump_documents([
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "annotations": {
            "kubectl.kubernetes.io/last-applied-configuration": "{}"}}}]))
    pd = tmp_path / "plugins"
    pd.mkdir()
    flags = json.dumps({"add-annotations": "example.com/team=a,plain=b",
                        "remove-annotations": "kubectl.kubernetes.io/last-applied-configuration"})
    out = tmp_path / "out"
    assert main(["transform", str(src), "-p", str(pd), "--optional-flags", flags, "-q",
                 "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.count("warning: KubernetesPlugin") == 2
    assert "/metadata/annotations/example.com/team (a nested key)" in err
    # the same result as crane apply gives: a nested map (rendered by kustomize as ""), and
    # the remove of an absent path does nothing
    assert render(out)[0]["metadata"]["annotations"] == {
        "example.com": "", "kubectl.kubernetes.io/last-applied-configuration": "{}", "plain": "b"}
    assert main(["transform", str(src), "-p", str(pd), "--optional-flags", flags, "-q",
                 "-s", "KubernetesPlugin", "-o", str(tmp_path / "o2")]) == 0
    assert "warning" not in capsys.readouterr().err


def test_plugin_error_fails_the_run(live: Path, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    pd = tmp_path / "plugins"
    pd.mkdir()
    out = tmp_path / "out"
    assert main(["transform", str(live), "-p", str(pd), "-o", str(out),
                 "--optional-flags", '{"pvc-rename-map": "nocolon"}']) == 1
    assert "builtin crane plugin 'KubernetesPlugin' on" in capsys.readouterr().err
    assert not out.exists()
