#!/usr/bin/env python3
"""Regenerate kzgit/konfig/tables.json from a kustomize git checkout.

usage: scripts/gen_konfig.py KUSTOMIZE_GIT_DIR [TAG]   (TAG default api/v0.18.0 = Kustomize v5.5.0)

Reads the facts kzgit reproduces -- default field specs
(api/internal/konfig/builtinpluginconsts/*.go), the precomputed namespace
scope table (kyaml/openapi/openapi.go precomputedIsNamespaceScoped) -- and
writes them in kzgit's own compact layout, with the tag and the blob ids of
the source files, so a new kustomize release can be diffed against it.
"""
import json
import re
import subprocess
import sys

import yaml

FIELDSPEC_FILES = {
    # kzgit table name: (go file, top-level key)
    "namePrefix": ("nameprefix.go", "namePrefix"),
    "nameSuffix": ("namesuffix.go", "nameSuffix"),
    "commonLabels": ("commonlabels.go", "commonLabels"),
    "templateLabels": ("templatelabels.go", "templateLabels"),
    "metadataLabels": ("metadatalabels.go", "commonLabels"),
    "commonAnnotations": ("commonannotations.go", "commonAnnotations"),
    "namespace": ("namespace.go", "namespace"),
    "varReference": ("varreference.go", "varReference"),
    "nameReference": ("namereference.go", "nameReference"),
    "images": ("images.go", "images"),
    "replicas": ("replicas.go", "replicas"),
}
CONSTS = "api/internal/konfig/builtinpluginconsts/"
OPENAPI = "kyaml/openapi/openapi.go"


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True,
                          capture_output=True, text=True).stdout


def go_strings(src):
    """Concatenate the backtick raw strings and `+`-joined consts of a Go file."""
    return "\n".join(re.findall(r"`([^`]*)`", src))


def spec_row(fs):
    return [fs.get("group", ""), fs.get("version", ""), fs.get("kind", ""),
            fs["path"], bool(fs.get("create", False))]


def main():
    gitdir = sys.argv[1]
    tag = sys.argv[2] if len(sys.argv) > 2 else "api/v0.18.0"
    out = {"provenance": {"repo": "kubernetes-sigs/kustomize", "tag": tag, "files": {}},
           "fieldSpecs": {}, "nameReference": [], "namespaceScoped": []}
    for table, (fname, key) in FIELDSPEC_FILES.items():
        path = CONSTS + fname
        out["provenance"]["files"][path] = git(gitdir, "rev-parse", f"{tag}:{path}").strip()
        src = git(gitdir, "show", f"{tag}:{path}")
        text = go_strings(src)
        if "+ metadataLabelsFieldSpecs" in src:
            # commonLabels and templateLabels append the metadata label specs
            text += "\n" + go_strings(git(gitdir, "show", f"{tag}:{CONSTS}metadatalabels.go"))
        if fname == "metadatalabels.go":
            # metadataLabelsFieldSpecs is a bare list used by commonlabels/templatelabels
            data = {key: yaml.safe_load(text)}
        else:
            data = yaml.safe_load(text)
        items = data[key] or []
        if table == "nameReference":
            for ref in items:
                out["nameReference"].append({
                    "target": [ref.get("group", ""), ref.get("version", ""), ref["kind"]],
                    "referrers": [spec_row(fs) for fs in ref["fieldSpecs"]],
                })
        else:
            out["fieldSpecs"][table] = [spec_row(fs) for fs in items]
    src = git(gitdir, "show", f"{tag}:{OPENAPI}")
    out["provenance"]["files"][OPENAPI] = git(gitdir, "rev-parse", f"{tag}:{OPENAPI}").strip()
    body = src.split("var precomputedIsNamespaceScoped", 1)[1].split("\n}\n", 1)[0]
    for av, kind, val in re.findall(r'APIVersion: "([^"]*)", Kind: "([^"]*)"}:\s*(true|false)', body):
        out["namespaceScoped"].append([av, kind, val == "true"])
    json.dump(out, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
