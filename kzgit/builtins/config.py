"""Transformer configuration: the field-spec tables a kustomization level works with.

Defaults come from ``kzgit/konfig/tables.json``; ``configurations:`` files and
``crds:`` add to them (api/internal/plugins/builtinconfig/transformerconfig.go),
and a level's config propagates up to the kustomizations that include it.
"""
from __future__ import annotations

import functools

from kzgit.errors import BuildError
from kzgit.versions import DEFAULT, parse
from kzgit.konfig import LEGACY_ORDER_FIRST, LEGACY_ORDER_LAST, default_fieldspec_rows, default_namereference_rows
from kzgit.resource import Gvk
from kzgit.resource.fieldspec import FieldSpec, merge_specs, rows_to_specs
from kzgit.kustomization import FSLICE, GVK
from kzgit.yamlio import load_yaml11
from kzgit.yamlio.gostruct import STR, GoDecodeError, ListOf, Struct, decode_json

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List, Tuple

# kyaml/resid/gvk.go typeOrders: the rank Gvk.IsLessThan sorts field specs by.
_TYPE_ORDER = {k: i - len(LEGACY_ORDER_FIRST) for i, k in enumerate(LEGACY_ORDER_FIRST)}
_TYPE_ORDER.update({k: 1 + i for i, k in enumerate(LEGACY_ORDER_LAST)})


def _gvk_sort_key(fs: FieldSpec) -> Tuple[int, str]:
    """Gvk.IsLessThan: the kind's rank, then ``group_version_kind`` with ``~G``/``~V``/``~K`` for
    empty parts, so a spec without a kind sorts after every unranked kind."""
    return (_TYPE_ORDER.get(fs.kind, 0),
            f"{fs.group or '~G'}_{fs.version or '~V'}_{fs.kind or '~K'}")


def _fs_merge_all(base: List[FieldSpec], extra: List[FieldSpec]) -> List[FieldSpec]:
    """types.FsSlice.MergeAll (api/types/fieldspec.go): each incoming spec is dropped when a
    spec already in the list has its path and is *selected by* the incoming one's gvk (the
    incoming group/version/kind are empty or equal: ``effectivelyEquals``), an error when that
    spec's ``create`` differs, else appended.  Asymmetric: a kind-specific spec already present
    swallows a later kind-less one with the same path, not the other way round."""
    out = list(base)
    by_path: Dict[str, List[FieldSpec]] = {}
    for fs in out:
        by_path.setdefault(fs.path, []).append(fs)
    for fs in extra:
        same = by_path.setdefault(fs.path, [])
        hit = next((e for e in same
                    if (not fs.group or fs.group == e.group) and (not fs.version or fs.version == e.version)
                    and (not fs.kind or fs.kind == e.kind)), None)
        if hit is None:
            same.append(fs)
            out.append(fs)
        elif hit.create != fs.create:
            raise BuildError("conflicting fieldspecs")
    return out


def _fs_merge(base: List[FieldSpec], extra: List[FieldSpec]) -> List[FieldSpec]:
    """What a table becomes when a kustomization's config reaches its accumulator.

    TransformerConfig.Merge (builtinconfig/transformerconfig.go) merges then sorts every table
    (sortFields, by Gvk.IsLessThan); MakeTransformerConfig does that for defaults + the
    ``configurations:`` files, and ResAccumulator.MergeConfig merges that sorted result once
    more, so specs are de-duplicated again in sorted order: a custom ``metadata/name`` spec for
    one kind sorts before the default kind-less one and removes it (only that kind is then
    prefixed; kubectl v1.32 verified).  Python's sort is stable where Go's is not; only the
    order of specs for the same gvk differs, which no transformer depends on.
    """
    merged = sorted(_fs_merge_all(base, extra), key=_gvk_sort_key)
    return sorted(_fs_merge_all([], merged), key=_gvk_sort_key)

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
                try:
                    self.tables[t] = _fs_merge(self.tables[t], other.tables[t])
                except BuildError as e:
                    raise BuildError(f"merging config: failed to merge {t[0].upper() + t[1:]} fieldSpec: {e}") from None
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
def _defaults(version: Tuple[int, int, int]) -> TransformerConfig:
    c = TransformerConfig()
    for t in TABLES:
        if t != "labels":
            c.tables[t] = rows_to_specs(default_fieldspec_rows(t, version))
    for ref in default_namereference_rows():
        c.name_reference.append((Gvk(*ref["target"]), rows_to_specs(ref["referrers"])))
    return c


def default_config(version: Tuple[int, int, int] = parse(DEFAULT)) -> TransformerConfig:
    """The builtin transformer config (default field specs, name references) of ``version``."""
    return _defaults(version).copy()


# builtinconfig.TransformerConfig (transformerconfig.go) and NameBackReferences
# (namebackreferences.go, resid.Gvk inline)
_NAME_BACK_REFERENCES = Struct("NameBackReferences", {"group": STR, "version": STR, "kind": STR,
                                                      "fieldSpecs": FSLICE},
                               go="builtinconfig.NameBackReferences", promoted=GVK)
TRANSFORMER_CONFIG = Struct("TransformerConfig", dict(
    {t: FSLICE for t in TABLES},
    nameReference=ListOf(_NAME_BACK_REFERENCES, "builtinconfig.nbrSlice")), go="builtinconfig.TransformerConfig")


def parse_config_file(data: bytes, source: str) -> TransformerConfig:
    """A ``configurations:`` file, read as loaddefaultconfig.go makeTransformerConfigFromBytes
    reads it: sigs.k8s.io/yaml.UnmarshalStrict (the first document, YAML 1.1, a key written
    twice an error) into TransformerConfig (unknown fields an error, names in any case)."""
    c = TransformerConfig()
    doc = load_yaml11(data, source, strict=True)
    if doc is None:
        return c
    try:
        decoded = decode_json(doc, TRANSFORMER_CONFIG, strict=True, to_target=True)
    except GoDecodeError as e:
        raise BuildError(f"{source}: error unmarshaling JSON: while decoding JSON: {e}") from None
    for key, val in decoded.items():
        if key == "nameReference":
            for ref in val or []:
                ref = ref or {}
                specs = [FieldSpec.from_dict(fs or {}, source) for fs in ref.get("fieldSpecs") or []]
                c.add_name_reference(Gvk(ref.get("group") or "", ref.get("version") or "",
                                         ref.get("kind") or ""), specs)
        else:
            c.tables[key] = merge_specs(c.tables[key], [FieldSpec.from_dict(fs or {}, source) for fs in val or []])
    return c
