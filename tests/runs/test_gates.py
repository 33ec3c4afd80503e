"""Gates, declared once: each threshold against the summary of each method of its kind, said the same way by
every surface (the command line names its options, the service its fields)."""

from __future__ import annotations

import pytest

from ragfacts.methods.base import Outcome
from ragfacts.runs.gates import GATES, check_gates, gate_failures, gates_of, option_name
from ragfacts.runs.summary import summarise_method


def precision(label: str, score: float) -> Outcome:
    return Outcome(kind="precision", label=label, score=score, score_upper=score, units=1)


def test_gates_name_the_gate_the_method_and_the_measured_value():
    precision_summary = summarise_method(
        "lface4rag", "precision", 2, [precision("consistent", 1.0), precision("inconsistent", 0.0)]
    )
    recall_summary = summarise_method("faaf", "recall", 1, [Outcome(kind="recall", score=0.9)])
    thresholds = {"min_consistent": 0.8, "min_faithfulness": 0.5, "min_recall": 0.95}
    assert gate_failures([precision_summary, recall_summary], thresholds, named=option_name) == [
        "gate --min-consistent 0.8 failed: lface4rag measured 0.500",
        "gate --min-recall 0.95 failed: faaf measured 0.900",
    ]
    assert gate_failures([precision_summary], {}) == []


def test_a_gate_over_no_judged_row_fails():
    empty = summarise_method("faaf", "recall", 3, [])
    (result,) = check_gates([empty], {"min_recall": 0.1})
    assert not result.passed and result.message() == "gate min_recall 0.1: faaf judged no row"


def test_each_gate_applies_to_its_kind_and_an_unknown_one_is_refused():
    assert gates_of("precision") == ("min_consistent", "min_faithfulness") and gates_of("recall") == ("min_recall",)
    recall_summary = summarise_method("faaf", "recall", 1, [Outcome(kind="recall", score=0.9)])
    assert check_gates([recall_summary], {"min_consistent": 1.0}) == []
    with pytest.raises(ValueError, match="unknown gate min_precision"):
        check_gates([recall_summary], {"min_precision": 1.0})


def test_the_command_line_options_are_the_gates():
    from typer.main import get_command

    from ragfacts.cli import app

    evaluate = get_command(app).commands["evaluate"]  # type: ignore[attr-defined]
    options = {option for param in evaluate.params for option in param.opts}
    assert {option_name(name) for name in GATES} <= options
