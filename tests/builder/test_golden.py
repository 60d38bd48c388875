"""Golden tests: ``kzgit build`` must print exactly what ``kubectl kustomize`` printed.

Each case is a directory ``tests/fixtures/<area>/<case>/`` (see ``scripts/record_fixture.py``)
with an input tree, a ``case.json`` and either ``expected.yaml`` (kubectl's stdout, compared
byte for byte) or ``expected.err`` (kubectl failed: kzgit must fail too, with a non-zero exit
that is not a crash and without a Python traceback; the message itself is not compared).

Cases the engine does not handle yet are listed in ``tests/fixtures/KNOWN_FAILURES`` and
marked ``xfail(strict=True)``: when one starts passing, the suite fails until its line is
removed, so the list always matches reality.

Each build runs in a temporary copy of its case, with HOME and XDG directories pointed at
empty temporary directories, through ``kzgit.cli.main.main`` (exit code and stderr as the CLI
gives them).  For speed the collected cases are split over one fresh worker process per CPU
(``scripts/record_fixture.py --kzgit-worker``), so imports are paid once per worker and pytest's
own process never imports the engine.  ``KZGIT_GOLDEN_JOBS`` overrides the worker count;
``KZGIT_GOLDEN_SUBPROCESS=1`` runs one ``python -m kzgit build`` per case instead (slow).
"""
from __future__ import annotations

import importlib.util
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from helpers import FIXTURES, PROJECT, kustomize_error

KNOWN_FAILURES_FILE = FIXTURES / "KNOWN_FAILURES"
EXIT_CRASH = 3  # kzgit's "unexpected error" exit code (a bug, never a correct build error)


