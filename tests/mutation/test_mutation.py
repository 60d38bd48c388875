"""The seeded mutation test: odd and hostile variants of the golden fixtures (see
``engine.py``) must neither crash nor hang kzgit, and must build or fail as ``kubectl kustomize``
does, byte for byte.

kubectl's outcomes for the suite's seed are recorded in ``oracle.json`` (re-record with
``tests/mutation/engine.py --record`` after changing the operators or the fixtures the corpus
names); a mutant the recording does not know is built by kubectl when it is installed, and left
out of the comparison otherwise (the test says how many).  ``KNOWN_DIVERGENCES`` lists mutants
whose divergence is tracked elsewhere; one listed that agrees again fails the test, so the list
stays true.
"""
from __future__ import annotations

import shutil
import warnings
from typing import Tuple

import pytest
from mutation.engine import (
    KZGIT_TIMEOUT,
    SUITE_COUNT,
    SUITE_SEED,
    Outcome,
    Report,
    evaluate,
    generate,
    load_oracle,
    read_known,
    verdict,
)


@pytest.fixture(scope="module")
def report() -> Report:
    oracle = load_oracle()
    mutants = generate(SUITE_SEED, SUITE_COUNT, only=oracle.get("cases"))
    return evaluate(mutants, shutil.which("kubectl"), oracle["outcomes"])


def test_no_crash_and_no_hang(report: Report) -> None:
    bad = [p for p in report.problems() if p.startswith(("crash", "hang"))]
    assert not bad, "\n".join(bad) + "\n" + report.summary()


def test_agrees_with_kubectl(report: Report) -> None:
    unjudged = report.count("no-oracle")
    if unjudged == len(report.rows):
        pytest.skip("kubectl is not installed and oracle.json knows none of these mutants")
    if unjudged:
        warnings.warn(f"{unjudged} mutants not compared (kubectl panicked on them, or it is not "
                      "installed and oracle.json does not know them)", stacklevel=1)
    bad = [p for p in report.problems() if p.startswith("divergence")]
    assert not bad, "\n".join(bad) + "\n" + report.summary()


def test_known_divergences_still_diverge(report: Report) -> None:
    idents = {m.ident: kind for m, kind, _ in report.rows}
    stale = sorted(i for i in read_known() if idents.get(i, "known") != "known")
    assert not stale, f"KNOWN_DIVERGENCES lists mutants that agree now (remove them): {stale}"


def test_mutants_are_reproducible() -> None:
    a = [m.digest() for m in generate(SUITE_SEED, 20)]
    b = [m.digest() for m in generate(SUITE_SEED, 20)]
    assert a == b and len(set(a)) > 15


@pytest.mark.parametrize("z,oracle,want", [
    (Outcome(0, "x"), (0, Outcome(0, "x").digest), "ok"),
    (Outcome(1, "", "Error: bad"), (1, None), "ok"),
    (Outcome(3, "", "An unexpected error has occurred: KeyError"), (1, None), "crash"),
    (Outcome(1, "", "Traceback (most recent call last):\n  ...\nValueError: x"), (1, None), "crash"),
    (Outcome(-1, "", "timeout"), (0, "d"), "hang"),
    (Outcome(1, "", "Error: x"), (0, "d"), "divergence"),
    (Outcome(0, "y"), (1, None), "divergence"),
    (Outcome(0, "y"), (0, Outcome(0, "x").digest), "divergence"),
    (Outcome(0, "y"), (None, None), "no-oracle"),
    (Outcome(3, "", "boom"), (None, None), "crash"),
])
def test_verdicts(z: Outcome, oracle: Tuple[object, object], want: str) -> None:
    kind, why = verdict(z, oracle[0], oracle[1])  # type: ignore[arg-type]
    assert kind == want, why
    if kind == "hang":
        assert f"{KZGIT_TIMEOUT:.0f} s" in why
