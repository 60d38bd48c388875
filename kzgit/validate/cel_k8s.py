"""The Kubernetes CEL environment over ``cel-expr-python``: compile and evaluate rules.

The base is Google's CEL runtime (``cel_expr_python``) with its ``optional`` and ``strings``
(version 2) extensions, as the API server's base environment has them (k8s.io/apiserver
pkg/cel/environment/base.go).  On top, written here after k8s.io/apiserver pkg/cel/library
(tested with cases taken from that package's own ``*_test.go``, tests/validate/test_cel_library.py):

* ``lists``: ``isSorted``, ``sum``, ``min``, ``max``; ``regex``: ``find``, ``findAll``;
* ``urls``: ``url``, ``isURL``, ``getScheme``, ``getHost``, ``getHostname``, ``getPort``,
  ``getEscapedPath``, ``getQuery``;
* ``ip``/``cidr``: ``ip``, ``isIP``, ``ip.isCanonical``, ``family``, ``isUnspecified``,
  ``isLoopback``, ``isLinkLocalMulticast``, ``isLinkLocalUnicast``, ``isGlobalUnicast``,
  ``cidr``, ``isCIDR``, ``containsIP``, ``containsCIDR``, ``ip()``, ``masked``, ``prefixLength``;
* ``quantity``: ``quantity``, ``isQuantity``, ``sign``, ``isInteger``, ``asInteger``,
  ``asApproximateFloat``, ``add``, ``sub``, ``isGreaterThan``, ``isLessThan``, ``compareTo``;
* ``semver``: ``semver``, ``isSemver``, ``major``, ``minor``, ``patch`` and the comparisons;
* ``sets``: ``sets.contains``, ``sets.equivalent``, ``sets.intersects``; ``lists``
  extension: ``lists.range``, ``slice``, ``flatten``, ``distinct``, ``reverse``, ``sort``.

* ``format``: ``format.dns1123Label()`` and the other named formats (their checks in
  :mod:`kzgit.validate.celformat`), ``format.named``, ``validate``;
* through :mod:`kzgit.validate.celrewrite` (the runtime takes no macros from Python and lets
  no library add an overload to a function another declares): two-variable comprehensions,
  ``existsOne``, ``transformList``, ``transformMap``, ``transformMapEntry``, ``sortBy``,
  ``indexOf``/``lastIndexOf`` on lists, ``string()`` of an IP or CIDR, ``type(x) == net.IP``;
  the helpers those rewrites call are declared here.

Not implemented (a rule using them is reported as not evaluated, never as wrong): ``net``
other than in a type test (:data:`K8S_MISSING_NAMES`).  Not Kubernetes' (a rule using them
does not compile, as the API server refuses it): cel-go's ``math``, ``base64`` and
``cel.bind``, the strings extension's ``reverse``.  Rules are compiled here over dynamic
values; the type check over the schema's types is :mod:`kzgit.validate.celcheck`'s, the cost
limits :mod:`kzgit.validate.celcost`'s.

Values of the Kubernetes types (Quantity, IP, CIDR, URL, Semver) are maps tagged with
``@kzgit`` (the runtime has no opaque Python types), normalised so that equal values are
equal maps.
"""
from __future__ import annotations

import ipaddress
import re
from fractions import Fraction
from typing import Any, Callable, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

from cel_expr_python import cel
from cel_expr_python.ext import ext_optional, ext_strings

from kzgit.validate import celrewrite
from kzgit.validate.celformat import CHECKS


T = cel.Type
DYN = T.DYN
MAP = T.Map(T.STRING, DYN)
LIST = T.List(DYN)
TAG = "@kzgit"


class CompileError(Exception):
    """A rule the environment cannot compile; ``unsupported``: it uses something kzgit lacks."""

    def __init__(self, message: str, unsupported: bool) -> None:
        super().__init__(message)
        self.unsupported = unsupported


class CelError(Exception):
    """An evaluation error raised by a library function (the rule then fails to evaluate)."""


