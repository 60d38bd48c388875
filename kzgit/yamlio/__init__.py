"""YAML in and out with kustomize's rules.

* :func:`load_documents` — resource files (kio + go-yaml v3 typing).
* :func:`load_yaml11` — kustomization files (sigs.k8s.io/yaml, go-yaml v2).
* :func:`dump` / :func:`dump_documents` — output byte-identical to
  ``kubectl kustomize`` (sigs.k8s.io/yaml.JSONToYAML, go-yaml v2 Marshal).
* :func:`go_json_dumps` — Go ``encoding/json.Marshal`` text (hashes).

Each module's docstring names the go-yaml / kyaml rules it reproduces.
"""
from __future__ import annotations

from kzgit.yamlio.emit import dump, dump_documents, dump_read_back, key_less, sorted_keys
from kzgit.yamlio.gojson import go_json_dumps
from kzgit.yamlio.load import (MAX_ALIAS_EXPANSION, MAX_DEPTH, load_documents, load_yaml11,
                               plain_scalar_is_string)

__all__ = [
    "MAX_ALIAS_EXPANSION",
    "MAX_DEPTH",
    "dump",
    "dump_documents",
    "dump_read_back",
    "go_json_dumps",
    "key_less",
    "load_documents",
    "load_yaml11",
    "plain_scalar_is_string",
    "sorted_keys",
]
