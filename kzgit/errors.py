"""The exception hierarchy of kzgit.

``str()`` of every exception is the message the user sees; the CLI maps the
classes to exit codes (see ``kzgit.cli.main``), as pre-commit's error handler
does.  Library code raises, it never prints.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Optional


class KzgitError(Exception):
    """An error in the user's input (exit code 1)."""

    #: One line a person reads first (the kustomization file, the field, the path), printed
    #: above the message by :func:`full_message`; ``str()`` stays kustomize's own chain.
    lead: Optional[str] = None

    def __init__(self, message: str, *, tip: Optional[str] = None) -> None:
        super().__init__(message)
        self.tip = tip

    def __str__(self) -> str:
        msg = self.message
        if self.tip:
            msg += f"\nTIP: {self.tip}"
        return msg

    @property
    def message(self) -> str:
        """The message without the tip."""
        return super().__str__()

    def with_lead(self, lead: str) -> "KzgitError":
        """Set :attr:`lead` unless one is set (the level nearest the problem names it)."""
        if self.lead is None:
            self.lead = lead
        return self

    def prefixed(self, prefix: str) -> "KzgitError":
        """The same error (class and tip) with ``prefix`` before its message.

        kustomize wraps an error at each level it passes (``errors.WrapPrefixf``):
        ``accumulating resources: recursed accumulation of path ...: <cause>``.
        """
        return self.reworded(prefix + self.message)

    def reworded(self, message: str) -> "KzgitError":
        """The same error (class, tip and every attribute) with another message."""
        return _rebuilt(type(self), (message,), self.__dict__)

    def __reduce__(self) -> "tuple[Any, ...]":
        # copy and pickle (an error coming back from a render worker) rebuild the error without
        # calling __init__: subclasses take other arguments (an HTTP status, an object's size)
        return _rebuilt, (type(self), self.args, self.__dict__)


def _rebuilt(cls: "type[KzgitError]", args: "tuple[Any, ...]", state: "dict[str, Any]") -> KzgitError:
    new = cls.__new__(cls)
    new.args = args
    new.__dict__.update(state)
    return new


# Characters that do not print (a path holding a NUL byte, a key spelled with a byte-order
# mark) as Go's strconv.Quote writes them, which is how kubectl shows them (klog quotes a
# one-line error): \x for ASCII controls, \u / \U above; newlines and tabs stay as they are
_NAMED = {0x07: "\\a", 0x08: "\\b", 0x0b: "\\v", 0x0c: "\\f", 0x0d: "\\r"}


def _go_escape(c: str) -> str:
    n = ord(c)
    if n in _NAMED:
        return _NAMED[n]
    if n < 0x20 or n == 0x7f:
        return f"\\x{n:02x}"
    if 0xdc80 <= n <= 0xdcff:
        return f"\\x{n - 0xdc00:02x}"   # a byte that is not UTF-8 (surrogateescape)
    return f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def full_message(e: KzgitError) -> str:
    """What the user reads: the lead line, when there is one, then the message (and tip),
    characters that do not print escaped."""
    text = f"{e.lead}\n{e}" if e.lead else str(e)
    if text.isprintable():
        return text
    # (str.isprintable and Go's unicode.IsPrint agree: both refuse the C and Z categories
    # but the ASCII space)
    return "".join(c if c.isprintable() or c in "\n\t" else _go_escape(c) for c in text)


class BuildError(KzgitError):
    """A kustomization does not render."""


class YamlError(BuildError):
    """A file is not valid YAML, or is out of kzgit's bounds (alias bombs, depth)."""


class LoadRestrictionError(BuildError):
    """A file lies outside the kustomization root (kustomize's load restrictor)."""


class UnsupportedError(BuildError):
    """A field or feature kzgit does not implement; never silently ignored."""


class PluginError(BuildError):
    """A plugin failed, timed out, or is not allowed."""


class RemoteError(BuildError):
    """A remote reference cannot be fetched or is refused."""


class UsageError(KzgitError):
    """Bad command line or configuration (exit code 2)."""
