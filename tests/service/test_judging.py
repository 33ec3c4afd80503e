"""Gates: one answer is gated by the rule of dataset summaries, each threshold reported with what it measured."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")

from ragfacts.bench.summary import summarise_method
from ragfacts.methods.base import Outcome, create_method
from ragfacts.service.judging import gate, item_gate

THRESHOLDS = {"min_consistent": 1.0, "min_faithfulness": 0.5}


@pytest.mark.parametrize(
    "outcome",
    [
        Outcome(kind="precision", label="consistent", score=1.0),
        Outcome(kind="precision", label="inconsistent", score=0.5),
        Outcome(kind="precision", label="unscored", score=None, failures=1, complete=False),
    ],
    ids=["consistent", "half-faithful", "unscored"],
)
def test_one_answer_is_gated_as_a_one_row_dataset_would_be(outcome):
    judge = create_method("holistic")
    expected = gate([summarise_method(judge.spec, judge.kind, 1, [outcome])], THRESHOLDS)
    assert item_gate(judge, outcome, THRESHOLDS) == expected


def test_a_threshold_of_another_kind_is_not_checked_and_none_given_means_no_verdict():
    judge = create_method("faaf")
    outcome = Outcome(kind="recall", score=0.25)
    assert item_gate(judge, outcome, THRESHOLDS).model_dump() == {"passed": None, "checks": []}
    verdict = item_gate(judge, outcome, {"min_recall": 0.3})
    assert verdict.passed is False and verdict.checks[0].value == 0.25
    assert verdict.checks[0].message == "gate min_recall 0.3 failed: faaf measured 0.250"
