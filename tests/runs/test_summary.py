"""Summaries: every judged row in every denominator, bootstrap intervals, gates that name what failed."""

from __future__ import annotations

import pytest

from ragfacts.methods.base import Outcome
from ragfacts.runs.summary import bootstrap_mean, interval_95, row_view, summarise_method


def precision(label: str, score: float | None, upper: float | None = None, failures: int = 0) -> Outcome:
    complete = failures == 0 and label != "unscored"
    return Outcome(kind="precision", label=label, score=score, score_upper=upper, failures=failures, complete=complete)


def test_the_bootstrap_interval_holds_the_mean_and_is_the_same_every_time():
    values = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0]
    estimate = bootstrap_mean(values)
    assert estimate.value == 0.75 and estimate.n == 8
    assert estimate.low is not None and estimate.high is not None
    assert 0.3 < estimate.low < 0.75 < estimate.high <= 1.0
    assert bootstrap_mean(values) == estimate
    assert bootstrap_mean([1.0] * 5).model_dump() == {"value": 1.0, "low": 1.0, "high": 1.0, "n": 5}
    assert bootstrap_mean([]).value is None


@pytest.mark.parametrize("size", [1, 2, 3, 7, 40, 1999, 2000])
def test_the_interval_is_numpys_2_5th_and_97_5th_percentile_to_the_last_bit(size):
    import numpy as np

    rng = np.random.default_rng(size)
    for _ in range(20):
        for draws in (rng.random(size), np.round(rng.random(size), 1), rng.random(size) * 1e6):
            assert interval_95(draws) == tuple(np.percentile(draws, [2.5, 97.5]))
    with_nan = np.append(rng.random(size), np.nan)
    assert all(np.isnan(bound) for bound in (*interval_95(with_nan), *np.percentile(with_nan, [2.5, 97.5])))


def test_unscored_answers_count_as_not_consistent_and_failed_scores_as_zero():
    outcomes = [
        precision("consistent", 1.0, 1.0),
        precision("inconsistent", 0.5, 0.5),
        precision("unscored", None, None, failures=1),
        precision("unscored", 0.5, 1.0, failures=1),
    ]
    summary = summarise_method("lface4rag", "precision", applicable=5, outcomes=outcomes)
    assert (summary.judged, summary.not_judged, summary.unscored, summary.incomplete) == (4, 1, 2, 2)
    assert summary.consistent_share is not None and summary.consistent_share.value == 0.25
    assert summary.score.value == pytest.approx((1 + 0.5 + 0 + 0.5) / 4)
    assert summary.score_if_failed_is_1 == pytest.approx((1 + 0.5 + 1 + 1) / 4)
    assert summary.failed_calls == 2


def test_a_row_view_joins_precision_and_recall():
    row = row_view(
        {"id": "r1", "answer_type": "poor_answer"},
        {"lface4rag": precision("inconsistent", 0.5), "faaf": Outcome(kind="recall", score=0.25, failures=1)},
        {"lface4rag": "precision", "faaf": "recall"},
    )
    assert row == {
        "id": "r1",
        "answer_type": "poor_answer",
        "label": "inconsistent",
        "faithfulness": 0.5,
        "recall": 0.25,
        "failures": 1,
        "complete": True,
    }
