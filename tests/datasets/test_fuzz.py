"""The readers, fuzzed: any bytes in a .jsonl, .json or .csv file give items or one DatasetError with a message,
never another exception (the CLI turns a DatasetError into exit 2). Raw bytes, and rows shaped like the known
layouts (generic, RAGAS v0.1 and v0.2, DeepEval, Face4RAG CSV, WikiEval) with values of any JSON type."""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragfacts.datasets.dataset import Dataset
from ragfacts.datasets.reader import DatasetError

EXAMPLES = int(os.environ.get("RAGFACTS_FUZZ_EXAMPLES", "150"))  # per test; 6 tests: 900 inputs on every CI run
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
COLUMNS = [
    "id", "question", "answer", "reference", "ground_truth", "facts", "label", "error_type", "ref", "contexts",
    "user_input", "response", "retrieved_contexts", "actual_output", "retrieval_context", "expected_output",
    "ungrounded_answer", "poor_answer", "context_v1", "gt_facts", "fact_labels", "answer_type", "标签",
]  # fmt: skip
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=8,
)
rows = st.lists(st.dictionaries(st.sampled_from(COLUMNS), values, max_size=8), max_size=5)


def read(suffix: str, data: bytes) -> None:
    """Open and read every item; only a DatasetError may come out."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"data{suffix}"
        path.write_bytes(data)
        try:
            dataset = Dataset.open(path)
            list(dataset.items())
        except DatasetError as error:
            assert str(error)  # a message, which the CLI prints before exiting 2


@FUZZ
@given(st.binary(max_size=400), st.sampled_from([".jsonl", ".json", ".csv"]))
def test_any_bytes_give_items_or_a_dataset_error(data, suffix):
    read(suffix, data)


@FUZZ
@given(rows)
def test_any_jsonl_rows_of_the_known_columns_give_items_or_a_dataset_error(lines):
    read(".jsonl", "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8"))


@FUZZ
@given(rows)
def test_any_json_array_of_the_known_columns_gives_items_or_a_dataset_error(lines):
    read(".json", json.dumps(lines, ensure_ascii=False).encode("utf-8"))


@FUZZ
@given(values)
def test_any_json_document_gives_items_or_a_dataset_error(document):
    read(".json", json.dumps(document, ensure_ascii=False).encode("utf-8"))


@FUZZ
@given(
    st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=6, unique=True),
    st.lists(st.lists(st.text(max_size=30), min_size=0, max_size=7), max_size=5),
)
def test_any_csv_of_the_known_columns_gives_items_or_a_dataset_error(header, cells):
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(cells)
    read(".csv", buffer.getvalue().encode("utf-8"))


@FUZZ
@given(st.text(max_size=300))
def test_any_text_as_csv_gives_items_or_a_dataset_error(text):
    read(".csv", text.encode("utf-8"))
