"""Go (RE2) patterns run with Python's re: the same matches as Go's regexp, or a refusal."""
from __future__ import annotations

import re

import pytest

from kzgit.validate import re2


@pytest.mark.parametrize("pattern,text,matches", [
    (r"^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$", "ProvisioningRequestConfig", True),   # Kueue
    (r"^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$", "9x", False),
    (r"^a[a-z]+(?i)X$", "abx", True),          # the flag starts where it is written
    (r"^a[a-z]+(?i)X$", "AbX", False),
    (r"^(a(?i)b|c)$", "C", True),              # and lasts to the end of the group, over "|"
    (r"^(a(?i)b|c)$", "A", False),
    (r"^(?i:ab)c$", "ABc", True),
    (r"^(?i:ab)c$", "ABC", False),
    (r"^a$", "a\n", False),                    # Go's $ is the end of the text
    (r"(?m)^a$", "a\nb", True),
    (r"^a\z", "a", True),
    (r"^a\z", "a\n", False),
    (r"^(?P<x>a)(?<y>b)$", "ab", True),
    (r"^\Qa.b\E$", "a.b", True),
    (r"^\Qa.b\E$", "axb", False),
    (r"^[[:alpha:]_]+$", "ab_C", True),
    (r"^[[:digit:]]+$", "12a", False),
    (r"^\x{41}$", "A", True),
    (r"^\d+$", "\u0663", False),               # \d is ASCII in RE2
    (r"^[a[]+$", "a[", True),
])
def test_matches_as_go_does(pattern: str, text: str, matches: bool) -> None:
    assert bool(re2.compile(pattern).search(text)) is matches


@pytest.mark.parametrize("pattern,why", [
    (r"(a)\1", "backreference"),
    (r"a(?=b)", "lookahead"),
    (r"a(?!b)", "negative lookahead"),
    (r"(?<=a)b", "lookbehind"),
    (r"(?<!a)b", "negative lookbehind"),
    (r"(?>a)", "atomic group"),
    (r"a*+", "possessive"),
    (r"\pL", "Unicode class"),
    (r"(?U)a*", "ungreedy"),
    (r"a)", "unexpected )"),
    (r"(a", "missing )"),
    (r"[a", "missing ]"),
])
def test_refused_naming_the_construct(pattern: str, why: str) -> None:
    with pytest.raises(re2.RegexError, match=re.escape(why)):
        re2.compile(pattern)