def _load_recorder():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("record_fixture", PROJECT / "scripts" / "record_fixture.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("record_fixture", mod)
    spec.loader.exec_module(mod)
    return mod


recorder = _load_recorder()
KZGIT = [sys.executable, "-m", "kzgit", "build"]


def read_known_failures(path: Path = KNOWN_FAILURES_FILE) -> Dict[str, str]:
    """``case-id  # reason`` lines; blank lines and lines starting with ``#`` are ignored."""
    known: Dict[str, str] = {}
    if not path.exists():
        return known
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        cid, _, reason = line.partition("#")
        known[cid.strip()] = reason.strip() or "known failure"
    return known


def read_error_phrases(path: Path = FIXTURES / "ERROR_PHRASES") -> Dict[str, Tuple[str, str]]:
    """``case-id | phrase | why`` lines: {case id: (phrase, why)}."""
    out: Dict[str, Tuple[str, str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        cid, phrase, why = (part.strip() for part in line.split(" | ", 2))
        out[cid] = (phrase, why)
    return out


def innermost(message: str) -> str:
    """kustomize's innermost phrase: the last ``": "``-separated part of its message's first
    line (kustomize wraps an error in its callers' context, outermost first)."""
    first = (message.strip().splitlines() or [""])[0]
    parts = [p for p in first.split(": ") if p.strip()]
    return parts[-1].strip().strip('"') if parts else first


CASES: List[Path] = list(recorder.iter_cases(FIXTURES))
KNOWN = read_known_failures()
PHRASES = read_error_phrases()


def error_phrase(case_dir: Path) -> str:
    """What kzgit's error must say for a failing case: ERROR_PHRASES' phrase, else kustomize's
    innermost phrase (so a build that fails for another reason than kubectl's fails the test)."""
    cid = recorder.case_id(case_dir, FIXTURES)
    return PHRASES[cid][0] if cid in PHRASES else innermost(kustomize_error(case_dir))


def _params() -> List[object]:
    out = []
    for c in CASES:
        cid = recorder.case_id(c, FIXTURES)
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN[cid])] if cid in KNOWN else []
        out.append(pytest.param(c, id=cid, marks=marks))
    return out


def test_known_failures_name_real_cases() -> None:
    ids = {recorder.case_id(c, FIXTURES) for c in CASES}
    stale = sorted(set(KNOWN) - ids)
    assert not stale, f"KNOWN_FAILURES lists cases that do not exist: {stale}"


def test_fixture_files_are_complete() -> None:
    for c in CASES:
        case = recorder.load_case(c)
        exp = case.get("expected")
        assert exp in ("ok", "error"), c
        assert case.get("description"), f"{c}: description missing"
        want = c / ("expected.yaml" if exp == "ok" else "expected.err")
        assert want.exists(), f"{c}: {want.name} missing (run scripts/record_fixture.py)"


@pytest.fixture(scope="session")
def outcomes(request: pytest.FixtureRequest) -> Dict[Path, object]:
    """Run kzgit on every collected golden case, in parallel; {case dir: Outcome}."""
    wanted = []
    for item in request.session.items:
        cs = getattr(item, "callspec", None)
        if cs is not None and "case_dir" in cs.params and item.module is sys.modules[__name__]:
            wanted.append(cs.params["case_dir"])
    if os.environ.get("KZGIT_GOLDEN_SUBPROCESS"):  # one `python -m kzgit build` per case
        return {c: recorder.run_case(c, KZGIT) for c in wanted}
    jobs = int(os.environ.get("KZGIT_GOLDEN_JOBS", "0")) or (os.cpu_count() or 2)
    chunks = [wanted[i::jobs] for i in range(jobs)]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        batches = list(pool.map(recorder.run_kzgit_batch, chunks))
    results: Dict[Path, object] = {}
    for chunk, batch in zip(chunks, batches):
        results.update(zip(chunk, batch))
    return results


@pytest.mark.parametrize("case_dir", _params())
def test_golden(case_dir: Path, outcomes: Dict[Path, object]) -> None:
    case = recorder.load_case(case_dir)
    out = outcomes.get(case_dir) or recorder.run_case(case_dir, KZGIT)
    assert "Traceback (most recent call last)" not in out.stderr, out.stderr
    assert out.returncode != EXIT_CRASH, f"kzgit crashed:\n{out.stderr}"
    if case["expected"] == "ok":
        assert out.returncode == 0, f"kzgit failed (exit {out.returncode}):\n{out.stderr}"
        expected = (case_dir / "expected.yaml").read_bytes().decode("utf-8", "surrogateescape")
        assert out.stdout == expected
    else:
        assert out.returncode != 0, (
            "kubectl fails on this case but kzgit succeeded; kubectl said:\n"
            + (case_dir / "expected.err").read_text(encoding="utf-8"))
        phrase = error_phrase(case_dir)
        assert phrase in out.stderr, (
            f"kzgit fails, but not for kubectl's reason: its error lacks {phrase!r}\n"
            f"kzgit said:\n{out.stderr}\nkubectl said:\n{kustomize_error(case_dir)}")


def test_error_phrases_name_real_error_cases_and_kustomizes_words() -> None:
    """Each ERROR_PHRASES line names an error case, quotes kubectl's recording unless it says
    why kzgit words it otherwise ("kzgit: ..."), and is needed (the default would not do)."""
    errors = {recorder.case_id(c, FIXTURES): c for c in CASES if recorder.load_case(c)["expected"] == "error"}
    for cid, (phrase, why) in PHRASES.items():
        assert cid in errors, f"ERROR_PHRASES: {cid} is not an error case"
        recorded = (errors[cid] / "expected.err").read_text(encoding="utf-8")
        if not why.startswith("kzgit:"):
            assert phrase in recorded or phrase in kustomize_error(errors[cid]), \
                f"ERROR_PHRASES: {cid}: {phrase!r} is not in kubectl's message"
        default = innermost(kustomize_error(errors[cid]))
        assert phrase != default, f"ERROR_PHRASES: {cid}: the default phrase already says {phrase!r}"


def test_examples_fixtures_copy_examples_dir() -> None:
    """tests/fixtures/examples/* hold a copy of examples/: keep them in step (re-record both)."""
    examples = PROJECT / "examples"
    want = {p.relative_to(examples).as_posix(): p.read_bytes()
            for p in examples.rglob("*") if p.is_file()}
    for case_dir in sorted((FIXTURES / "examples").iterdir()):
        got = {p.relative_to(case_dir).as_posix(): p.read_bytes() for p in case_dir.rglob("*")
               if p.is_file() and p.relative_to(case_dir).as_posix() not in recorder.META_FILES}
        assert got == want, f"{case_dir} differs from examples/; copy it again and re-record"
