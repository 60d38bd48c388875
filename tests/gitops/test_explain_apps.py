"""``kzgit explain --app``: an application rendered as its controller deploys it, the
controller's own work after the build (Flux's postBuild substitution, commonMetadata) named as
the application's step."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from gitops_repos import repo_fixture
from test_flux import SYNC
from kzgit.cli.main import main

APP = """\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: web
  namespace: flux-system
spec:
  interval: 10m
  path: ./apps/web
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
  postBuild:
    substitute:
      REPLICAS: "3"
"""

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: ${REPLICAS:=2}
  template:
    spec:
      containers:
      - name: web
        image: nginx
"""


def test_a_substituted_value_names_the_flux_kustomization(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    top = repo_fixture(tmp_path)({
        "clusters/prod/flux-system/gotk-sync.yaml": textwrap.dedent(SYNC),
        "clusters/prod/web.yaml": APP,
        "apps/web/kustomization.yaml": "resources: [deploy.yaml]\n",
        "apps/web/deploy.yaml": DEPLOY,
    })
    monkeypatch.chdir(top)
    assert main(["apps"]) == 0
    ids = capsys.readouterr().out
    app_id = next(w for w in ids.split() if w.startswith("flux:") and "web" in w)
    assert main(["explain", ".", "Deployment/web", "spec.replicas", "--app", app_id, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    [rec] = doc["records"]
    assert rec["value"] == 3
    kinds = [(s["kind"], s["file"], s["line"]) for s in rec["steps"]]
    assert kinds[0] == ("resource", "apps/web/deploy.yaml", 6)
    assert kinds[-1] == ("application", "clusters/prod/web.yaml", 1)
    assert "postBuild" in rec["steps"][-1]["detail"]
