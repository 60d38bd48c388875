"""Transformer configuration: the field-spec tables a kustomization level works with.

Defaults come from ``kzgit/konfig/tables.json``; ``configurations:`` files and
``crds:`` add to them (api/internal/plugins/builtinconfig/transformerconfig.go),
and a level's config propagates up to the kustomizations that include it.
"""
from __future__ import annotations

import functools
from typing import Any, Dict, List, Tuple

from kzgit.errors import BuildError
from kzgit.konfig import default_fieldspec_rows, default_namereference_rows
from kzgit.resource import Gvk
from kzgit.resource.fieldspec import FieldSpec, merge_specs, rows_to_specs

# keys of a transformer-configuration file (builtinconfig.TransformerConfig json tags)
TABLES = ("namePrefix", "nameSuffix", "namespace", "commonLabels", "templateLabels", "labels",
          "commonAnnotations", "varReference", "images", "replicas")


class TransformerConfig:
    def __init__(self) -> None:
        self.tables: Dict[str, List[FieldSpec]] = {t: [] for t in TABLES}
        self.name_reference: List[Tuple[Gvk, List[FieldSpec]]] = []

    def copy(self) -> "TransformerConfig":
        c = TransformerConfig()
        c.tables = {k: list(v) for k, v in self.tables.items()}
        c.name_reference = [(g, list(s)) for g, s in self.name_reference]
        return c

    def merge(self, other: "TransformerConfig") -> None:
        for t in TABLES:
            if other.tables[t]:
                self.tables[t] = merge_specs(self.tables[t], other.tables[t])
        for gvk, specs in other.name_reference:
            self.add_name_reference(gvk, specs)

    def add_name_reference(self, gvk: Gvk, specs: List[FieldSpec]) -> None:
        for i, (g, old) in enumerate(self.name_reference):
            if g == gvk:
                self.name_reference[i] = (g, merge_specs(old, specs))
                return
        self.name_reference.append((gvk, list(specs)))

    def add_rows(self, data: Dict[str, Any]) -> None:
        """Add specs in the row layout of tables.json (used for ``crds:``)."""
        for t, rows in data.items():
            if t == "nameReference":
                for ref in rows:
                    self.add_name_reference(Gvk(*ref["target"]), rows_to_specs(ref["referrers"]))
            else:
                self.tables[t] = merge_specs(self.tables[t], rows_to_specs(rows))


@functools.lru_cache(maxsize=None)
def _defaults() -> TransformerConfig:
    c = TransformerConfig()
    for t in TABLES:
        if t != "labels":
            c.tables[t] = rows_to_specs(default_fieldspec_rows(t))
    for ref in default_namereference_rows():
        c.name_reference.append((Gvk(*ref["target"]), rows_to_specs(ref["referrers"])))
    return c


def default_config() -> TransformerConfig:
    return _defaults().copy()


def parse_config_file(data: Any, source: str) -> TransformerConfig:
    """A ``configurations:`` file (unknown keys are an error, as strict JSON decoding makes them)."""
    c = TransformerConfig()
    if data is None:
        return c
    if not isinstance(data, dict):
        raise BuildError(f"{source}: a transformer configuration must be a mapping")
    for key, val in data.items():
        if key == "nameReference":
            for ref in val or []:
                if not isinstance(ref, dict):
                    raise BuildError(f"{source}: nameReference entries must be mappings")
                g, v = ref.get("group") or "", ref.get("version") or ""
                if not g and not v and ref.get("apiVersion"):
                    from kzgit.resource import split_api_version
                    g, v = split_api_version(str(ref["apiVersion"]))
                specs = [FieldSpec.from_dict(fs, source) for fs in ref.get("fieldSpecs") or []]
                c.add_name_reference(Gvk(g, v, ref.get("kind") or ""), specs)
        elif key in TABLES:
            c.tables[key] = merge_specs(c.tables[key], [FieldSpec.from_dict(fs, source) for fs in val or []])
        else:
            raise BuildError(f'{source}: json: unknown field "{key}"')
    return c
