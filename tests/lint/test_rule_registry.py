"""One module per lint rule (kzgit/lint/rules/): each declares its id, default severity, summary,
kind and documentation, the registry lists every module once, and the configuration's [lint]
keys are exactly the rule ids."""
from __future__ import annotations

import pkgutil

import pytest

import kzgit.lint.rules as rules
from kzgit.config import Config, LintTable
from kzgit.errors import UsageError
from kzgit.lint.policy import severities


def test_every_rule_module_is_registered_once() -> None:
    modules = {m.name for m in pkgutil.iter_modules(rules.__path__)}
    assert sorted(m.__name__.rsplit(".", 1)[1] for m in rules.RULES) == sorted(modules)
    assert len(rules.BY_ID) == len(rules.RULES)


@pytest.mark.parametrize("m", rules.RULES, ids=lambda m: m.ID)
def test_a_rule_module_holds_everything_about_its_rule(m: object) -> None:
    assert m.ID == m.__name__.rsplit(".", 1)[1].replace("_", "-")  # type: ignore[attr-defined]
    assert m.SEVERITY in rules.SEVERITIES  # type: ignore[attr-defined]
    assert m.KIND in ("file", "build", "tree")  # type: ignore[attr-defined]
    assert isinstance(m.RAISED_BY_WARNINGS_AS_ERRORS, bool)  # type: ignore[attr-defined]
    assert m.SUMMARY and "\n" not in m.SUMMARY  # type: ignore[attr-defined]
    doc = m.__doc__ or ""
    assert "```" in doc, "the documentation shows an example"
    if m.KIND == "file":  # type: ignore[attr-defined]
        assert callable(m.check)  # type: ignore[attr-defined]


def test_severities_come_from_the_rules_and_the_lint_table() -> None:
    assert severities(Config()) == rules.DEFAULTS
    raised = severities(Config(warnings_as_errors=True))
    assert {r for r, s in raised.items() if s != rules.DEFAULTS[r]} == {
        m.ID for m in rules.RULES if m.RAISED_BY_WARNINGS_AS_ERRORS and m.SEVERITY != "error"}
    table = LintTable({"render-error": "off", "deprecated-field": "error"}, ".kzgit.toml")
    got = severities(Config(lint=table, warnings_as_errors=True))
    assert got["render-error"] == "off" and got["deprecated-field"] == "error"


@pytest.mark.parametrize("table, said", [
    ({"no-such-rule": "off"}, ".kzgit.toml: unknown key 'lint.no-such-rule'"),
    ({"render-error": "fatal"}, ".kzgit.toml: bad value for 'lint.render-error': 'fatal'"),
])
def test_a_bad_lint_table_is_a_configuration_error(table: dict, said: str) -> None:
    with pytest.raises(UsageError) as e:
        severities(Config(lint=LintTable(table, ".kzgit.toml")))
    assert said in str(e.value)
