"""WikiEval loaders: WikiEvalFacts (the FaaF paper's facts and human labels) and WikiEval JSONL rows.

WikiEvalFacts (hub dataset `Vaskatr/WikiEvalFacts`) is one CSV of 50 rows; its `gt_facts` column is a
"- fact" list and the `human_evaluated_facts_*` columns are stringified dicts {fact: "True"/"False"}.
They are parsed with json or ast.literal_eval, never eval. The second context column is spelled
`contetx_v2` in the original; both spellings are accepted.
"""

from __future__ import annotations

import ast
import csv
import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ragfacts.datasets.rows import DatasetError, jsonl_objects
from ragfacts.text import normalise

HUB_REPO = "Vaskatr/WikiEvalFacts"
HUB_FILE = "wikiEval_human_annotated_facts_.csv"
ANSWER_TYPES = ("answer", "ungrounded_answer", "poor_answer")
LABEL_COLUMNS = {kind: f"human_evaluated_facts_{kind}" for kind in ANSWER_TYPES}
FACTS_CSV_REQUIRED = ("question", "gt_facts", "unique_id", *ANSWER_TYPES, *LABEL_COLUMNS.values())
_PREFIXES = {"question": "Question:", "answer": "Answer:"}
_BULLET = re.compile(r"^\s*[-*•]\s+")


class RecallItem(BaseModel):
    """A question, its ground truth or facts, the answers to check for recall, and any human labels."""

    id: str
    question: str | None = None
    ground_truth: str | None = None
    facts: list[str] = Field(default_factory=list)
    answers: dict[str, str] = Field(default_factory=dict)
    labels: dict[str, list[bool | None]] = Field(default_factory=dict)  # answer type -> label per fact
    source: str | None = None
    contexts: dict[str, list[str]] = Field(default_factory=dict)


def load_wikieval_facts(
    path: str | Path | None = None, *, from_hub: bool = False, revision: str | None = None
) -> list[RecallItem]:
    """Load WikiEvalFacts from a local CSV, or from the hub with `from_hub=True` (needs huggingface_hub)."""
    if path is None:
        if not from_hub:
            raise DatasetError(f"give the path to {HUB_FILE}, or pass from_hub=True to download it")
        path = download_wikieval_facts(revision)
    return read_wikieval_facts_csv(Path(path))


def download_wikieval_facts(revision: str | None = None) -> Path:
    """Download the WikiEvalFacts CSV into the hub cache and return its path."""
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as error:
        raise DatasetError(
            "loading WikiEvalFacts from the hub needs huggingface_hub: pip install huggingface_hub "
            f"(or download {HUB_FILE} and pass its path)"
        ) from error
    return Path(hf_hub_download(repo_id=HUB_REPO, filename=HUB_FILE, repo_type="dataset", revision=revision))


def read_wikieval_facts_csv(path: Path) -> list[RecallItem]:
    """Parse the WikiEvalFacts CSV (original column layout); raises DatasetError on bad input."""
    csv.field_size_limit(max(csv.field_size_limit(), 1 << 26))  # contexts are long Wikipedia sections
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.DictReader(handle))
            columns = set(rows[0]) if rows else set()
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise DatasetError(f"{path}: cannot read the CSV: {error}") from error
    if not rows:
        raise DatasetError(f"{path}: no rows")
    missing = [c for c in FACTS_CSV_REQUIRED if c not in columns]
    if missing:
        raise DatasetError(f"{path}: missing column(s) {', '.join(missing)} (is this WikiEvalFacts?)")
    items = []
    for number, row in enumerate(rows, start=2):  # line 1 is the header
        where = f"{path}: row {number} (unique_id {row['unique_id']!r})"
        facts = parse_fact_list(row["gt_facts"], where)
        labels = {kind: align_labels(facts, parse_label_dict(row[LABEL_COLUMNS[kind]], where)) for kind in ANSWER_TYPES}
        contexts = {
            name: _as_text_list(row[column], where)
            for name, column in (
                ("context_v1", "context_v1"),
                ("context_v2", "contetx_v2"),
                ("context_v2", "context_v2"),
            )
            if row.get(column)
        }
        items.append(
            RecallItem(
                id=str(row["unique_id"]),
                question=_strip_prefix(row["question"], "question"),
                ground_truth=_strip_prefix(row["answer"], "answer"),
                facts=facts,
                answers={kind: _strip_prefix(row[kind], kind) for kind in ANSWER_TYPES},
                labels=labels,
                source=row.get("source") or None,
                contexts=contexts,
            )
        )
    return _unique_ids(items)


def load_recall_jsonl(path: str | Path) -> list[RecallItem]:
    """Read JSONL of WikiEval rows (question, answer, ungrounded_answer, poor_answer, ...) or generic rows.

    A generic row has `answer` plus `facts` (a list) or `ground_truth`, and optionally `id`, `question`
    and `labels` (a list of booleans aligned with `facts`). Raises DatasetError naming the line.
    """
    path = Path(path)
    items: list[RecallItem] = []
    for number, row in jsonl_objects(path):
        where = f"{path}: line {number}"
        items.append(wikieval_item(row, number, where) if _is_wikieval(row) else _generic_item(row, number, where))
    if not items:
        raise DatasetError(f"{path}: no rows")
    return _unique_ids(items)


def load_wikieval_jsonl(path: str | Path) -> list[RecallItem]:
    """Read plain WikiEval JSONL rows; facts are left empty, to be generated from `answer`."""
    items = load_recall_jsonl(path)
    if any(set(item.answers) != set(ANSWER_TYPES) for item in items):
        raise DatasetError(f"{path}: every row needs {', '.join(ANSWER_TYPES)}")
    return items


