"""The lint rules that need a build of each root: ``warnings``, ``patch-matches-nothing``,
``replacement-matches-nothing``, ``render-error``.

A lint build is a builtin build with a listener for target selectors that select nothing
(:data:`kzgit.builtins.common.UNMATCHED`; the build itself is unchanged), stored in the render
cache under its own flavour (``lint``): its payload is the list of those selectors, its warnings
the build's.  A root whose inputs did not change is not built again.  The run's base cache
(:mod:`kzgit.builder.cache`) is not used here: a reused base would replay its warnings but not
its selections.
"""
from __future__ import annotations

import json
import time

from kzgit.options import BuildOptions
from kzgit.errors import KzgitError, full_message

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, List, Optional, Tuple
    from kzgit.engine import Engine
    from kzgit.hooks.render import Outcome
    from kzgit.rendercache import Store

FLAVOUR = "lint"


def _produce(path: str) -> Any:
    def produce(options: BuildOptions) -> Tuple[bytes, List[str]]:
        from kzgit.builder import build   # start-up: only the builds that need it pay for it
        from kzgit.builtins.common import UNMATCHED   # start-up: as above
        seen: List[Tuple[str, str, Any]] = []
        token = UNMATCHED.set(seen)
        try:
            result = build(path, options)
        finally:
            UNMATCHED.reset(token)
        payload = json.dumps([list(s) for s in seen], default=str).encode("utf-8")
        return payload, list(result.warnings)
    return produce


def lint_one(engine: Engine, path: str, options: BuildOptions, store: Optional[Store]) -> Outcome:
    """Build one root for lint in a worker (a module-level function: it is pickled to the
    pool); the outcome's last part is (warnings, unmatched selectors)."""
    from kzgit.rendercache import render_cached   # start-up: only the runs that need it
    start = time.monotonic()
    try:
        got = render_cached(path, options.replace(cache=None), store, FLAVOUR, _produce(path),
                            looked=True)
    except KzgitError as e:   # pragma: no cover - render_cached returns build errors
        return "failed", time.monotonic() - start, full_message(e), None
    return _outcome(got)


def look_up(path: str, options: BuildOptions, store: Store, checker: Any) -> Optional[Outcome]:
    """The stored lint build of a root whose inputs are unchanged, else None."""
    from kzgit.rendercache import lookup   # start-up: only the runs that need it
    hit = lookup(path, options.replace(cache=None), store, FLAVOUR, checker)
    return None if hit is None else _outcome(hit)


def _outcome(got: Any) -> Outcome:
    err = full_message(got.error) if got.error is not None else None
    unmatched = json.loads(got.payload.decode("utf-8")) if got.payload and err is None else []
    return got.status, got.seconds, err, (list(got.warnings), unmatched)
