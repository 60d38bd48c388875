"""The reference pages of the docs site are the ones the code generates (scripts/gen_docs.py):
every command's --help, the configuration keys and the lint rules never drift from the code."""
from __future__ import annotations

import subprocess
import sys

from helpers import PROJECT


def test_generated_reference_pages_are_up_to_date() -> None:
    res = subprocess.run([sys.executable, str(PROJECT / "scripts" / "gen_docs.py"), "--check"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr


def test_every_lint_rule_and_configuration_table_is_documented() -> None:
    from kzgit.lint.rules import RULES
    page = (PROJECT / "docs" / "reference" / "lint-rules.md").read_text(encoding="utf-8")
    for m in RULES:
        assert f"\n## {m.ID}\n" in page and (m.__doc__ or "").strip(), m.ID
    config = (PROJECT / "docs" / "reference" / "configuration.md").read_text(encoding="utf-8")
    for table in ("[refs]", "[validate]", "[sandbox]", "[gitops]", "[lint]"):
        assert f"\n## {table}\n" in config