def wikieval_item(row: dict[str, Any], number: int, where: str) -> RecallItem:
    """One WikiEval row: `answer` is the ground truth; all three answer types are checked against its facts."""
    for field in ("question", *ANSWER_TYPES):
        if not isinstance(row.get(field), str) or not row[field].strip():
            raise DatasetError(f"{where}: missing or empty {field!r}")
    facts = row.get("facts")
    if facts is not None and not _is_str_list(facts):
        raise DatasetError(f"{where}: 'facts' must be a list of strings")
    return RecallItem(
        id=_row_id(row, number),
        question=_strip_prefix(row["question"], "question"),
        ground_truth=_strip_prefix(row["answer"], "answer"),
        facts=list(facts or []),
        answers={kind: _strip_prefix(row[kind], kind) for kind in ANSWER_TYPES},
        source=row.get("source"),
        contexts={k: _as_list(row[k]) for k in ("context_v1", "context_v2") if row.get(k)},
    )


def parse_fact_list(text: str, where: str = "gt_facts") -> list[str]:
    """Split a "- fact" list (one per line, or all on one line) or a stringified list into facts."""
    text = (text or "").strip()
    if text.startswith("["):
        facts = _literal(text, where)
        if not _is_str_list(facts):
            raise DatasetError(f"{where}: the fact list must hold strings")
        return [f.strip() for f in facts if f.strip()]
    lines = [line for line in text.splitlines() if line.strip()]
    if sum(bool(_BULLET.match(line)) for line in lines) >= 2:
        facts: list[str] = []
        for line in lines:
            if _BULLET.match(line) or not facts:
                facts.append(_BULLET.sub("", line).strip())
            else:
                facts[-1] = f"{facts[-1]} {line.strip()}"  # a fact wrapped over two lines
    else:
        # All on one line, "- a - b": split only on a dash that starts the text or follows a space.
        facts = [part.strip() for part in re.split(r"(?:^|\s)-\s+", text)]
    return [fact for fact in facts if fact]


def parse_label_dict(text: str, where: str = "labels") -> dict[str, bool | None]:
    """Parse a stringified {fact: "True"/"False"} dict; other values (e.g. "No_response") become None."""
    value = _literal(text, where)
    if not isinstance(value, dict):
        raise DatasetError(f"{where}: human labels must be a dict of fact -> True/False")
    return {str(fact): _as_label(label) for fact, label in value.items()}


def align_labels(facts: list[str], labels: dict[str, bool | None]) -> list[bool | None]:
    """Give each fact its human label: by leniently normalised text, else by position when counts agree."""
    by_text = {normalise(fact): label for fact, label in labels.items()}
    matched = [by_text.get(normalise(fact)) for fact in facts]
    unmatched = sum(normalise(fact) not in by_text for fact in facts)
    if unmatched and len(labels) == len(facts):
        return list(labels.values())  # the original keys were rewritten (dashes, dots, quotes removed)
    return matched


def _literal(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as error:
        raise DatasetError(f"{where}: cannot parse {text[:60]!r}…: {error}") from error


def _as_label(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    folded = str(value).strip().casefold()
    return {"true": True, "false": False}.get(folded)


def _as_text_list(text: str, where: str) -> list[str]:
    stripped = text.strip()
    if stripped.startswith("["):
        value = _literal(stripped, where)
        if _is_str_list(value):
            return value
    return [text]


def _as_list(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _is_wikieval(row: dict[str, Any]) -> bool:
    return "ungrounded_answer" in row or "poor_answer" in row


def _generic_item(row: dict[str, Any], number: int, where: str) -> RecallItem:
    answer = row.get("answer")
    if not isinstance(answer, str) or not answer.strip():
        raise DatasetError(f"{where}: missing or empty 'answer'")
    facts, ground_truth = row.get("facts"), row.get("ground_truth")
    if facts is None and not (isinstance(ground_truth, str) and ground_truth.strip()):
        raise DatasetError(f"{where}: give 'facts' (a list) or 'ground_truth' (a text)")
    if facts is not None and not _is_str_list(facts):
        raise DatasetError(f"{where}: 'facts' must be a list of strings")
    labels = row.get("labels")
    if labels is not None and (facts is None or not isinstance(labels, list) or len(labels) != len(facts)):
        raise DatasetError(f"{where}: 'labels' must be a list with one true/false per fact")
    return RecallItem(
        id=_row_id(row, number),
        question=row.get("question"),
        ground_truth=ground_truth,
        facts=list(facts or []),
        answers={"answer": answer},
        labels={"answer": [_as_label(v) if v is not None else None for v in labels]} if labels is not None else {},
    )


def _row_id(row: dict[str, Any], number: int) -> str:
    for key in ("id", "unique_id", "source"):
        if row.get(key) not in (None, ""):
            return str(row[key])
    return f"line-{number}"


def _strip_prefix(text: str, kind: str) -> str:
    """WikiEval keeps "Question: " and "Answer: " in front of some texts; the model should not see them."""
    text = text.strip()
    prefix = _PREFIXES.get(kind)
    if prefix and text.startswith(prefix):
        return text[len(prefix) :].strip()
    return text


def _unique_ids(items: list[RecallItem]) -> list[RecallItem]:
    seen: dict[str, int] = {}
    for item in items:
        count = seen.get(item.id, 0)
        seen[item.id] = count + 1
        if count:
            item.id = f"{item.id}~{count + 1}"  # e.g. two rows from one Wikipedia article
    return items
