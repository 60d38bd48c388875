"""``kzgit`` command line: owns argv, dispatches to ``kzgit.cli.<command>`` modules.

Each command module defines ``register(subparsers)`` (adds its parser and sets
``func``) and a ``run(args) -> int``.  Exit codes follow pre-commit:
0 ok, 1 finding / build error, 2 usage, 3 unexpected (crash log), 130 interrupted
(Ctrl-C); 128+N when signal N (SIGTERM, or SIGHUP when the terminal closes) stopped it.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from kzgit.errors import KzgitError, UsageError, full_message

TYPE_CHECKING = False  # typing.TYPE_CHECKING for checkers; typing itself costs every run
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List, NoReturn, Optional
    import signal
else:
    # _signal, not signal: signal wraps the same functions and constants in enums whose
    # construction costs every run about as much as parsing its command line.
    import _signal as signal

# Command modules under kzgit/cli/, in the order ``kzgit --help`` lists them.
COMMANDS = ["build", "transform", "localize", "rebuild", "diff", "validate", "fix", "hook", "install_hooks",
            "cache", "trust", "lint", "apps", "explain"]


def _columns() -> int:
    """shutil.get_terminal_size's width rule: $COLUMNS, else the terminal's, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        stdout = sys.__stdout__
        try:
            columns = os.get_terminal_size(stdout.fileno()).columns if stdout else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter at argparse's width, without importing shutil for it.

    argparse builds a formatter for every ``add_argument`` (to check its metavar) and sizes
    it with ``shutil.get_terminal_size()``: importing shutil (with bz2 and lzma) on every
    run would cost about as much as the rest of parsing a command line.
    """

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: Optional[int] = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _columns() - 2 if width is None else width)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:  # usage errors exit 2, as argparse does
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def make_parser(only: Optional[str] = None) -> argparse.ArgumentParser:
    """The parser; with ``only`` (a command module name) just that command's subparser.

    Registering a command imports its library; a pre-commit hook or a ``kzgit build``
    on every commit should not pay for the others' imports.
    """
    parser = _Parser(prog="kzgit", description="Keep kustomizations honest inside git.")
    parser.add_argument("--version", action="version", version=_version())
    parser.add_argument("--traceback", action="store_true", help="show Python tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS if only is None else [only]:
        importlib.import_module(f"kzgit.cli.{name}").register(sub)
    _own_parser(parser)
    return parser


def _own_parser(parser: argparse.ArgumentParser) -> None:
    """Record on every (sub)command parser that it parsed, so an unknown option after
    ``kzgit build DIR`` is reported with ``build``'s usage rather than the top level's."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in set(action.choices.values()):
                child.set_defaults(_parser=child)
                _own_parser(child)


def _version() -> str:
    from kzgit._version import __version__   # start-up
    return f"kzgit {__version__}"


def _crash_log(exc: BaseException) -> str:
    import tempfile  # only after a crash: not worth its import on every run
    import traceback
    from kzgit.remote import redact   # start-up: after a crash only

    fd, path = tempfile.mkstemp(prefix="kzgit-crash-", suffix=".log")
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    with os.fdopen(fd, "w") as f:
        # a crash log is attached to bug reports: no credential of the command line (a
        # remote URL's user and token, an --env value) or of the error reaches it
        f.write(f"{_version()}\nargv: {redacted_argv(sys.argv)!r}\n\n{redact(text)}")
    return path


def redacted_argv(argv: List[str]) -> List[str]:
    """``argv`` with the userinfo of every URL and the value of every ``-e/--env NAME=VALUE``
    replaced by ``***`` (``--env NAME`` passes a variable by name: kept)."""
    from kzgit.remote import redact   # start-up: after a crash only
    out: List[str] = []
    env_value = False
    for arg in argv:
        if env_value and "=" in arg:
            arg = arg.split("=", 1)[0] + "=***"
        elif arg.startswith("--env=") and arg.count("=") > 1:
            arg = "--env=" + arg[len("--env="):].split("=", 1)[0] + "=***"
        elif arg.startswith("-e") and len(arg) > 2 and "=" in arg:
            arg = "-e" + arg[2:].split("=", 1)[0] + "=***"
        env_value = arg in ("-e", "--env")
        out.append(redact(arg))
    return out


