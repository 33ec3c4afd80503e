"""`ragfacts methods` piped into a file or a CI log: lines a reader can read, as wide as COLUMNS allows."""

from __future__ import annotations

from typer.testing import CliRunner

from ragfacts.cli import app

runner = CliRunner()


def widths(text: str) -> list[int]:
    return [len(line) for line in text.splitlines()]


def test_piped_methods_keep_to_120_columns():
    result = runner.invoke(app, ["methods"], env={"COLUMNS": None})  # stderr is not a terminal here
    assert result.exit_code == 0, result.output
    assert max(widths(result.stderr)) <= 120
    assert "prompt-tf (recall)" in result.stderr and "chunk_size" in result.stderr  # every method, every option


def test_columns_widens_piped_methods():
    result = runner.invoke(app, ["methods"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert 120 < max(widths(result.stderr)) <= 200  # the long option texts take the room they are given
