"""``kzgit build`` accepts ``kubectl kustomize``'s flags and maps them onto BuildOptions."""
from __future__ import annotations

import argparse

from kzgit.cli import build as build_cli


def _options(*argv: str):  # type: ignore[no-untyped-def]
    parser = argparse.ArgumentParser()
    build_cli.register(parser.add_subparsers())
    return build_cli.options_from_args(parser.parse_args(["build", *argv]))


def test_helm_and_function_flags() -> None:
    o = _options("--enable-helm", "--helm-command", "/opt/helm", "--helm-api-versions", "a/v1,b/v1",
                 "--helm-api-versions=c/v1", "--helm-kube-version", "1.30", "--helm-debug",
                 "--as-current-user", "--network-name", "mynet", "--network", "-e", "X=1",
                 "--mount", "type=bind,src=/a,dst=/b", "--load_restrictor", "LoadRestrictionsNone")
    assert (o.enable_helm, o.helm_command, o.helm_api_versions, o.helm_kube_version, o.helm_debug) == \
        (True, "/opt/helm", ["a/v1", "b/v1", "c/v1"], "1.30", True)
    assert (o.as_current_user, o.network, o.env, o.mounts, o.load_restrictor) == \
        (True, True, ["X=1"], ["type=bind,src=/a,dst=/b"], "LoadRestrictionsNone")


def test_defaults_match_kubectl() -> None:
    o = _options()
    assert (o.helm_command, o.helm_api_versions, o.helm_kube_version, o.helm_debug,
            o.as_current_user, o.load_restrictor) == ("helm", [], "", False, False,
                                                      "LoadRestrictionsRootOnly")
