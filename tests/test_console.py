"""Machine-readable output: one JSON document on stdout, a dataset's rows one per line."""

from __future__ import annotations

import json

import pytest

from ragfacts.console import print_json


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
