"""Decoding a YAML mapping into a declared Go struct, as kustomize's Go code does.

kustomize reads its own types in two ways, and each leaves its mark on what is accepted and on
the words of the error:

* ``sigs.k8s.io/yaml`` (the kustomization file, most builtin plugin configs, helm charts):
  YAML -> JSON with the keys sorted -> ``encoding/json``.  Field names match case-insensitively,
  every key matching a field overwrites it (of ``nameprefix`` and ``namePrefix`` the one sorting
  last wins), a JSON ``null`` sets a slice, map or interface to nil and leaves any other field
  as it was, and decoding goes on after an error: the *first* error in key order is reported
  (encoding/json ``decodeState.saveError``), so the type error of a spelling that loses still
  counts.  :func:`decode_json`.
* kyaml's ``yaml.Unmarshal`` (go-yaml v3; the Prefix/Suffix transformer configs): names match
  exactly, unknown fields are ignored, type errors are collected as ``line N: cannot unmarshal
  !!map into string``.  :func:`decode_yaml`.

A schema is a :class:`Struct` (json field name -> type), :class:`ListOf`, :class:`MapOf` or one
of the scalar names :data:`STR`, :data:`BOOL`, :data:`INT`, :data:`ANY`.
"""
from __future__ import annotations

import re

from kzgit.yamlio.gonum import format_float_json

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, Iterable, List, Optional

__all__ = ["ANY", "BOOL", "INT", "STR", "GoDecodeError", "ListOf", "MapOf", "Named", "Struct",
           "decode_json", "decode_yaml", "go_json_kind"]

# Go type names, as encoding/json prints them in errors
STR, BOOL, INT, ANY = "string", "bool", "int64", "interface {}"


class Struct(dict):  # Dict[str, Any]: typing.Dict would import typing
    """A Go struct: json field name -> type; ``name`` is the Go type name (``Kustomization``).

    encoding/json names the innermost struct and the whole field path in its errors:
    ``Go struct field Patch.patches.target of type types.Selector``; ``go`` is how the struct
    itself is named as a field's type (``types.Selector``).
    """

    def __init__(self, name: str, fields: Dict[str, Any], go: str = "",
                 promoted: Iterable[str] = ()) -> None:
        super().__init__(fields)
        self.name = name
        self.go = go or f"types.{name}"
        # fields of an embedded struct (``resid.Gvk `json:",inline"```): sigs.k8s.io/yaml's
        # target-aware conversion looks at the embedded struct's kind, not the field's, so a
        # number or bool bound for one of them stays a number (an error), see decode_json
        self.promoted = frozenset(promoted)


class Named:
    """A Go type defined on a scalar (``type PatchStrategicMerge string``): checked as ``kind``,
    named ``go`` in errors."""

    def __init__(self, kind: str, go: str) -> None:
        self.kind = kind
        self.go = go


class ListOf:
    """A Go slice of ``elem``; ``go`` is its type name (``[]types.Patch``, ``[]string``)."""

    def __init__(self, elem: Any, go: str = "") -> None:
        self.elem = elem
        self.go = go or "[]" + _go_name(elem)


class MapOf:
    """A Go ``map[string]<elem>``."""

    def __init__(self, elem: Any) -> None:
        self.elem = elem
        self.go = "map[string]" + _go_name(elem)


def _kind(typ: Any) -> Any:
    """The underlying kind of ``typ``: a ``Named`` string type is a string."""
    return typ.kind if isinstance(typ, Named) else typ


def _go_name(typ: Any) -> str:
    return typ if isinstance(typ, str) else typ.go


class GoDecodeError(Exception):
    """encoding/json's (or go-yaml's) message, without the caller's context."""


_GO_JSON_KIND = {bool: "bool", int: "number", float: "number", str: "string", list: "array",
                 dict: "object", type(None): "null"}


def go_json_kind(v: Any) -> str:
    """What encoding/json calls a JSON value in ``cannot unmarshal <kind> into ...``."""
    return _GO_JSON_KIND.get(type(v), "string")   # dates and the like are strings in JSON


