"""Datasets through layouts: known layouts recognised and announced, --map, ids from content, bad rows named."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ragfacts.datasets.dataset import Dataset
from ragfacts.datasets.reader import DatasetError


def write_jsonl(path: Path, *rows: dict) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def write_csv(path: Path, header: list[str], *rows: list[str]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_the_official_face4rag_csv_reads_ref_as_the_reference_and_keeps_other_columns(tmp_path):
    path = write_csv(tmp_path / "f.csv", ["question", "ref", "answer", "id", "label"], ["q", "r", "a", "7", "1"])
    dataset = Dataset.open(path)
    (item,) = dataset.items()
    assert (item.id, item.question, item.reference, item.answer, item.label) == ("7", "q", "r", "a", "consistent")
    assert dataset.describe().startswith("face4rag layout")
    assert dataset.sha256 and dataset.rows == 1 and dataset.count == 1


def test_ragas_v02_reads_reference_as_the_ground_truth_and_numbers_the_contexts(tmp_path):
    row = {"user_input": "Q?", "response": "A.", "retrieved_contexts": ["c1", "c2"], "reference": "GT."}
    dataset = Dataset.open(write_jsonl(tmp_path / "ragas.jsonl", row))
    (item,) = dataset.items()
    assert (item.question, item.answer, item.ground_truth) == ("Q?", "A.", "GT.")
    assert item.reference == "[1] c1\n\n[2] c2"
    assert "ragas-v0.2" in dataset.describe() and "ground truth, not the context" in dataset.describe()


def test_ragas_v02_with_response_renamed_to_answer_still_takes_reference_as_the_ground_truth(tmp_path):
    row = {"user_input": "Q?", "answer": "A.", "retrieved_contexts": ["c1"], "reference": "GT."}
    (item,) = Dataset.open(write_jsonl(tmp_path / "ragas.jsonl", row)).items()
    assert item.reference == "c1" and item.ground_truth == "GT."


def test_ragas_v01_contexts_and_ground_truths(tmp_path):
    row = {"question": "Q?", "answer": "A.", "contexts": ["c1"], "ground_truths": ["g1", "g2"]}
    (item,) = Dataset.open(write_jsonl(tmp_path / "ragas.jsonl", row)).items()
    assert (item.reference, item.ground_truth) == ("c1", "g1\ng2")


def test_a_csv_cell_holding_a_list_of_contexts_is_read_as_a_list(tmp_path):
    path = write_csv(tmp_path / "r.csv", ["user_input", "response", "retrieved_contexts"], ["q", "a", "['x', 'y']"])
    (item,) = Dataset.open(path).items()
    assert item.reference == "[1] x\n\n[2] y"


def test_map_names_the_columns_of_any_layout(tmp_path):
    row = {"query": "Q?", "output": "A.", "docs": ["c1"], "gold": "GT."}
    path = write_jsonl(tmp_path / "custom.jsonl", row)
    dataset = Dataset.open(path, {"answer": "output", "reference": "docs", "ground_truth": "gold"})
    (item,) = dataset.items()
    assert (item.question, item.answer, item.reference, item.ground_truth) == ("Q?", "A.", "c1", "GT.")


def test_map_can_turn_a_ragas_reference_column_into_the_context(tmp_path):
    row = {"user_input": "Q?", "response": "A.", "retrieved_contexts": ["c1"], "reference": "R."}
    path = write_jsonl(tmp_path / "ragas.jsonl", row)
    (item,) = Dataset.open(path, {"reference": "reference"}).items()
    assert item.reference == "R." and item.ground_truth is None


@pytest.mark.parametrize(
    ("mapping", "message"),
    [({"answr": "output"}, "unknown field 'answr'"), ({"answer": "nope"}, "has no column 'nope'; columns: q, output")],
)
def test_a_bad_map_names_the_fields_or_the_columns(tmp_path, mapping, message):
    path = write_jsonl(tmp_path / "custom.jsonl", {"q": "Q?", "output": "A."})
    with pytest.raises(DatasetError, match=message):
        Dataset.open(path, mapping)


def test_without_an_answer_column_every_missing_field_is_named_with_the_map_line_that_reads_them(tmp_path):
    with pytest.raises(DatasetError) as error:
        Dataset.open(write_jsonl(tmp_path / "x.jsonl", {"output": "A.", "docs": "c", "expected": "E."}))
    message = str(error.value)
    assert "no column found for answer, reference (precision), ground_truth (recall)" in message
    assert "columns: output, docs, expected" in message
    assert message.endswith("--map answer=output,reference=docs,ground_truth=expected")


def test_deepeval_test_cases_are_read_by_their_own_names(tmp_path):
    row = {
        "input": "Q?",
        "actual_output": "A.",
        "retrieval_context": ["c1", "c2"],
        "expected_output": "E.",
        "context": ["ideal"],
    }
    data = Dataset.open(write_jsonl(tmp_path / "x.jsonl", row))
    (item,) = data.items()
    assert data.plan is not None and data.plan.layout.name == "deepeval"
    assert (item.question, item.answer, item.reference, item.ground_truth) == ("Q?", "A.", "[1] c1\n\n[2] c2", "E.")


def test_llamaindex_labelled_rag_examples_are_read_by_their_own_names(tmp_path):
    row = {"query": "Q?", "reference_contexts": ["c1"], "reference_answer": "E.", "response": "A."}
    data = Dataset.open(write_jsonl(tmp_path / "x.jsonl", row))
    (item,) = data.items()
    assert data.plan is not None and data.plan.layout.name == "llamaindex"
    assert (item.question, item.answer, item.reference, item.ground_truth) == ("Q?", "A.", "c1", "E.")


def test_an_empty_answer_is_named_by_its_line(tmp_path):
    path = write_jsonl(tmp_path / "x.jsonl", {"answer": "A.", "reference": "r"}, {"answer": "  ", "reference": "r"})
    with pytest.raises(DatasetError, match="line 2: the answer is empty"):
        Dataset.open(path)


def test_rows_without_an_id_get_one_from_their_content_so_inserting_a_row_shifts_nothing(tmp_path):
    rows = [{"answer": f"answer {n}", "reference": "r"} for n in range(3)]
    before = [item.id for item in Dataset.open(write_jsonl(tmp_path / "a.jsonl", *rows)).items()]
    after = [item.id for item in Dataset.open(write_jsonl(tmp_path / "b.jsonl", {"answer": "new"}, *rows)).items()]
    assert after[1:] == before and after[0] not in before and len(set(before)) == 3


def test_identical_rows_without_ids_are_told_apart_but_repeated_explicit_ids_are_refused(tmp_path):
    same = {"answer": "a", "reference": "r"}
    ids = [item.id for item in Dataset.open(write_jsonl(tmp_path / "a.jsonl", same, same)).items()]
    assert ids[1] == f"{ids[0]}~2"
    path = write_jsonl(tmp_path / "b.jsonl", {**same, "id": "x"}, {"answer": "b", "reference": "r", "id": "x"})
    with pytest.raises(DatasetError, match="line 2 repeats the id 'x'"):
        Dataset.open(path)


def test_gold_labels_are_read_and_a_bad_one_is_refused(tmp_path):
    rows = [{"answer": "a", "reference": "r", "label": value} for value in ("consistent", 0, "1")]
    labels = [item.label for item in Dataset.open(write_jsonl(tmp_path / "a.jsonl", *rows)).items()]
    assert labels == ["consistent", "inconsistent", "consistent"]
    with pytest.raises(DatasetError, match="label 'maybe'"):
        Dataset.open(write_jsonl(tmp_path / "b.jsonl", {"answer": "a", "label": "maybe"}))


def test_wikieval_rows_become_one_item_per_answer_type_with_prefixes_stripped(tmp_path):
    row = {
        "question": "Question: What is PSLV-C56?",
        "answer": "Answer: A rocket mission.",
        "ungrounded_answer": "A satellite.",
        "poor_answer": "Answer: Unknown.",
        "context_v1": ["ctx"],
        "source": "PSLV-C56",
    }
    dataset = Dataset.open(write_jsonl(tmp_path / "wikieval.jsonl", row, row))
    items = list(dataset.items())
    assert [item.id for item in items[:3]] == ["PSLV-C56/answer", "PSLV-C56/ungrounded_answer", "PSLV-C56/poor_answer"]
    assert items[3].id == "PSLV-C56/answer~2"  # two rows from one Wikipedia article
    assert {item.ground_truth for item in items} == {"A rocket mission."}
    assert items[0].question == "What is PSLV-C56?" and items[2].answer == "Unknown."
    assert items[0].reference == "ctx" and dataset.rows == 2 and dataset.count == 6


def test_items_in_memory_keep_their_fields(tmp_path):
    from ragfacts.items import Item

    dataset = Dataset.from_rows([Item(answer="a", reference="r", label="inconsistent", meta={"k": "v"})])
    (item,) = dataset.items()
    assert item.label == "inconsistent" and item.meta == {"k": "v"} and item.id


def _counting(rows: list[dict]) -> tuple[list[int], Callable[[], Iterator[tuple[str, dict]]]]:
    reads = [0]

    def read():
        reads[0] += 1
        return ((f"row {n}", dict(row)) for n, row in enumerate(rows, start=1))

    return reads, read


def test_items_are_read_once_and_kept_so_later_passes_parse_nothing():
    reads, read = _counting([{"answer": "A.", "reference": "R."}, {"answer": "B.", "reference": "R."}])
    dataset = Dataset("rows", read)  # the first full read validates and keeps the items
    passes = [[item.id for item in dataset.items()] for _ in range(3)]
    assert reads[0] == 2  # the scan of the columns, then the one read of the items
    assert passes[0] == passes[1] == passes[2] and len(passes[0]) == 2


def test_a_dataset_that_does_not_keep_its_items_reads_them_on_every_pass():
    reads, read = _counting([{"answer": "A.", "reference": "R."}, {"answer": "B.", "reference": "R."}])
    dataset = Dataset("rows", read, keep=False)
    next(dataset.items())
    assert [item.answer for item in dataset.items()] == ["A.", "B."]
    assert reads[0] == 4  # the scan, the count, the pass stopped early, the full pass


def test_a_file_larger_than_the_limit_is_streamed_on_every_pass(tmp_path, monkeypatch):
    import ragfacts.datasets.dataset as module

    path = write_jsonl(tmp_path / "d.jsonl", {"answer": "A.", "reference": "R."})
    assert [i.answer for i in Dataset.open(path).items()] == ["A."]
    monkeypatch.setattr(module, "KEEP_BYTES", 10)
    dataset = Dataset.open(path)
    write_jsonl(path, {"answer": "B.", "reference": "R."})  # read again on the next pass: nothing was kept
    assert [i.answer for i in dataset.items()] == ["B."]
