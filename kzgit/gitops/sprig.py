"""The functions of an Argo CD ApplicationSet's Go templates: text/template's builtins
(text/template/funcs.go), Sprig's (github.com/Masterminds/sprig/v3, ``functions.go``:
``GenericFuncMap``) less ``env``, ``expandenv`` and ``getHostByName``, and Argo CD's own
``normalize``, ``slugify``, ``toYaml``, ``fromYaml``, ``fromYamlArray``
(argoproj/argo-cd ``applicationset/utils/utils.go``).

A Sprig function whose result depends on the clock, chance or the network, or that kzgit does
not implement, raises :class:`~kzgit.gitops.govalues.TemplateError` naming it (the
ApplicationSet is then listed as not expanded, never rendered differently). Regular expressions
are Go's (RE2, :mod:`kzgit.gore`).
"""
from __future__ import annotations

import base64
import hashlib
import json
import math
import posixpath
import re

from kzgit.gitops.govalues import (MAX_STEPS, MAX_TEXT, MISSING, NotSupported, TemplateError,
                                   go_print, go_type, truth)

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, List, Optional, Sequence


def _str(v: Any) -> str:
    """Sprig's ``strval``: a string as it is, anything else ``fmt.Sprintf("%v")``."""
    return v if isinstance(v, str) else ("" if v is None or v is MISSING else go_print(v))


def _int(v: Any) -> int:
    """spf13/cast ``ToInt64``: numbers, numeric strings, bools; anything else 0."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v)
    if isinstance(v, str):
        try:
            return int(v.strip(), 0) if v.strip() else 0
        except ValueError:
            try:
                return int(float(v))
            except ValueError:
                return 0
    return 0


def _float(v: Any) -> float:
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return 0.0
    return 0.0


def empty(v: Any) -> bool:
    """Sprig's ``empty``: nil, zero, "", false, an empty list or map."""
    return not truth(v)


def _eq(a: Any, *rest: Any) -> bool:
    """text/template ``eq``: true when ``a`` equals one of ``rest``; values of two kinds are an
    error, unless one is missing (then simply not equal)."""
    if not rest:
        raise TemplateError("wrong number of args for eq: want at least 1 got 0")
    for b in rest:
        ka, kb = _kind(a), _kind(b)
        if ka != kb:
            if "invalid" not in (ka, kb):
                raise TemplateError("error calling eq: incompatible types for comparison")
            continue
        if a == b:
            return True
    return False


def _kind(v: Any) -> str:
    """text/template's ``basicKind``: an int and a float64 are not comparable (a number from
    Argo CD's JSON parameters is a float64, a constant in the template an int)."""
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    if v is None or v is MISSING:
        return "invalid"
    return "other"


def _less(a: Any, b: Any, name: str) -> bool:
    """text/template ``lt``: numbers or strings of one kind; anything else is an error."""
    ka, kb = _kind(a), _kind(b)
    if ka in ("bool", "other", "invalid") or kb in ("bool", "other", "invalid"):
        raise TemplateError(f"error calling {name}: invalid type for comparison")
    if ka != kb:
        raise TemplateError(f"error calling {name}: incompatible types for comparison")
    return bool(a < b)


def _index(item: Any, *keys: Any) -> Any:
    for k in keys:
        if isinstance(item, dict):
            item = item.get(k, MISSING) if not isinstance(k, (list, dict)) else MISSING
        elif isinstance(item, (list, str)):
            if not isinstance(k, int) or isinstance(k, bool):
                raise TemplateError("error calling index: cannot index slice/array with type "
                                    + go_type(k))
            if not 0 <= k < len(item):
                raise TemplateError(f"error calling index: index out of range: {k}")
            item = item[k] if isinstance(item, list) else ord(item[k])
        elif item is None or item is MISSING:
            raise TemplateError("error calling index: index of untyped nil")
        else:
            raise TemplateError(f"error calling index: can't index item of type {go_type(item)}")
    return item


def _len(v: Any) -> int:
    if isinstance(v, (str, list, dict)):
        return len(v.encode("utf-8")) if isinstance(v, str) else len(v)
    raise TemplateError(f"error calling len: len of type {go_type(v)}")


