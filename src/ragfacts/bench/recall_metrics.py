"""Recall-side metrics as the FaaF paper defines them, per method and answer type.

Error rate (ER): verdicts that differ from the human label, over facts that have both a label and a
verdict — the paper leaves facts without a verdict (N/A) out of ER and reports their count instead.
F1micro (after FActScore): precision and recall of the *False* class (unsupported facts); 0 when
undefined, as in the paper (e.g. F1m = 0 when humans judged every fact True). We also report ER with
unscored facts counted as errors, so failures never improve a score.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel

from ragfacts.methods.verdicts import Verification

Labels = Sequence[bool | None]


def error_rate(labels: Labels, predictions: Sequence[bool | None]) -> float | None:
    """Share of wrong verdicts among facts with a label and a verdict; None when there are none."""
    pairs = _scored_pairs(labels, predictions)
    if not pairs:
        return None
    return sum(label != predicted for label, predicted in pairs) / len(pairs)


def false_class_scores(labels: Labels, predictions: Sequence[bool | None]) -> tuple[float, float, float]:
    """Return (precision, recall, F1micro) of predicting False, each 0 when its denominator is 0."""
    pairs = _scored_pairs(labels, predictions)
    hits = sum(not label and not predicted for label, predicted in pairs)
    predicted_false = sum(not predicted for _, predicted in pairs)
    gold_false = sum(not label for label, _ in pairs)
    precision = hits / predicted_false if predicted_false else 0.0
    recall = hits / gold_false if gold_false else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


class RecallMetrics(BaseModel):
    """One row of the paper's Tables 2 and 3, plus the counts that make it honest."""

    method: str
    answer_type: str
    answers: int = 0
    facts: int = 0
    judged_true: int = 0
    judged_false: int = 0
    na: int = 0  # the paper's N/A: facts without a verdict (failed calls included)
    failed: int = 0  # ... of which the call failed
    failed_calls: int = 0
    labelled: int = 0
    scored: int = 0  # labelled facts with a verdict: the ER and F1m denominator
    gold_false: int = 0
    errors: int = 0
    error_rate: float | None = None
    error_rate_unscored_as_errors: float | None = None
    precision_false: float | None = None
    recall_false: float | None = None
    f1_micro: float | None = None
    true_fraction: float | None = None  # facts judged True over all facts
    mean_recall: float | None = None  # mean of the per-answer recall
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


def recall_metrics(
    method: str, answer_type: str, results: Iterable[tuple[Verification, Labels | None]]
) -> RecallMetrics:
    """Aggregate verifications (each with human labels aligned to its facts, or None) into one row."""
    row = RecallMetrics(method=method, answer_type=answer_type)
    all_labels: list[bool | None] = []
    all_predictions: list[bool | None] = []
    recalls: list[float] = []
    for verification, labels in results:
        predictions = [v.verdict for v in verification.verdicts]
        if labels is None:
            labels = [None] * len(predictions)
        if len(labels) != len(predictions):
            raise ValueError(f"{len(labels)} labels for {len(predictions)} facts in a {method} result")
        all_labels.extend(labels)
        all_predictions.extend(predictions)
        row.answers += 1
        row.failed += verification.n_failed
        row.failed_calls += sum(c.get("failure") is not None for c in verification.completions)
        usage = verification.usage
        row.calls += usage.calls
        row.prompt_tokens += usage.prompt_tokens
        row.completion_tokens += usage.completion_tokens
        if verification.recall is not None:
            recalls.append(verification.recall)
    row.facts = len(all_predictions)
    row.judged_true = sum(p is True for p in all_predictions)
    row.judged_false = sum(p is False for p in all_predictions)
    row.na = sum(p is None for p in all_predictions)
    row.labelled = sum(label is not None for label in all_labels)
    pairs = _scored_pairs(all_labels, all_predictions)
    row.scored = len(pairs)
    row.gold_false = sum(not label for label, _ in pairs)
    row.errors = sum(label != predicted for label, predicted in pairs)
    row.true_fraction = row.judged_true / row.facts if row.facts else None
    row.mean_recall = sum(recalls) / len(recalls) if recalls else None
    if row.labelled:
        row.error_rate = error_rate(all_labels, all_predictions)
        unscored = row.labelled - row.scored
        row.error_rate_unscored_as_errors = (row.errors + unscored) / row.labelled
        row.precision_false, row.recall_false, row.f1_micro = false_class_scores(all_labels, all_predictions)
    return row


def metrics_table(rows: Sequence[RecallMetrics]) -> str:
    """Render rows as a markdown table (percentages for rates, counts as `n/total`)."""
    header = (
        "| method | answer type | N/A | failed calls | ER % | ER % (unscored = error) | F1m % "
        "| judged True % | mean recall % | calls | prompt tok | completion tok |"
    )
    lines = [header, "|" + "---|" * 12]
    for r in rows:
        cells = [
            r.method,
            r.answer_type,
            f"{r.na}/{r.facts}",
            str(r.failed_calls),
            _percent(r.error_rate),
            _percent(r.error_rate_unscored_as_errors),
            _percent(r.f1_micro),
            _percent(r.true_fraction),
            _percent(r.mean_recall),
            str(r.calls),
            str(r.prompt_tokens),
            str(r.completion_tokens),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _scored_pairs(labels: Labels, predictions: Sequence[bool | None]) -> list[tuple[bool, bool]]:
    if len(labels) != len(predictions):
        raise ValueError(f"{len(labels)} labels for {len(predictions)} predictions")
    return [
        (label, pred) for label, pred in zip(labels, predictions, strict=True) if label is not None and pred is not None
    ]


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"
