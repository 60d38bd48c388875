"""The migrations of ``kustomize edit fix`` on one kustomization file, edited in place.

What ``edit fix`` does, at kustomize v5.5.0 through v5.8.1 (the code is the same in both
releases but for ``--vars``' patch options; ``kustomize/commands/edit/fix/fix.go`` RunFix):

* ``kustfile.Read`` runs ``Kustomization.FixKustomization`` (``api/types/kustomization.go``):
  ``kind: Kustomization`` when missing, ``apiVersion`` (``kustomize.config.k8s.io/v1beta1``,
  ``v1alpha1`` for a Component) when missing; ``bases`` appended to ``resources``;
  ``imageTags`` appended to ``images``; a generator's ``env`` appended to its ``envs``;
  ``helmChartInflationGenerator`` split into ``helmGlobals`` and ``helmCharts`` (which
  kzgit does not do: it reports the field).
* ``FixKustomizationPreMarshalling``: ``patchesJson6902`` appended to ``patches``, then each
  ``patchesStrategicMerge`` entry as ``{path: X}`` when X names a file kustomize can read
  from the kustomization's directory, else as an inline ``{patch: X}``; ``commonLabels`` as
  one more ``labels`` entry ``{pairs: ..., includeSelectors: true}``
  (``api/types/labels.go`` labelFromCommonLabels), an error when a label name is in both.
* ``--vars`` (:mod:`kzgit.fix.vars`): ``vars`` to ``replacements``.

Each migration is an edit of the text (:mod:`kzgit.fix._text`), checked before it is kept:
the edited file, parsed, must equal what the migration makes of the parsed original.  A
migration that cannot be made in place (a flow list spread over lines, a key in both
``commonLabels`` and ``labels``) is not made, and the reason is reported.
"""
from __future__ import annotations

import posixpath
import re

import yaml

from kzgit.fix._text import Document, Field, Unsupported, flow_items, is_comment_or_blank
from kzgit.fix._text import set_flow_items, shift, yaml_problem
from kzgit.yamlio.roundtrip import indent_of
from kzgit.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, List, Optional, Tuple

# api/types/kustomization.go
KUSTOMIZATION_VERSION = "kustomize.config.k8s.io/v1beta1"
COMPONENT_VERSION = "kustomize.config.k8s.io/v1alpha1"
KUSTOMIZATION_KIND = "Kustomization"
COMPONENT_KIND = "Component"

# The fields kustomize warns about ("# Warning: 'bases' is deprecated. ... Run 'kustomize edit
# fix'", api/types/kustomization.go CheckDeprecatedFields), with what replaces each.
DEPRECATED = {
    "bases": "resources",
    "commonLabels": "labels",
    "imageTags": "images",
    "patchesJson6902": "patches",
    "patchesStrategicMerge": "patches",
    "vars": "replacements",
}


class FileFix(Record):
    """What the migrations make of one kustomization file.

    ``done``: the migrations made ("bases -> resources"); ``refused``: those left undone, each
    with its reason; ``new``: the edited text (``old`` when nothing was made)."""

    __slots__ = ("path", "old", "new", "done", "refused", "others", "notes")

    def __init__(self, path: str, old: str, new: str, done: List[str], refused: List[str],
                 others: Optional[Dict[str, Tuple[str, str]]] = None,
                 notes: Optional[List[str]] = None) -> None:
        self.path = path
        self.old = old
        self.new = new
        self.done = done
        self.refused = refused
        # what is left on purpose, with what would migrate it (``vars`` without ``--vars``):
        # said, never a failure
        self.notes: List[str] = [] if notes is None else notes
        # other files the change rewrites (``--vars``' placeholders): path -> (old, new)
        self.others: Dict[str, Tuple[str, str]] = {} if others is None else others

    @property
    def changed(self) -> bool:
        return self.new != self.old

    def files(self) -> Dict[str, str]:
        """Every file the change writes: path -> new text."""
        out = {p: new for p, (_, new) in self.others.items()}
        out[self.path] = self.new
        return out