# -- quantity (k8s.io/apimachinery pkg/api/resource) -------------------------------------------
_QUANTITY = re.compile(r"([+-]?)(\d+\.?\d*|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?")
_BINARY = {"Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60}
_DECIMAL = {"n": Fraction(1, 10 ** 9), "u": Fraction(1, 10 ** 6), "m": Fraction(1, 1000), "": Fraction(1),
            "k": Fraction(10 ** 3), "M": Fraction(10 ** 6), "G": Fraction(10 ** 9), "T": Fraction(10 ** 12),
            "P": Fraction(10 ** 15), "E": Fraction(10 ** 18)}
_INT64 = (-(1 << 63), (1 << 63) - 1)


def _parse_quantity(s: str) -> Fraction:
    m = _QUANTITY.fullmatch(s)
    if not m:
        raise CelError(f"invalid quantity {s!r}")
    sign, num, suffix = m.groups()
    value = Fraction(num)
    suffix = suffix or ""
    if suffix in _BINARY:
        value *= _BINARY[suffix]
    elif suffix in _DECIMAL:
        value *= _DECIMAL[suffix]
    else:
        value *= Fraction(10) ** int(suffix[1:])
    return -value if sign == "-" else value


def _q(value: Fraction) -> Dict[str, Any]:
    return {TAG: "quantity", "n": value.numerator, "d": value.denominator} if abs(value.numerator) < 1 << 62 \
        and value.denominator < 1 << 62 else {TAG: "quantity", "n": str(value.numerator), "d": str(value.denominator)}


def _qv(m: Any) -> Fraction:
    if not (isinstance(m, dict) and m.get(TAG) == "quantity"):
        raise CelError("not a quantity")
    return Fraction(int(m["n"]), int(m["d"]))


def _quantity(s: str) -> Dict[str, Any]:
    return _q(_parse_quantity(s))


def _is_quantity(s: str) -> bool:
    try:
        _parse_quantity(s)
    except CelError:
        return False
    return True


def _as_integer(m: Any) -> int:
    v = _qv(m)
    if v.denominator != 1 or not _INT64[0] <= v.numerator <= _INT64[1]:
        raise CelError("cannot convert value to integer")
    return v.numerator


def _is_integer(m: Any) -> bool:
    v = _qv(m)
    return v.denominator == 1 and _INT64[0] <= v.numerator <= _INT64[1]


def _arith(m: Any, other: Any, sign: int) -> Dict[str, Any]:
    o = Fraction(other) if isinstance(other, int) and not isinstance(other, bool) else _qv(other)
    return _q(_qv(m) + sign * o)


# -- semver (k8s.io/apiserver pkg/cel/library/semverlib.go, blang/semver) ------------------------
_SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?")


def _semver(s: str, normalize: bool = False) -> Dict[str, Any]:
    if normalize:
        s = s[1:] if s.startswith("v") else s
        m = re.match(r"([0-9.]*)(.*)", s, re.S)
        core, rest = (m.group(1), m.group(2)) if m else ("", s)
        parts = [p.lstrip("0") or "0" for p in core.split(".")] if core else []
        while 0 < len(parts) < 3:
            parts.append("0")
        s = ".".join(parts) + rest
    m = _SEMVER.fullmatch(s)
    if not m:
        raise CelError(f"invalid semver {s!r}")
    return {TAG: "semver", "major": int(m.group(1)), "minor": int(m.group(2)), "patch": int(m.group(3)),
            "pre": m.group(4) or ""}


def _is_semver(s: str, normalize: bool = False) -> bool:
    try:
        _semver(s, normalize)
    except CelError:
        return False
    return True


def _pre_key(pre: str) -> Tuple[Any, ...]:
    if not pre:
        return (1,)
    return (0,) + tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))


def _compare(a: Any, b: Any) -> int:
    if isinstance(a, dict) and a.get(TAG) == "semver":
        if not (isinstance(b, dict) and b.get(TAG) == "semver"):
            raise CelError("no such overload")
        ka = (a["major"], a["minor"], a["patch"], _pre_key(a["pre"]))
        kb = (b["major"], b["minor"], b["patch"], _pre_key(b["pre"]))
    else:
        ka, kb = _qv(a), _qv(b)   # type: ignore[assignment]
    return (ka > kb) - (ka < kb)


# -- IP and CIDR (k8s.io/apiserver pkg/cel/library/ip.go, cidr.go: netip, strict) ----------------
def _parse_ip(s: str) -> Any:
    # netip.ParseAddr: no leading zeros, no zones; Kubernetes refuses IPv4-mapped IPv6 too
    if "%" in s:
        raise CelError(f"IP address with zone value is not allowed: {s}")
    try:
        addr = ipaddress.ip_address(s)
    except ValueError:
        raise CelError(f"IP Address {s!r} parse error") from None
    if addr.version == 6 and addr.ipv4_mapped is not None:
        raise CelError(f"IPv4-mapped IPv6 address is not allowed: {s}")
    return addr


def _ip_map(addr: Any) -> Dict[str, Any]:
    return {TAG: "ip", "v": str(addr)}


def _ipv(m: Any) -> Any:
    if isinstance(m, str):
        return _parse_ip(m)
    if not (isinstance(m, dict) and m.get(TAG) == "ip"):
        raise CelError("not an IP")
    return ipaddress.ip_address(m["v"])


