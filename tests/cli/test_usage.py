"""Usage errors exit 2 with the command's own usage, and ``--help`` says what the code does."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import List

import pytest

from kzgit.cli.main import COMMANDS, main, make_parser


def _exit_code(argv: List[str]) -> int:
    with pytest.raises(SystemExit) as e:
        main(argv)
    return int(e.value.code or 0)


def _subparser(name: str) -> argparse.ArgumentParser:
    parser = make_parser(name.replace("-", "_"))
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[name]  # type: ignore[no-any-return]
    raise AssertionError(name)


def test_unknown_option_after_a_command_prints_that_commands_usage(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code(["build", "some/dir", "--bogus"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: kzgit build ")
    assert "kzgit build: error: unrecognized arguments: --bogus" in err


def test_unknown_option_of_a_hook_prints_the_hooks_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code(["hook", "render", "--all", "--bogus"]) == 2
    assert capsys.readouterr().err.startswith("usage: kzgit hook render ")


@pytest.mark.parametrize("argv", [["hook", "render", "--all", "-j", "-3"],
                                  ["hook", "all", "--all", "--jobs=-1"],
                                  ["diff", "-j", "-3"]])
def test_negative_jobs_is_a_usage_error(argv: List[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code(argv) == 2
    assert "expected an integer >= 0" in capsys.readouterr().err


def test_transform_missing_plugin_dir_is_a_usage_error(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "file").write_text("x")
    assert main(["transform", str(tmp_path / "src"), "-p", str(tmp_path / "nosuchdir"),
                 "-o", str(tmp_path / "out")]) == 2
    assert "-p/--plugin-dir" in capsys.readouterr().err
    assert main(["transform", "--list-plugins", "-p", str(tmp_path / "file")]) == 2
    assert "not a directory" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_transform_usage_shows_required_arguments() -> None:
    usage = _subparser("transform").format_usage()
    assert "kzgit transform SOURCE -p DIR -o OUT" in usage
    assert "kzgit transform --list-plugins -p DIR" in usage


@pytest.mark.parametrize("name", [c.replace("_", "-") for c in COMMANDS])
def test_every_command_has_a_description_and_every_option_help(name: str) -> None:
    p = _subparser(name)
    assert p.description, f"kzgit {name} has no description"
    if name == "hook":
        return
    for action in p._actions:
        assert action.help, f"kzgit {name}: {action.option_strings or action.dest} has no help"


def test_localize_help_names_the_default_newdir() -> None:
    text = _subparser("localize").format_help()
    assert "localized-<dir>-<ref>" in " ".join(text.split())
    assert "localized-<repo>-<ref>" not in text


def test_a_deleted_working_directory_is_a_user_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    # kubectl kustomize . says the same: it cannot make '.' absolute
    assert main(["build", "."]) == 1
    assert capsys.readouterr().err == ("Error: must build at directory: not a valid directory: abs path "
                                       "error on '.' : getwd: no such file or directory\n")
    assert main(["hook", "render", "--all"]) == 1
    assert capsys.readouterr().err == "Error: the current directory no longer exists\n"


@pytest.mark.parametrize("command, codes", [("build", ["0 built", "1 the kustomization does not build",
                                                       "2 usage", "3 unexpected", "130 interrupted"]),
                                            ("diff", ["1 a rendering changed", "4 a root does not render",
                                                      "130 interrupted"])])
def test_help_lists_the_exit_codes(command: str, codes: List[str],
                                   capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main([command, "--help"])
    assert e.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Exit status:" in text and all(c in text for c in codes), text
