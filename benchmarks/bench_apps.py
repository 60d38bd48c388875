"""Benchmark: ``kzgit hook render --all`` over 200 Flux Kustomizations and Argo CD Applications
against the same 200 directories as plain kustomization roots.

Makes two git repositories in a temp dir holding the same ``--apps`` application directories
(``apps/appN``: a kustomization of a Deployment, a Service and a ConfigMap whose replicas read
``${REPLICAS:=1}``).  The plain one holds nothing else; the GitOps one also holds, for each
directory, a Flux Kustomization (``targetNamespace``, ``postBuild.substitute``,
``commonMetadata``) or, for every fourth one, an Argo CD Application (``kustomize.images``,
``namePrefix``), delivered by a ``flux-system`` Kustomization and an app-of-apps.
``--shared-bases``: each directory is instead an overlay of a base shared by four of them
(the bases are roots of both repositories).  Then times, alternating, ``kzgit hook render
--all --no-cache`` in each (the median of ``--runs``), and prints both and the ratio; exits 1
when the ratio exceeds ``--max-ratio`` (goal: 1.2).

kzgit runs from this checkout (``python -m kzgit``); the render cache is off, so each run
renders everything.  ``--warm``: the render cache is on (each repository its own, filled by
one run first), as a hook runs again over an unchanged tree: roots and applications come
from the cache.  Wall and CPU seconds (the worker processes' included) are printed: on a
busy machine the CPU figure is the steadier one.  The load average is printed before and after.

    python benchmarks/bench_apps.py [--apps 200] [--runs 3] [--max-ratio 1.2] [--as-they-are]
                                    [--warm] [--shared-bases]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List

REMOTE = "https://github.com/acme/fleet.git"


def app_dir(i: int) -> Dict[str, str]:
    return {
        f"apps/app{i}/kustomization.yaml": "resources: [deploy.yaml, svc.yaml, cm.yaml]\n"
                                           "labels:\n- pairs: {tier: web}\n",
        f"apps/app{i}/deploy.yaml": f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: app{i}
spec:
  replicas: ${{REPLICAS:=1}}
  selector:
    matchLabels: {{app: app{i}}}
  template:
    metadata:
      labels: {{app: app{i}}}
    spec:
      containers:
      - name: app
        image: ghcr.io/acme/app:1.0.{i}
        ports:
        - containerPort: 8080
""",
        f"apps/app{i}/svc.yaml": f"""apiVersion: v1
kind: Service
metadata:
  name: app{i}
spec:
  selector: {{app: app{i}}}
  ports:
  - port: 80
    targetPort: 8080
""",
        f"apps/app{i}/cm.yaml": f"""apiVersion: v1
kind: ConfigMap
metadata:
  name: app{i}
data:
  greeting: hello from app{i}
""",
    }


def shared_base_dirs(n: int, per_base: int = 4, extra: int = 15) -> Dict[str, str]:
    """``--shared-bases``: each ``apps/appN`` an overlay (a patch) of ``apps/base/bK``, one base
    for every ``per_base`` of them (as clusters or environments share them), each base the
    three manifests of :func:`app_dir` and ``extra`` ConfigMaps."""
    out: Dict[str, str] = {}
    for k in range((n + per_base - 1) // per_base):
        for rel, text in app_dir(k).items():
            out[rel.replace(f"apps/app{k}/", f"apps/base/b{k}/")] = text
        names = ["deploy.yaml", "svc.yaml", "cm.yaml"]
        for j in range(extra):
            out[f"apps/base/b{k}/extra{j}.yaml"] = (
                f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b{k}-extra{j}\n"
                f"data:\n  key: value {j}\n")
            names.append(f"extra{j}.yaml")
        out[f"apps/base/b{k}/kustomization.yaml"] = (
            f"resources: [{', '.join(names)}]\nlabels:\n- pairs: {{tier: web}}\n")
    for i in range(n):
        out[f"apps/app{i}/kustomization.yaml"] = (
            f"resources: [../base/b{i // per_base}]\npatches:\n- target: {{kind: Deployment}}\n"
            f"  patch: |\n    - op: add\n      path: /metadata/labels/overlay\n"
            f"      value: app{i}\n")
    return out


def gitops_files(n: int, as_they_are: bool = False) -> Dict[str, str]:
    """The GitOps repository's own files; ``as_they_are``: applications that deploy their
    directories unchanged (no override, no substitution)."""
    out = {
        "clusters/prod/flux-system/gotk-sync.yaml": f"""apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {{name: flux-system, namespace: flux-system}}
spec: {{url: {REMOTE}, ref: {{branch: main}}}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: flux-system, namespace: flux-system}}
spec:
  path: ./clusters/prod
  sourceRef: {{kind: GitRepository, name: flux-system}}
""",
        "argocd/root.yaml": f"""apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: root, namespace: argocd}}
spec:
  destination: {{namespace: argocd}}
  source: {{repoURL: {REMOTE}, path: argocd/apps}}
""",
    }
    for i in range(n):
        if as_they_are:
            if i % 4 == 3:
                out[f"argocd/apps/app{i}.yaml"] = (
                    f"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: "
                    f"{{name: app{i}, namespace: argocd}}\nspec:\n  destination: {{namespace: "
                    f"app{i}}}\n  source: {{repoURL: {REMOTE}, path: apps/app{i}}}\n")
            else:
                out[f"clusters/prod/apps/app{i}.yaml"] = (
                    f"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: "
                    f"{{name: app{i}, namespace: flux-system}}\nspec:\n  path: ./apps/app{i}\n"
                    f"  sourceRef: {{kind: GitRepository, name: flux-system}}\n")
            continue
        if i % 4 == 3:
            out[f"argocd/apps/app{i}.yaml"] = f"""apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: app{i}, namespace: argocd}}
spec:
  destination: {{namespace: app{i}}}
  source:
    repoURL: {REMOTE}
    path: apps/app{i}
    kustomize:
      namePrefix: prod-
      images: [ghcr.io/acme/app:2.0.{i}]
"""
        else:
            out[f"clusters/prod/apps/app{i}.yaml"] = f"""apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: app{i}, namespace: flux-system}}
spec:
  path: ./apps/app{i}
  targetNamespace: app{i}
  sourceRef: {{kind: GitRepository, name: flux-system}}
  postBuild:
    substitute: {{REPLICAS: "{i % 3 + 1}"}}
  commonMetadata:
    labels: {{team: team{i % 5}}}
"""
    return out


def make_repo(root: str, files: Dict[str, str]) -> None:
    for rel, text in files.items():
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8") as f:
            f.write(text)
    for argv in (["init", "-q", "-b", "main"], ["remote", "add", "origin", REMOTE],
                 ["add", "-A"], ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "i"]):
        subprocess.run(["git", *argv], cwd=root, check=True, timeout=120)