def _slice(item: Any, *idx: Any) -> Any:
    if not isinstance(item, (str, list)):
        raise TemplateError(f"error calling slice: can't slice item of type {go_type(item)}")
    bounds = [int(i) for i in idx]
    if len(bounds) > 2 and isinstance(item, str):
        raise TemplateError("error calling slice: cannot 3-index slice a string")
    lo = bounds[0] if bounds else 0
    hi = bounds[1] if len(bounds) > 1 else len(item)
    if not 0 <= lo <= hi <= len(item):
        raise TemplateError(f"error calling slice: index out of range: {hi}")
    return item[lo:hi]


_VERB = re.compile(r"%([-+# 0]*)(\d+|\*)?(?:\.(\d+))?([a-zA-Z%])")


def sprintf(fmt: str, *args: Any) -> str:
    """Go's ``fmt.Sprintf`` for the verbs a name or path template uses (%s %v %d %q %t %f %x
    %X %o %c %%, width, precision, the ``-`` and ``0`` flags); another verb raises."""
    out: List[str] = []
    pos = 0
    arg = 0
    for m in _VERB.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        flags, width, prec, verb = m.group(1), m.group(2), m.group(3), m.group(4)
        if verb == "%":
            out.append("%")
            continue
        if arg >= len(args):
            out.append(f"%!{verb}(MISSING)")
            continue
        v = args[arg]
        arg += 1
        out.append(_pad(_verb(verb, v, prec), flags, width))
    out.append(fmt[pos:])
    if arg < len(args):
        out.append("%!(EXTRA " + ", ".join(f"{go_type(a)}={go_print(a)}" for a in args[arg:]) + ")")
    return "".join(out)


def _verb(verb: str, v: Any, prec: Optional[str]) -> str:
    if verb in ("s", "v"):
        s = go_print(v) if verb == "v" or not isinstance(v, str) else v
        return s[:int(prec)] if prec is not None and verb == "s" else s
    if verb == "d" and isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    if verb == "q" and isinstance(v, str):
        return _go_quote(v)
    if verb == "t" and isinstance(v, bool):
        return "true" if v else "false"
    if verb in ("f", "F") and isinstance(v, (int, float)) and not isinstance(v, bool):
        if isinstance(v, int):
            return f"%!f(int={v})"
        return f"{v:.{int(prec) if prec is not None else 6}f}"
    if verb in ("x", "X", "o") and isinstance(v, int) and not isinstance(v, bool):
        s = format(v, {"x": "x", "X": "X", "o": "o"}[verb])
        return s
    if verb in ("x", "X") and isinstance(v, str):
        s = v.encode("utf-8").hex()
        return s.upper() if verb == "X" else s
    if verb == "c" and isinstance(v, int):
        return chr(v)
    if verb in "sdqtfFxXoc":
        return f"%!{verb}({go_type(v)}={go_print(v)})"
    raise NotSupported(f"printf verb %{verb} is not expanded by kzgit")


def _pad(s: str, flags: str, width: Optional[str]) -> str:
    if not width or width == "*":
        return s
    w = int(width)
    if w > MAX_TEXT:
        raise NotSupported(f"printf width {w}: beyond kzgit's bound")
    if "-" in flags:
        return s.ljust(w)
    if "0" in flags and s.lstrip("-").replace(".", "").isdigit():
        sign = "-" if s.startswith("-") else ""
        return sign + s.lstrip("-").rjust(w - len(sign), "0")
    return s.rjust(w)


