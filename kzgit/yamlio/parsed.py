"""Parses this process has made already, by their exact text (:func:`recall`, :func:`remember`).

One hook run parses some texts more than once: the graph's scan parses every kustomization
file and its build parses it again; discovery parses each application's manifest and the
render of the application delivering it reads the same file; Flux's generated kustomization
is written from an object and read back by the build.  The first of these asks to keep what
it parsed (``keep=True`` of :func:`~kzgit.yamlio.load_documents` and
:func:`~kzgit.yamlio.load_yaml11`, or :func:`~kzgit.yamlio.emit.dump_read_back`); a build
looks first for what was kept, and keeps nothing of its own (a single build would only pay
for the copies).  A parse is a function of its text
alone (the name of the file only words an error, and an error is never kept), so a parse
kept by its text is never stale, whatever file it came from and whenever.

Kept are plain trees only (what JSON gives back as it is: ``dict``
with string keys, ``list``, ``str``, ``int``, ``float``, ``bool``, ``None``) of texts
without anchors (so no node is shared): a tree holding a type that remembers more than its
value (:class:`~kzgit.yamlio.tree.DupKeys`, :class:`~kzgit.yamlio.tree.LazyError`, which
names its file ...) or a text with an anchor is parsed again each time.  What is kept is a copy,
and each recall hands out another: builds change what they load.  A table is bounded by the
text it holds; full, it starts again.
"""
from __future__ import annotations

from kzgit.yamlio.tree import copy_tree


TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict

#: the tables: resource files (load_documents), kustomization files (load_yaml11)
DOCUMENTS = "documents"
YAML11 = "yaml11"
# the text a table keeps, in characters (a repository's YAML is rarely more than a few MB;
# its parse takes some ten times that)
MAX_CHARS = 8 << 20

_TABLES: Dict[str, Dict[str, Any]] = {DOCUMENTS: {}, YAML11: {}}
_CHARS: Dict[str, int] = {DOCUMENTS: 0, YAML11: 0}


class _NotPlain(Exception):
    pass


def _plain_copy(value: Any) -> Any:
    """A copy of a plain tree; :class:`_NotPlain` for any other (one walk that checks and
    copies: a parse is kept as it is made)."""
    t = type(value)
    if t is dict:
        out: Dict[str, Any] = {}
        for k, v in value.items():
            if type(k) is not str:
                raise _NotPlain
            tv = type(v)
            out[k] = v if (tv is str or tv is int or tv is bool or v is None or tv is float) \
                else _plain_copy(v)
        return out
    if t is list:
        return [v if (type(v) is str or type(v) is int or type(v) is bool or v is None
                      or type(v) is float) else _plain_copy(v) for v in value]
    if t is str or t is int or t is bool or value is None or t is float:
        return value
    raise _NotPlain


def recall(table: str, text: str) -> Any:
    """A copy of what ``text`` parsed to in ``table``; ``KeyError`` when it is not kept."""
    value = _TABLES[table][text]
    try:
        return copy_tree(value)
    except RecursionError:
        raise KeyError(text) from None   # deeper than this caller's stack: parse it again


def remember(table: str, text: str, value: Any) -> None:
    """Keep a copy of ``value``, the parse of ``text``, a text without anchors (nothing when
    it is not a plain tree)."""
    t = _TABLES[table]
    if text in t:
        return
    try:
        kept = _plain_copy(value)
    except (_NotPlain, RecursionError):
        return   # (nested deeper than Python's stack walks: parsed again when asked)
    if _CHARS[table] + len(text) > MAX_CHARS:
        t.clear()
        _CHARS[table] = 0
    t[text] = kept
    _CHARS[table] += len(text)


def reads_back(value: Any) -> bool:
    """Whether the kustomization reader (:func:`~kzgit.yamlio.load_yaml11`, YAML 1.1) gives
    ``value`` back from its JSON text, its mappings in their order
    (:func:`kzgit.yamlio.emit.dump_read_back`).

    JSON is YAML, and the two agree on a tree of strings of one line of printable ASCII (a key
    too; JSON quotes each one, and escapes only ``"`` and ``\\``, as YAML's double quotes
    do), booleans, nulls and integers within int64.  Not on a float (``1.0`` is a float to
    one and may be written ``1``), a larger integer (go-yaml v2 reads it as a float), a key
    ``<<`` (kept out: the reader's merge key when written plain), nor, as far as this knows,
    on other text."""
    t = type(value)
    if t is str:
        return value.isascii() and value.isprintable()
    if t is bool or value is None:
        return True
    if t is int:
        return -(1 << 63) <= value < (1 << 63)
    if t is dict:
        return all(type(k) is str and k != "<<" and reads_back(k) and reads_back(v)
                   for k, v in value.items())
    if t is list:
        return all(reads_back(v) for v in value)
    return False


def forget() -> None:
    """Empty every table (tests that count parses)."""
    for name, t in _TABLES.items():
        t.clear()
        _CHARS[name] = 0
