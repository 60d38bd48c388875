"""Fixtures shared by the test modules: an autouse guard for the real home, and opt-in isolation;
and, with ``KZGIT_REQUIRE_ORACLES=1`` (``.ci/run`` sets it), a test skipped for want of an oracle
(a kubectl or helm release, see ``helpers.oracle``) fails instead: CI must run every differential."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Generator, Iterator, Union

import pytest

#: The words of every skip that means "no oracle here": ``helpers.oracle``'s "KZGIT_ORACLE_... is
#: not set", the tests that look for ``kubectl`` on PATH, ``KZGIT_SKIP_KUBECTL`` and the helm matrix.
ORACLE_SKIP = re.compile(r"kubectl|helm|oracle", re.IGNORECASE)


def _require_oracles() -> bool:
    return os.environ.get("KZGIT_REQUIRE_ORACLES", "") not in ("", "0")


def _skip_reason(report: Union[pytest.TestReport, pytest.CollectReport]) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _fail_oracle_skip(report: Union[pytest.TestReport, pytest.CollectReport]) -> None:
    if report.skipped and _require_oracles() and not hasattr(report, "wasxfail"):
        reason = _skip_reason(report)
        if ORACLE_SKIP.search(reason):
            report.outcome = "failed"
            report.longrepr = (f"KZGIT_REQUIRE_ORACLES is set but this test was skipped: {reason}\n"
                               "fetch the oracles with: eval \"$(../shared/tools/oracles --env)\"")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    _fail_oracle_skip(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, None]:
    outcome = yield
    _fail_oracle_skip(outcome.get_result())


@pytest.fixture(scope="session")
def _session_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("session-home")


@pytest.fixture(autouse=True)
def dont_write_to_home_directory(_session_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the real home, config or cache (as pre-commit's conftest guards
    its store): HOME and the XDG directories point into one temporary home for the session,
    so kzgit's remote and render caches never touch the user's, and a plugin home set in the
    environment of whoever runs the suite is not seen.  Git commits made by tests get a fixed
    identity, since the real ``~/.gitconfig`` is out of reach."""
    monkeypatch.setenv("HOME", str(_session_home))
    for var, sub in (("XDG_CONFIG_HOME", ".config"), ("XDG_CACHE_HOME", ".cache"),
                     ("XDG_DATA_HOME", ".local/share")):
        monkeypatch.setenv(var, str(_session_home / sub))
    monkeypatch.delenv("KUSTOMIZE_PLUGIN_HOME", raising=False)
    for var, value in (("GIT_AUTHOR_NAME", "kzgit test"), ("GIT_AUTHOR_EMAIL", "test@kzgit.invalid"),
                       ("GIT_COMMITTER_NAME", "kzgit test"), ("GIT_COMMITTER_EMAIL", "test@kzgit.invalid")):
        monkeypatch.setenv(var, value)


@pytest.fixture
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never read or write the real home or plugin home: HOME and XDG_CONFIG_HOME point to a
    fresh directory and KUSTOMIZE_PLUGIN_HOME is unset.  Use it module-wide with
    ``pytestmark = pytest.mark.usefixtures("isolated_home")``."""
    h = tmp_path_factory.mktemp("isolated-home")
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(h / ".config"))
    monkeypatch.delenv("KUSTOMIZE_PLUGIN_HOME", raising=False)


@pytest.fixture(scope="session")
def session(tmp_path_factory: pytest.TempPathFactory) -> "Iterator[Any]":
    """The session's pre-commit hook environment (tests/precommit_session.py): built once, for
    the tests that drive the real pre-commit tool (tests/hooks, tests/fix)."""
    from precommit_session import make_session
    yield from make_session(tmp_path_factory)
