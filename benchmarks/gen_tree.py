#!/usr/bin/env python3
"""Generate a kustomization tree of N resources for benchmarks and differential tests.

``gen_tree.py N OUTDIR`` writes::

    OUTDIR/base/kustomization.yaml       resources + a configMapGenerator (``shared-config``)
    OUTDIR/base/resources.yaml           N-1 resources: per app a Deployment, Service,
                                         ConfigMap and ServiceAccount that reference each other
    OUTDIR/overlay/kustomization.yaml    namePrefix, namespace, labels (includeSelectors),
                                         commonAnnotations, images, configMapGenerator
                                         (behavior: merge), one JSON6902 and one strategic-merge
                                         patch targeting every Deployment by label selector

The base holds exactly N resources (N-1 in ``resources.yaml`` plus the generated ConfigMap).
Output is deterministic: the same N gives the same bytes.  Build ``OUTDIR/overlay`` (or
``OUTDIR/base``).
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

KINDS = ("Deployment", "Service", "ConfigMap", "ServiceAccount")


def _deployment(i: int) -> str:
    app = f"app{i:05d}"
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {app}
  labels:
    app: {app}
    bench/workload: "true"
spec:
  replicas: {1 + i % 3}
  selector:
    matchLabels:
      app: {app}
  template:
    metadata:
      labels:
        app: {app}
    spec:
      serviceAccountName: {app}
      containers:
      - name: main
        image: registry.example.com/team/{'web' if i % 2 else 'worker'}:1.{i % 10}.0
        args:
        - --listen=:8080
        - --id={i}
        ports:
        - containerPort: 8080
          name: http
        envFrom:
        - configMapRef:
            name: {app}
        env:
        - name: SHARED
          valueFrom:
            configMapKeyRef:
              name: shared-config
              key: region
        volumeMounts:
        - name: config
          mountPath: /etc/{app}
      volumes:
      - name: config
        configMap:
          name: {app}
"""


def _service(i: int) -> str:
    app = f"app{i:05d}"
    return f"""apiVersion: v1
kind: Service
metadata:
  name: {app}
  labels:
    app: {app}
spec:
  selector:
    app: {app}
  ports:
  - name: http
    port: 80
    targetPort: 8080
"""


def _configmap(i: int) -> str:
    app = f"app{i:05d}"
    return f"""apiVersion: v1
kind: ConfigMap
metadata:
  name: {app}
data:
  APP_ID: "{i}"
  LOG_LEVEL: info
  settings.json: |
    {{"name": "{app}", "threads": {1 + i % 8}}}
"""


def _serviceaccount(i: int) -> str:
    app = f"app{i:05d}"
    return f"""apiVersion: v1
kind: ServiceAccount
metadata:
  name: {app}
"""


MAKERS = (_deployment, _service, _configmap, _serviceaccount)

BASE_KUSTOMIZATION = """apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- resources.yaml
configMapGenerator:
- name: shared-config
  literals:
  - region=eu-west-1
  - tier=standard
"""

OVERLAY_KUSTOMIZATION = """apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namePrefix: prod-
namespace: bench
resources:
- ../base
labels:
- pairs:
    env: production
  includeSelectors: true
commonAnnotations:
  bench.example.com/owner: platform
images:
- name: registry.example.com/team/web
  newName: mirror.example.com/team/web
  newTag: 2.0.0
configMapGenerator:
- name: shared-config
  behavior: merge
  literals:
  - tier=premium
patches:
- target:
    kind: Deployment
    labelSelector: bench/workload=true
  patch: |-
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --production
- target:
    kind: Deployment
    labelSelector: bench/workload=true
  patch: |-
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: any
    spec:
      template:
        spec:
          containers:
          - name: main
            resources:
              limits:
                memory: 256Mi
"""


def generate(n: int, outdir: str) -> None:
    """Write the base (exactly ``n`` resources) and the overlay under ``outdir``."""
    if n < 1:
        raise ValueError("N must be at least 1")
    docs: List[str] = []
    for k in range(n - 1):
        docs.append(MAKERS[k % 4](k // 4))
    base = os.path.join(outdir, "base")
    overlay = os.path.join(outdir, "overlay")
    os.makedirs(base, exist_ok=True)
    os.makedirs(overlay, exist_ok=True)
    with open(os.path.join(base, "resources.yaml"), "w", encoding="utf-8") as f:
        f.write("---\n".join(docs))
    with open(os.path.join(base, "kustomization.yaml"), "w", encoding="utf-8") as f:
        f.write(BASE_KUSTOMIZATION if docs else BASE_KUSTOMIZATION.replace("- resources.yaml\n", ""))
    with open(os.path.join(overlay, "kustomization.yaml"), "w", encoding="utf-8") as f:
        f.write(OVERLAY_KUSTOMIZATION)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=int, metavar="N", help="number of resources in the base")
    ap.add_argument("outdir", metavar="OUTDIR")
    ns = ap.parse_args(argv)
    generate(ns.n, ns.outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
