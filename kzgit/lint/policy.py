"""The severity of each ``kzgit lint`` rule in a repository: the rule's default
(:mod:`kzgit.lint.rules`), raised to an error by ``warnings-as-errors`` for the rules that report
kustomize's own warnings, and the ``[lint]`` table of the configuration.

The table is read by :mod:`kzgit.config` as written (``Config.lint``: its keys, its file and how
its keys are named there) and checked here against the rule registry, so that the one list of
rule ids is the rule modules': an unknown rule id or severity is a configuration error (exit 2)
naming the file and the key, as any other key of the configuration.
"""
from __future__ import annotations

from kzgit.errors import UsageError
from kzgit.lint.rules import BY_ID, OFF, SEVERITIES

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Dict
    from kzgit.config import Config


def severities(config: Config) -> Dict[str, str]:
    """Rule id -> its severity (``off`` included) in this configuration; raises
    :class:`UsageError` for a ``[lint]`` key that is no rule id or a value that is no severity."""
    table = config.lint
    for rule, value in table.severities.items():
        name = f"{table.prefix}{rule}"
        if rule not in BY_ID:
            raise UsageError(f"{table.source}: unknown key '{name}'",
                             tip=f"known keys: {', '.join(sorted(BY_ID))}")
        if value not in SEVERITIES:
            expected = "one of " + ", ".join(repr(s) for s in SEVERITIES)
            raise UsageError(f"{table.source}: bad value for '{name}': {value!r} (expected {expected})")
    out: Dict[str, str] = {}
    for rule, m in BY_ID.items():
        got = table.severities.get(rule)
        if got is None:
            got = "error" if config.warnings_as_errors and m.RAISED_BY_WARNINGS_AS_ERRORS else m.SEVERITY
        out[rule] = got
    return out


def active(severity: Dict[str, str], rule: str) -> bool:
    return severity[rule] != OFF