def load_data(text: str) -> Any:
    """The file's data, for comparing an edit with its intent (both sides read alike)."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


#: A key a migration rewrites, however it is written: quoted (``"bases": [...]``, a JSON
#: kustomization), with a space before the colon, in a flow mapping.
_MIGRATED_KEY = re.compile(r"""(?<![\w.-])["']?(?:bases|commonLabels|imageTags|patchesJson6902|"""
                           r"""patchesStrategicMerge|vars|env|helmChartInflationGenerator)["']?[ \t]*:""")


def needs_fix(text: str) -> bool:
    """A cheap test on the text: may any migration apply?  (False is certain; True is checked
    by :func:`migrate`.)  Keeps ``kzgit fix --check`` on a clean repository to a read per file.
    Whether ``apiVersion``/``kind`` are missing is not asked here: they are added only with
    another migration, and the text cannot tell a top-level ``apiVersion`` from one in an
    inline patch (:func:`_steps` reads the parsed top-level keys)."""
    return _MIGRATED_KEY.search(text) is not None


# -- the edits ---------------------------------------------------------------------------------

def _items_block(f: Field) -> List[str]:
    """The body lines of a block list, trailing blank lines left out."""
    return f.body[:f.content_end()]


def _moved_lines(src: Field, indent: int) -> List[str]:
    """``src``'s items (and the comments above its key and among its items) at ``indent``."""
    ind = src.item_indent()
    comments = [ln for ln in src.prefix if ln.strip()]
    body = _items_block(src)
    if ind is None:
        return []
    moved = shift(body, indent - ind)
    return [" " * indent + ln.lstrip(" ") for ln in comments] + moved


def _flow_to_block(items: List[str], indent: int, nl: str) -> List[str]:
    return [" " * indent + "- " + it + nl for it in items]


def _block_to_flow(src: Field) -> List[str]:
    """Items of a block list of one-line scalars, as flow items; Unsupported otherwise."""
    out = []
    ind = src.item_indent()
    for ln in src.body:
        if not ln.strip():
            continue
        if is_comment_or_blank(ln):
            raise Unsupported(f"'{src.key}': its comments cannot move into a flow list")
        if indent_of(ln) != ind or not ln.lstrip(" ").startswith("- "):
            raise Unsupported(f"'{src.key}': its items cannot move into a flow list")
        item = ln.strip()[2:].strip()
        if "#" in item or item[:1] in "|>[{&*!" or not item:
            raise Unsupported(f"'{src.key}': its items cannot move into a flow list")
        out.append(item)
    return out


def merge_list(doc: Document, target: str, source: str, at_start: bool = False) -> None:
    """Move the items of the list ``source`` into the list ``target`` (at its end, or its
    start), and remove ``source``; when ``target`` is absent, ``source`` is renamed."""
    src = doc.field(source)
    if src is None:
        return
    src_flow = flow_items(doc, source)
    if src_flow == [] or (src_flow is None and src.item_indent() is None
                          and src.inline_value() in ("", "~", "null")):
        doc.drop_key(source)   # nothing to move: Go's append of nothing, the field omitted
        return
    tgt = doc.field(target)
    if tgt is None:
        src.rename(target)
        return
    nl = doc.newline
    tgt_flow = flow_items(doc, target)
    if src_flow is None and src.inline_value() not in ("", "~", "null", "[]"):
        raise Unsupported(f"'{source}' is not a list")
    if tgt_flow is None and tgt.inline_value() not in ("", "~", "null"):
        raise Unsupported(f"'{target}' is not a list")
    if tgt_flow is not None:
        items = src_flow if src_flow is not None else _block_to_flow(src)
        set_flow_items(tgt, items + tgt_flow if at_start else tgt_flow + items)
    else:
        if tgt.inline_value() in ("~", "null"):
            key_token = tgt.key_line[:len(tgt.key_line) - len(tgt.rest)]
            tgt.key_line = key_token + (" " + tgt.eol_comment() if tgt.eol_comment() else "") + nl
        tgt_indent, src_indent = tgt.item_indent(), src.item_indent()
        indent = tgt_indent if tgt_indent is not None else (
            src_indent if src_flow is None and src_indent is not None else doc.seq_indent())
        moved = _flow_to_block(src_flow, indent, nl) if src_flow is not None else _moved_lines(src, indent)
        if at_start:
            tgt.body[0:0] = moved
        else:
            end = tgt.content_end()
            tgt.body[end:end] = moved
    if src.eol_comment():
        raise Unsupported(f"'{source}': the comment on its key line has no place to go")
    doc.remove(source)