def _format_float32_g(f: float) -> str:
    """Go ``strconv.FormatFloat(f, 'g', -1, 32)``: the shortest digits that read back as the
    same float32, in %e form when the exponent is below -4 or at least 6."""
    import struct   # start-up: few builds format a float32
    if f != f:
        return "NaN"
    if f in (float("inf"), float("-inf")):
        return "+Inf" if f > 0 else "-Inf"
    f32 = struct.unpack("f", struct.pack("f", f))[0]
    text = f"{f32:.16e}"
    for n in range(1, 18):
        text = f"{f32:.{n - 1}e}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == f32:
            break
    mant, _, exp_s = text.partition("e")
    exp = int(exp_s)
    if "." in mant:
        mant = mant.rstrip("0").rstrip(".")
    if exp < -4 or exp >= 6:   # shortest 'g' decides with precision 6 (strconv/ftoa.go)
        return f"{mant}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    digits = mant.replace("-", "").replace(".", "")
    sign = "-" if mant.startswith("-") else ""
    if exp < 0:
        return f"{sign}0.{'0' * (-exp - 1)}{digits}"
    if len(digits) <= exp + 1:
        return f"{sign}{digits}{'0' * (exp + 1 - len(digits))}"
    return f"{sign}{digits[:exp + 1]}.{digits[exp + 1:]}"


def _scalar_as_target_string(value: Any) -> Any:
    """sigs.k8s.io/yaml convertToJSONableObject: a number or bool bound for a string field is
    written as a string first (``patches: 42`` is the patch text "42")."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _format_float32_g(value)
    return value


class _JsonDecoder:
    def __init__(self, root: str, strict: bool, to_target: bool) -> None:
        self.root = root
        self.strict = strict
        self.to_target = to_target
        self.error: Optional[str] = None

    def save(self, msg: str) -> None:
        if self.error is None:
            self.error = msg

    def type_error(self, value: Any, struct: str, path: str, go_type: str, what: str = "") -> None:
        """``what``: encoding/json's words for the value when not its kind (``number 1.5``)."""
        what = what or go_json_kind(value)
        if struct:
            self.save(f"json: cannot unmarshal {what} into Go struct field "
                      f"{struct}.{path} of type {go_type}")
        else:
            self.save(f"json: cannot unmarshal {what} into Go value of type {go_type}")

    def decode(self, value: Any, typ: Any, struct: str, path: str, promoted: bool = False) -> Any:
        """``value`` as ``typ`` with canonical keys; errors are saved, a bad value becomes None.
        ``promoted``: the value is, or is inside, a field of an embedded struct (sigs.k8s.io/yaml
        then has no target type for it: no conversion)."""
        if typ == ANY:
            return value
        if value is None:
            return None
        kind = _kind(typ)
        if kind == STR and self.to_target and not promoted:
            value = _scalar_as_target_string(value)
        if kind == STR:
            if isinstance(value, str):
                return value
        elif kind == BOOL:
            if isinstance(value, bool):
                return value
        elif kind == INT:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                # encoding/json literalStore: the number's JSON text through strconv.ParseInt;
                # a fraction, an exponent or an overflow is "cannot unmarshal number 1.5"
                text = str(value) if isinstance(value, int) else format_float_json(value)
                if re.fullmatch(r"-?[0-9]+", text) and -2**63 <= int(text) < 2**63:
                    return int(text)
                self.type_error(value, struct, path, _go_name(typ), f"number {text}")
                return None
        elif isinstance(typ, MapOf):
            if isinstance(value, dict):
                out_map = {str(k): self.decode(v, typ.elem, struct, path, promoted) for k, v in value.items()}
                # a null map value of a map[string]string is "" (Go's zero value)
                return {k: "" if v is None and _kind(typ.elem) == STR else v for k, v in out_map.items()}
        elif isinstance(typ, ListOf):
            if isinstance(value, list):
                out = [self.decode(v, typ.elem, struct, path, promoted) for v in value]
                # a null element of a []string (or of a named string type such as
                # types.PatchStrategicMerge) is "" (Go's zero value), of a []T{} the zero T
                return ["" if v is None and _kind(typ.elem) == STR else v for v in out]
        elif isinstance(typ, Struct):
            if isinstance(value, dict):
                return self.struct(value, typ, path, promoted)
        else:
            raise AssertionError(typ)
        self.type_error(value, struct, path, _go_name(typ))
        return None

    def struct(self, value: Dict[Any, Any], typ: Struct, path: str, promoted: bool = False) -> Dict[str, Any]:
        folded = {k.lower(): k for k in typ}
        out: Dict[str, Any] = {}
        # sigs.k8s.io/yaml hands encoding/json the keys sorted; each key matching a field
        # case-insensitively decodes into it (api/types/kustomization.go Unmarshal)
        for key in sorted(value, key=str):
            name = str(key)
            canon = name if name in typ else folded.get(name.lower())
            if canon is None:
                if self.strict:
                    self.save(f'json: unknown field "{name}"')
                continue
            ftyp = typ[canon]
            v = self.decode(value[key], ftyp, typ.name, f"{path}.{canon}" if path else canon,
                            promoted or canon in typ.promoted)
            if value[key] is None and not (ftyp == ANY or isinstance(ftyp, (ListOf, MapOf))):
                continue   # null leaves a string, bool, number or struct as it was
            out[canon] = v
        return out


