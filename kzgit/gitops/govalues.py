"""Go values as text/template holds and prints them, for :mod:`kzgit.gitops.gotemplate` and
the functions of :mod:`kzgit.gitops.sprig`: the error a template raises, the missing value of an
absent map key, truth, ``%v`` printing, and the bounds that keep a repository's template from
stalling kzgit."""
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; see docs/startup.md
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any


class TemplateError(Exception):
    """A template Go refuses (its words where Go has them), or one kzgit does not expand."""


class NotSupported(TemplateError):
    """A template kzgit does not expand (a feature of Go's it lacks, a function of the clock or
    the network, a bound it keeps): not Argo CD's refusal, so the ApplicationSet is listed
    as not expanded rather than found wrong."""


class _Missing:
    """What a map lookup of an absent key gives: Go's invalid value, printed ``<no value>``."""

    def __repr__(self) -> str:
        return "<no value>"


MISSING = _Missing()

# A repository's template may not stall kzgit or fill its memory (Go's would run on and on:
# `{{ range until 100000000 }}`, `{{ repeat 1000000000 "x" }}`): bounds far above what a name,
# a path or a patch of an Application needs, refused in kzgit's words.
MAX_TEXT = 1 << 20        # characters of a template's result, or of one function's
MAX_STEPS = 200_000       # actions, commands and loop turns of one template


def sort_key(k: Any) -> Any:
    return (0, k) if isinstance(k, (int, float)) and not isinstance(k, bool) else (1, str(k))


def go_type(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float64"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "[]interface {}"
    return "interface {}"


def truth(v: Any) -> bool:
    """Go's ``template.IsTrue``: the zero value of its type is false."""
    if v is None or v is MISSING:
        return False
    if isinstance(v, (bool, int, float, str, list, dict)):
        return bool(v)
    return True


def go_print(v: Any) -> str:
    """``fmt.Fprint`` of a value (``%v``), as text/template prints an action's result."""
    if v is MISSING:
        return "<no value>"
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        from kzgit.yamlio.gonum import format_float_g   # start-up: only a float printed
        return format_float_g(v)
    if isinstance(v, list):
        return "[" + " ".join(go_print(x) for x in v) + "]"
    if isinstance(v, dict):
        return "map[" + " ".join(f"{go_print(k)}:{go_print(v[k])}"
                                 for k in sorted(v, key=sort_key)) + "]"
    return str(v)
