"""Differential tests against the oracles, ``kubectl kustomize`` of each supported release.

The oracles are the kubectl binaries ``../shared/tools/oracles --env`` exports
(``KZGIT_ORACLE_KUBECTL_1_32`` ... ``_1_36``, one per Kustomize release) and ``kubectl`` on PATH;
each is asked its release (``kubectl version --client``).

1. Every golden fixture, and every case of the table tests under tests/data (same format), is
   re-recorded with the kubectl of the release that recorded it and must give the committed
   bytes: this proves the goldens (a case edited by hand, or recorded by another kubectl,
   fails here).
2. kzgit, rendering as each release, and that release's kubectl must print the same bytes for
   trees made by ``benchmarks/gen_tree.py`` (small sizes; base and overlay).

A test whose oracle is absent is skipped with the reason shown; all are when
``KZGIT_SKIP_KUBECTL`` is set.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List

import pytest
from helpers import FIXTURES, PROJECT



def _load(name: str, path: Path):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, mod)
    spec.loader.exec_module(mod)
    return mod


recorder = _load("record_fixture", PROJECT / "scripts" / "record_fixture.py")
gen_tree = _load("gen_tree", PROJECT / "benchmarks" / "gen_tree.py")

SUPPORTED = ["5.5.0", "5.6.0", "5.7.1", "5.8.1"]


def _oracles() -> Dict[str, str]:
    """{release: kubectl} of every oracle present."""
    if os.environ.get("KZGIT_SKIP_KUBECTL"):
        return {}
    found = recorder.oracles()
    on_path = shutil.which("kubectl")
    if on_path is not None:
        try:
            found.setdefault(recorder.kubectl_release(on_path), on_path)
        except SystemExit:   # a kubectl that names no Kustomize release is no oracle
            pass
    return found


ORACLES = _oracles()


def _oracle(release: str) -> str:
    """The kubectl of ``release``, else skip saying why."""
    if os.environ.get("KZGIT_SKIP_KUBECTL"):
        pytest.skip("KZGIT_SKIP_KUBECTL is set")
    if release not in ORACLES:
        pytest.skip(f"no kubectl embedding Kustomize {release}: set KZGIT_ORACLE_KUBECTL_1_NN "
                    "(eval \"$(../shared/tools/oracles --env)\") or put one on PATH")
    return ORACLES[release]

CASES: List[Path] = list(recorder.iter_cases(FIXTURES))
TABLE_CASES: List[Path] = list(recorder.iter_cases(recorder.TABLES))


@pytest.fixture(scope="session")
def kubectl_outcomes(request: pytest.FixtureRequest) -> Dict[Path, object]:
    """kubectl's outcome for every collected fixture, run in parallel (threads over processes)."""
    wanted = [item.callspec.params["case_dir"] for item in request.session.items
              if getattr(item, "callspec", None) is not None
              and "case_dir" in item.callspec.params and item.module is sys.modules[__name__]]
    wanted = [c for c in wanted if recorder.case_release(recorder.load_case(c)) in ORACLES]

    def outcome(case_dir: Path) -> object:
        return recorder.kubectl_outcome(case_dir, ORACLES[recorder.case_release(recorder.load_case(case_dir))])
    with ThreadPoolExecutor(max_workers=(os.cpu_count() or 2) * 2) as pool:
        return dict(zip(wanted, pool.map(outcome, wanted)))


@pytest.mark.parametrize("case_dir", [pytest.param(c, id=recorder.case_id(c, FIXTURES)) for c in CASES]
                         + [pytest.param(c, id="tables/" + recorder.case_id(c, recorder.TABLES))
                            for c in TABLE_CASES])
def test_kubectl_reproduces_fixture(case_dir: Path, kubectl_outcomes: Dict[Path, object]) -> None:
    case = recorder.load_case(case_dir)
    kubectl = _oracle(recorder.case_release(case))
    out = kubectl_outcomes.get(case_dir) or recorder.kubectl_outcome(case_dir, kubectl)
    assert out.expected == case["expected"], out.stderr
    if out.expected == "ok":
        assert out.stdout == (case_dir / "expected.yaml").read_bytes().decode("utf-8", "surrogateescape")


def _build(argv: List[str], path: Path) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    return subprocess.run(argv + [str(path)], capture_output=True, timeout=300)


@pytest.mark.parametrize("release", SUPPORTED)
@pytest.mark.parametrize("size", [1, 6, 25, 61])
@pytest.mark.parametrize("target", ["base", "overlay"])
def test_generated_tree_matches_kubectl(tmp_path: Path, size: int, target: str, release: str) -> None:
    kubectl = _oracle(release)
    gen_tree.generate(size, str(tmp_path))
    want = _build([kubectl, "kustomize"], tmp_path / target)
    assert want.returncode == 0, want.stderr.decode()
    got = _build([sys.executable, "-m", "kzgit", "build", "--kustomize-version", release],
                 tmp_path / target)
    assert got.returncode == 0, got.stderr.decode()
    assert got.stdout.decode() == want.stdout.decode()
