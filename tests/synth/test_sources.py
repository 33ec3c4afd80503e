"""Source rows: read like any dataset, but the answer is optional and a reference is required."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragfacts.datasets.dataset import Dataset
from ragfacts.datasets.reader import DatasetError
from ragfacts.synth.sources import SourceDataset


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def test_rows_without_an_answer_column_are_read_with_an_empty_answer_and_announced(tmp_path):
    data = write(tmp_path / "refs.jsonl", [{"question": "Q?", "context": "R one."}, {"context": "R two."}])
    dataset = SourceDataset.open(data)
    items = list(dataset.items())
    assert [(i.question, i.reference, i.answer) for i in items] == [("Q?", "R one.", ""), (None, "R two.", "")]
    assert "reference ← context" in dataset.describe() and "the model writes each faithful answer" in dataset.describe()


def test_a_row_with_an_answer_keeps_it_and_gets_the_id_any_command_gives_it(tmp_path):
    data = write(tmp_path / "rows.jsonl", [{"answer": "A.", "reference": "R."}, {"answer": "", "reference": "R."}])
    first, second = SourceDataset.open(data).items()
    assert first.answer == "A." and second.answer == ""
    alone = Dataset.open(write(tmp_path / "one.jsonl", [{"answer": "A.", "reference": "R."}]))
    assert first.id == next(alone.items()).id


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"answer": "A.", "reference": " "}, "no reference"),
        ({"answer": "A.", "reference": "R.", "label": 0}, "the row is labelled inconsistent"),
    ],
)
def test_a_row_that_cannot_be_a_source_is_refused_naming_it(tmp_path, row, message):
    data = write(tmp_path / "rows.jsonl", [{"answer": "B.", "reference": "R."}, row])
    with pytest.raises(DatasetError, match=f"line 2: {message}"):
        SourceDataset.open(data)


def test_a_repeated_id_is_refused(tmp_path):
    data = write(tmp_path / "rows.jsonl", [{"id": "a", "reference": "R."}, {"id": "a", "reference": "S."}])
    with pytest.raises(DatasetError, match="repeats the id 'a'"):
        SourceDataset.open(data)


def test_a_layout_with_several_answers_per_row_is_refused(tmp_path):
    row = {"question": "Q?", "answer": "A.", "ungrounded_answer": "U.", "poor_answer": "P.", "context_v1": "R."}
    with pytest.raises(DatasetError, match="several answers per row"):
        SourceDataset.open(write(tmp_path / "wikieval.jsonl", [row]))


def test_a_map_to_a_missing_answer_column_is_refused_not_ignored(tmp_path):
    data = write(tmp_path / "rows.jsonl", [{"reference": "R."}])
    with pytest.raises(DatasetError, match="no column 'output'"):
        SourceDataset.open(data, {"answer": "output"})
