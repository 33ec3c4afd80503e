"""Recall metrics as the FaaF paper defines them, checked against hand computation."""

from __future__ import annotations

import pytest

from ragfacts.bench.recall_metrics import error_rate, false_class_scores, metrics_table, recall_metrics
from ragfacts.methods.verdicts import FactVerdict, Verification

T, F, N = True, False, None


def verification(predictions: list[bool | None], *, failed: set[int] = frozenset(), calls: int = 1) -> Verification:
    """A verification as a method would return it: verdicts plus one completion record per call."""
    verdicts = [
        FactVerdict(
            index=i,
            fact=f"fact {i}",
            verdict=p,
            raw=None if p is None else str(p),
            unscored=("failed" if i in failed else "no_verdict") if p is None else None,
        )
        for i, p in enumerate(predictions)
    ]
    records = [
        {"usage": {"calls": 1, "prompt_tokens": 100, "completion_tokens": 10}, "failure": None} for _ in range(calls)
    ]
    if failed:
        records[-1]["failure"] = {"kind": "request", "message": "HTTP 400"}
    return Verification(method="faaf-tfn", lang="en", verdicts=verdicts, completions=records)


def test_error_rate_leaves_out_facts_without_a_verdict_or_label():
    labels = [T, T, F, F, F, N]
    predictions = [T, F, F, T, N, F]
    # scored pairs: (T,T) (T,F) (F,F) (F,T) -> 2 errors out of 4
    assert error_rate(labels, predictions) == 0.5


def test_f1_micro_is_computed_on_the_false_class():
    labels = [T, T, F, F, F, F]
    predictions = [T, F, F, F, T, T]
    # predicted False: indices 1,2,3 (2 correct) -> P = 2/3; gold False: 2,3,4,5 (2 found) -> R = 1/2
    precision, recall, f1 = false_class_scores(labels, predictions)
    assert precision == pytest.approx(2 / 3)
    assert recall == pytest.approx(1 / 2)
    assert f1 == pytest.approx(2 * (2 / 3) * (1 / 2) / (2 / 3 + 1 / 2))


def test_f1_micro_is_zero_when_humans_found_no_false_fact_as_in_the_paper():
    assert false_class_scores([T, T, T], [T, F, T]) == (0.0, 0.0, 0.0)


def test_error_rate_is_none_without_any_scored_fact():
    assert error_rate([T, None], [None, T]) is None


def test_mismatched_lengths_are_an_error():
    with pytest.raises(ValueError, match="labels"):
        error_rate([T], [T, F])


def test_recall_metrics_aggregate_answers_and_count_failures():
    first = verification([T, F, N], calls=1)  # fact 2: no verdict in the reply
    second = verification([N, N, T], failed={0, 1}, calls=2)  # one of two calls failed
    labels_first = [T, T, F]
    labels_second = [F, T, T]
    row = recall_metrics("faaf-tfn", "poor_answer", [(first, labels_first), (second, labels_second)])
    assert (row.answers, row.facts, row.judged_true, row.judged_false) == (2, 6, 2, 1)
    assert (row.na, row.failed, row.failed_calls) == (3, 2, 1)
    assert (row.labelled, row.scored, row.errors, row.gold_false) == (6, 3, 1, 0)
    assert row.error_rate == pytest.approx(1 / 3)
    assert row.error_rate_unscored_as_errors == pytest.approx(4 / 6)
    assert row.f1_micro == 0.0  # the only scored False prediction was wrong and no scored gold False exists
    assert row.true_fraction == pytest.approx(2 / 6)
    assert row.mean_recall == pytest.approx((1 / 3 + 1 / 3) / 2)
    assert (row.calls, row.prompt_tokens, row.completion_tokens) == (3, 300, 30)


def test_recall_metrics_without_labels_still_report_recall_and_cost():
    row = recall_metrics("prompt-tf", "answer", [(verification([T, T, F, N]), None)])
    assert row.error_rate is None and row.f1_micro is None and row.labelled == 0
    assert row.true_fraction == 0.5 and row.na == 1 and row.calls == 1


def test_recall_metrics_reject_labels_that_do_not_match_the_facts():
    with pytest.raises(ValueError, match="2 labels for 3 facts"):
        recall_metrics("faaf-tf", "answer", [(verification([T, T, T]), [T, T])])


def test_metrics_table_shows_na_as_a_count_and_rates_as_percentages():
    row = recall_metrics("faaf-tfn", "answer", [(verification([T, F, N]), [T, T, T])])
    table = metrics_table([row])
    assert "| faaf-tfn | answer | 1/3 |" in table
    assert "| 50.0 |" in table  # ER: one error in two scored facts
