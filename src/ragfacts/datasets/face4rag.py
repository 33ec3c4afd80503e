"""Face4RAG files: the official input CSV, generic JSONL/CSV pairs, results JSONL and the official output CSV.

Official input (L-Face4RAG contract): a CSV with the columns `question, ref, answer, id`.
Generic input: JSONL or CSV with `answer`, `reference` (or `ref`), optional `question` and `id`; a list-valued
reference is joined into one text. Other columns are kept in `CheckItem.meta` (labels, error types, ...).
Every problem is reported with the file and row, before anything is written.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragfacts.datasets.rows import DatasetError, jsonl_objects
from ragfacts.methods.lface4rag import AnswerLabel, CheckItem, CheckResult, StageResult

FACE4RAG_COLUMNS = ("question", "ref", "answer", "id")
OFFICIAL_OUTPUT_COLUMNS = (
    "id",
    "answer_segment",
    "fact_fce_result",
    "label_fact_FCE",
    "logic_fce_result",
    "label_logic_FCE",
    "fce_output",
)
_REFERENCE_COLUMNS = ("reference", "ref")


def load_items(path: Path) -> list[CheckItem]:
    """Load pairs to check from a .jsonl or .csv file (the official Face4RAG CSV included)."""
    return _to_items(_rows(path), path, required=("answer",))


def load_face4rag_csv(path: Path) -> list[CheckItem]:
    """Load the official Face4RAG input CSV; all of `question, ref, answer, id` are required."""
    if path.suffix.lower() != ".csv":
        raise DatasetError(f"{path}: the Face4RAG input is a .csv file with the columns {', '.join(FACE4RAG_COLUMNS)}")
    return _to_items(_rows(path), path, required=FACE4RAG_COLUMNS)


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl"):
        raise DatasetError(f"{path}: unsupported file type {suffix or '(none)'}; use .jsonl or .csv")
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    if suffix == ".csv":
        return _csv_rows(path)
    return _jsonl_rows(path)


def _csv_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # references can exceed the 128 KiB default
    # utf-8-sig: spreadsheet exports of Chinese data start with a byte-order mark
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        if not reader.fieldnames:
            raise DatasetError(f"{path}: the file is empty; expected a header row")
        for number, row in enumerate(reader, start=1):
            if None in row:
                raise DatasetError(f"{path}: row {number} has more fields than the header")
            yield number, {_column(key): value for key, value in row.items()}


def _jsonl_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, row in jsonl_objects(path):
        yield number, {_column(key): value for key, value in row.items()}


def _column(name: str) -> str:
    return name.strip().lower()


def _to_items(rows: Iterable[tuple[int, dict[str, Any]]], path: Path, required: tuple[str, ...]) -> list[CheckItem]:
    items: list[CheckItem] = []
    seen: set[str] = set()
    for number, row in rows:
        missing = [name for name in required if name not in row]
        if not any(name in row for name in _REFERENCE_COLUMNS) and "ref" not in missing:
            missing.append("reference (or ref)")
        if missing:
            raise DatasetError(f"{path}: row {number} has no {', '.join(missing)} column; columns: {', '.join(row)}")
        reference = _text(row.get("reference", row.get("ref")))
        answer = _text(row["answer"])
        for name, value in (("answer", answer), ("reference", reference)):
            if not value.strip():
                raise DatasetError(f"{path}: row {number} has an empty {name}")
        item_id = _text(row.get("id")) or str(number)
        if item_id in seen:
            raise DatasetError(f"{path}: row {number} repeats the id {item_id!r}; ids must be unique to resume a run")
        seen.add(item_id)
        used = {"id", "question", "answer", *_REFERENCE_COLUMNS}
        items.append(
            CheckItem(
                id=item_id,
                question=_text(row.get("question")) or None,
                reference=reference,
                answer=answer,
                meta={key: value for key, value in row.items() if key not in used},
            )
        )
    if not items:
        raise DatasetError(f"{path}: no rows to check")
    return items


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "\n\n".join(_text(part) for part in value)
    return value if isinstance(value, str) else str(value)


def read_results(path: Path, *, repair: bool = False) -> list[CheckResult]:
    """Return the results in a JSONL file; [] if it does not exist.

    A last line torn by an interrupted run (no final newline, not valid) is ignored, and with `repair`
    cut off so that new results can be appended; any other bad line is an error.
    """
    if not path.exists():
        return []
    raw = path.read_bytes()
    *complete, tail = raw.split(b"\n")
    results = [_result(path, number, line) for number, line in enumerate(complete, start=1) if line.strip()]
    if tail.strip():
        try:
            results.append(CheckResult.model_validate_json(tail))
        except ValidationError:
            if repair:
                with path.open("r+b") as handle:
                    handle.truncate(len(raw) - len(tail))
        else:
            if repair:
                with path.open("ab") as handle:
                    handle.write(b"\n")
    return results


def _result(path: Path, number: int, line: bytes) -> CheckResult:
    try:
        return CheckResult.model_validate_json(line)
    except ValidationError as error:
        raise DatasetError(f"{path}: line {number} is not a ragfacts check result; use a new output file") from error


def official_rows(result: CheckResult) -> list[dict[str, str]]:
    """The official Face4RAG output rows of one result: one per segment (one empty row if it has none).

    Labels are "1" (consistent), "0" (inconsistent) or "" (failed, or stage not run); the `*_fce_result`
    columns hold the stage's raw model output, or the failure.
    """
    answer = _label(result.label.value)
    segments = result.segments or [None]
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
    """Write the official Face4RAG output CSV (plus `id`) for `results`, in the order given."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
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
