"""Dataset summaries: % consistent, mean faithfulness, mean recall, with bootstrap 95% intervals.

The rule, stated wherever a summary is shown: every row a method judged is in every denominator. An
unscored answer, and an uncertain one (its probability in the abstain band), counts as not consistent; a row
whose score is missing because its calls failed counts
as 0 (faithfulness, recall), and the summary also gives the mean with those rows counted as 1, so the two
bracket what the failures hide. Rows not judged yet (`--limit`, a run stopped early) are counted apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from ragfacts.methods.base import Kind, Outcome

RULE = (
    "every judged row is in every denominator: unscored and uncertain answers count as not consistent (and pass "
    "no gate); rows whose calls failed or that are uncertain score 0 (the 'if failed = 1' column counts them as "
    "1); intervals: bootstrap 95%, 2,000 resamples"
)
RESAMPLES = 2000
SEED = 20240825


class Estimate(BaseModel):
    """A mean with its bootstrap 95% interval."""

    value: float | None = None
    low: float | None = None
    high: float | None = None
    n: int = 0

    def text(self, percent: bool = False) -> str:
        """e.g. "0.812 [0.700, 0.905]" or, as a percentage, "66.7% [40.0, 90.0]"; "-" when nothing was judged."""
        if self.value is None:
            return "-"
        scale, unit, digits = (100, "%", 1) if percent else (1, "", 3)
        text = f"{scale * self.value:.{digits}f}{unit}"
        if self.low is not None and self.high is not None:
            text += f" [{scale * self.low:.{digits}f}, {scale * self.high:.{digits}f}]"
        return text


class MethodSummary(BaseModel):
    """One method over a dataset."""

    method: str
    kind: Kind
    applicable: int = 0  # items the method can judge
    judged: int = 0  # ... of which have a current result
    consistent: int = 0
    inconsistent: int = 0
    unscored: int = 0
    uncertain: int = 0  # in the abstain band: decided not to decide
    consistent_share: Estimate | None = None  # precision only
    score: Estimate = Estimate()  # mean faithfulness (precision) or recall
    score_if_failed_is_1: float | None = None
    incomplete: int = 0  # rows with failed calls (retried by the next run)
    undecided: int = 0  # precision: unscored rows whose calls failed (a retry may find them consistent)
    failed_calls: int = 0

    @property
    def not_judged(self) -> int:
        return self.applicable - self.judged


def summarise_method(method: str, kind: Kind, applicable: int, outcomes: Sequence[Outcome]) -> MethodSummary:
    """Summarise a method's current outcomes over the items it applies to."""
    summary = MethodSummary(method=method, kind=kind, applicable=applicable, judged=len(outcomes))
    summary.incomplete = sum(not o.complete for o in outcomes)
    summary.failed_calls = sum(o.failures for o in outcomes)
    if kind == "precision":
        summary.consistent = sum(o.label == "consistent" for o in outcomes)
        summary.inconsistent = sum(o.label == "inconsistent" for o in outcomes)
        summary.unscored = sum(o.label == "unscored" for o in outcomes)
        summary.uncertain = sum(o.label == "uncertain" for o in outcomes)
        summary.undecided = sum(o.label == "unscored" and not o.complete for o in outcomes)
        summary.consistent_share = bootstrap_mean([float(o.label == "consistent") for o in outcomes])
    summary.score = bootstrap_mean([o.score if o.score is not None else 0.0 for o in outcomes])
    if outcomes:
        upper = [o.score_upper if o.score_upper is not None else 1.0 for o in outcomes]
        summary.score_if_failed_is_1 = sum(upper) / len(upper)
    return summary


def bootstrap_mean(values: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED) -> Estimate:
    """The mean of `values` with a percentile bootstrap 95% interval (fixed seed: the same data, the same interval)."""
    import numpy as np

    n = len(values)
    if not n:
        return Estimate()
    data = np.asarray(values, dtype=np.float64)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    step = max(1, 250_000 // n)  # bound memory: 250,000 indices drawn at once, 4 MB with their values
    for start in range(0, resamples, step):
        count = min(step, resamples - start)
        means[start : start + count] = data[rng.integers(0, n, size=(count, n))].mean(axis=1)
    low, high = interval_95(means)
    return Estimate(value=float(data.mean()), low=low, high=high, n=n)


def interval_95(draws: Any) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles of a non-empty array of bootstrap draws, as `numpy.percentile` computes them
    (linear interpolation), without its first call's import of `numpy.ma` (13 ms at the end of every run)."""
    import numpy as np

    ordered = np.sort(np.asarray(draws, dtype=np.float64))  # NaN sorts last; numpy gives NaN bounds for it
    if np.isnan(ordered[-1]):
        return float("nan"), float("nan")
    last = len(ordered) - 1
    bounds = []
    for q in (0.025, 0.975):
        at = q * last
        below = int(at)
        above = min(below + 1, last)
        t = at - below
        a, b = float(ordered[below]), float(ordered[above])
        bounds.append(b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t)  # numpy's own interpolation
    return bounds[0], bounds[1]


def row_view(item: dict[str, Any], outcomes: dict[str, Outcome], kinds: dict[str, Kind]) -> dict[str, Any]:
    """One row of `evaluate`'s per-row output: the label, faithfulness, recall and failures of its methods."""
    row: dict[str, Any] = {"id": item.get("id")}
    if item.get("answer_type"):
        row["answer_type"] = item["answer_type"]
    failures = 0
    complete = True
    for method, outcome in outcomes.items():
        failures += outcome.failures
        complete = complete and outcome.complete
        if kinds[method] == "precision":
            row.setdefault("label", outcome.label)
            row.setdefault("faithfulness", outcome.score)
        else:
            row.setdefault("recall", outcome.score)
    row["failures"] = failures
    row["complete"] = complete
    return row