def _smp_entries(doc: Document, data: List[Any], is_file: Callable[[str], bool]) -> None:
    """Turn each ``patchesStrategicMerge`` entry into a ``patches`` entry, in place."""
    f = doc.field("patchesStrategicMerge")
    assert f is not None
    keys = ["path" if isinstance(v, str) and is_file(v) else "patch" for v in data]
    flow = flow_items(doc, f.key)
    if flow is not None:
        set_flow_items(f, ["{%s: %s}" % (k, t) for k, t in zip(keys, flow)])
        return
    ind = f.item_indent()
    if ind is None:
        return
    starts = [n for n, ln in enumerate(f.body)
              if not is_comment_or_blank(ln) and indent_of(ln) == ind and ln.lstrip(" ").startswith("-")]
    if len(starts) != len(keys):
        raise Unsupported("'patchesStrategicMerge': cannot tell its entries apart")
    for i, n in enumerate(starts):
        ln = f.body[n]
        after_dash = ln[ind + 1:]
        value_col = ind + 1 + (len(after_dash) - len(after_dash.lstrip(" ")))
        value = ln[value_col:]
        if not value.strip() or value.startswith("#"):
            raise Unsupported("'patchesStrategicMerge': an entry whose value starts below its dash")
        if value[:1] in "|>" and value[1:2].isdigit() or value[:2] in ("|-", "|+", ">-", ">+") \
                and value[2:3].isdigit():
            raise Unsupported("'patchesStrategicMerge': a block scalar with an indentation indicator")
        f.body[n] = ln[:value_col] + keys[i] + ": " + value
        end = starts[i + 1] if i + 1 < len(starts) else f.content_end()
        cont = list(range(n + 1, end))
        # comment lines at the dash's column or left of it sit between entries: not moved
        inner = [c for c in cont if f.body[c].strip()
                 and not (is_comment_or_blank(f.body[c]) and indent_of(f.body[c]) <= ind)]
        if not inner:
            continue
        low = min(indent_of(f.body[c]) for c in inner)
        if low <= value_col:
            delta = value_col + 2 - low
            last = max(inner)
            for c in range(n + 1, last + 1):
                if f.body[c].strip():
                    f.body[c] = " " * delta + f.body[c]


def _labels_entry(doc: Document, src: Field, indent: int) -> List[str]:
    """``commonLabels``' pairs as one ``labels`` entry at ``indent`` (the comment on the
    ``commonLabels:`` line is the caller's)."""
    nl = doc.newline
    pad = " " * indent
    inline = src.inline_value()
    if inline:
        if src.has_content():
            raise Unsupported("'commonLabels': a flow mapping over several lines")
        return [pad + "- pairs: " + inline + nl, pad + "  includeSelectors: true" + nl]
    m = src.map_indent()
    assert m is not None
    body = shift(src.body[:src.content_end()], indent + 4 - m)
    return [pad + "- pairs:" + nl] + body + [pad + "  includeSelectors: true" + nl]


def _common_labels(doc: Document, data: Dict[str, Any]) -> None:
    src = doc.field("commonLabels")
    assert src is not None
    labels = doc.field("labels")
    if not data.get("commonLabels"):
        # labelFromCommonLabels gives nothing for no pairs; the empty field is dropped
        if src.has_content() or src.inline_value() not in ("", "{}", "~", "null"):
            raise Unsupported("'commonLabels' is not a mapping")
        doc.drop_key("commonLabels")
        return
    comment = src.eol_comment()
    if labels is None:
        # in place: the field keeps its comment lines and the comment of its key line
        entry = _labels_entry(doc, src, doc.seq_indent())
        src.body = entry + src.body[src.content_end():]
        src.key_line = "labels:" + (" " + comment if comment else "") + doc.newline
        src.key = "labels"
        return
    if flow_items(doc, "labels") is not None or labels.inline_value() not in ("", "~", "null"):
        raise Unsupported("'labels' is not a block list")
    labels_indent = labels.item_indent()
    indent = labels_indent if labels_indent is not None else doc.seq_indent()
    pad = " " * indent
    entry = [pad + ln.lstrip(" ") for ln in src.prefix if ln.strip()]
    if comment:
        entry.append(pad + comment + doc.newline)
    entry += _labels_entry(doc, src, indent)
    end = labels.content_end()
    labels.body[end:end] = entry
    doc.remove("commonLabels")


