"""Precision metrics against gold labels, on a small set whose numbers are computed by hand."""

from __future__ import annotations

import pytest

from ragfacts.bench.metrics import Judged, classification_metrics, error_type_name
from ragfacts.bench.tables import precision_tables, to_markdown
from ragfacts.usage import Usage

# 4 consistent answers: 2 right, 1 flagged (a false alarm), 1 unscored.
# 4 inconsistent answers: KCont. 1 of 2 caught, LCaus. 2 of 2 caught.
JUDGED = [
    Judged("consistent", "consistent", source_model="A", usage=Usage(calls=2, prompt_tokens=100)),
    Judged("consistent", "consistent", source_model="B", usage=Usage(calls=2, prompt_tokens=100)),
    Judged("consistent", "inconsistent", source_model="A", usage=Usage(calls=2, prompt_tokens=100)),
    Judged("consistent", "unscored", source_model="B", usage=Usage(calls=2, failures=1), failures=1),
    Judged("inconsistent", "inconsistent", error_type="KCont.", source_model="A", usage=Usage(calls=2)),
    Judged("inconsistent", "consistent", error_type="矛盾错误", source_model="B", usage=Usage(calls=2)),
    Judged("inconsistent", "inconsistent", error_type="LCaus.", source_model="A", usage=Usage(calls=2)),
    Judged("inconsistent", "inconsistent", error_type="Causal Confusion", source_model="B", usage=Usage(calls=2)),
]


def test_the_metrics_equal_the_hand_computed_values():
    m = classification_metrics("judge", JUDGED)
    assert (m.answers, m.positives, m.negatives, m.unscored, m.failed_calls) == (8, 4, 4, 1, 1)
    assert m.accuracy.value == 5 / 8
    assert (m.positive_accuracy.correct, m.positive_accuracy.n) == (2, 4)
    assert (m.negative_accuracy.correct, m.negative_accuracy.n) == (3, 4)
    assert m.balanced_accuracy.value == pytest.approx((2 / 4 + 3 / 4) / 2)
    assert m.precision_inconsistent == 3 / 4 and m.recall_inconsistent == 3 / 4 and m.f1_inconsistent == 3 / 4
    assert m.confusion == {
        "consistent": {"consistent": 2, "inconsistent": 1, "unscored": 1},
        "inconsistent": {"consistent": 1, "inconsistent": 3, "unscored": 0},
    }
    assert {k: (r.correct, r.n) for k, r in m.by_error_type.items()} == {"KCont.": (1, 2), "LCaus.": (2, 2)}
    assert {k: (r.correct, r.n) for k, r in m.by_source_model.items()} == {"A": (3, 4), "B": (2, 4)}
    assert m.usage.calls == 16 and m.usage.prompt_tokens == 300


def test_a_judge_that_flags_nothing_has_no_precision_and_an_f1_of_0():
    m = classification_metrics("lenient", [Judged(j.gold, "consistent") for j in JUDGED])
    assert (m.precision_inconsistent, m.recall_inconsistent, m.f1_inconsistent) == (None, 0.0, 0.0)


def test_intervals_hold_the_value_and_a_set_without_negatives_has_no_balanced_accuracy():
    m = classification_metrics("judge", JUDGED)
    assert m.accuracy.low < m.accuracy.value < m.accuracy.high
    only_positive = classification_metrics("judge", JUDGED[:2])
    assert only_positive.balanced_accuracy.value is None and only_positive.accuracy.value == 1.0


def test_error_types_are_named_by_their_face4rag_code_or_kept_as_given():
    assert error_type_name("Causal Confusion") == "LCaus." and error_type_name("Unwanted.Intrinsic") == (
        "Unwanted.Intrinsic"
    )
    assert error_type_name(None) == "(none)"


def test_the_tables_carry_the_hand_computed_numbers_and_their_rule():
    markdown = to_markdown(precision_tables([classification_metrics("judge", JUDGED)]))
    assert "| method | Total | Pos. (n=4) | KCont. (n=2) | LCaus. (n=2) |" in markdown
    assert "| judge | 62.5 | 50.0 | 50.0 | 100.0 |" in markdown
    assert "| judge | 62.5 | 75.0 | 50.0 |" in markdown  # Table 4: Total, A, B
    assert "| -Negative | 75.0 |" in markdown
    assert "| judge | consistent | 2 | 1 | 1 |" in markdown
    assert "| judge | 2.0 | 38 | 0 | 0 | 0.0 |" in markdown  # cost per answer
    assert "unscored and uncertain answers count as wrong" in markdown


def test_balanced_accuracy_is_given_per_language_and_tabulated_when_there_are_several():
    judged = [
        Judged("consistent", "consistent", lang="en"),
        Judged("inconsistent", "consistent", lang="en"),  # en: 1/1 positives, 0/1 negatives -> 0.5
        Judged("consistent", "consistent", lang="zh"),
        Judged("inconsistent", "inconsistent", lang="zh"),  # zh: 1.0
        Judged("inconsistent", "inconsistent", lang="zh"),
    ]
    m = classification_metrics("judge", judged)
    assert {lang: (e.value, e.n) for lang, e in m.by_language.items()} == {"en": (0.5, 2), "zh": (1.0, 3)}
    markdown = to_markdown(precision_tables([m]))
    assert "Balanced accuracy by language" in markdown and "zh (n=3)" in markdown
    single = classification_metrics("judge", [j for j in judged if j.lang == "zh"])
    assert "by language" not in to_markdown(precision_tables([single]))


def test_an_items_language_is_its_lang_column_else_detected_from_the_answer():
    from ragfacts.bench.scoring import item_language
    from ragfacts.items import Item

    assert item_language(Item(answer="长城很长。", meta={"lang": "en"})) == "en"
    assert item_language(Item(answer="长城很长。")) == "zh"
    assert item_language(Item(answer="The wall is long.")) == "en"


def test_uncertain_answers_count_as_wrong_overall_and_are_left_out_of_the_decided_figures():
    judged = [
        Judged("consistent", "consistent", lang="en", probability=0.9, calibrated=True),
        Judged("consistent", "uncertain", lang="en", probability=0.5, calibrated=True),
        Judged("inconsistent", "inconsistent", lang="en", probability=0.1, calibrated=True),
        Judged("inconsistent", "uncertain", lang="en", probability=0.45, calibrated=True),
    ]
    m = classification_metrics("banded", judged)
    assert m.uncertain == 2 and m.balanced_accuracy.value == 0.5  # each class: 1 right, 1 uncertain (wrong)
    assert m.decided_balanced_accuracy.value == 1.0 and m.decided_by_language["en"].value == 1.0
    assert m.confusion["consistent"] == {"consistent": 1, "inconsistent": 0, "unscored": 0, "uncertain": 1}
    # ECE by hand: bins 0.1 (0 vs 0.1), 0.4-0.5 (0 vs 0.45), 0.5-0.6 (1 vs 0.5), 0.9 (1 vs 0.9), a quarter each
    assert m.calibration_error.value == pytest.approx((0.1 + 0.45 + 0.5 + 0.1) / 4)
    assert m.with_probability == 4 and m.calibrated
    markdown = to_markdown(precision_tables([m]))
    assert "| banded | 2 (50.0) | 50.0" in markdown  # the abstain table: uncertain, BA with them wrong
    assert "| banded | consistent | 1 | 0 | 0 | 1 |" in markdown  # the confusion's uncertain column
    assert "| banded | 4 | yes | 0.287" in markdown  # calibration: answers with a probability, calibrated, ECE
