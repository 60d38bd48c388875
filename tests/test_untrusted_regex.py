"""A stranger's regular expressions cannot stall kzgit (issue 32): every pattern a repository
writes runs with Go's semantics on RE2, in time linear in the text, and what Go refuses is
refused in kubectl's words.

Each case is a real repository built or checked by the real CLI.  Before kzgit.gore each of
them ran Python's backtracking ``re``: ``(a+)+b`` against thirty ``a`` did not finish (killed
at 20 s and at 60 s for validate) where kubectl answers in 0.1 s.  The bound here is a
60-second kill, far from the noise; each run takes well under a second.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git_tree

A30 = "a" * 30
CONFIGMAP = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {A30}\ndata:\n  k: v\n"
KILL = 60.0


def kzgit(cwd: Path, *args: str) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-m", "kzgit", *args], cwd=cwd, text=True,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=KILL,
                          env={**os.environ, "KZGIT_NO_CACHE": "1"})


def test_patch_target_name_backtracking_does_not_hang(tmp_path: Path) -> None:
    git_tree(tmp_path, {
        "cm.yaml": CONFIGMAP,
        "kustomization.yaml": "resources: [cm.yaml]\npatches:\n- target:\n    name: '(a+)+b'\n"
                              "  patch: '[{\"op\": \"add\", \"path\": \"/data/x\", \"value\": \"y\"}]'\n"})
    p = kzgit(tmp_path, "build", ".")
    assert p.returncode == 0, p.stderr
    assert "x: y" not in p.stdout and A30 in p.stdout   # selected nothing, as kubectl


def test_replacement_select_and_field_path_backtracking_do_not_hang(tmp_path: Path) -> None:
    git_tree(tmp_path, {
        "cm.yaml": CONFIGMAP + f"spec:\n  list:\n  - name: {A30}\n",
        "kustomization.yaml":
            "resources: [cm.yaml]\nreplacements:\n"
            f"- source: {{kind: ConfigMap, name: {A30}, fieldPath: data.k}}\n"
            "  targets:\n  - select: {name: '(a+)+b'}\n    fieldPaths: [data.k]\n"
            f"  - select: {{name: {A30}}}\n    fieldPaths: ['spec.list.[name=(a+)+b].name']\n"})
    p = kzgit(tmp_path, "build", "--kustomize-version", "5.8.1", ".")
    # the select matches nothing; the path matches no element, which is kustomize's error
    assert p.returncode == 1, p.stderr
    assert 'unable to find field "spec.list.[name=(a+)+b].name" in replacement target' in p.stderr


def _crd(spec_schema: str) -> str:
    """A CRD for kind X (example.com/v1) whose ``spec`` schema ends with ``spec_schema``."""
    return """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: xs.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: X, plural: xs, singular: x, listKind: XList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
""" + spec_schema


def test_crd_pattern_backtracking_does_not_hang_validate(tmp_path: Path) -> None:
    crd = _crd("""\
            properties:
              a: {type: string, pattern: '^(a+)+$'}
""")
    git_tree(tmp_path, {
        "crd.yaml": crd,
        "x.yaml": f"apiVersion: example.com/v1\nkind: X\nmetadata: {{name: x}}\nspec: {{a: {A30}b}}\n",
        "kustomization.yaml": "resources: [crd.yaml, x.yaml]\n"})
    p = kzgit(tmp_path, "validate", ".")
    assert p.returncode == 1, p.stdout + p.stderr
    assert f"\"{A30}b\" does not match '^(a+)+$'" in p.stdout


def test_cel_find_backtracking_does_not_hang_validate(tmp_path: Path) -> None:
    pytest.importorskip("cel_expr_python")
    crd = _crd("""\
            x-kubernetes-validations:
            - rule: "self.a.find('(a+)+c') == ''"
              message: found
            - rule: "self.a.findAll('(x+x+)+y').size() == 1"
              message: none
            properties:
              a: {type: string}
""")
    git_tree(tmp_path, {
        "crd.yaml": crd,
        "x.yaml": f"apiVersion: example.com/v1\nkind: X\nmetadata: {{name: x}}\nspec: {{a: {'x' * 40}}}\n",
        "kustomization.yaml": "resources: [crd.yaml, x.yaml]\n"})
    p = kzgit(tmp_path, "validate", ".")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "none" in p.stdout and "found" not in p.stdout.replace("X/x", "")


def test_glob_backtracking_does_not_hang(tmp_path: Path) -> None:
    """``roots`` globs compile to regular expressions: ``**`` nested many times over a deep
    path backtracks polynomially in Python's re."""
    deep = "/".join(["d"] * 60)
    git_tree(tmp_path, {
        ".kzgit.toml": "roots = ['" + "**/" * 25 + "x']\n",
        f"{deep}/kustomization.yaml": "resources: [cm.yaml]\n",
        f"{deep}/cm.yaml": CONFIGMAP})
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True, timeout=60)
    p = kzgit(tmp_path, "hook", "render", "--all")
    assert p.returncode == 2, p.stderr   # answered: the glob selects no root
    assert "selects no kustomization root" in p.stderr


def test_a_lookahead_go_refuses_is_refused_in_kubectls_words(tmp_path: Path) -> None:
    """kubectl 1.32 and 1.36: ``error parsing regexp: invalid or unsupported Perl syntax:
    `(?=```; Python's re built it and patched the ConfigMap."""
    git_tree(tmp_path, {
        "cm.yaml": CONFIGMAP,
        "kustomization.yaml": "resources: [cm.yaml]\npatches:\n- target:\n    name: '(?=a)a.*'\n"
                              "  patch: '[{\"op\": \"add\", \"path\": \"/data/x\", \"value\": \"y\"}]'\n"})
    p = kzgit(tmp_path, "build", ".")
    assert p.returncode == 1
    assert "error parsing regexp: invalid or unsupported Perl syntax: `(?=`" in p.stderr
    assert "Traceback" not in p.stderr