def decode_json(value: Any, typ: Any, strict: bool = False, to_target: bool = False) -> Any:
    """``value`` decoded as encoding/json decodes its JSON form into ``typ``.

    Returns the value with every key in its canonical spelling; raises :class:`GoDecodeError`
    with the first error encoding/json would report.  ``strict`` is ``DisallowUnknownFields``;
    ``to_target`` is sigs.k8s.io/yaml ``Unmarshal`` (the YAML is converted to JSON knowing the
    target, so numbers and bools bound for string fields become strings), as opposed to
    ``YAMLToJSON`` then encoding/json (the kustomization file).
    """
    d = _JsonDecoder(typ.name if isinstance(typ, Struct) else "", strict, to_target)
    if isinstance(typ, Struct) and isinstance(value, dict):
        out: Any = d.struct(value, typ, "")
    else:
        out = d.decode(value, typ, "", "")
    if d.error is not None:
        raise GoDecodeError(d.error)
    return out


_YAML_TAG = {bool: "!!bool", int: "!!int", float: "!!float", str: "!!str", list: "!!seq",
             dict: "!!map", type(None): "!!null"}


def decode_yaml(value: Any, typ: Struct, lines: Optional[Dict[str, int]] = None) -> Dict[str, Any]:
    """``value`` decoded as go-yaml v3 decodes a mapping into the struct ``typ`` (one level deep).

    Field names match exactly; unknown fields are ignored; a value of the wrong kind is
    ``line N: cannot unmarshal !!map into string`` (``lines`` gives the line of each field's
    value where the caller knows it), all of them reported together as go-yaml does.
    """
    out: Dict[str, Any] = {}
    errors: List[str] = []
    if not isinstance(value, dict):
        raise GoDecodeError("yaml: unmarshal errors:\n  cannot unmarshal "
                            f"{_YAML_TAG.get(type(value), '!!str')} into {typ.go}")
    for key, v in value.items():
        ftyp = typ.get(key) if isinstance(key, str) else None
        if ftyp is None:
            continue
        ok = (v is None or ftyp == ANY
              or (ftyp == STR and not isinstance(v, (dict, list)))
              or (ftyp == BOOL and isinstance(v, bool))
              or (ftyp == INT and isinstance(v, int) and not isinstance(v, bool))
              or (isinstance(ftyp, ListOf) and isinstance(v, list))
              or (isinstance(ftyp, (MapOf, Struct)) and isinstance(v, dict)))
        if not ok:
            line = (lines or {}).get(key)
            where = f"line {line}: " if line else ""
            errors.append(f"  {where}cannot unmarshal {_YAML_TAG.get(type(v), '!!str')} into "
                          f"{_go_name(ftyp)}")
            continue
        if ftyp == STR and v is not None and not isinstance(v, str):
            # go-yaml v3 decodes any scalar into a string field as its text
            v = "true" if v is True else "false" if v is False else str(v)
        out[key] = v
    if errors:
        raise GoDecodeError("yaml: unmarshal errors:\n" + "\n".join(errors))
    return out