def _go_quote(s: str) -> str:
    """``strconv.Quote``: Go's escapes, printable Unicode kept."""
    out = ['"']
    for c in s:
        if c in ('"', "\\"):
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif c == "\r":
            out.append("\\r")
        elif ord(c) < 0x20 or ord(c) == 0x7f:
            out.append(f"\\x{ord(c):02x}")
        elif not c.isprintable():
            out.append(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def _title(s: str) -> str:
    """strings.Title: the first letter of each word (after a non-letter) upper-cased."""
    out, prev = [], " "
    for c in s:
        out.append(c.upper() if not (prev.isalnum() or prev == "_" or prev == "'") else c)
        prev = c
    return "".join(out)


def _trunc(n: Any, s: Any) -> str:
    s, n = _str(s), _int(n)
    if n < 0 and len(s) + n > 0:
        return s[len(s) + n:]
    if n >= 0 and len(s) > n:
        return s[:n]
    return s


def _substr(start: Any, end: Any, s: Any) -> str:
    s, a, b = _str(s), _int(start), _int(end)
    if a < 0:
        return s[:b]
    if b < 0 or b > len(s):
        return s[a:]
    return s[a:b]


def _default(d: Any, *given: Any) -> Any:
    if not given or empty(given[0]):
        return d
    return given[0]


def _coalesce(*vs: Any) -> Any:
    for v in vs:
        if not empty(v):
            return v
    return None


def _ternary(a: Any, b: Any, cond: Any) -> Any:
    return a if cond is True else b


def _list(*vs: Any) -> List[Any]:
    return list(vs)


def _dict(*vs: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for i in range(0, len(vs), 2):
        out[_str(vs[i])] = vs[i + 1] if i + 1 < len(vs) else ""
    return out


def _as_list(v: Any, name: str) -> List[Any]:
    if isinstance(v, list):
        return v
    if v is None or v is MISSING:
        return []
    raise TemplateError(f"error calling {name}: Cannot find {name} on type {go_type(v)}")


def _join(sep: Any, v: Any) -> str:
    items = v if isinstance(v, list) else [v] if v is not None and v is not MISSING else []
    return _str(sep).join(_str(x) for x in items if x is not None)


def _split(sep: Any, s: Any) -> Dict[str, str]:
    return {f"_{i}": p for i, p in enumerate(_go_split(_str(s), _str(sep)))}


def _go_split(s: str, sep: str) -> List[str]:
    """strings.Split: an empty separator splits into characters."""
    return list(s) if sep == "" else s.split(sep)


def _regex(pattern: Any) -> Any:
    from kzgit import gore   # start-up: only templates with a regex function
    try:
        return gore.compile(_str(pattern))
    except ValueError as e:
        raise TemplateError(f"error calling regex: {e}") from None


def _go_matches(rx: Any, s: str) -> List[Any]:
    """Go's successive non-overlapping matches: an empty match next to the previous is skipped."""
    out: List[Any] = []
    last_end = -1
    for m in rx.finditer(s):
        if m.end() == m.start() and m.start() == last_end:
            continue
        out.append(m)
        last_end = m.end()
    return out


def _expand_repl(m: Any, repl: str) -> str:
    """regexp.Expand: ``$1``, ``${1}``, ``$name``, ``${name}``, ``$$``; a name is the longest
    run of letters, digits and underscores (``$1x`` is the group ``1x``: empty)."""
    def group(name: str) -> str:
        try:
            got = m.group(int(name)) if name.isdigit() else m.group(name)
        except (IndexError, KeyError, ValueError):
            return ""   # Go: a group that does not exist expands to nothing
        return got or ""
    return re.sub(r"\$(\$|\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))",
                  lambda x: "$" if x.group(1) == "$" else group(x.group(2) or x.group(3)), repl)


def _regex_replace_all(pattern: Any, s: Any, repl: Any) -> str:
    rx, text = _regex(pattern), _str(s)
    return _replace_matches(rx, text, lambda m: _expand_repl(m, _str(repl)))


def _regex_replace_all_literal(pattern: Any, s: Any, repl: Any) -> str:
    rx, text = _regex(pattern), _str(s)
    return _replace_matches(rx, text, lambda m: _str(repl))


def _replace_matches(rx: Any, text: str, make: Callable[[Any], str]) -> str:
    out, pos = [], 0
    for m in _go_matches(rx, text):
        out.append(text[pos:m.start()])
        out.append(make(m))
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def _regex_find_all(pattern: Any, s: Any, n: Any) -> List[str]:
    found = [m.group(0) for m in _go_matches(_regex(pattern), _str(s))]
    k = _int(n)
    return found if k < 0 else found[:k]


def _regex_split(pattern: Any, s: Any, n: Any) -> List[str]:
    text, k = _str(s), _int(n)
    if k == 0:
        return []
    out: List[str] = []
    pos = 0
    for m in _go_matches(_regex(pattern), text):
        if k > 0 and len(out) == k - 1:
            break
        if m.end() == 0 and m.start() == 0:
            continue
        out.append(text[pos:m.start()])
        pos = m.end()
    out.append(text[pos:])
    return out


def _to_json(v: Any) -> str:
    """Sprig ``toJson``: encoding/json.Marshal (keys sorted, ``<``, ``>`` and ``&`` escaped,
    float64 as Go writes it), "" when it cannot."""
    from kzgit.errors import KzgitError   # start-up: only templates that print JSON
    from kzgit.yamlio.gojson import go_json_dumps   # start-up: as above
    try:
        return go_json_dumps(_plain(v))
    except KzgitError:
        return ""


def _to_pretty_json(v: Any) -> str:
    """Sprig ``toPrettyJson``: json.MarshalIndent with two spaces."""
    from kzgit.errors import KzgitError   # start-up: as _to_json
    from kzgit.yamlio.gojson import go_json_indent   # start-up: as above
    try:
        return go_json_indent(_plain(v))
    except KzgitError:
        return ""


def _to_raw_json(v: Any) -> str:
    """Sprig ``toRawJson``: as toJson without HTML escaping."""
    return re.sub(r"(?<!\\)\\u00(3c|3e|26)", lambda m: chr(int(m.group(1), 16)), _to_json(v))


def _plain(v: Any) -> Any:
    if v is MISSING:
        return None
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def _to_yaml(v: Any) -> str:
    """Argo CD's ``toYaml``: sigs.k8s.io/yaml's Marshal (through JSON: keys sorted), the final
    newline trimmed."""
    from kzgit.yamlio import dump   # start-up: only templates that print YAML
    return dump(_plain(v)).rstrip("\n")


def _from_yaml(s: Any) -> Any:
    got = _yaml(s, "fromYaml")
    if got is None:
        return {}
    if not isinstance(got, dict):
        raise TemplateError("error calling fromYaml: error unmarshaling JSON: while decoding "
                            "JSON: json: cannot unmarshal "
                            f"{'array' if isinstance(got, list) else _json_kind(got)} into Go "
                            "value of type map[string]interface {}")
    return got


def _yaml(s: Any, name: str) -> Any:
    """sigs.k8s.io/yaml Unmarshal of a string (Argo CD's fromYaml and fromYamlArray)."""
    from kzgit.errors import KzgitError   # start-up: only templates that read YAML
    from kzgit.yamlio import load_yaml11   # start-up
    try:
        return load_yaml11(_str(s))
    except KzgitError as e:
        raise TemplateError(f"error calling {name}: {e}") from None


def _json_kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    return "string"


def _slugify(*args: Any) -> str:
    """applicationset/utils ``SlugifyName(args...)``: the last argument is the name, the first
    (with two or more) the maximum size (50), the second (with three) whether to cut at a dash
    (true); the name goes through ``SanitizeName``, then github.com/gosimple/slug ``Make``
    (characters outside ``[a-zA-Z0-9_-]`` a dash, runs of dashes one, ``-`` and ``_`` trimmed,
    cut to the size: at the last dash at or before it when smart, else at it; trimmed again)."""
    if not args:
        raise TemplateError("error calling slugify: no name")
    size, smart = 50, True
    if len(args) >= 2:
        if not isinstance(args[0], int) or isinstance(args[0], bool):
            raise TemplateError("error calling slugify: interface conversion: interface {} is "
                                f"{go_type(args[0])}, not int")
        size = args[0]
    if len(args) >= 3:
        if not isinstance(args[1], bool):
            raise TemplateError("error calling slugify: interface conversion: interface {} is "
                                f"{go_type(args[1])}, not bool")
        smart = args[1]
    if not isinstance(args[-1], str):
        raise TemplateError("error calling slugify: interface conversion: interface {} is "
                            f"{go_type(args[-1])}, not string")
    text = re.sub(r"-+", "-", re.sub(r"[^a-zA-Z0-9_-]", "-", _normalize(args[-1]))).strip("-_")
    if size > 0 and len(text) > size:
        cut = text[:size]
        if smart:
            dash = text.rfind("-", 0, size + 1)
            cut = text[:dash] if dash >= 0 else cut
        text = cut
    return text.strip("-_")


def _bounded(s: str, n: int) -> str:
    """``strings.Repeat``, refused before it builds more than kzgit's bound."""
    if n > 0 and len(s) * n > MAX_TEXT:
        raise NotSupported(f"error calling repeat: a result of more than {MAX_TEXT} characters: "
                           "beyond kzgit's bound")
    return s * max(0, n)


def _indent(n: int, s: str) -> str:
    pad = _bounded(" ", n)
    if len(pad) * (s.count("\n") + 1) + len(s) > MAX_TEXT:
        raise NotSupported(f"error calling indent: a result of more than {MAX_TEXT} characters: "
                           "beyond kzgit's bound")
    return pad + s.replace("\n", "\n" + pad)


def _until(n: int) -> List[int]:
    if abs(n) > MAX_STEPS:
        raise NotSupported(f"error calling until: {n} items: beyond kzgit's bound of {MAX_STEPS}")
    return list(range(n)) if n >= 0 else list(range(0, n, -1))


def _fail(msg: Any) -> Any:
    raise TemplateError(_str(msg))


def sanitize_name(name: str) -> str:
    """applicationset/utils ``SanitizeName`` (Argo CD's ``normalize``, and the git generator's
    ``path.basenameNormalized``): lower case, characters outside ``[-a-z0-9.]`` a dash, at most
    253 characters, dashes and dots trimmed."""
    name = re.sub(r"[^-a-z0-9.]", "-", name.lower())[:253]
    return name.strip("-.")


def _normalize(s: Any) -> str:
    return sanitize_name(_str(s))


def _not_expanded(name: str) -> Callable[..., Any]:
    def refuse(*_: Any) -> Any:
        raise NotSupported(f"template function {name} is not expanded by kzgit "
                           "(its result depends on the time, chance or the network, or kzgit "
                           "does not implement it)")
    return refuse


def _b64dec(s: Any) -> str:
    try:
        return base64.b64decode(_str(s), validate=True).decode("utf-8", "replace")
    except ValueError as e:
        return str(e)


_FUNCS: Dict[str, Callable[..., Any]] = {
    # text/template's builtins (text/template/funcs.go)
    "index": _index, "len": _len, "slice": _slice, "not": lambda v: not truth(v),
    "eq": _eq, "ne": lambda a, b: not _eq(a, b),
    "lt": lambda a, b: _less(a, b, "lt"), "le": lambda a, b: _less(a, b, "le") or _eq(a, b),
    "gt": lambda a, b: _less(b, a, "gt"), "ge": lambda a, b: _less(b, a, "ge") or _eq(a, b),
    "print": lambda *a: _go_sprint(a), "println": lambda *a: " ".join(go_print(x) for x in a) + "\n",
    "printf": lambda f, *a: sprintf(_str(f), *a),
    "and": lambda *a: a, "or": lambda *a: a,   # evaluated lazily by _Run.logic
    "urlquery": lambda *a: _urlquery(a), "html": _not_expanded("html"), "js": _not_expanded("js"),
    "call": _not_expanded("call"),
    # Sprig: strings (sprig/v3 strings.go)
    "upper": lambda s: _str(s).upper(), "lower": lambda s: _str(s).lower(),
    "title": lambda s: _title(_str(s)), "untitle": lambda s: " ".join(
        w[:1].lower() + w[1:] for w in _str(s).split(" ")),
    "trim": lambda s: _str(s).strip(" \t\n\r\v\f\u0085\u00a0"),
    "trimAll": lambda c, s: _str(s).strip(_str(c)),
    "trimPrefix": lambda p, s: _str(s)[len(_str(p)):] if _str(s).startswith(_str(p)) else _str(s),
    "trimSuffix": lambda p, s: _str(s)[:len(_str(s)) - len(_str(p))]
    if _str(p) and _str(s).endswith(_str(p)) else _str(s),
    "trunc": _trunc, "substr": _substr,
    "replace": lambda old, new, s: _str(s).replace(_str(old), _str(new)),
    "repeat": lambda n, s: _bounded(_str(s), _int(n)),
    "contains": lambda sub, s: _str(sub) in _str(s),
    "hasPrefix": lambda p, s: _str(s).startswith(_str(p)),
    "hasSuffix": lambda p, s: _str(s).endswith(_str(p)),
    "quote": lambda *a: " ".join(_go_quote(_str(x)) for x in a if x is not None),
    "squote": lambda *a: " ".join(f"'{_str(x)}'" for x in a if x is not None),
    "cat": lambda *a: " ".join(_str(x) for x in a if x is not None),
    "indent": lambda n, s: _indent(_int(n), _str(s)),
    "nindent": lambda n, s: "\n" + _indent(_int(n), _str(s)),
    "nospace": lambda s: re.sub(r"\s", "", _str(s)),
    "splitList": lambda sep, s: _go_split(_str(s), _str(sep)), "split": _split,
    "join": _join, "toString": _str, "toStrings": lambda v: [_str(x) for x in _as_list(v, "toStrings")],
    "abbrev": lambda n, s: _str(s) if len(_str(s)) <= _int(n) else _str(s)[:max(0, _int(n) - 3)] + "...",
    "wrap": _not_expanded("wrap"), "plural": lambda one, many, n: one if _int(n) == 1 else many,
    "snakecase": _not_expanded("snakecase"), "camelcase": _not_expanded("camelcase"),
    "kebabcase": _not_expanded("kebabcase"), "swapcase": lambda s: _str(s).swapcase(),
    # defaults (defaults.go)
    "default": _default, "empty": empty, "coalesce": _coalesce, "ternary": _ternary,
    "required": lambda msg, v: v if not empty(v) else _fail(msg), "fail": _fail,
    "toJson": _to_json, "mustToJson": _to_json, "toRawJson": _to_raw_json,
    "toPrettyJson": _to_pretty_json,
    "fromJson": lambda s: _from_json(s),
    # lists and dicts (list.go, dict.go)
    "list": _list, "tuple": _list, "dict": _dict,
    "first": lambda v: (_as_list(v, "first") or [None])[0],
    "last": lambda v: (_as_list(v, "last") or [None])[-1],
    "rest": lambda v: _as_list(v, "rest")[1:], "initial": lambda v: _as_list(v, "initial")[:-1],
    "append": lambda v, x: _as_list(v, "append") + [x], "prepend": lambda v, x: [x] + _as_list(v, "prepend"),
    "concat": lambda *vs: [x for v in vs for x in _as_list(v, "concat")],
    "reverse": lambda v: list(reversed(_as_list(v, "reverse"))),
    "uniq": lambda v: _uniq(_as_list(v, "uniq")), "compact": lambda v: [x for x in _as_list(v, "compact") if not empty(x)],
    "has": lambda x, v: x in _as_list(v, "has"),
    "without": lambda v, *xs: [x for x in _as_list(v, "without") if x not in xs],
    "sortAlpha": lambda v: sorted(_str(x) for x in _as_list(v, "sortAlpha")),
    "get": lambda d, k: d.get(_str(k), "") if isinstance(d, dict) else "",
    "hasKey": lambda d, k: isinstance(d, dict) and _str(k) in d,
    "keys": lambda *ds: [k for d in ds if isinstance(d, dict) for k in d],
    "values": lambda d: list(d.values()) if isinstance(d, dict) else [],
    "pick": lambda d, *ks: {k: d[k] for k in map(_str, ks) if isinstance(d, dict) and k in d},
    "omit": lambda d, *ks: {k: v for k, v in (d.items() if isinstance(d, dict) else ()) if k not in ks},
    "pluck": lambda k, *ds: [d[_str(k)] for d in ds if isinstance(d, dict) and _str(k) in d],
    "merge": _not_expanded("merge"), "mergeOverwrite": _not_expanded("mergeOverwrite"),
    "set": _not_expanded("set"), "unset": _not_expanded("unset"), "deepCopy": _not_expanded("deepCopy"),
    # paths (paths.go)
    "base": lambda s: posixpath.basename(_str(s).rstrip("/")) or ("/" if _str(s).startswith("/") else "."),
    "dir": lambda s: _go_dir(_str(s)), "clean": lambda s: posixpath.normpath(_str(s)) if _str(s) else ".",
    "ext": lambda s: _go_ext(_str(s)), "isAbs": lambda s: _str(s).startswith("/"),
    # regular expressions (regex.go), Go's RE2
    "regexMatch": lambda p, s: _regex(p).search(_str(s)) is not None,
    "regexFind": lambda p, s: (lambda m: m.group(0) if m else "")(_regex(p).search(_str(s))),
    "regexFindAll": _regex_find_all, "regexReplaceAll": _regex_replace_all,
    "regexReplaceAllLiteral": _regex_replace_all_literal, "regexSplit": _regex_split,
    "regexQuoteMeta": lambda s: re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", _str(s)),
    # numbers (numeric.go)
    "add": lambda *a: sum(_int(x) for x in a), "add1": lambda a: _int(a) + 1,
    "sub": lambda a, b: _int(a) - _int(b), "mul": lambda *a: math.prod(_int(x) for x in a),
    "div": lambda a, b: int(_int(a) / _int(b)), "mod": lambda a, b: int(math.fmod(_int(a), _int(b))),
    "max": lambda *a: max(_int(x) for x in a), "min": lambda *a: min(_int(x) for x in a),
    "int": _int, "int64": _int, "float64": _float, "atoi": lambda s: _atoi(s),
    "until": lambda n: _until(_int(n)),
    "seq": _not_expanded("seq"),
    # encodings (crypto.go, strings.go)
    "b64enc": lambda s: base64.b64encode(_str(s).encode("utf-8")).decode("ascii"),
    "b64dec": _b64dec,
    "sha1sum": lambda s: hashlib.sha1(_str(s).encode("utf-8")).hexdigest(),   # noqa: S324 - Sprig's
    "sha256sum": lambda s: hashlib.sha256(_str(s).encode("utf-8")).hexdigest(),
    # Argo CD's own (applicationset/utils/utils.go)
    "normalize": _normalize, "slugify": _slugify, "toYaml": _to_yaml, "fromYaml": _from_yaml,
    "fromYamlArray": lambda s: _from_yaml_array(s),
}

# Sprig functions whose result depends on the clock, chance, the network or secrets kzgit does
# not hold; Argo CD removes env, expandenv and getHostByName (utils.go): "not defined" for those.
for _name in ("now", "date", "dateInZone", "date_in_zone", "dateModify", "date_modify", "ago",
              "toDate", "mustToDate", "unixEpoch", "duration", "durationRound", "htmlDate",
              "htmlDateInZone", "randAlpha", "randAlphaNum", "randNumeric", "randAscii", "randBytes",
              "randInt", "uuidv4", "genPrivateKey", "derivePassword", "buildCustomCert", "genCA",
              "genSelfSignedCert", "genSignedCert", "encryptAES", "decryptAES", "bcrypt", "htpasswd",
              "semver", "semverCompare", "shuffle", "adler32sum", "b32enc", "b32dec", "typeOf",
              "kindOf", "typeIs", "kindIs", "deepEqual", "dig", "urlParse", "urlJoin", "osBase",
              "osDir", "osExt", "osClean", "osIsAbs", "mustRegexMatch", "mustRegexFind"):
    _FUNCS.setdefault(_name, _not_expanded(_name))


def function(name: str) -> Callable[..., Any]:
    fn = _FUNCS.get(name)
    if fn is None:
        raise TemplateError(f'function "{name}" not defined')
    return fn


def _go_sprint(args: Sequence[Any]) -> str:
    """fmt.Sprint: a space between operands when neither is a string."""
    out = []
    for i, a in enumerate(args):
        if i and not isinstance(a, str) and not isinstance(args[i - 1], str):
            out.append(" ")
        out.append(go_print(a))
    return "".join(out)


def _urlquery(args: Sequence[Any]) -> str:
    from urllib.parse import quote_plus   # start-up
    return quote_plus(_go_sprint(args), safe="~")


def _uniq(v: List[Any]) -> List[Any]:
    out: List[Any] = []
    for x in v:
        if x not in out:
            out.append(x)
    return out


def _go_dir(s: str) -> str:
    d = s[:s.rfind("/") + 1] if "/" in s else ""
    return posixpath.normpath(d) if d else "."


def _go_ext(s: str) -> str:
    base = s[s.rfind("/") + 1:]
    i = base.rfind(".")
    return base[i:] if i >= 0 else ""


def _atoi(s: Any) -> int:
    try:
        return int(_str(s))
    except ValueError:
        return 0


def _from_json(s: Any) -> Any:
    try:
        return json.loads(_str(s))
    except ValueError:
        return {}


def _from_yaml_array(s: Any) -> Any:
    got = _yaml(s, "fromYamlArray")
    if got is None:
        return []
    if not isinstance(got, list):
        raise TemplateError("error calling fromYamlArray: error unmarshaling JSON: while decoding "
                            "JSON: json: cannot unmarshal "
                            f"{'object' if isinstance(got, dict) else _json_kind(got)} into Go "
                            "value of type []interface {}")
    return got