def _generator_envs(doc: Document) -> None:
    """Each generator's ``env: X`` as ``envs: [.., X]``, edited on the lines that hold them."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq   # start-up: ruamel is loaded already
    nl = doc.newline
    lines = doc.text().splitlines(keepends=True)
    edits: List[Tuple[int, List[str]]] = []   # line -> the lines that replace it
    for key in _GENERATORS:
        seq = doc.value(key)
        if not isinstance(seq, CommentedSeq):
            continue
        # a new envs list indented as this file indents its lists: as far from its key as the
        # generator list's dashes are from theirs (a top-level key, column 0)
        first = lines[seq.lc.item(0)[0]] if len(seq) and not seq.fa.flow_style() else ""
        offset = indent_of(first) if first.lstrip(" ").startswith("-") else 0
        for g in seq:
            if not isinstance(g, CommentedMap) or not g.get("env"):
                continue
            line, col = g.lc.key("env")
            vline, vcol = g.lc.value("env")
            if vline != line or not isinstance(g["env"], str) or "\n" in g["env"]:
                raise Unsupported(f"'{key}': an env value not on its key's line")
            text = lines[line].rstrip("\r\n")
            value = text[vcol:]
            envs = g.get("envs")
            if envs is None and "envs" not in g:
                edits.append((line, [text[:col] + "envs:" + nl,
                                     " " * (col + offset) + "- " + value + nl]))
                continue
            if not isinstance(envs, CommentedSeq) or envs.fa.flow_style() or not envs:
                raise Unsupported(f"'{key}': env and an envs that is not a block list")
            last, icol = envs.lc.item(len(envs) - 1)
            if lines[last].rstrip("\r\n")[:icol].rstrip(" ")[-1:] != "-":
                raise Unsupported(f"'{key}': cannot tell where envs' items start")
            dash = lines[last][:icol].rstrip(" ")
            edits.append((last, [lines[last], " " * (len(dash) - 1) + "- " + _strip_value(value) + nl]))
            # the env line goes, unless it also opens the item ("- env: x")
            if text[:col].strip(" ") == "-":
                raise Unsupported(f"'{key}': env opens its item and envs follows")
            edits.append((line, []))
    for line, new in sorted(edits, key=lambda e: e[0], reverse=True):
        lines[line:line + 1] = new
    doc.__dict__.update(Document("".join(lines), doc.source).__dict__)


def _strip_value(value: str) -> str:
    """A one-line scalar as written, without the comment after it."""
    from kzgit.fix._text import _strip_comment   # start-up: the text module is loaded already
    return _strip_comment(value).strip()


def _insert_field(doc: Document, index: int, line: str) -> None:
    """A one-line field before ``doc.fields[index]``'s key (after its comment lines)."""
    doc.fields.insert(index, Field(line.split(":", 1)[0], [], line, []))


