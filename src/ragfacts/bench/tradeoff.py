"""What a cascade buys: for a few abstain bands, the share escalated, the balanced accuracy and the cost per answer.

`ragfacts bench --escalate-to MODEL` runs each probability judge with the band [0, 1), so that every labelled
answer has both verdicts (the first judge's, with its probability, and the second's) and the cost of each. Any
band's cascade is then exact arithmetic on those results: an answer whose probability falls in the band takes
the second verdict and costs both judges, the others keep the first verdict and cost the first judge alone.
The rows "first judge alone" and "second judge alone" are the two ends.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from ragfacts.bench.metrics import Judged, classification_metrics
from ragfacts.bench.tables import TableData
from ragfacts.items import Item
from ragfacts.runs.summary import Estimate
from ragfacts.usage import Usage

BANDS: tuple[tuple[float, float], ...] = ((0.45, 0.55), (0.4, 0.6), (0.3, 0.7), (0.2, 0.8))


class TradeOffRow(BaseModel):
    """One way of judging the labelled answers."""

    judging: str
    band: tuple[float, float] | None = None
    escalated: float = 0.0  # share of answers the second judge saw
    balanced_accuracy: Estimate = Estimate()
    calls_per_answer: float = 0.0
    tokens_per_answer: float = 0.0


class TradeOff(BaseModel):
    method: str
    answers: int
    rows: list[TradeOffRow]


def cascade_tradeoff(method: str, judged: Iterable[tuple[Item, dict[str, Any]]]) -> TradeOff | None:
    """The trade-off of one cascade's results (its lines), over the items with a gold label."""
    entries = []
    for item, line in judged:
        result = line.get("result") or {}
        if item.label is None or "first_outcome" not in result:
            continue
        holistic = (result.get("first") or {}).get("holistic") or {}
        second = result.get("second_outcome") or {}
        entries.append(
            {
                "gold": item.label,
                "probability": holistic.get("probability"),
                "first": holistic.get("verdict") or "unscored",
                "second": second.get("label") or "unscored",
                "first_usage": Usage.model_validate(result["first_outcome"]["usage"]),
                "second_usage": Usage.model_validate(second.get("usage") or {}),
                "has_second": bool(second),
            }
        )
    if not entries:
        return None
    rows = [_row("first judge alone", entries, lambda e: False, second_only=False)]
    for band in BANDS:
        low, high = band
        row = _row(
            f"cascade, band [{low:.2f}, {high:.2f})",
            entries,
            lambda e, low=low, high=high: e["probability"] is not None and low <= e["probability"] < high,
            second_only=False,
        )
        row.band = band
        rows.append(row)
    rows.append(_row("second judge alone", entries, lambda e: True, second_only=True))
    return TradeOff(method=method, answers=len(entries), rows=rows)


def _row(name: str, entries: list[dict[str, Any]], escalate: Any, *, second_only: bool) -> TradeOffRow:
    judged, usage, escalated = [], [], 0
    for e in entries:
        up = escalate(e) and e["has_second"]
        escalated += up
        judged.append(Judged(gold=e["gold"], predicted=e["second"] if up else e["first"]))
        parts = [e["second_usage"]] if second_only else [e["first_usage"], *([e["second_usage"]] if up else [])]
        usage.append(Usage.sum(parts))
    total = Usage.sum(usage)
    n = len(entries)
    return TradeOffRow(
        judging=name,
        escalated=escalated / n,
        balanced_accuracy=classification_metrics(name, judged).balanced_accuracy,
        calls_per_answer=total.calls / n,
        tokens_per_answer=total.tokens / n,
    )


def tradeoff_table(tradeoff: TradeOff) -> TableData:
    table = TableData(
        f"Cascade trade-off: {tradeoff.method} ({tradeoff.answers} labelled answers)",
        ["judging", "escalated", "balanced accuracy", "calls / answer", "tokens / answer"],
        note="an answer whose first-judge P(faithful) is in the band takes the second judge's verdict and costs "
        "both; computed from one run in which every answer has both verdicts; intervals: bootstrap 95%",
    )
    for row in tradeoff.rows:
        ba = row.balanced_accuracy
        cell = (
            "-" if ba.value is None else f"{100 * ba.value:.1f} [{100 * (ba.low or 0):.1f}, {100 * (ba.high or 0):.1f}]"
        )
        table.rows.append(
            [row.judging, f"{row.escalated:.0%}", cell, f"{row.calls_per_answer:.2f}", f"{row.tokens_per_answer:,.0f}"]
        )
    return table
