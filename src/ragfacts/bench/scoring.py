"""Judges against gold labels: a run's current results, scored per method, tabulated, written to the run.

Precision methods are scored on items with a gold `label`; recall methods per answer type, against human
fact labels where the item has them (WikiEvalFacts), else with True-rates only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ragfacts.bench.metrics import ClassificationMetrics, Judged, classification_metrics
from ragfacts.bench.recall_metrics import RecallMetrics, recall_metrics
from ragfacts.bench.tables import TableData, precision_tables, recall_tables, to_markdown
from ragfacts.bench.tradeoff import TradeOff, tradeoff_table
from ragfacts.items import Item
from ragfacts.methods.verdicts import Verification
from ragfacts.runs.rundir import RunDir
from ragfacts.text import detect_lang
from ragfacts.usage import Usage

TABLES_FILE = "tables.md"
METRICS_FILE = "metrics.json"


def score(
    kinds: Mapping[str, str], judged_items: Iterable[tuple[Item, dict[str, dict[str, Any]]]]
) -> tuple[list[ClassificationMetrics], list[RecallMetrics]]:
    """The metrics of each method (`kinds`: method -> precision | recall) over items with their results lines."""
    judged: dict[str, list[Judged]] = {spec: [] for spec, kind in kinds.items() if kind == "precision"}
    verified: dict[tuple[str, str], list[tuple[Verification, list[bool | None] | None]]] = {}
    for item, lines in judged_items:
        for method, line in lines.items():
            outcome = line["outcome"]
            if kinds[method] == "precision":
                if item.label is not None:
                    judged[method].append(
                        Judged(
                            gold=item.label,
                            predicted=outcome["label"],
                            error_type=item.error_type,
                            source_model=item.source_model,
                            usage=Usage.model_validate(outcome["usage"]),
                            failures=outcome["failures"],
                            lang=item_language(item),
                            **answer_probability(line["result"]),
                        )
                    )
                continue
            verification = Verification.model_validate(line["result"]["verification"])
            labels = item.fact_labels if item.facts and item.fact_labels is not None else None
            if labels is not None and len(labels) != len(verification.verdicts):
                labels = None
            verified.setdefault((method, item.answer_type or "answer"), []).append((verification, labels))
    precision = [classification_metrics(method, rows) for method, rows in judged.items() if rows]
    recall = [recall_metrics(method, kind, pairs) for (method, kind), pairs in verified.items()]
    return precision, recall


def answer_probability(result: dict[str, Any]) -> dict[str, Any]:
    """The P(faithful) a result gives its answer (a cascade's: its first judge's), and whether it is calibrated."""
    holistic = (result.get("first") if "first_outcome" in result else result) or {}
    holistic = holistic.get("holistic") or {}
    if holistic.get("probability") is None:
        return {}
    return {"probability": holistic["probability"], "calibrated": bool(holistic.get("calibrated"))}


def item_language(item: Item) -> str:
    """The answer's language: the row's own `lang` column where it has one, else detected from the answer."""
    given = (item.meta or {}).get("lang")
    return given if isinstance(given, str) and given else detect_lang(item.answer)


def bench_tables(precision: list[ClassificationMetrics], recall: list[RecallMetrics]) -> list[TableData]:
    return [*precision_tables(precision), *recall_tables(recall)]


def write_scores(
    run_dir: RunDir,
    precision: list[ClassificationMetrics],
    recall: list[RecallMetrics],
    header: str,
    tradeoffs: list[TradeOff] | None = None,
) -> dict[str, Any]:
    """Write tables.md and metrics.json into the run directory; return the metrics as JSON data."""
    data: dict[str, Any] = {
        "precision": [m.model_dump() for m in precision],
        "recall": [m.model_dump() for m in recall],
    }
    if tradeoffs:
        data["cascade_tradeoff"] = [t.model_dump() for t in tradeoffs]
    folder = run_dir.manifest.parent
    prefix = "" if run_dir.results.name == "results.jsonl" else run_dir.results.name + "."
    (folder / f"{prefix}{TABLES_FILE}").write_text(
        header + "\n\n" + to_markdown([*bench_tables(precision, recall), *map(tradeoff_table, tradeoffs or [])]),
        "utf-8",
    )
    (folder / f"{prefix}{METRICS_FILE}").write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", "utf-8")
    return data
