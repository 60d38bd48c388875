"""Replacement targets inside a scalar that holds JSON or YAML (Kustomize 5.8).

From Kustomize 5.8.0 a replacement's field path may continue into a string field whose text is
JSON or YAML: ``data.[config.json].server.host`` sets ``server.host`` inside the ConfigMap value
``config.json`` and writes the document back as text (api/filters/replacement/replacement.go
``setValueInStructuredData``, kustomize commits 2dc0d0da8 and bbe53c2c4, first in v5.8.0):

* the first prefix of the path (yaml.Lookup) that is a scalar and parses as YAML holds the data;
  the rest of the path is matched inside it (PathMatcher, creating with ``options.create``);
* a scalar found there takes the value's text and keeps its own tag; anything else is replaced
  by the value's node; ``options.delimiter`` does not apply;
* a text starting with ``{`` or ``[`` is written back as Go's ``encoding/json`` writes the data
  (sorted keys, ``\\u0026`` for ``&``, Go's numbers), indented by two spaces when the original
  had a line break and two spaces in a row, else compact;
* anything going wrong (the text is not YAML, nothing matches, a value its tag refuses) leaves
  the scalar alone and the ordinary path is tried instead, as kustomize does.

YAML texts that do not start with ``{`` or ``[`` are written back by kyaml's encoder, which keeps
each node's style (:mod:`kzgit.builtins.yamltext`; what kzgit cannot reproduce is refused with a
clear error rather than written differently).
"""
from __future__ import annotations

from typing import Any, List, Optional

from kzgit.builtins.fieldpath import (MISSING, FieldPathError, Scalar, decode,
                                      is_scalar, lookup, parse_scalar_data, path_match,
                                      scalar_of, smarter_path_splitter)
from kzgit.errors import BuildError, YamlError
from kzgit.yamlio.gojson import go_json_dumps, go_json_indent
from kzgit.yamlio.tree import SpelledDict

__all__ = ["set_in_structured_data"]


def _holder(obj: Any, parts: List[str]) -> Optional[tuple]:
    """(container, key, text, data) of the first scalar prefix whose text parses as YAML."""
    for i in range(1, len(parts)):
        try:
            node = lookup(obj, parts[:i])
        except FieldPathError:
            continue
        if node is MISSING or not is_scalar(node):
            continue
        try:
            data = parse_scalar_data(node)
        except FieldPathError:
            continue   # not YAML: a deeper prefix cannot be a scalar either
        for container, key in path_match(obj, parts[:i]):
            if container[key] is node:
                return container, key, scalar_of(node).text, data, parts[i:]
        return None
    return None


def set_in_structured_data(obj: Any, value: Any, field_path: str, create: Optional[str]) -> bool:
    """Set ``value`` (a replacements ``_Value``) at ``field_path`` inside a scalar of ``obj``;
    False when the path holds no structured data there (the caller then takes the ordinary
    path)."""
    parts = smarter_path_splitter(field_path, ".")
    if len(parts) < 2:
        return False
    found = _holder(obj, parts)
    if found is None:
        return False
    container, key, text, data, rest = found
    if not isinstance(data, (dict, list)):
        return False
    as_json = text.strip()[:1] in ("{", "[")
    doc = None
    if not as_json:
        # kyaml's encoder writes the text back keeping its styles (kzgit.builtins.yamltext)
        from kzgit.builtins.yamltext import StructuredText, Unsupported   # start-up: YAML text only
        try:
            doc = StructuredText(text)
        except Unsupported as e:
            raise BuildError(f"replacement target {field_path!r}: kzgit cannot write back the YAML "
                             f"text of '{key}' as Kustomize 5.8 does: {e}") from None
        data = doc.data
    try:
        slots = path_match(data, rest, create, None, into_scalars=True)
    except FieldPathError:
        return False
    if not slots:
        return False
    for c, k in slots:
        target = c[k]
        scalar = is_scalar(target)
        if doc is not None:
            try:
                doc.set(c, k, value.text() if scalar else None, value.materialize())
            except Unsupported as e:
                raise BuildError(f"replacement target {field_path!r}: kzgit cannot write back the "
                                 f"YAML text of '{key}' as Kustomize 5.8 does: {e}") from None
        elif scalar:
            # the node keeps its tag (a created one has none: its text decides its type)
            try:
                c[k] = decode(Scalar(value.text(), scalar_of(target).tag))
            except (BuildError, YamlError):
                return False   # a tag the text does not fit: json cannot be written back
        else:
            c[k] = value.materialize()
    if doc is not None:
        out = doc.dump()
    else:
        try:
            out = go_json_indent(data) if "\n" in text and "  " in text else go_json_dumps(data)
        except YamlError:
            return False
    container[key] = out
    if isinstance(container, SpelledDict):
        container.spelling.pop(key, None)
    return True
