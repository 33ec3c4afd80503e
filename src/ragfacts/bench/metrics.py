"""How well a precision method agrees with gold labels: the Face4RAG tables' numbers and more.

Scoring rule, stated under every table: an answer the method left unscored counts as wrong — in accuracy,
in the accuracy of its class, and as not flagged (a miss for an inconsistent answer, not a false alarm for a
consistent one) in the precision, recall and F1 of the inconsistent class. Nothing is dropped: the
denominator is every labelled answer the method judged. An uncertain answer (its probability in the abstain band)
counts as wrong in those figures too; "decided" figures are over the answers that are neither uncertain nor
unscored, beside the share of answers left uncertain.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from ragfacts.runs.summary import RESAMPLES, SEED, Estimate, interval_95
from ragfacts.typology import parse_error_type
from ragfacts.usage import Usage

RULE = (
    "unscored and uncertain answers count as wrong (and as not flagged in P/R/F1 of the inconsistent class); "
    "'decided' figures leave uncertain answers out and give their share; "
    "intervals: bootstrap 95% over answers, 2,000 resamples"
)
PREDICTIONS = ("consistent", "inconsistent", "unscored", "uncertain")


@dataclass(frozen=True)
class Judged:
    """One labelled answer as a method judged it."""

    gold: str  # consistent | inconsistent
    predicted: str  # consistent | inconsistent | unscored | uncertain
    error_type: str | None = None
    source_model: str | None = None
    usage: Usage = field(default_factory=Usage)
    failures: int = 0
    lang: str | None = None
    probability: float | None = None  # the judge's P(faithful) of the answer, where it gives one
    calibrated: bool = False

    @property
    def correct(self) -> bool:
        return self.predicted == self.gold


class Rate(BaseModel):
    """Correct answers out of n."""

    correct: int = 0
    n: int = 0

    @property
    def value(self) -> float | None:
        return self.correct / self.n if self.n else None


class ClassificationMetrics(BaseModel):
    """A precision method against gold labels."""

    method: str
    answers: int = 0
    positives: int = 0
    negatives: int = 0
    accuracy: Estimate = Estimate()
    balanced_accuracy: Estimate = Estimate()
    positive_accuracy: Rate = Rate()  # consistent answers judged consistent
    negative_accuracy: Rate = Rate()  # inconsistent answers judged inconsistent
    precision_inconsistent: float | None = None
    recall_inconsistent: float | None = None
    f1_inconsistent: float | None = None
    confusion: dict[str, dict[str, int]] = {}  # gold -> predicted -> answers
    unscored: int = 0
    uncertain: int = 0  # in the abstain band
    decided_balanced_accuracy: Estimate = Estimate()  # over the answers not uncertain
    decided_by_language: dict[str, Estimate] = {}
    failed_calls: int = 0
    by_error_type: dict[str, Rate] = {}  # inconsistent answers, judged inconsistent
    by_source_model: dict[str, Rate] = {}  # all answers, judged right
    by_language: dict[str, Estimate] = {}  # balanced accuracy of the answers in each language
    usage: Usage = Usage()  # of the results (cached replies cost nothing)
    # Judges that give a probability: its expected calibration error against the gold labels (10 bins), the
    # reliability diagram's bins, and whether every probability was calibrated.
    with_probability: int = 0
    calibration_error: Estimate = Estimate()
    reliability: list[dict[str, Any]] = []
    calibrated: bool = False


def error_type_name(value: str | None) -> str:
    """The Face4RAG code of an error type when it is one ("矛盾错误" -> "KCont."), else the source's own name."""
    if not value:
        return "(none)"
    parsed = parse_error_type(value)
    return parsed.value if parsed is not None else value


