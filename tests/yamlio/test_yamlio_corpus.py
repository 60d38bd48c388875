"""kzgit.yamlio against bytes recorded from ``kubectl kustomize`` (tests/data/yamlio/<case>/).

Each case holds ``input.yaml`` (one resource file), ``kustomization.yaml``
listing it, and, in the fixture format, ``case.json`` and ``expected.yaml`` as
kubectl v1.32.4 (Kustomize v5.5.0) printed it (``scripts/record_fixture.py
--tables``; tests/builder/test_differential.py re-records them).  No transformer
touches the resources, so load → dump must reproduce kubectl's bytes exactly.
``gen_inputs.py`` wrote the inputs.  ``stream3000/`` is kubectl's output alone
(tests/fixtures/README.md says why).
"""
from __future__ import annotations

import pytest

from kzgit.yamlio import dump_documents, load_documents
from helpers import TESTS

DATA = TESTS / "data" / "yamlio"
CASES = sorted(p.name for p in DATA.iterdir() if (p / "case.json").is_file())


def test_corpus_is_present() -> None:
    assert len(CASES) >= 6


@pytest.mark.parametrize("case", CASES)
def test_round_trip_matches_kubectl(case: str) -> None:
    d = DATA / case
    got = dump_documents(load_documents((d / "input.yaml").read_bytes(), str(d / "input.yaml")))
    assert got == (d / "expected.yaml").read_text(encoding="utf-8")


def test_3000_resource_stream_round_trips_fast() -> None:
    """kubectl's own output of 3,000 resources: read and written back byte for byte, quickly.

    The bound asserted is 10x the target (load 0.5 s, dump 0.6 s), far from the noise of a
    busy CI box, and still fails a quadratic slip; the CPU time of the best of three runs is
    used. The figures themselves are benchmarks' (benchmarks/bench_build.py).
    """
    import gzip
    import time

    text = gzip.decompress((DATA / "stream3000" / "expected.yaml.gz").read_bytes()).decode("utf-8")
    best_load = best_dump = float("inf")
    for _ in range(3):
        t0 = time.process_time()
        docs = load_documents(text, "expected.yaml")
        t1 = time.process_time()
        out = dump_documents(docs)
        t2 = time.process_time()
        best_load, best_dump = min(best_load, t1 - t0), min(best_dump, t2 - t1)
        assert len(docs) == 3000
        assert out == text
    assert best_load < 5.0, best_load
    assert best_dump < 6.0, best_dump
