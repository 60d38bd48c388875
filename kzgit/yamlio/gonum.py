"""Go number and time text rules shared by the loader, the emitter and the JSON writer.

Each function mirrors one Go standard-library routine that go-yaml or
``encoding/json`` calls; the docstrings name it.  Keeping them here lets the
YAML 1.2 (go-yaml v3) and YAML 1.1 (go-yaml v2) resolvers share them.
"""
from __future__ import annotations

import functools
import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Optional, Tuple, Union

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
UINT64_MAX = (1 << 64) - 1

# strconv.ParseInt(s, 0, 64) / ParseUint syntax: optional sign, then a base
# prefix 0x/0o/0b (any case, at least one digit after it), a leading 0 means
# octal ("0" alone is 0), else decimal.  go-yaml strips every "_" first
# (goyaml.v2/resolve.go, goyaml.v3/resolve.go), so underscores never reach it.
_GO_INT = re.compile(
    r"([+-]?)(?:0[xX]([0-9a-fA-F]+)|0[oO]([0-7]+)|0[bB]([01]+)|0([0-7]*)|([1-9][0-9]*))\Z"
)

# yamlStyleFloat in goyaml.v2/resolve.go and goyaml.v3/resolve.go.
YAML_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")

# strconv.ParseFloat on text starting with "." (the '.' hint branch of resolve):
# Go accepts only decimal digits there (no underscores without a base prefix).
DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?\Z")


def parse_go_int(plain: str) -> Optional[int]:
    """ParseInt(plain, 0, 64), falling back to ParseUint(plain, 0, 64); None if both fail."""
    m = _GO_INT.match(plain)
    if m is None:
        return None
    sign, hx, octo, binary, legacy_oct, dec = m.groups()
    if hx is not None:
        mag = int(hx, 16)
    elif octo is not None:
        mag = int(octo, 8)
    elif binary is not None:
        mag = int(binary, 2)
    elif legacy_oct is not None:
        mag = int(legacy_oct, 8) if legacy_oct else 0
    else:
        mag = int(dec)
    if sign == "-":
        return -mag if mag <= -INT64_MIN else None
    if mag <= INT64_MAX:
        return mag
    # ParseUint takes no sign at all.
    if sign == "" and mag <= UINT64_MAX:
        return mag
    return None


def resolve_number(text: str) -> Union[int, float, None]:
    """The 'D'/'S' hint branch of go-yaml's resolve() after the timestamp test.

    Returns an int or float, or None when the text stays a string.  Shared by
    v2 and v3 (their code is identical here): strip "_", ParseInt, ParseUint,
    yamlStyleFloat + ParseFloat (overflow is an error there, so "1e400" stays
    a string), then the explicit 0b / -0b forms.
    """
    plain = text.replace("_", "")
    iv = parse_go_int(plain)
    if iv is not None:
        return iv
    if YAML_STYLE_FLOAT.match(plain):
        fv = float(plain)
        if fv not in (float("inf"), float("-inf")):
            return fv
    if plain.startswith("-0b"):
        digits = plain[3:]
        if digits and set(digits) <= {"0", "1"}:
            v = -int(digits, 2)
            if v >= INT64_MIN:
                return v
    return None


_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)

# The four layouts of allowedTimestampFormats (goyaml.v2 and v3 resolve.go),
# as Go's time.Parse reads them: "2006" exactly 4 digits; "1", "2", "15",
# "4", "5" one or two digits; ".999999999" an optional fraction ("." or ",");
# "Z07:00" either "Z" or ±hh:mm.
@functools.lru_cache(maxsize=None)   # compiled on first use: most builds never need it
def _ts() -> "re.Pattern[str]":
    return re.compile(
        r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})"
        r"(?:(?:([Tt])([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:[.,]([0-9]+))?(Z|[+-][0-9]{2}:[0-9]{2}))"
        r"|(?: ([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:[.,]([0-9]+))?))?\Z")