def classification_metrics(method: str, judged: Sequence[Judged]) -> ClassificationMetrics:
    """The metrics of one method over its labelled answers."""
    m = ClassificationMetrics(method=method, answers=len(judged))
    if not judged:
        return m
    import numpy as np  # imported when scoring, not when the command line starts

    gold_inconsistent = np.array([j.gold == "inconsistent" for j in judged])
    correct = np.array([j.correct for j in judged])
    m.negatives = int(gold_inconsistent.sum())
    m.positives = len(judged) - m.negatives
    m.accuracy = _bootstrap(correct, gold_inconsistent, _accuracy)
    m.balanced_accuracy = _bootstrap(correct, gold_inconsistent, _balanced_accuracy)
    m.positive_accuracy = Rate(correct=int((correct & ~gold_inconsistent).sum()), n=m.positives)
    m.negative_accuracy = Rate(correct=int((correct & gold_inconsistent).sum()), n=m.negatives)
    flagged = sum(j.predicted == "inconsistent" for j in judged)
    hits = m.negative_accuracy.correct
    m.precision_inconsistent = hits / flagged if flagged else None
    m.recall_inconsistent = hits / m.negatives if m.negatives else None
    p, r = m.precision_inconsistent, m.recall_inconsistent
    # A judge that flags nothing has no precision, but its F1 is 0 (it found none of the inconsistent answers).
    m.f1_inconsistent = None if r is None else (2 * p * r / (p + r) if p and r else 0.0)
    m.unscored = sum(j.predicted == "unscored" for j in judged)
    m.uncertain = sum(j.predicted == "uncertain" for j in judged)
    decided = np.array([j.predicted != "uncertain" for j in judged])
    shown = [p for p in PREDICTIONS if p != "uncertain" or m.uncertain]  # the column only where a band was set
    m.confusion = {
        gold: {pred: sum(j.gold == gold and j.predicted == pred for j in judged) for pred in shown}
        for gold in ("consistent", "inconsistent")
    }
    if m.uncertain and decided.any():
        m.decided_balanced_accuracy = _bootstrap(correct[decided], gold_inconsistent[decided], _balanced_accuracy)
    m.failed_calls = sum(j.failures for j in judged)
    for j in judged:
        if j.gold == "inconsistent":
            rate = m.by_error_type.setdefault(error_type_name(j.error_type), Rate())
            rate.n, rate.correct = rate.n + 1, rate.correct + j.correct
        if j.source_model:
            rate = m.by_source_model.setdefault(j.source_model, Rate())
            rate.n, rate.correct = rate.n + 1, rate.correct + j.correct
    for lang in sorted({j.lang for j in judged if j.lang}):
        chosen = np.array([j.lang == lang for j in judged])
        m.by_language[lang] = _bootstrap(correct[chosen], gold_inconsistent[chosen], _balanced_accuracy)
        if m.uncertain and (chosen & decided).any():
            kept = chosen & decided
            m.decided_by_language[lang] = _bootstrap(correct[kept], gold_inconsistent[kept], _balanced_accuracy)
    m.by_error_type = dict(sorted(m.by_error_type.items()))
    m.by_source_model = dict(sorted(m.by_source_model.items()))
    m.usage = Usage.sum(j.usage for j in judged)
    scored = [j for j in judged if j.probability is not None]
    if scored:
        _calibration(m, scored)
    return m


def _calibration(m: ClassificationMetrics, scored: Sequence[Judged]) -> None:
    """ECE (with a bootstrap interval) and the reliability bins of the answers that have a probability."""
    import numpy as np

    from ragfacts.methods.precision.calibration import expected_calibration_error, reliability

    p = np.array([j.probability for j in scored], dtype=np.float64)
    y = np.array([j.gold == "consistent" for j in scored], dtype=np.float64)
    rng = np.random.default_rng(SEED)
    draws = [
        expected_calibration_error(p[i], y[i]) for i in (rng.integers(0, len(p), len(p)) for _ in range(RESAMPLES))
    ]
    low, high = interval_95(draws)
    value = expected_calibration_error(p, y)
    m.with_probability = len(scored)
    m.calibration_error = Estimate(value=value, low=low, high=high, n=len(scored))
    m.reliability = reliability(p, y)
    m.calibrated = all(j.calibrated for j in scored)


def _accuracy(correct: Any, negative: Any) -> Any:
    return correct.mean(axis=-1)


def _balanced_accuracy(correct: Any, negative: Any) -> Any:
    import numpy as np

    with np.errstate(invalid="ignore", divide="ignore"):
        tnr = (correct & negative).sum(axis=-1) / negative.sum(axis=-1)
        tpr = (correct & ~negative).sum(axis=-1) / (~negative).sum(axis=-1)
    return (tnr + tpr) / 2


Statistic = Callable[[Any, Any], Any]  # (correct, negative) arrays -> values


def _bootstrap(correct: Any, negative: Any, statistic: Statistic) -> Estimate:
    """The statistic with a percentile bootstrap 95% interval; resamples lacking a class are skipped."""
    import numpy as np

    value = float(statistic(correct, negative))
    if np.isnan(value):
        return Estimate(n=len(correct))
    rng = np.random.default_rng(SEED)
    n = len(correct)
    samples: list[np.ndarray] = []
    step = max(1, 2_000_000 // n)
    for start in range(0, RESAMPLES, step):
        index = rng.integers(0, n, size=(min(step, RESAMPLES - start), n))
        samples.append(statistic(correct[index], negative[index]))
    values = np.concatenate(samples)
    values = values[~np.isnan(values)]
    low, high = interval_95(values)
    return Estimate(value=value, low=low, high=high, n=n)
