"""Face4RAG files: input loaders, the results JSONL, the official output CSV."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from ragfacts.datasets.face4rag import (
    OFFICIAL_OUTPUT_COLUMNS,
    DatasetError,
    load_face4rag_csv,
    load_items,
    official_rows,
    read_results,
    write_official_csv,
)
from ragfacts.methods.lface4rag import (
    AnswerLabel,
    CallRecord,
    CheckOptions,
    CheckResult,
    FactResult,
    LogicResult,
    SegmentResult,
)
from ragfacts.models import Failure, FailureKind


def write_csv(path: Path, header: list[str], *rows: list[str], bom: bool = False) -> Path:
    with path.open("w", encoding="utf-8-sig" if bom else "utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def write_jsonl(path: Path, *rows: object) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def test_the_official_face4rag_csv_loads_with_a_byte_order_mark_and_keeps_extra_columns(tmp_path):
    path = write_csv(
        tmp_path / "synthetic.csv",
        ["question", "ref", "answer", "id", "label", "error_type"],
        ["长城何时始建？", "长城始建于春秋战国时期。", "长城始建于秦朝。", "17", "0", "KCont."],
        bom=True,
    )
    (item,) = load_face4rag_csv(path)
    assert (item.id, item.question, item.reference, item.answer) == (
        "17",
        "长城何时始建？",
        "长城始建于春秋战国时期。",
        "长城始建于秦朝。",
    )
    assert item.meta == {"label": "0", "error_type": "KCont."}
    assert load_items(path) == [item]


def test_the_official_loader_requires_every_contract_column(tmp_path):
    path = write_csv(tmp_path / "data.csv", ["question", "reference", "answer", "id"], ["q", "r", "a", "1"])
    with pytest.raises(DatasetError, match="no ref column"):
        load_face4rag_csv(path)
    assert load_items(path)[0].reference == "r"


def test_generic_jsonl_takes_reference_or_ref_and_numbers_rows_without_ids(tmp_path):
    path = write_jsonl(
        tmp_path / "data.jsonl",
        {"reference": ["passage one", "passage two"], "answer": "a1"},
        {"ref": "r2", "answer": "a2", "question": "q2", "id": 7},
    )
    first, second = load_items(path)
    assert (first.id, first.reference, first.question) == ("1", "passage one\n\npassage two", None)
    assert (second.id, second.reference, second.question) == ("7", "r2", "q2")


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("data.jsonl", '{"answer": "a", "reference": "r"}\n{"answer": \n', "line 2: not JSON"),
        ("data.jsonl", '["a", "r"]\n', "line 1: expected a JSON object"),
        ("data.jsonl", '{"answer": "a"}\n', "no reference \\(or ref\\) column"),
        ("data.jsonl", '{"reference": "r"}\n', "no answer column"),
        ("data.jsonl", '{"answer": " ", "reference": "r"}\n', "row 1 has an empty answer"),
        (
            "data.jsonl",
            '{"answer": "a", "reference": "r", "id": 1}\n{"answer": "b", "ref": "r", "id": "1"}\n',
            "repeats",
        ),
        ("data.jsonl", "\n", "no rows"),
        ("data.csv", "", "empty"),
        ("data.txt", "answer,reference\n", "unsupported file type .txt"),
    ],
)
def test_bad_input_is_reported_with_the_file_and_row(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DatasetError, match=message):
        load_items(path)


def test_a_missing_file_is_a_dataset_error(tmp_path):
    with pytest.raises(DatasetError, match="no such file"):
        load_items(tmp_path / "absent.csv")


def stage_call(stage: str, text: str | None = None, failure: Failure | None = None) -> CallRecord:
    return CallRecord(stage=stage, text=text, failure=failure)


def result(id: str, label: AnswerLabel, segments: list[SegmentResult]) -> CheckResult:
    return CheckResult(id=id, label=label, lang="en", options=CheckOptions(), segments=segments)


def two_segment_result() -> CheckResult:
    failure = Failure(kind=FailureKind.TRUNCATED, message="cut off")
    first = SegmentResult(
        index=0,
        text="The Nile flows north.",
        fact=FactResult(verdict="consistent", call=stage_call("fact_consistency", '{"verdict": "consistent"}')),
        logic=LogicResult(verdict="consistent", call=stage_call("logic_consistency", '{"l": 1}')),
        label=AnswerLabel.CONSISTENT,
    )
    second = SegmentResult(
        index=1,
        text="Rain causes the flood.",
        fact=FactResult(verdict="inconsistent", call=stage_call("fact_consistency", '{"verdict": "inconsistent"}')),
        logic=LogicResult(call=stage_call("logic_consistency", failure=failure)),
        label=AnswerLabel.INCONSISTENT,
    )
    return result("q1", AnswerLabel.INCONSISTENT, [first, second])


def test_official_rows_have_one_row_per_segment_with_1_0_labels_and_raw_outputs():
    rows = official_rows(two_segment_result())
    assert [row["answer_segment"] for row in rows] == ["The Nile flows north.", "Rain causes the flood."]
    assert [(row["label_fact_FCE"], row["label_logic_FCE"], row["fce_output"]) for row in rows] == [
        ("1", "1", "0"),
        ("0", "", "0"),
    ]
    assert rows[0]["fact_fce_result"] == '{"verdict": "consistent"}'
    assert rows[1]["logic_fce_result"] == "FAILED (truncated): cut off"
    assert all(row["id"] == "q1" for row in rows)


def test_an_answer_without_segments_still_gets_a_row():
    (row,) = official_rows(result("q2", AnswerLabel.UNSCORED, []))
    assert row["id"] == "q2" and row["answer_segment"] == "" and row["fce_output"] == ""


def test_the_official_csv_has_the_contract_columns(tmp_path):
    path = tmp_path / "out" / "official.csv"
    write_official_csv([two_segment_result(), result("q2", AnswerLabel.CONSISTENT, [])], path)
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
    assert tuple(reader.fieldnames or ()) == OFFICIAL_OUTPUT_COLUMNS
    assert [row["id"] for row in rows] == ["q1", "q1", "q2"] and rows[2]["fce_output"] == "1"


def test_results_round_trip_through_jsonl_and_a_torn_last_line_is_repaired(tmp_path):
    path = tmp_path / "out.jsonl"
    whole = two_segment_result().model_dump_json()
    path.write_text(whole + "\n" + whole[:40], encoding="utf-8")
    assert [r.id for r in read_results(path)] == ["q1"]
    assert path.read_text(encoding="utf-8").endswith(whole[:40])  # reading alone changes nothing
    (loaded,) = read_results(path, repair=True)
    assert path.read_text(encoding="utf-8") == whole + "\n"
    assert loaded.segments[1].logic is not None and loaded.segments[1].logic.failed
    assert loaded.failure_count == 1


def test_a_complete_last_line_without_newline_is_kept_and_terminated_on_repair(tmp_path):
    path = tmp_path / "out.jsonl"
    whole = two_segment_result().model_dump_json()
    path.write_text(whole, encoding="utf-8")
    assert len(read_results(path, repair=True)) == 1
    assert path.read_text(encoding="utf-8") == whole + "\n"


def test_a_bad_line_in_the_middle_of_a_results_file_is_an_error(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text('{"not": "a result"}\n' + two_segment_result().model_dump_json() + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="line 1 is not a ragfacts check result"):
        read_results(path)
