"""The command group: a command's module is imported when the command runs; the help lists all, importing none."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from ragfacts.cli._group import LazyCommand, LazyGroup

runner = CliRunner()
# A command module registers its command on the test's application (`APP`, made afresh for each test).
HELLO = '''
from tests.cli import test_group

@test_group.APP.command()
def hello(name: str = "world") -> None:
    """Say hello to NAME."""
    print(f"hello {name}{'!' if test_group.LOUD else ''}")
'''
APP = typer.Typer()
LOUD = False


COMMANDS = {
    "hello": LazyCommand("rf_cmd_hello", "Say hello to NAME."),
    "bye": LazyCommand("rf_cmd_bye", "Say goodbye."),
}


class Toy(LazyGroup):
    declared = COMMANDS


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[typer.Typer]:
    """A two-command application with a global --loud flag; `rf_cmd_bye` forgets to register its command."""
    global APP
    (tmp_path / "rf_cmd_hello.py").write_text(HELLO)
    (tmp_path / "rf_cmd_bye.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    APP = typer.Typer(cls=Toy, no_args_is_help=True)

    @APP.callback()
    def options(loud: bool = typer.Option(False, "--loud")) -> None:
        global LOUD
        LOUD = loud

    monkeypatch.setattr(Toy, "source", APP)
    yield APP
    for module in [name for name in sys.modules if name.startswith("rf_cmd_")]:
        del sys.modules[module]


def test_the_help_lists_every_command_by_its_declared_summary_importing_none(app):
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "hello" in result.stdout and "Say hello to NAME." in result.stdout and "Say goodbye." in result.stdout
    assert "rf_cmd_hello" not in sys.modules and "rf_cmd_bye" not in sys.modules


def test_a_command_imports_its_own_module_only_when_it_runs(app):
    result = runner.invoke(app, ["hello", "--name", "you"])
    assert result.exit_code == 0 and result.stdout == "hello you\n"
    assert "rf_cmd_hello" in sys.modules and "rf_cmd_bye" not in sys.modules


def test_the_groups_options_may_follow_the_command(app):
    assert runner.invoke(app, ["--loud", "hello"]).stdout == "hello world!\n"
    assert runner.invoke(app, ["hello", "--loud", "--name", "you"]).stdout == "hello you!\n"
    assert runner.invoke(app, ["hello", "--", "--loud"]).exit_code == 2  # after `--`, an argument of the command


def test_an_unknown_command_fails_with_the_closest_names(app):
    result = runner.invoke(app, ["helo"])
    assert result.exit_code == 2 and "No such command 'helo'. Did you mean 'hello'?" in result.output
    assert "rf_cmd_hello" not in sys.modules


def test_a_module_that_registers_no_command_is_a_bug_said_plainly(app):
    result = runner.invoke(app, ["bye"])
    assert isinstance(result.exception, LookupError) and "rf_cmd_bye registers no command 'bye'" in str(
        result.exception
    )
