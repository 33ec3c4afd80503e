"""Machine-readable output: one JSON document on stdout, a dataset's rows one per line."""

from __future__ import annotations

import io
import json

import pytest
from rich.table import Table

from ragfacts.console import PlainWhenPiped, print_json

PATH = "runs/" * 40 + "results.jsonl"  # a message longer than any width


@pytest.mark.parametrize(
    "document",
    [
        {"run": "r", "rows": [{"id": "a", "label": "consistent"}, {"id": "b", "text": "混合 \u2028 text"}], "n": 2},
        {"rows": []},
        {"summary": [], "rows": [1, 2]},
    ],
)
def test_a_dataset_document_is_valid_json_with_one_row_per_line(document, capsys):
    print_json(document, one_per_line="rows")
    text = capsys.readouterr().out
    assert json.loads(text) == document
    rows = document["rows"]
    assert sum(line.startswith("    ") and not line.startswith("     ") for line in text.splitlines()) == len(rows)


def piped_output(monkeypatch: pytest.MonkeyPatch, columns: str | None) -> list[str]:
    """What a console writing to a file (not a terminal) prints of a wide table, then of a long message."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    written = io.StringIO()
    console = PlainWhenPiped(file=written, soft_wrap=True)
    table = Table(title="Summary", caption="the rule that made these numbers, " * 12)
    for column in ("method", "what it says"):
        table.add_column(column)
    table.add_row("judge", "a long explanation " * 20)
    console.print(table)
    console.print(PATH)
    return written.getvalue().splitlines()


def test_piped_tables_fit_120_columns_and_messages_stay_whole(monkeypatch):
    lines = piped_output(monkeypatch, columns=None)
    assert lines[-1] == PATH  # a message is never cut: a path in a log stays whole
    assert max(map(len, lines[:-1])) <= 120  # the table, its title and its caption wrap to the width
    assert lines and all(line == line.rstrip() for line in lines)  # no padding to the width in a log


def test_columns_sets_the_piped_width(monkeypatch):
    lines = piped_output(monkeypatch, columns="200")
    assert 120 < max(map(len, lines[:-1])) <= 200 and lines[-1] == PATH
