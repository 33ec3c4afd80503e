"""The official Face4RAG output CSV, from check results."""

from __future__ import annotations

import csv

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
from ragfacts.report.official_csv import OFFICIAL_OUTPUT_COLUMNS, official_rows, write_official_csv


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
    assert rows and all(row["id"] == "q1" for row in rows)


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
