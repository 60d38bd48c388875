"""Go regular expressions (kzgit.gore): Go's matches and refusals, in kubectl's words, in
time linear in the text."""
from __future__ import annotations

import pytest

from kzgit import gore


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
    (r"^\pL+$", "\u00e9t\u00e9", True),         # Unicode classes, as in Go
    (r"^(?U)a+", "aaa", True),                # the ungreedy flag, as in Go
    (r"^[a[]+$", "a[", True),
    (r"^\Q\C\E$", "\\C", True),               # \C quoted is text
])
def test_matches_as_go_does(pattern: str, text: str, matches: bool) -> None:
    assert bool(gore.compile(pattern).search(text)) is matches


def test_ungreedy_flag_takes_the_shortest() -> None:
    assert gore.compile(r"(?U)a+").search("aaa").group(0) == "a"
    assert gore.compile(r"a+").search("aaa").group(0) == "aaa"


# Go's messages (regexp/syntax/parse.go) as kubectl 1.32 and 1.36 print them for a patch
# target name, which kustomize compiles as "^(?:" + name + ")$" (recorded with both).
@pytest.mark.parametrize("name,message", [
    ("(?=a)a.*", "invalid or unsupported Perl syntax: `(?=`"),
    ("a[0-9", "missing closing ]: `[0-9)$`"),
    ("\\C", "invalid escape sequence: `\\C`"),
    ("(a)\\1", "invalid escape sequence: `\\1`"),
    ("a(?!b)", "invalid or unsupported Perl syntax: `(?!`"),
    ("(?<=a)b", "invalid named capture: `(?<=a)b)$`"),
    ("a**", "invalid nested repetition operator: `**`"),
    ("x{1001}", "invalid repeat count: `{1001}`"),
    ("a)", "unexpected ): `^(?:a))$`"),
    ("(a", "missing closing ): `^(?:(a)$`"),
    ("*a", "missing argument to repetition operator: `*`"),
    ("a\\", "missing closing ): `^(?:a\\)$`"),
    ("[z-a]", "invalid character class range: `z-a`"),
    ("[[:foo:]]", "invalid character class range: `[:foo:]`"),
    ("\\pX", "invalid character class range: `\\pX`"),
    ("(?P<>a)", "invalid named capture: `(?P<>`"),
    ("a{2,1}", "invalid repeat count: `{2,1}`"),
    ("\\8", "invalid escape sequence: `\\8`"),
])
def test_refused_in_kubectls_words(name: str, message: str) -> None:
    with pytest.raises(gore.RegexError) as e:
        gore.compile("^(?:" + name + ")$")
    assert str(e.value) == "error parsing regexp: " + message


def test_trailing_backslash() -> None:
    with pytest.raises(gore.RegexError) as e:
        gore.compile("a\\")
    assert str(e.value) == "error parsing regexp: trailing backslash at end of expression: ``"


def test_a_refusal_prints_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    """RE2 logs every refused pattern to stderr unless told not to."""
    with pytest.raises(gore.RegexError):
        gore.compile("(?=x)")
    assert capfd.readouterr().err == ""


def test_catastrophic_patterns_run_in_linear_time() -> None:
    """(a+)+b on 30 a's: 2**30 paths for a backtracking engine (Python's re does not finish
    in minutes), a single pass for RE2; 100,000 a's bound the work far above the noise."""
    text = "a" * 100_000
    for pattern in (r"^(?:(a+)+b)$", r"^(a|aa)+$b", r"(x+x+)+y", r"^(a|a?)+c$"):
        assert gore.compile(pattern).search(text) is None


def test_escape_quotes_every_metacharacter() -> None:
    text = r"a.b*c+d?e(f)g[h]i{j}k|l^m$n\o"
    assert gore.compile("^" + gore.escape(text) + "$").search(text)