def _is_ip(s: str) -> bool:
    try:
        _parse_ip(s)
    except CelError:
        return False
    return True


def _ip_is_canonical(s: str) -> bool:
    return str(_parse_ip(s)) == s


def _parse_cidr(s: str) -> Any:
    addr, slash, bits = s.partition("/")
    if not slash or not bits.isdigit() or (len(bits) > 1 and bits[0] == "0"):
        raise CelError(f"network address parse error during conversion from string: {s}")
    ip = _parse_ip(addr)
    if int(bits) > ip.max_prefixlen:
        raise CelError(f"network address parse error during conversion from string: {s}")
    return ip, int(bits)


def _cidr_map(s: str) -> Dict[str, Any]:
    ip, bits = _parse_cidr(s)
    return {TAG: "cidr", "v": f"{ip}/{bits}"}


def _cidrv(m: Any) -> Tuple[Any, int]:
    if isinstance(m, str):
        return _parse_cidr(m)
    if not (isinstance(m, dict) and m.get(TAG) == "cidr"):
        raise CelError("not a CIDR")
    ip, _, bits = m["v"].partition("/")
    return ipaddress.ip_address(ip), int(bits)


def _is_cidr(s: str) -> bool:
    try:
        _parse_cidr(s)
    except CelError:
        return False
    return True


def _network(m: Any) -> Any:
    ip, bits = _cidrv(m)
    return ipaddress.ip_network(f"{ip}/{bits}", strict=False)


def _contains_ip(m: Any, other: Any) -> bool:
    ip = _ipv(other)
    net = _network(m)
    return ip.version == net.version and ip in net


def _contains_cidr(m: Any, other: Any) -> bool:
    net, sub = _network(m), _network(other)
    return net.version == sub.version and sub.prefixlen >= net.prefixlen and sub.subnet_of(net)


def _ip_of(m: Any) -> Dict[str, Any]:
    return _ip_map(_cidrv(m)[0])


def _masked(m: Any) -> Dict[str, Any]:
    net = _network(m)
    return {TAG: "cidr", "v": f"{net.network_address}/{net.prefixlen}"}


# -- URLs (k8s.io/apiserver pkg/cel/library/urls.go: url.ParseRequestURI) ------------------------
def _parse_url(s: str) -> Dict[str, Any]:
    # ParseRequestURI: an absolute URI or an absolute path, no fragment
    if not s or "#" in s or any(c in s for c in " \t\n\x7f") or (not s.startswith("/") and ":" not in s):
        raise CelError(f"URL parse error during conversion from string: {s}")
    parts = urlsplit(s)
    if not s.startswith("/") and not parts.scheme:
        raise CelError(f"URL parse error during conversion from string: {s}")
    host = parts.netloc.rpartition("@")[2]
    hostname, port = host, ""
    if host.startswith("["):
        end = host.find("]")
        hostname, port = host[1:end], host[end + 2:] if host[end + 1:end + 2] == ":" else ""
    elif ":" in host:
        hostname, _, port = host.partition(":")
    if port and not port.isdigit():
        raise CelError(f"URL parse error during conversion from string: {s}")
    return {TAG: "url", "scheme": parts.scheme, "host": host, "hostname": hostname, "port": port,
            "path": parts.path, "query": parts.query}


def _is_url(s: str) -> bool:
    try:
        _parse_url(s)
    except CelError:
        return False
    return True


def _url_part(part: str) -> Callable[[Any], str]:
    def get(m: Any) -> str:
        if not (isinstance(m, dict) and m.get(TAG) == "url"):
            raise CelError("not a URL")
        return str(m[part])
    return get


def _query(m: Any) -> Dict[str, List[str]]:
    from urllib.parse import parse_qs   # start-up: only a rule reading a query needs it
    return {k: v for k, v in parse_qs(_url_part("query")(m), keep_blank_values=True).items()}


# -- regex, lists, sets ------------------------------------------------------------------------
def _go_regex(pattern: str) -> Any:
    """k8s.io/apiserver pkg/cel/library/regex.go: Go's ``regexp.Compile`` (:mod:`kzgit.gore`)."""
    from kzgit import gore   # start-up: RE2 loads with the first rule that needs it
    try:
        return gore.compile(pattern)
    except gore.RegexError as e:
        raise CelError(str(e)) from None


def _find(s: str, pattern: str) -> str:
    m = _go_regex(pattern).search(s)
    return m.group(0) if m else ""


def _find_all(s: str, pattern: str, limit: int = -1) -> List[str]:
    found = [m.group(0) for m in _go_regex(pattern).finditer(s)]
    return found if limit < 0 else found[:limit]


