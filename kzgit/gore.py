"""Go's regular expressions (package ``regexp``), run by RE2 in time linear in the text.

Every regular expression a repository or a configuration writes is compiled here: patch and
replacement target selectors (kustomize api/types/selector.go compiles ``^(?:pattern)$``
with Go's ``regexp.Compile``), field-path matchers (kyaml yaml/match.go), CRD ``pattern``s and
CEL ``find``/``findAll`` (k8s.io/kube-openapi pkg/validation/validate and
k8s.io/apiserver pkg/cel/library/regex.go: ``regexp.Compile``), kzgit's ``refs`` patterns and
the globs of ``roots``/``exclude``.  Python's :mod:`re` backtracks: ``(a+)+b`` against thirty
``a`` never ends, where Go (an RE2 automaton) answers at once; and it reads another dialect
(lookarounds and backreferences that Go refuses, ``$`` before a final newline).  RE2 (the
``google-re2`` binding) has Go's syntax and semantics -- leftmost-first matching, ``$`` the
end of the text without ``(?m)``, ASCII ``\\d \\w \\s \\b``, Unicode classes ``\\pL``, ``(?U)``
-- and what it refuses Go refuses; its messages are mapped to Go's
(regexp/syntax/parse.go ``ErrorCode``), so kzgit fails with kubectl's words:
``error parsing regexp: invalid or unsupported Perl syntax: `(?=```.

One difference is closed by hand: RE2's ``\\C`` (any byte) is an invalid escape in Go.

``re2`` loads on the first compile (docs/startup.md: a build without a selector never pays).
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, Optional

__all__ = ["Regexp", "RegexError", "compile", "escape", "go_error"]

#: RE2's error texts (re2/regexp.cc kErrorStrings) -> Go's (regexp/syntax/parse.go ErrorCode).
_GO_CODES = {
    "unexpected error": "regexp/syntax: internal error",
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "invalid named capture group": "invalid named capture",
    "pattern too large - compile failed": "expression too large",
}

_cache: "Dict[str, Regexp]" = {}
_CACHE_MAX = 4096
_MEMO_MAX = 65536
_options: "Optional[Any]" = None
_bool_options: "Optional[Any]" = None


class RegexError(ValueError):
    """A pattern Go's ``regexp.Compile`` refuses; ``str()`` is Go's error text
    (``error parsing regexp: <code>: `<expr>```), ``code`` and ``expr`` its parts."""

    def __init__(self, code: str, expr: str) -> None:
        self.code = code
        self.expr = expr
        super().__init__(f"error parsing regexp: {code}: `{expr}`")


class Regexp:
    """A compiled Go regular expression: :meth:`test` (does it match anywhere, Go's
    ``MatchString``) for the selectors' yes-or-no questions, and :mod:`re`'s ``search``,
    ``match``, ``fullmatch``, ``finditer`` (the binding's match objects) where the text of a
    match is wanted (CEL ``find``)."""

    __slots__ = ("pattern", "_rx", "_program", "_memo")

    def __init__(self, pattern: str, rx: Any) -> None:
        self.pattern = pattern
        self._rx = rx
        self._program: Any = None
        # Selectors ask the same question many times (a kind, a namespace, a name that the
        # build did not change): one call into RE2 costs what a dict lookup costs ten times.
        self._memo: Dict[str, bool] = {}

    def test(self, text: str) -> bool:
        """Whether the expression matches somewhere in ``text`` (``regexp.MatchString``)."""
        got = self._memo.get(text)
        if got is None:
            program = self._program
            if program is None:
                # no capture groups to fill: RE2 answers from its DFA, without the binding's
                # match objects (half the time of ``search``)
                from re2 import _re2   # start-up: loaded with re2 by compile()
                program = self._program = _re2.RE2(self.pattern.encode("utf-8"), _bool_options)
            data = text.encode("utf-8", "surrogatepass")
            got = program.Match(_UNANCHORED, data, 0, len(data))[0][0] >= 0
            if len(text) <= 253:   # names and kinds; never keep a long value alive
                if len(self._memo) >= _MEMO_MAX:
                    self._memo.clear()
                self._memo[text] = got
        return got

    def search(self, text: str) -> Any:
        return self._rx.search(text)

    def match(self, text: str) -> Any:
        return self._rx.match(text)

    def fullmatch(self, text: str) -> Any:
        return self._rx.fullmatch(text)

    def finditer(self, text: str) -> Any:
        return self._rx.finditer(text)


_UNANCHORED: Any = None


def compile(pattern: str) -> Regexp:  # noqa: A001 - the module's verb, as re.compile
    """The RE2 program of the Go regular expression ``pattern``; :class:`RegexError` with
    Go's message when Go would refuse it."""
    rx = _cache.get(pattern)
    if rx is not None:
        return rx
    global _options, _bool_options, _UNANCHORED
    import re2   # start-up: only a build or check that has a regular expression loads RE2
    if _options is None:
        opts = re2.Options()
        opts.log_errors = False   # RE2 logs every refusal to stderr otherwise
        fast = re2.Options()
        fast.log_errors = False
        fast.never_capture = True
        _options, _bool_options = opts, fast
        _UNANCHORED = re2._re2.RE2.Anchor.UNANCHORED
    _refuse_go_only(pattern)
    try:
        compiled = re2.compile(pattern, _options)
    except re2.error as e:
        raise _go_error(e, pattern) from None
    if len(_cache) >= _CACHE_MAX:
        _cache.clear()
    rx = _cache[pattern] = Regexp(pattern, compiled)
    return rx


def escape(text: str) -> str:
    """``regexp.QuoteMeta``: ``text`` as a pattern matching it literally."""
    return "".join("\\" + c if c in "\\.+*?()|[]{}^$" else c for c in text)


def go_error(re2_text: str, pattern: str = "") -> RegexError:
    """RE2's error text (``invalid perl operator: (?=``, as the C++ library and runtimes built
    on it, such as the CEL runtime's ``matches``, say it) as Go's."""
    return _go_error(Exception(re2_text), pattern)


def _go_error(e: Exception, pattern: str) -> RegexError:
    raw = e.args[0] if e.args else ""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    code, sep, expr = text.partition(": ")
    if not sep:
        code, expr = text, ""
    if code == "trailing \\":
        expr = ""   # Go names no expression: "trailing backslash at end of expression: ``"
    if code == "invalid perl operator" and expr.startswith("(?<") and expr in pattern:
        # Go 1.22+ reads "(?<" as a named group (regexp/syntax/parse.go parsePerlFlags):
        # a lookbehind is an invalid name, quoted up to its ">" or to the end
        rest = pattern[pattern.index(expr):]
        end = rest.find(">")
        return RegexError("invalid named capture", rest if end < 0 else rest[:end + 1])
    return RegexError(_GO_CODES.get(code, code), expr)


def _refuse_go_only(pattern: str) -> None:
    """What RE2 accepts and Go refuses: ``\\C`` (regexp/syntax/parse.go: no such escape)."""
    i = pattern.find("\\")
    n = len(pattern)
    while 0 <= i < n - 1:
        d = pattern[i + 1]
        if d == "Q":   # quoted text up to \E is literal
            end = pattern.find("\\E", i + 2)
            if end < 0:
                return
            i = pattern.find("\\", end + 2)
            continue
        if d == "C":
            raise RegexError("invalid escape sequence", "\\C")
        i = pattern.find("\\", i + 2)