def parse_timestamp(s: str) -> Optional[str]:
    """go-yaml's parseTimestamp, returned as json.Marshal(time.Time) prints it (RFC3339Nano).

    None when the text is not a timestamp (then it stays a string).
    """
    if len(s) < 8 or s[4] != "-" or not s[:4].isdigit():
        return None
    m = _ts().match(s)
    if m is None:
        return None
    g = m.groups()
    year, month, day = int(g[0]), int(g[1]), int(g[2])
    if not 1 <= month <= 12:
        return None
    dim = _DAYS[month - 1]
    if month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0):
        dim = 29
    if not 1 <= day <= dim:
        return None
    hour = minute = sec = 0
    frac = ""
    zone = "Z"
    if g[3] is not None:
        hour, minute, sec = int(g[4]), int(g[5]), int(g[6])
        frac = g[7] or ""
        zone = g[8]
        if zone != "Z":
            zh, zm = int(zone[1:3]), int(zone[4:6])
            if zh > 24 or zm > 60:
                return None
            if zh == 0 and zm == 0:
                # Go's "Z07:00" prints a zero offset as "Z".
                zone = "Z"
    elif g[9] is not None:
        hour, minute, sec = int(g[9]), int(g[10]), int(g[11])
        frac = g[12] or ""
    if hour > 23 or minute > 59 or sec > 59:
        return None
    # RFC3339Nano: ".999999999" drops trailing zeros (and the dot when all are).
    frac = frac[:9].rstrip("0")
    return "%04d-%02d-%02dT%02d:%02d:%02d%s%s" % (
        year, month, day, hour, minute, sec, "." + frac if frac else "", zone)


def _digits(f: float) -> Tuple[str, int, bool]:
    """Shortest round-trip digits of |f| and the decimal point position (Go's digs.d, digs.dp).

    Python's repr and Go's precision -1 both give the shortest digits that
    round-trip, so they agree digit for digit.
    """
    from decimal import Decimal  # only floats need it: not imported at start-up

    sign, dig, exp = Decimal(repr(f)).as_tuple()
    ds = "".join(map(str, dig))
    stripped = ds.lstrip("0")
    dp = len(ds) + int(exp) - (len(ds) - len(stripped))
    return stripped.rstrip("0") or "0", dp, bool(sign)


def _fixed(ds: str, dp: int) -> str:
    if dp <= 0:
        return "0." + "0" * (-dp) + ds
    if dp >= len(ds):
        return ds + "0" * (dp - len(ds))
    return ds[:dp] + "." + ds[dp:]


def _exp(ds: str, dp: int, min_digits: int) -> str:
    exp = dp - 1
    mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
    return mant + "e" + ("-" if exp < 0 else "+") + str(abs(exp)).rjust(min_digits, "0")


def format_float_g(f: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 64).

    With precision -1 Go decides with eprec = 6 (strconv/ftoa.go): the
    exponent form iff the decimal exponent is < -4 or >= 6; the exponent has a
    sign and at least two digits (1e+20, 1.23456789e+07, 1e-06).
    """
    if f == 0:
        return "-0" if repr(f).startswith("-") else "0"
    ds, dp, neg = _digits(f)
    exp = dp - 1
    out = _exp(ds, dp, 2) if (exp < -4 or exp >= 6) else _fixed(ds, dp)
    return ("-" + out) if neg else out


def format_float_json(f: float) -> str:
    """encoding/json's float64 text (encode.go floatEncoder).

    'f' unless |f| < 1e-6 or >= 1e21, then 'e' whose "e-07" is cleaned to "e-7".
    """
    if f == 0:
        return "-0" if repr(f).startswith("-") else "0"
    ds, dp, neg = _digits(f)
    a = abs(f)
    out = _exp(ds, dp, 1) if (a < 1e-6 or a >= 1e21) else _fixed(ds, dp)
    if "e+" in out and len(out.split("e+")[1]) < 2:
        # Only negative exponents lose their padding in Go's clean-up.
        out = out.replace("e+", "e+0")
    return ("-" + out) if neg else out


def yaml_number_text(f: float) -> str:
    """How a float64 in a resource prints after kustomize's JSON → go-yaml v2 round trip.

    The JSON stage prints it (format_float_json); v2 re-reads that text, so an
    integral value that fits int64/uint64 comes back as an int and prints as
    digits (1.0 → 1, 1e3 → 1000); anything else is a float printed with
    FormatFloat 'g' (1e20 → 1e+20, 12345678.9 → 1.23456789e+07).
    """
    text = format_float_json(f)
    iv = parse_go_int(text)
    if iv is not None:
        return str(iv)
    return format_float_g(f)