def _sorted_key(v: Any) -> Any:
    if isinstance(v, dict) and v.get(TAG) in ("quantity", "semver"):
        return _SortKey(v)
    return v


class _SortKey:
    def __init__(self, v: Any) -> None:
        self.v = v

    def __lt__(self, other: "_SortKey") -> bool:
        return _compare(self.v, other.v) < 0


def _is_sorted(lst: List[Any]) -> bool:
    keys = [_sorted_key(v) for v in lst]
    return all(not (keys[i + 1] < keys[i]) for i in range(len(keys) - 1))


def _sum(lst: List[Any]) -> Any:
    if lst and isinstance(lst[0], dict):
        total = _qv(lst[0])
        for v in lst[1:]:
            total += _qv(v)
        return _q(total)
    return sum(lst) if lst else 0


def _min(lst: List[Any]) -> Any:
    if not lst:
        raise CelError("min called on empty list")
    return min(lst, key=_sorted_key)


def _max(lst: List[Any]) -> Any:
    if not lst:
        raise CelError("max called on empty list")
    return max(lst, key=_sorted_key)


def _distinct(lst: List[Any]) -> List[Any]:
    out: List[Any] = []
    for v in lst:
        if not any(v == o and type(v) is type(o) for o in out):
            out.append(v)
    return out


def _flatten(lst: List[Any], depth: int = 1) -> List[Any]:
    if depth < 0:
        raise CelError("level must be non-negative")
    out: List[Any] = []
    for v in lst:
        if isinstance(v, list) and depth > 0:
            out.extend(_flatten(v, depth - 1))
        else:
            out.append(v)
    return out


def _slice(lst: List[Any], start: int, end: int) -> List[Any]:
    if start < 0 or end < 0 or start > end or end > len(lst):
        raise CelError(f"cannot slice({start}, {end}) a list of {len(lst)}")
    return list(lst[start:end])


def _fn(name: str, *overloads: Tuple[str, Any, List[Any], bool, Callable[..., Any]]) -> Any:
    return cel.FunctionDecl(name, [cel.Overload(oid, ret, params, is_member=member,
                                                impl=_interruptible(impl))
                                   for oid, ret, params, member, impl in overloads])


#: A KeyboardInterrupt (Ctrl-C, or SIGTERM as kzgit.cli.main maps it) or SystemExit raised in
#: a function kzgit gives the runtime: the runtime turns any exception of a callback into an
#: error value, which would become a finding on the resource; :func:`evaluate` raises it again.
_interrupted: List[BaseException] = []