def _type_meta(doc: Document, data: Dict[str, Any]) -> List[str]:
    done: List[str] = []
    nl = doc.newline
    kind = data.get("kind")
    has_kind = "kind" in data
    has_api = "apiVersion" in data
    if has_api and has_kind:
        return done
    if not has_api and not has_kind:
        first = doc.fields[0]
        blanks = [n for n, ln in enumerate(first.prefix) if not ln.strip()]
        lines = ["apiVersion: " + KUSTOMIZATION_VERSION + nl, "kind: " + KUSTOMIZATION_KIND + nl]
        if blanks:
            cut = blanks[-1] + 1
            new = Field("apiVersion", first.prefix[:cut], lines[0], [])
            first.prefix = first.prefix[cut:]
        else:
            new = Field("apiVersion", [], lines[0], [])
        doc.fields[0:0] = [new, Field("kind", [], lines[1], [])]
        return ["apiVersion, kind added"]
    if not has_api:
        version = COMPONENT_VERSION if kind == COMPONENT_KIND else KUSTOMIZATION_VERSION
        _insert_field(doc, doc.index("kind"), "apiVersion: " + version + nl)
        return ["apiVersion added"]
    api = doc.field("apiVersion")
    assert api is not None
    end = api.content_end()
    after, api.body = api.body[end:], api.body[:end]
    doc.fields.insert(doc.index("apiVersion") + 1, Field("kind", [], "kind: " + KUSTOMIZATION_KIND + nl, after))
    return ["kind added"]


# -- the intent, on the parsed data --------------------------------------------------------------

def _as_list(v: Any) -> List[Any]:
    return list(v) if isinstance(v, list) else []


def _append(d: Dict[str, Any], target: str, moved: List[Any]) -> None:
    """Go's ``append(target, moved...)``; an empty result is omitted, an untouched one stays."""
    if moved:
        d[target] = _as_list(d.get(target)) + moved


def expected(data: Dict[str, Any], step: str, is_file: Callable[[str], bool]) -> Dict[str, Any]:
    """What ``step`` makes of the parsed kustomization ``data`` (kustomize's Go code, on dicts)."""
    d = dict(data)
    if step == "typemeta":
        if not d.get("kind") and "kind" not in d:
            d["kind"] = KUSTOMIZATION_KIND
        if "apiVersion" not in d:
            d["apiVersion"] = COMPONENT_VERSION if d.get("kind") == COMPONENT_KIND else KUSTOMIZATION_VERSION
    elif step in ("bases", "imageTags"):
        target = DEPRECATED[step]
        _append(d, target, _as_list(d.pop(step)))
    elif step == "patches":
        moved = _as_list(d.pop("patchesJson6902", None))
        moved += [{"path": v} if isinstance(v, str) and is_file(v) else {"patch": v}
                  for v in _as_list(d.pop("patchesStrategicMerge", None))]
        _append(d, "patches", moved)
    elif step == "commonLabels":
        pairs = d.pop("commonLabels")
        if pairs:
            d["labels"] = _as_list(d.get("labels")) + [{"pairs": pairs, "includeSelectors": True}]
    elif step == "env":
        for key in _GENERATORS:
            if isinstance(d.get(key), list):
                d[key] = [_env_to_envs(g) for g in d[key]]
    return d


def _env_to_envs(g: Any) -> Any:
    """FixKustomization: a generator's ``env`` appended to its ``envs``."""
    if not isinstance(g, dict) or not g.get("env"):
        return g
    g = dict(g)
    g["envs"] = _as_list(g.get("envs")) + [g.pop("env")]
    return g