# Signals that unwind like Ctrl-C: a supervisor's stop and the terminal closing.
_UNWIND_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class _Signalled(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the program is so cleanup runs as for Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _unwind(signum: int, frame: object) -> None:
    # Only the first signal unwinds: another one (a closing terminal may send SIGHUP and
    # then SIGTERM) must not abort the cleanup it started.  A Python no-op rather than
    # SIG_IGN, which children started during cleanup would inherit.
    for s in _UNWIND_SIGNALS:
        signal.signal(s, lambda *_: None)
    raise _Signalled(signum)


def _install_signal_handlers() -> Dict[int, Any]:
    """Make SIGTERM and SIGHUP raise :class:`_Signalled`; return the handlers they replace.

    A signal the caller ignores (``nohup``) stays ignored.  Outside the main thread
    (tests calling :func:`main`) nothing is installed.
    """
    previous: Dict[int, Any] = {}
    for s in _UNWIND_SIGNALS:
        try:
            old = signal.getsignal(s)
            if old == signal.SIG_IGN:
                continue
            signal.signal(s, _unwind)
        except ValueError:  # not in the main thread
            break
        previous[s] = old
    return previous


def _say(message: str) -> None:
    """Print to stderr, which may be gone (a closed terminal): never fail on it."""
    try:
        print(message, file=sys.stderr)
    except (OSError, ValueError):
        pass


def main(argv: Optional[List[str]] = None) -> int:
    previous = _install_signal_handlers()
    try:
        return _main(argv)
    except KeyboardInterrupt as e:  # the command's own cleanup has run while this unwound
        if isinstance(e, _Signalled):
            from signal import Signals   # start-up
            _say(f"Interrupted ({Signals(e.signum).name})")
            return 128 + e.signum
        _say("Interrupted (^C)")
        return 130
    finally:
        for s, handler in previous.items():
            try:
                signal.signal(s, handler if handler is not None else signal.SIG_DFL)
            except (ValueError, TypeError):  # pragma: no cover
                pass


def _cwd_exists() -> bool:
    try:
        os.getcwd()
    except FileNotFoundError:
        return False
    return True


def _command_module(argv: List[str]) -> Optional[str]:
    """The command module ``argv`` names (its first word that is not an option), if any."""
    word = next((a for a in argv if not a.startswith("-")), None)
    name = word.replace("-", "_") if word else None
    return name if name in COMMANDS else None


def _main(argv: Optional[List[str]]) -> int:
    parser = make_parser(_command_module(sys.argv[1:] if argv is None else argv))
    args, extra = parser.parse_known_args(argv)
    if extra:
        # argparse reports unknown options through the top-level parser; the command's
        # own parser gives its usage, the one a user needs.
        getattr(args, "_parser", parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    # main() without argv runs this process's own command line (the kzgit script, python -m
    # kzgit); with argv a host program calls it (tests): commands then leave process-wide
    # state alone (kzgit.cli.build freezes the garbage collector's view of its imports)
    args.own_process = argv is None
    sandbox = sys.modules.get("kzgit.sandbox")
    if sandbox is not None:   # a host program's earlier command (tests): not this one's
        sandbox.forget_unconfined()
    try:
        return _run_command(args)
    finally:
        _report_unconfined()


def _report_unconfined() -> None:
    """Every command that ran a plugin unconfined (mode "auto" where the kernel cannot
    confine, allowed by the user's allow-unconfined) says so, whatever it did after."""
    sandbox = sys.modules.get("kzgit.sandbox")   # not loaded: no plugin ran
    why = sandbox.unconfined_reason() if sandbox is not None else None
    if why:
        _say(f"kzgit: info: plugins ran unconfined: {why}")


def _run_command(args: argparse.Namespace) -> int:
    try:
        return int(args.func(args) or 0)
    except UsageError as e:
        if args.traceback:
            raise
        print(f"Error: {e}", file=sys.stderr)
        return 2
    except KzgitError as e:
        if args.traceback:
            raise
        print(f"Error: {full_message(e)}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 1
    except Exception as e:  # noqa: BLE001 - the last line of defence
        if args.traceback:
            raise
        if isinstance(e, OSError) and e.filename:
            # an I/O error on a path (disk full, permissions, a file where a directory
            # should be): the user can act on it, so it is not a crash
            print(f"Error: cannot access '{e.filename}': {e.strerror or e}", file=sys.stderr)
            return 1
        if isinstance(e, FileNotFoundError) and not _cwd_exists():
            print("Error: the current directory no longer exists", file=sys.stderr)
            return 1
        path = _crash_log(e)
        from kzgit.remote import redact   # start-up: after a crash only
        print(f"An unexpected error has occurred: {type(e).__name__}: {redact(str(e))}\n"
              f"Check the log at {path}", file=sys.stderr)
        return 3