def _interruptible(impl: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        try:
            return impl(*args)
        except Exception:
            raise
        except BaseException as e:   # an interrupt, not the rule's error: the run must stop
            _interrupted.append(e)
            raise
    return call


def _raise_interrupt() -> None:
    if _interrupted:
        e = _interrupted[0]
        _interrupted.clear()
        raise e


def _functions() -> List[Any]:
    S, B, N, D = T.STRING, T.BOOL, T.INT, T.DOUBLE   # noqa: N806 - the types, as CEL names them
    return [
        # lists
        _fn("isSorted", ("list_is_sorted", B, [LIST], True, _is_sorted)),
        _fn("sum", ("list_sum", DYN, [LIST], True, _sum)),
        _fn("min", ("list_min", DYN, [LIST], True, _min)),
        _fn("max", ("list_max", DYN, [LIST], True, _max)),
        # regex
        _fn("find", ("string_find", S, [S, S], True, _find)),
        _fn("findAll", ("string_find_all", T.List(S), [S, S], True, _find_all),
            ("string_find_all_n", T.List(S), [S, S, N], True, _find_all)),
        # urls
        _fn("url", ("string_to_url", MAP, [S], False, _parse_url)),
        _fn("isURL", ("is_url_string", B, [S], False, _is_url)),
        _fn("getScheme", ("url_get_scheme", S, [MAP], True, _url_part("scheme"))),
        _fn("getHost", ("url_get_host", S, [MAP], True, _url_part("host"))),
        _fn("getHostname", ("url_get_hostname", S, [MAP], True, _url_part("hostname"))),
        _fn("getPort", ("url_get_port", S, [MAP], True, _url_part("port"))),
        _fn("getEscapedPath", ("url_get_escaped_path", S, [MAP], True, _url_part("path"))),
        _fn("getQuery", ("url_get_query", T.Map(S, T.List(S)), [MAP], True, _query)),
        # ip and cidr
        _fn("ip", ("string_to_ip", MAP, [S], False, lambda s: _ip_map(_parse_ip(s))),
            ("cidr_ip", MAP, [MAP], True, _ip_of)),
        _fn("isIP", ("is_ip", B, [S], False, _is_ip)),
        _fn("ip.isCanonical", ("ip_is_canonical", B, [S], False, _ip_is_canonical)),
        _fn("family", ("ip_family", N, [MAP], True, lambda m: _ipv(m).version)),
        _fn("isUnspecified", ("ip_is_unspecified", B, [MAP], True, lambda m: _ipv(m).is_unspecified)),
        _fn("isLoopback", ("ip_is_loopback", B, [MAP], True, lambda m: _ipv(m).is_loopback)),
        _fn("isLinkLocalMulticast", ("ip_is_link_local_multicast", B, [MAP], True, _link_local_multicast)),
        _fn("isLinkLocalUnicast", ("ip_is_link_local_unicast", B, [MAP], True, lambda m: _ipv(m).is_link_local)),
        _fn("isGlobalUnicast", ("ip_is_global_unicast", B, [MAP], True, _global_unicast)),
        _fn("cidr", ("string_to_cidr", MAP, [S], False, _cidr_map)),
        _fn("isCIDR", ("is_cidr", B, [S], False, _is_cidr)),
        _fn("containsIP", ("cidr_contains_ip_string", B, [MAP, S], True, _contains_ip),
            ("cidr_contains_ip_ip", B, [MAP, MAP], True, _contains_ip)),
        _fn("containsCIDR", ("cidr_contains_cidr_string", B, [MAP, S], True, _contains_cidr),
            ("cidr_contains_cidr", B, [MAP, MAP], True, _contains_cidr)),
        _fn("masked", ("cidr_masked", MAP, [MAP], True, _masked)),
        _fn("prefixLength", ("cidr_prefix_length", N, [MAP], True, lambda m: _cidrv(m)[1])),
        # quantity
        _fn("quantity", ("string_to_quantity", MAP, [S], False, _quantity)),
        _fn("isQuantity", ("is_quantity_string", B, [S], False, _is_quantity)),
        _fn("sign", ("quantity_sign", N, [MAP], True, lambda m: (_qv(m) > 0) - (_qv(m) < 0))),
        _fn("isInteger", ("quantity_is_integer", B, [MAP], True, _is_integer)),
        _fn("asInteger", ("quantity_as_integer", N, [MAP], True, _as_integer)),
        _fn("asApproximateFloat", ("quantity_as_float", D, [MAP], True, lambda m: float(_qv(m)))),
        _fn("add", ("quantity_add", MAP, [MAP, MAP], True, lambda m, o: _arith(m, o, 1)),
            ("quantity_add_int", MAP, [MAP, N], True, lambda m, o: _arith(m, o, 1))),
        _fn("sub", ("quantity_sub", MAP, [MAP, MAP], True, lambda m, o: _arith(m, o, -1)),
            ("quantity_sub_int", MAP, [MAP, N], True, lambda m, o: _arith(m, o, -1))),
        # quantity and semver comparisons
        _fn("isGreaterThan", ("k8s_is_greater_than", B, [MAP, MAP], True, lambda a, b: _compare(a, b) > 0)),
        _fn("isLessThan", ("k8s_is_less_than", B, [MAP, MAP], True, lambda a, b: _compare(a, b) < 0)),
        _fn("compareTo", ("k8s_compare_to", N, [MAP, MAP], True, _compare)),
        # semver
        _fn("semver", ("string_to_semver", MAP, [S], False, _semver),
            ("string_bool_to_semver", MAP, [S, B], False, _semver)),
        _fn("isSemver", ("is_semver_string", B, [S], False, _is_semver),
            ("is_semver_string_bool", B, [S, B], False, _is_semver)),
        _fn("major", ("semver_major", N, [MAP], True, lambda m: _semver_part(m, "major"))),
        _fn("minor", ("semver_minor", N, [MAP], True, lambda m: _semver_part(m, "minor"))),
        _fn("patch", ("semver_patch", N, [MAP], True, lambda m: _semver_part(m, "patch"))),
        # sets and the lists extension (cel-go ext.Sets, ext.Lists)
        _fn("sets.contains", ("list_sets_contains_list", B, [LIST, LIST], False,
                              lambda a, b: all(any(x == y for y in a) for x in b))),
        _fn("sets.equivalent", ("list_sets_equivalent_list", B, [LIST, LIST], False,
                                lambda a, b: all(any(x == y for y in a) for x in b)
                                and all(any(x == y for y in b) for x in a))),
        _fn("sets.intersects", ("list_sets_intersects_list", B, [LIST, LIST], False,
                                lambda a, b: any(any(x == y for y in a) for x in b))),
        _fn("lists.range", ("lists_range", T.List(N), [N], False, lambda n: list(range(n)))),
        _fn("slice", ("list_slice", LIST, [LIST, N, N], True, _slice)),
        _fn("flatten", ("list_flatten", LIST, [LIST], True, _flatten),
            ("list_flatten_int", LIST, [LIST, N], True, _flatten)),
        _fn("distinct", ("list_distinct", LIST, [LIST], True, _distinct)),
        _fn("reverse", ("list_reverse", LIST, [LIST], True, lambda lst: list(reversed(lst)))),
        _fn("sort", ("list_sort", LIST, [LIST], True, lambda lst: sorted(lst, key=_sorted_key))),
    ] + _rewrite_helpers() + _formats()


# -- what kzgit.validate.celrewrite's rewrites call (its docstring cites the sources) ----------
ANY_MAP = T.Map(DYN, DYN)


def _pairs(v: Any) -> List[List[Any]]:
    """``[[index or key, value], ...]``: what a two-variable comprehension iterates over."""
    return [[k, x] for k, x in (v.items() if isinstance(v, dict) else enumerate(v))]


def _to_map(pairs: List[List[Any]]) -> Dict[Any, Any]:
    return {k: v for k, v in pairs}


def _merge_entries(entries: List[Dict[Any, Any]]) -> Dict[Any, Any]:
    # cel-go ext/comprehensions.go cel.@mapInsert (types.InsertMapKeyValue)
    out: Dict[Any, Any] = {}
    for entry in entries:
        for k, v in entry.items():
            if k in out:
                raise CelError(f"insert failed: key {_show(k)} already exists")
            out[k] = v
    return out


def _show(v: Any) -> str:
    """A value as Go's %v prints a CEL value in an error."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


#: the key types cel-go ext/lists.go sorts by (comparableTypes); Python's int is also CEL's
#: uint, float its double, datetime/timedelta its timestamp/duration
def _comparable(v: Any) -> bool:
    import datetime   # start-up: only a rule sorting by a key needs it
    return isinstance(v, (bool, int, float, str, bytes, datetime.datetime, datetime.timedelta))


def _sort_by(items: List[Any], keys: List[Any]) -> List[Any]:
    # cel-go ext/lists.go sortListByAssociatedKeys (its sort.Slice is not stable; ties keep
    # their order here)
    if len(items) != len(keys):
        raise CelError("@sortByAssociatedKeys() expected a list of the same size as the associated keys "
                       f"list, but got {len(items)} and {len(keys)} elements respectively")
    if not items:
        return items
    if not _comparable(keys[0]):
        raise CelError("list elements must be comparable")
    if any(type(k) is not type(keys[0]) for k in keys):
        raise CelError("list elements must have the same type")
    order = sorted(range(len(items)), key=lambda i: keys[i])
    return [items[i] for i in order]


def _equal(a: Any, b: Any) -> bool:
    """CEL's ``==`` on two values (heterogeneous numbers compare by value; a bool is no number)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return len(a) == len(b) and all(k in b and _equal(v, b[k]) for k, v in a.items())
    return bool(a == b)


def _list_index_of(items: List[Any], item: List[Any]) -> int:
    # k8s.io/apiserver pkg/cel/library/lists.go indexOf: the first element equal to the item
    return next((i for i, x in enumerate(items) if _equal(x, item[0])), -1)


def _list_last_index_of(items: List[Any], item: List[Any]) -> int:
    return next((i for i in range(len(items) - 1, -1, -1) if _equal(items[i], item[0])), -1)


def _net_string(m: Any) -> str:
    # k8s.io/apiserver pkg/cel/library/ip.go, cidr.go: string() of an IP or CIDR
    if isinstance(m, dict) and m.get(TAG) in ("ip", "cidr"):
        return str(m["v"])
    raise CelError("no such overload")


def _rewrite_helpers() -> List[Any]:
    S, B, N = T.STRING, T.BOOL, T.INT   # noqa: N806 - the types, as CEL names them
    p = "__kzgit_"
    return [
        _fn(p + "pairs", ("kzgit_pairs_list", T.List(LIST), [LIST], False, _pairs),
            ("kzgit_pairs_map", T.List(LIST), [ANY_MAP], False, _pairs)),
        _fn(p + "to_map", ("kzgit_to_map", ANY_MAP, [T.List(LIST)], False, _to_map)),
        _fn(p + "merge_entries", ("kzgit_merge_entries", ANY_MAP, [T.List(ANY_MAP)], False, _merge_entries)),
        _fn(p + "sort_by", ("kzgit_sort_by", LIST, [LIST, LIST], False, _sort_by)),
        _fn(p + "list_index_of", ("kzgit_list_index_of", N, [LIST, LIST], False, _list_index_of)),
        _fn(p + "list_last_index_of", ("kzgit_list_last_index_of", N, [LIST, LIST], False, _list_last_index_of)),
        _fn(p + "net_string", ("kzgit_net_string", S, [ANY_MAP], False, _net_string)),
        _fn(p + "tag", ("kzgit_tag", S, [ANY_MAP], False, lambda m: str(m.get(TAG, "")))),
        _fn(p + "format_known", ("kzgit_format_known", B, [S], False, lambda n: n in _FORMAT_CHECKS)),
        _fn(p + "format", ("kzgit_format", MAP, [S], False, _format)),
        _fn(p + "format_errors", ("kzgit_format_errors", T.List(S), [ANY_MAP, S], False, _format_errors)),
    ]


# -- the format library (k8s.io/apiserver pkg/cel/library/format.go) ---------------------------
def _uri_errors(s: str) -> List[str]:
    # format.go calls url.ParseRequestURI for its error message
    try:
        _parse_url(s)
    except CelError:
        return [f'parse "{s}": invalid URI for request']
    return []


_FORMAT_CHECKS: Dict[str, Callable[[str], List[str]]] = dict(CHECKS, uri=_uri_errors)


def _format(name: str) -> Dict[str, Any]:
    if name not in _FORMAT_CHECKS:
        raise CelError(f"no such format: {name}")
    return {TAG: "format", "name": name}


def _format_errors(f: Any, s: str) -> List[str]:
    if not (isinstance(f, dict) and f.get(TAG) == "format"):
        raise CelError("no such overload")
    return _FORMAT_CHECKS[f["name"]](s)


def _formats() -> List[Any]:
    return [_fn(f"format.{name}", (f"format_{name}", MAP, [], False, lambda n=name: _format(n)))
            for name in _FORMAT_CHECKS]


def _link_local_multicast(m: Any) -> bool:
    ip = _ipv(m)
    if ip.version == 4:
        return ip in ipaddress.ip_network("224.0.0.0/24")
    return ip in ipaddress.ip_network("ff02::/16")


def _global_unicast(m: Any) -> bool:
    # Go's netip.Addr.IsGlobalUnicast: not unspecified, loopback, multicast, link-local or broadcast
    ip = _ipv(m)
    if ip.is_unspecified or ip.is_loopback or ip.is_multicast or ip.is_link_local:
        return False
    return not (ip.version == 4 and str(ip) == "255.255.255.255")


def _semver_part(m: Any, part: str) -> int:
    if not (isinstance(m, dict) and m.get(TAG) == "semver"):
        raise CelError("not a semver")
    return int(m[part])


_env: Optional[Any] = None


def environment() -> Any:
    """The one CEL environment of the process (built on first use)."""
    global _env
    if _env is None:
        _compiled.clear()   # programs of another environment
        _env = cel.NewEnv(variables={"self": DYN},
                          extensions=[ext_optional.ExtOptional(), ext_strings.ExtStrings(version=2)],
                          functions=_functions())
    return _env


#: What Kubernetes' CEL environment declares and kzgit's lacks (docs/cel.md, "Not
#: implemented"; k8s.io/apiserver pkg/cel/environment/base.go and pkg/cel/library): a rule that
#: fails to compile only on one of them is not evaluated (a warning).  Any other compile error
#: (a syntax error, an identifier or function no Kubernetes library declares, operands no
#: overload takes) is one the API server's compiler reports too: it refuses the CRD.
#: Undeclared names (the first part of a qualified name): ``net`` other than in
#: ``type(x) == net.IP`` (kzgit.validate.celrewrite).  cel-go's ``math``, ``base64`` and
#: ``cel.bind`` are no part of Kubernetes' environment (base.go declares neither ext.Math,
#: ext.Encoders nor ext.Bindings): a rule using them is refused, here as there.
K8S_MISSING_NAMES = frozenset(("net",))
#: Functions kzgit declares for fewer types than Kubernetes (none left: string() of an IP or
#: CIDR and the lists' indexOf are rewritten by kzgit.validate.celrewrite; the strings
#: extension's reverse is its version 3, Kubernetes declares version 2):
K8S_MISSING_OVERLOADS: frozenset = frozenset()
_UNDECLARED = re.compile(r"undeclared reference to '([^']*)'")
_OVERLOAD = re.compile(r"found no matching overload for '([^']*)' applied to '\((.*)\)'")


#: a rule that makes values of the Kubernetes types (kzgit's maps)
_K8S_TYPES = re.compile(r"\b(?:quantity|ip|cidr|url|semver|format)\s*[.(]|\.\s*(?:ip|masked)\s*\(")


#: compiled expressions by their text: CRDs repeat their rules (one per served version: the
#: real CRDs of the tests hold 313 rules in 94 texts), and a program holds no state
_compiled: Dict[str, Any] = {}


def compile_expression(source: str) -> Any:
    """A compiled expression; CompileError with the runtime's words otherwise.  A rule using
    what the runtime lacks (two-variable comprehensions, sortBy, the format
    library...) is compiled as :mod:`kzgit.validate.celrewrite` rewrites it; its errors are
    worded for the rule as written."""
    environment()   # (a new environment forgets the programs of the one before)
    got = _compiled.get(source)
    if got is None:
        try:
            got = _compile(source)
        except CompileError as e:
            got = e
        _compiled[source] = got
    if isinstance(got, CompileError):
        raise CompileError(str(got), got.unsupported)
    return got


def _compile(source: str) -> Any:
    text = source
    if celrewrite.needs_rewrite(source):
        try:
            text = celrewrite.rewrite(source) or source
        except celrewrite.RewriteError as e:
            return _raise(str(e), e.unsupported)
    try:
        return environment().compile(text)
    except RuntimeError as e:
        errors = str(e)
        first = errors.partition("\n")[0]
        first = re.sub(r"^[A-Z_]+: (ERROR: )?", "", first).replace("<input>:", "")
        if text is not source:
            first = celrewrite.user_words(first)
        return _raise(first, unsupported(source, errors))


def unsupported(source: str, errors: str) -> bool:
    """Whether the compile ``errors`` of the rule ``source`` may come from what kzgit's
    environment lacks (:data:`K8S_MISSING_NAMES`, :data:`K8S_MISSING_OVERLOADS`), rather than
    from a rule the API server refuses too."""
    for line in errors.splitlines():
        m = _UNDECLARED.search(line)
        if m and m.group(1).split(".")[0] in K8S_MISSING_NAMES:
            return True
        m = _OVERLOAD.search(line)
        # kzgit's Quantity, IP, CIDR, URL and Semver values are maps (TAG): an overload a
        # Kubernetes type has may be missing for the map
        if m and (m.group(1) in K8S_MISSING_OVERLOADS or ("map(" in m.group(2) and _K8S_TYPES.search(source))):
            return True
        if "unsupported" in line and not m:
            return True
    return False


def _raise(message: str, unsupported: bool) -> Any:
    raise CompileError(message, unsupported)


def bind(value: Any) -> Any:
    """``self`` = ``value``, converted into CEL values once for all the rules of a value."""
    try:
        return environment().Activation(data={"self": value})
    except (RuntimeError, ValueError, TypeError) as e:   # a value the runtime cannot take
        return CelError(str(e).partition("\n")[0])


def evaluate(program: Any, value: Any, bound: Any = None) -> Tuple[Any, Optional[str]]:
    """(result, None), or (None, the evaluation error) for ``self`` = ``value`` (or the
    activation ``bound`` made by :func:`bind`)."""
    if isinstance(bound, CelError):
        return None, str(bound)
    try:
        v = program.eval(data={"self": value}) if bound is None else program.eval(activation=bound)
    except (RuntimeError, ValueError, TypeError) as e:   # a value the runtime cannot take
        _raise_interrupt()
        return None, str(e).partition("\n")[0]
    _raise_interrupt()
    t = v.type()
    if t == _BOOL:   # the common case first: a rule's verdict
        return v.value(), None
    if t == _ERROR:
        try:
            err = v.value()
        except TypeError:   # an optional (``self.?a``, ``validate()``), which the binding
            return Opaque("optional"), None   # types as an error and cannot convert
        return None, _error_text(err)
    return v.plain_value(), None


_BOOL, _ERROR = T.BOOL, T.ERROR


class Opaque:
    """A result the runtime gives no Python value for (an optional): its CEL type."""

    __slots__ = ("type",)

    def __init__(self, type_: str) -> None:
        self.type = type_

    def __repr__(self) -> str:
        return f"a value of type {self.type}"


def _error_text(err: Any) -> str:
    text = str(err).partition("\n")[0]
    text = re.sub(r"^[A-Z_]+: ", "", text)
    if celrewrite.PREFIX in text:   # an error in a helper of a rewritten rule
        text = celrewrite.user_words(text)
    # the runtime's words for a missing field, as cel-go says it
    m = re.match(r'Key not found in map : "(.*)"', text)
    if m:
        return f"no such key: {m.group(1)}"
    if text.startswith("invalid regular expression: "):
        # matches() compiles with the C++ RE2, whose words differ from Go's (cel-go's
        # matches: regexp.MatchString)
        from kzgit import gore   # start-up: only a rule with a bad regular expression
        return str(gore.go_error(text[len("invalid regular expression: "):]))
    return text
