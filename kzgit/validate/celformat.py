"""The named formats of Kubernetes' CEL format library, with the API server's error messages.

k8s.io/apiserver pkg/cel/library/format.go ``ConstantFormats``: ``format.<name>().validate(s)``
is ``optional.none()`` for a valid ``s`` and ``optional.of(errors)`` otherwise; the errors
are those of k8s.io/apimachinery's validation functions (:mod:`kzgit.resource.labels`) and of
kube-openapi's strfmt for the CRD formats.  The cases of that package's format_test.go run in
tests/validate/test_cel_rewrite.py.
"""
from __future__ import annotations

import base64
import binascii
import datetime
import re
from typing import Callable, Dict, List

from kzgit.resource.labels import (dns1035_label_errors, dns1123_label_errors, dns1123_subdomain_errors,
                                   label_value_errors, qualified_name_errors)


def _mask_trailing_dash(name: str) -> str:
    # k8s.io/apimachinery pkg/api/validation/generic.go maskTrailingDash: a generateName prefix
    # may end with a dash (as written upstream: the last two characters become "a")
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


# kube-openapi pkg/validation/strfmt default.go: UUIDPattern (any version, dashes optional)
_UUID = re.compile(r"(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}")
# strfmt date.go (RFC3339FullDate) and time.go ParseDateTime's layouts: RFC 3339 with or
# without fractional seconds, with a zone, or ISO 8601 local time
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_DATE_TIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?")


def _valid_date(y: str, m: str, d: str) -> bool:
    try:
        datetime.date(int(y), int(m), int(d))
    except ValueError:
        return False
    return True


def _date(s: str) -> List[str]:
    m = _DATE.fullmatch(s)
    return [] if m and _valid_date(*m.groups()) else ["invalid date"]


def _datetime(s: str) -> List[str]:
    m = _DATE_TIME.fullmatch(s)
    if not m or not _valid_date(*m.groups()[:3]) or int(m.group(4)) > 23 or int(m.group(5)) > 59 \
            or int(m.group(6)) > 59:
        return ["invalid datetime"]
    return []


def _byte(s: str) -> List[str]:
    # strfmt IsBase64: base64.StdEncoding.DecodeString (padding required; CR and LF ignored)
    try:
        base64.b64decode(s.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return ["invalid base64"]
    return []


#: format.go ConstantFormats, by name (``uri``, url.ParseRequestURI, is kzgit.validate.cel_k8s's,
#: beside its port of that function)
CHECKS: Dict[str, Callable[[str], List[str]]] = {
    "dns1123Label": dns1123_label_errors,
    "dns1123Subdomain": dns1123_subdomain_errors,
    "dns1035Label": dns1035_label_errors,
    "qualifiedName": qualified_name_errors,
    "dns1123LabelPrefix": lambda s: dns1123_label_errors(_mask_trailing_dash(s)),
    "dns1123SubdomainPrefix": lambda s: dns1123_subdomain_errors(_mask_trailing_dash(s)),
    "dns1035LabelPrefix": lambda s: dns1035_label_errors(_mask_trailing_dash(s)),
    "labelValue": label_value_errors,
    "uuid": lambda s: [] if _UUID.fullmatch(s) else ["does not match the UUID format"],
    "byte": _byte,
    "date": _date,
    "datetime": _datetime,
}