def _equal(a: Any, b: Any) -> bool:
    """Data equality that tells ``1`` from ``True`` (Python's ``==`` does not)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return bool(a == b)


# -- one file --------------------------------------------------------------------------------------

def _steps(data: Dict[str, Any]) -> List[str]:
    """The migrations ``data`` needs, in ``edit fix``'s order.  ``apiVersion``/``kind`` only
    with another one: ``edit fix`` writes them because it writes the whole file, and kustomize
    builds a kustomization without them without a warning, so a file that needs nothing else
    is left as it is (a repository that kustomize builds silently passes the fixer)."""
    out = []
    if "apiVersion" not in data or "kind" not in data:
        out.append("typemeta")
    for key in ("bases", "imageTags"):
        if key in data:
            out.append(key)
    if "patchesJson6902" in data or "patchesStrategicMerge" in data:
        out.append("patches")
    if "commonLabels" in data:
        out.append("commonLabels")
    if any(isinstance(g, dict) and g.get("env") for key in _GENERATORS for g in _as_list(data.get(key))):
        out.append("env")
    return [] if out == ["typemeta"] else out


_NAMES = {
    "typemeta": "apiVersion/kind",
    "bases": "bases -> resources",
    "imageTags": "imageTags -> images",
    "patches": "patchesJson6902/patchesStrategicMerge -> patches",
    "commonLabels": "commonLabels -> labels (includeSelectors: true)",
    "env": "a generator's env -> envs",
}

_GENERATORS = ("configMapGenerator", "secretGenerator")


def _apply(doc: Document, step: str, data: Dict[str, Any], is_file: Callable[[str], bool]) -> List[str]:
    if step == "typemeta":
        return _type_meta(doc, data)
    if step in ("bases", "imageTags"):
        merge_list(doc, DEPRECATED[step], step)
        return [f"{step} -> {DEPRECATED[step]}"]
    if step == "patches":
        done = []
        if "patchesStrategicMerge" in data:
            _smp_entries(doc, _as_list(data["patchesStrategicMerge"]), is_file)
        smp_first = doc.index("patchesStrategicMerge") >= 0 and (
            doc.index("patchesJson6902") < 0
            or doc.index("patchesStrategicMerge") < doc.index("patchesJson6902"))
        if "patchesJson6902" in data:
            done.append("patchesJson6902 -> patches")
        if "patchesStrategicMerge" in data:
            done.append("patchesStrategicMerge -> patches")
        if doc.field("patches") is None and smp_first and doc.field("patchesJson6902") is not None:
            # edit fix's order: patches, then patchesJson6902's, then patchesStrategicMerge's
            merge_list(doc, "patches", "patchesStrategicMerge")
            merge_list(doc, "patches", "patchesJson6902", at_start=True)
        else:
            merge_list(doc, "patches", "patchesJson6902")
            merge_list(doc, "patches", "patchesStrategicMerge")
        return done
    if step == "commonLabels":
        pairs = data.get("commonLabels")
        if isinstance(pairs, dict):
            for entry in _as_list(data.get("labels")):
                for name in (entry.get("pairs") or {}) if isinstance(entry, dict) else {}:
                    if name in pairs:
                        # api/types/kustomization.go FixKustomizationPreMarshalling
                        raise Unsupported(f"label name '{name}' exists in both commonLabels and labels")
        _common_labels(doc, data)
        return ["commonLabels -> labels"]
    if step == "env":
        _generator_envs(doc)
        return ["env -> envs"]
    raise AssertionError(step)


def _vars_field(doc: Document, replacements: List[Dict[str, Any]]) -> None:
    """``vars`` replaced by the converted entries (appended to ``replacements`` if present);
    the comment lines of ``vars`` stay, above the new entries."""
    from kzgit.fix.vars import emit   # start-up: only --vars
    src = doc.field("vars")
    assert src is not None
    nl = doc.newline
    comments = [ln for ln in src.body[:src.content_end()] if is_comment_or_blank(ln) and ln.strip()]
    if not replacements:
        if src.eol_comment():
            raise Unsupported("'vars': the comment on its key line has no place to go")
        src.body = comments + src.body[src.content_end():]
        src.key_line = "vars:" + nl
        doc.drop_key("vars")
        return
    tgt = doc.field("replacements")
    if tgt is None:
        indent = doc.seq_indent()
        comment = src.eol_comment()
        src.body = [" " * indent + c.lstrip(" ") for c in comments] + emit(replacements, indent, nl) \
            + src.body[src.content_end():]
        src.key_line = "replacements:" + (" " + comment if comment else "") + nl
        src.key = "replacements"
        return
    if flow_items(doc, "replacements") is not None or tgt.inline_value() not in ("", "~", "null"):
        raise Unsupported("'replacements' is not a block list")
    if src.eol_comment():
        raise Unsupported("'vars': the comment on its key line has no place to go")
    tgt_indent = tgt.item_indent()
    indent = tgt_indent if tgt_indent is not None else doc.seq_indent()
    pad = " " * indent
    moved = [pad + ln.lstrip(" ") for ln in src.prefix if ln.strip()] + \
        [pad + c.lstrip(" ") for c in comments] + emit(replacements, indent, nl)
    end = tgt.content_end()
    tgt.body[end:end] = moved
    doc.remove("vars")


def migrate(path: str, text: str, is_file: Callable[[str], bool], vars_mode: bool = False,
            read: Optional[Callable[[str], Optional[str]]] = None,
            kustomization_of: Optional[Callable[[str], Optional[str]]] = None) -> FileFix:
    """The migrations of ``edit fix`` on the kustomization ``text`` (its repo-relative ``path``);
    ``is_file(rel)`` says whether a path relative to the kustomization's directory names a
    readable file (a ``patchesStrategicMerge`` entry's test).  With ``vars_mode`` (``edit fix
    --vars``) also ``vars``, reading the files it references with ``read`` (repo-relative path
    -> text or None) and finding bases with ``kustomization_of`` (directory -> its
    kustomization file or None)."""
    try:
        data = load_data(text)
    except yaml.YAMLError as e:
        return FileFix(path, text, text, [], [f"not valid YAML: {yaml_problem(e)}"])
    if not isinstance(data, dict) or not data:
        return FileFix(path, text, text, [], [])
    done: List[str] = []
    refused: List[str] = []
    current = text
    for step in _steps(data):
        try:
            doc = Document(current, path)
            made = _apply(doc, step, data, is_file)
            new = doc.text()
            want = expected(data, step, is_file)
            got = load_data(new)
            if not _equal(got, want):
                raise Unsupported("the edit in place would not give the migrated fields")
        except Unsupported as e:
            refused.append(f"{_NAMES[step]}: not migrated: {e}")
            continue
        except yaml.YAMLError:
            refused.append(f"{_NAMES[step]}: not migrated: the edit in place would not be valid YAML")
            continue
        current, data = new, want
        done += made
    if data.get("helmChartInflationGenerator"):
        # FixKustomization splits it into helmGlobals and helmCharts (SplitHelmParameters)
        refused.append("helmChartInflationGenerator -> helmCharts/helmGlobals: not migrated: "
                       "kzgit fix does not convert it; move its entries to helmCharts by hand")
    others: Dict[str, Tuple[str, str]] = {}
    if vars_mode and "vars" in data and read is not None and kustomization_of is not None:
        from kzgit.fix.vars import convert   # start-up: only --vars
        try:
            reps, others = convert(path, data, read, kustomization_of)
            doc = Document(current, path)
            _vars_field(doc, reps)
            new = doc.text()
            want = dict(data)
            del want["vars"]
            if reps:
                want["replacements"] = _as_list(want.get("replacements")) + reps
            if not _equal(load_data(new), want):
                raise Unsupported("the edit in place would not give the migrated fields")
        except Unsupported as e:
            others = {}
            refused.append(f"vars -> replacements: not migrated: {e}")
        else:
            current = new
            done.append("vars -> replacements" + (f" ({len(others)} resource file"
                                                  f"{'s' if len(others) != 1 else ''} with placeholders)"
                                                  if others else ""))
    notes: List[str] = []
    if not vars_mode and isinstance(data.get("vars"), list) and data["vars"]:
        names = [str(v.get("name")) for v in data["vars"] if isinstance(v, dict) and v.get("name")]
        notes.append(f"vars left: {', '.join(names) or '(unnamed)'}; kustomize still warns about "
                     f"them; kzgit fix --vars {posixpath.dirname(path) or '.'} converts them to "
                     "replacements, proven as every fix is")
    return FileFix(path, text, current, done, refused, others, notes)


def file_test(read_ok: Callable[[str], bool], kdir: str) -> Callable[[str], bool]:
    """``is_file`` for the kustomization in repo-relative directory ``kdir``, from a test of
    repo-relative paths (a patchesStrategicMerge entry is a path when ``ReadFile`` of it
    succeeds, relative to the kustomization's directory)."""
    def is_file(rel: str) -> bool:
        if "\n" in rel or not rel.strip():
            return False
        if posixpath.isabs(rel):
            return read_ok(rel)
        return read_ok(posixpath.normpath(posixpath.join("" if kdir == "." else kdir, rel)))
    return is_file
