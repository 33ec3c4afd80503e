"""Gates: one answer is gated by the rule of dataset summaries, each threshold reported with what it measured."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")

from ragfacts.methods.base import Outcome, create_method
from ragfacts.runs.summary import summarise_method
from ragfacts.service.judging import gate, item_gate

THRESHOLDS = {"min_consistent": 1.0, "min_faithfulness": 0.5}


@pytest.mark.parametrize(
    "outcome",
    [
        Outcome(kind="precision", label="consistent", score=1.0),
        Outcome(kind="precision", label="inconsistent", score=0.5),
        Outcome(kind="precision", label="unscored", score=None, failures=1, complete=False),
        Outcome(kind="precision", label="uncertain", score=None),
    ],
    ids=["consistent", "half-faithful", "unscored", "uncertain"],
)
def test_one_answer_is_gated_as_a_one_row_dataset_would_be(outcome):
    judge = create_method("holistic")
    expected = gate([summarise_method(judge.spec, judge.kind, 1, [outcome])], THRESHOLDS)
    assert item_gate(judge, outcome, THRESHOLDS) == expected
    assert expected.passed is (outcome.label == "consistent")  # neither unscored nor uncertain passes


def test_a_failed_gate_says_how_many_uncertain_answers_it_counted_as_not_consistent():
    from ragfacts.runs.gates import gate_failures, option_name

    outcomes = [Outcome(kind="precision", label=label, score=None) for label in ("consistent", "uncertain")]
    summary = summarise_method("lface4rag", "precision", 2, outcomes)
    assert summary.uncertain == 1 and summary.consistent == 1 and summary.consistent_share.value == 0.5
    assert gate_failures([summary], {"min_consistent": 0.9}, named=option_name) == [
        "gate --min-consistent 0.9 failed: lface4rag measured 0.500 (1 uncertain counted as not consistent)"
    ]


def test_a_threshold_of_another_kind_is_not_checked_and_none_given_means_no_verdict():
    judge = create_method("faaf")
    outcome = Outcome(kind="recall", score=0.25)
    assert item_gate(judge, outcome, THRESHOLDS).model_dump() == {"passed": None, "checks": []}
    verdict = item_gate(judge, outcome, {"min_recall": 0.3})
    assert verdict.passed is False and verdict.checks[0].value == 0.25
    assert verdict.checks[0].message == "gate min_recall 0.3 failed: faaf measured 0.250"
