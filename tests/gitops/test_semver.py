"""kzgit.gitops.semver: a Flux GitRepository's ``ref.semver``, resolved as source-controller
resolves it (Masterminds/semver v3 constraints, the newest matching tag)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Callable, Dict

import pytest

from gitops_repos import catalog_of
from kzgit.gitops.render import render_app
from kzgit.gitops.semver import Constraints, SemverError, new_version, newest_tag, parse_tag

TABLE = json.loads((Path(__file__).parent / "data" / "masterminds_semver_check.json").read_text())


@pytest.mark.parametrize("case", TABLE["cases"], ids=lambda c: f"{c['constraint']} {c['version']}")
def test_masterminds_constraints_check_table(case: Dict[str, Any]) -> None:
    v = new_version(case["version"])
    assert v is not None
    assert Constraints(case["constraint"]).check(v) is case["check"]


def test_tags_as_flux_parses_them() -> None:
    """fluxcd/pkg version.ParseVersion: three parts (a 'v' and leading zeros allowed)."""
    assert parse_tag("v1.2") is None and parse_tag("1") is None and parse_tag("release") is None
    v = parse_tag("v2025.02.03-rc.1")
    assert v is not None and (v.major, v.minor, v.patch, v.pre) == (2025, 2, 3, "rc.1")
    assert parse_tag("1.2.3-01") is None   # a numeric prerelease part with a leading zero


def test_newest_tag_in_range() -> None:
    tags = [("v1.0.0", 1.0), ("v1.10.0", 2.0), ("v1.9.0", 3.0), ("v2.0.0-rc.1", 4.0),
            ("v2.0.0", 5.0), ("not-a-version", 6.0), ("v1.10.0+build.2", 7.0)]
    assert newest_tag(">=1.0.0 <2.0.0", tags) == "v1.10.0+build.2"   # equal versions: the later commit
    assert newest_tag("~1.9", tags) == "v1.9.0"
    assert newest_tag("*", tags) == "v2.0.0"
    assert newest_tag(">=2.0.0-0", tags) == "v2.0.0"
    assert newest_tag("2.0.0-rc.1", tags) == "v2.0.0-rc.1"
    with pytest.raises(SemverError, match=r"^no match found for semver: \^3$"):
        newest_tag("^3", tags)
    with pytest.raises(SemverError, match="^semver parse error: improper constraint: "):
        newest_tag(">=one", tags)


GIT_SYNC = """
    apiVersion: source.toolkit.fluxcd.io/v1
    kind: GitRepository
    metadata:
      name: releases
      namespace: flux-system
    spec:
      url: https://github.com/acme/fleet
      ref: {semver: "RANGE"}
    ---
    apiVersion: kustomize.toolkit.fluxcd.io/v1
    kind: Kustomization
    metadata:
      name: apps
      namespace: flux-system
    spec:
      interval: 10m
      path: ./apps
      sourceRef:
        kind: GitRepository
        name: releases
    """
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"


def _tagged(repo: Callable[..., Path], semver: str) -> Path:
    top = repo({"clusters/prod/apps.yaml": GIT_SYNC.replace("RANGE", semver),
                "apps/cm.yaml": CM.format(name="v1-0")})
    for tag, name in (("v1.0.0", "v1-0"), ("v1.4.0", "v1-4"), ("v2.0.0", "v2-0")):
        (top / "apps/cm.yaml").write_text(CM.format(name=name))
        subprocess.run(["git", "-C", str(top), "commit", "-q", "--allow-empty", "-am", tag], check=True, timeout=60)
        subprocess.run(["git", "-C", str(top), "tag", "-a", "-m", tag, tag], check=True, timeout=60)
    (top / "apps/cm.yaml").write_text(CM.format(name="work-tree"))
    return top


def test_a_git_repository_on_a_semver_range_renders_the_newest_tag_in_it(
        repo: Callable[..., Path]) -> None:
    catalog = catalog_of(_tagged(repo, ">=1.0.0 <2.0.0"))
    app = catalog.find("apps")
    assert app.rendered, app.reason
    assert "name: v1-4\n" in render_app(catalog, app).to_yaml()


def test_a_semver_range_nothing_matches_is_listed_with_flux_s_words(repo: Callable[..., Path]) -> None:
    app = catalog_of(_tagged(repo, "^3.0")).find("apps")
    assert not app.rendered
    assert app.reason == ("GitRepository flux-system/releases follows semver ^3.0: "
                          "no match found for semver: ^3.0")


def test_argo_cd_target_revision_ranges() -> None:
    """argo-cd util/versions MaxVersion: a version is a pin (resolved as a ref), a branch name
    is no range, a range takes the greatest tag (the first of equal versions in ref order)."""
    from kzgit.gitops.semver import argo_max_version
    tags = ["v1.0", "v1.2.0", "1.2.0", "v2.0.0", "release-3", "v2.1.0-rc.1"]
    assert argo_max_version("v1.0.0", tags) is None          # a version: resolved as the tag v1.0.0
    assert argo_max_version("main", tags) is None            # not a range
    assert argo_max_version("~1", tags) == "1.2.0"           # 1.2.0 sorts before v1.2.0
    assert argo_max_version("*", tags) == "v2.0.0"
    assert argo_max_version(">= 2.1.0-0", tags) == "v2.1.0-rc.1"
    assert argo_max_version("^5", tags) is None              # nothing matches: Argo CD goes on with the name


def test_an_argo_cd_application_on_a_version_range(repo: Callable[..., Path]) -> None:
    from gitops_repos import REPO_URL
    top = _tagged(repo, "*")
    (top / "clusters/prod/apps.yaml").unlink()
    (top / "argocd").mkdir()
    (top / "argocd/app.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\n"
        "  namespace: argocd\nspec:\n  destination: {namespace: web}\n  source:\n"
        f"    repoURL: {REPO_URL}\n    path: apps\n    targetRevision: '~1.0'\n")
    catalog = catalog_of(top)
    assert "name: v1-0\n" in render_app(catalog, catalog.find("web")).to_yaml()