def timed(root: str, warm: bool = False) -> "tuple[float, float]":
    """Wall seconds and CPU seconds (user + system, the workers included) of one run."""
    env = dict(os.environ, KZGIT_CACHE_DIR=os.path.join(root, "..", "cache-" + os.path.basename(root)))
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "kzgit", "hook", "render", "--all",
                                 *([] if warm else ["--no-cache"])], cwd=root, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            out.seek(0)
            raise SystemExit(f"kzgit hook render failed in {root}:\n"
                             + out.read().decode("utf-8", "replace")[-3000:])
    return wall, usage.ru_utime + usage.ru_stime


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--apps", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-ratio", type=float, default=1.2)
    ap.add_argument("--as-they-are", action="store_true",
                    help="applications without overrides or substitution (then each one's render "
                         "is its root's: the cost measured is finding them)")
    ap.add_argument("--shared-bases", action="store_true",
                    help="each directory an overlay of a base it shares with three others (18 "
                         "manifests): plain roots share each base's accumulation, and so must "
                         "the applications")
    ap.add_argument("--warm", action="store_true",
                    help="with the render cache, filled by a first run (a hook run again)")
    args = ap.parse_args(argv)
    print(f"cpus: {os.cpu_count()}; load average before: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="kzgit-bench-apps-") as tmp:
        dirs: Dict[str, str] = {}
        if args.shared_bases:
            dirs.update(shared_base_dirs(args.apps))
        else:
            for i in range(args.apps):
                dirs.update(app_dir(i))
        plain, gitops = os.path.join(tmp, "plain"), os.path.join(tmp, "gitops")
        make_repo(plain, dirs)
        make_repo(gitops, dict(dirs, **gitops_files(args.apps, args.as_they_are)))
        timed(plain)   # warm-up: bytecode, the page cache
        if args.warm:
            timed(plain, True)   # fill each repository's render cache
            timed(gitops, True)
        times: Dict[str, List[float]] = {"plain": [], "gitops": []}
        cpu: Dict[str, List[float]] = {"plain": [], "gitops": []}
        for _ in range(args.runs):
            for name, root in (("plain", plain), ("gitops", gitops)):
                wall, used = timed(root, args.warm)
                times[name].append(wall)
                cpu[name].append(used)
    p, g = statistics.median(times["plain"]), statistics.median(times["gitops"])
    pc, gc = statistics.median(cpu["plain"]), statistics.median(cpu["gitops"])
    ratio = g / p
    print(f"{args.apps} directories as plain roots:         {p:.3f} s wall, {pc:.3f} s CPU "
          f"(medians of {args.runs})")
    print(f"{args.apps} applications (3/4 Flux, 1/4 Argo CD): {g:.3f} s wall, {gc:.3f} s CPU")
    print(f"ratio: {ratio:.2f} wall (goal <= {args.max_ratio}), {gc / pc:.2f} CPU")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0 if ratio <= args.max_ratio else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
