"""The precomputed index of the builtin OpenAPI document (``k8s-1.21.index.json``).

A strategic-merge patch reads a few dozen of the document's ~490 definitions (a
Deployment's spec, template, containers...), but parsing all of it costs a small build
more than the merge: :class:`Definitions` parses each definition from the document's text
when a merge first asks for it.  What that cannot find by name is in the index: the
(apiVersion, kind) index kyaml builds from the ``x-kubernetes-group-version-kind``
extensions (in document order: later wins), the Kustomization API definitions, and the
document's checksum: an index that does not describe the document beside it is not used.

``scripts/gen_openapi.py`` writes it with the document; ``make_index`` is the one
derivation (the tests check that the shipped index is what it gives).
"""
from __future__ import annotations

import json

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List, Optional, Tuple

GVK_EXT = "x-kubernetes-group-version-kind"


def text_checksum(text: str) -> int:
    """CRC-32 of the document (catches an index left from another document; binascii is
    loaded with PyYAML already, where hashlib would cost a merge more than its parse)."""
    import binascii   # start-up: only the builds that need it pay for it
    return binascii.crc32(text.encode("utf-8"))


def to_type_meta(ext: Any) -> Optional[Tuple[str, str]]:
    """kyaml ``toTypeMeta``: ``group/version`` (or ``version``) and kind."""
    if not isinstance(ext, dict):
        return None
    version = ext.get("version")
    kind = ext.get("kind")
    if not isinstance(version, str) or not isinstance(kind, str):
        return None
    group = ext.get("group")
    api_version = f"{group}/{version}" if isinstance(group, str) and group else version
    return (api_version, kind)


def gvk_rows(definitions: Dict[str, Any]) -> List[List[str]]:
    """``[apiVersion, kind, definition name]`` for every GVK a definition lists, in order."""
    rows = []
    for name, d in definitions.items():
        exts = d.get(GVK_EXT) if isinstance(d, dict) else None
        for ext in exts if isinstance(exts, list) else ():
            tm = to_type_meta(ext)
            if tm is not None:
                rows.append([tm[0], tm[1], name])
    return rows


def make_index(text: str) -> Dict[str, Any]:
    """The index of ``text``, the builtin document as ``scripts/gen_openapi.py`` writes it."""
    doc = json.loads(text)
    return {"crc32": text_checksum(text), "gvk": gvk_rows(doc["definitions"]),
            "kustomization": doc["kustomization"]}


class Definitions(dict):
    """The builtin definitions, each parsed from the document's text on first use.

    The document is compact JSON with sorted keys, so ``"definitions"`` comes first and each
    definition is ``"<name>":{...}`` in it: a definition is found by its key and parsed up to
    the end of its value (``raw_decode``).  Only looked up by name (``get``, ``[]``, ``in``);
    names set on it (added definitions) win over the document's, as a later AddDefinitions does.
    """

    def __init__(self, text: str) -> None:
        super().__init__()
        self._text = text
        self._start = text.find('"definitions":{')
        self._end = text.find(',"kustomization":', max(self._start, 0))
        if self._start < 0 or self._end < 0:
            raise ValueError("not the builtin document's layout")
        self._missing: set = set()

    def _parse(self, name: Any) -> Any:
        """The definition ``name`` from the text (cached), or ``_MISSING``."""
        if dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        if not isinstance(name, str) or name in self._missing:
            return _MISSING
        key = json.dumps(name) + ":"
        at = self._text.find(key, self._start, self._end)
        if at < 0:
            self._missing.add(name)
            return _MISSING
        node, _ = _DECODER.raw_decode(self._text, at + len(key))
        self[name] = node
        return node

    def get(self, name: Any, default: Any = None) -> Any:
        node = self._parse(name)
        return default if node is _MISSING else node

    def __getitem__(self, name: Any) -> Any:
        node = self._parse(name)
        if node is _MISSING:
            raise KeyError(name)
        return node

    def __contains__(self, name: object) -> bool:
        return self._parse(name) is not _MISSING


_MISSING = object()
_DECODER = json.JSONDecoder()
