"""The official Face4RAG output CSV: one row per segment of each checked answer.

Columns `id, answer_segment, fact_fce_result, label_fact_FCE, logic_fce_result, label_logic_FCE, fce_output`.
Labels are "1" (consistent), "0" (inconsistent) or "" (failed, or the stage did not run); `*_fce_result`
holds the stage's raw model output, or the failure.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path

from ragfacts.files import replacing
from ragfacts.methods.lface4rag import AnswerLabel, CheckResult, SegmentResult, StageResult

OFFICIAL_OUTPUT_COLUMNS = (
    "id",
    "answer_segment",
    "fact_fce_result",
    "label_fact_FCE",
    "logic_fce_result",
    "label_logic_FCE",
    "fce_output",
)


def official_rows(result: CheckResult) -> list[dict[str, str]]:
    """The official Face4RAG output rows of one result: one per segment (one empty row if it has none)."""
    answer = _label(result.label.value)
    segments: Sequence[SegmentResult | None] = result.segments or [None]
    rows = []
    for segment in segments:
        row = dict.fromkeys(OFFICIAL_OUTPUT_COLUMNS, "")
        row.update(id=result.id or "", fce_output=answer)
        if segment is not None:
            row.update(answer_segment=segment.text)
            # Under sentence_scores, the score stage stands in for the fact stage of a passing sentence.
            fact = segment.fact if segment.fact is not None and segment.score is None else segment.score
            if fact is not None:
                row.update(fact_fce_result=_raw(fact), label_fact_FCE=_label(fact.verdict))
            if segment.logic is not None:
                row.update(logic_fce_result=_raw(segment.logic), label_logic_FCE=_label(segment.logic.verdict))
        rows.append(row)
    return rows


def write_official_csv(results: Iterable[CheckResult], path: Path) -> None:
    """Write the official Face4RAG output CSV for `results`, in the order given; atomically."""
    with replacing(path, newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=OFFICIAL_OUTPUT_COLUMNS)
        writer.writeheader()
        for result in results:
            writer.writerows(official_rows(result))


def _label(verdict: str | None) -> str:
    return {AnswerLabel.CONSISTENT.value: "1", AnswerLabel.INCONSISTENT.value: "0"}.get(verdict or "", "")


def _raw(stage: StageResult) -> str:
    failure = stage.call.failure
    if failure is not None:
        return f"FAILED ({failure.kind.value}): {failure.message}"
    return stage.call.text or ""
