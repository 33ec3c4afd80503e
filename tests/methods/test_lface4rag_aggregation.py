"""Aggregation truth tables (§4.2) and quote verification: pure functions, no model involved."""

from __future__ import annotations

import pytest

from ragfacts.methods.lface4rag import AnswerLabel, CallRecord, FactResult, LogicResult, SegmentResult, verify_quote
from ragfacts.methods.precision.aggregate import answer_label, segment_label
from ragfacts.models import Failure, FailureKind

OK, BAD, FAILED = "consistent", "inconsistent", "failed"
PASS, FAIL, UNSCORED = AnswerLabel.CONSISTENT, AnswerLabel.INCONSISTENT, AnswerLabel.UNSCORED


def stage(kind: type[FactResult] | type[LogicResult], outcome: str) -> FactResult | LogicResult:
    if outcome == FAILED:
        failure = Failure(kind=FailureKind.INVALID_OUTPUT, message="not JSON")
        return kind(call=CallRecord(stage="s", failure=failure))
    return kind(verdict=outcome, call=CallRecord(stage="s"))


def segment(index: int, fact: str, logic: str | None) -> SegmentResult:
    fact_result = stage(FactResult, fact)
    logic_result = stage(LogicResult, logic) if logic is not None else None
    stages = [fact_result] if logic_result is None else [fact_result, logic_result]
    return SegmentResult(
        index=index, text=f"s{index}", fact=fact_result, logic=logic_result, label=segment_label(stages)
    )


@pytest.mark.parametrize(
    ("fact", "logic", "expected"),
    [
        (OK, OK, PASS),
        (BAD, OK, FAIL),
        (OK, BAD, FAIL),
        (BAD, BAD, FAIL),
        (FAILED, OK, UNSCORED),
        (OK, FAILED, UNSCORED),
        (FAILED, FAILED, UNSCORED),
        (FAILED, BAD, FAIL),
        (BAD, FAILED, FAIL),
        (OK, None, PASS),
        (BAD, None, FAIL),
        (FAILED, None, UNSCORED),
    ],
)
def test_a_segment_passes_only_if_both_stages_pass_and_a_failure_is_never_a_pass(fact, logic, expected):
    assert segment(0, fact, logic).label is expected


@pytest.mark.parametrize(
    ("segments", "expected"),
    [
        ([(OK, OK), (OK, OK)], PASS),
        ([(OK, OK), (OK, BAD)], FAIL),
        ([(BAD, OK), (OK, OK)], FAIL),
        ([(OK, OK), (FAILED, OK)], UNSCORED),
        ([(FAILED, OK), (OK, BAD)], FAIL),
        ([(FAILED, FAILED)], UNSCORED),
    ],
)
def test_an_answer_is_consistent_iff_every_segment_is(segments, expected):
    label, _ = answer_label([segment(i, fact, logic) for i, (fact, logic) in enumerate(segments)])
    assert label is expected


def test_an_unscored_answer_says_why():
    label, reason = answer_label([segment(0, OK, OK), segment(1, FAILED, OK)])
    assert label is UNSCORED
    assert reason == "1 stage call(s) failed and no segment is inconsistent (first: invalid_output: not JSON)"


def test_an_inconsistent_answer_still_counts_its_failures():
    label, reason = answer_label([segment(0, FAILED, OK), segment(1, OK, BAD)])
    assert label is FAIL and reason == "1 of 2 segment(s) inconsistent; 1 stage call(s) failed"


def test_an_answer_without_segments_is_unscored():
    assert answer_label([])[0] is UNSCORED


REFERENCE = (
    "长城始建于春秋战国时期。明朝对长城进行了大规模修缮，因此今天看到的多为明长城。 Tea, brewed at 80 °C, tastes sweet."
)


@pytest.mark.parametrize(
    ("quote", "match"),
    [
        ("明朝对长城进行了大规模修缮", "exact"),
        ("明朝对长城进行了大规模修缮,因此今天看到的多为明长城", "normalised"),
        ("tea brewed at 80 °C tastes sweet", "normalised"),
        ("长城始建于春秋战国时期 … 今天看到的多为明长城", "exact"),
        ("长城始建于春秋战国时期...今天看到的多为明长城。", "exact"),
        ("长城始建于春秋战国时期……明朝修建了全部长城", "not_found"),
        ("长城始建于秦朝", "not_found"),
    ],
)
def test_quotes_are_found_exactly_after_normalisation_or_not_at_all(quote, match):
    found = verify_quote(quote, REFERENCE)
    assert found is not None and found.match == match and found.verified is (match != "not_found")


@pytest.mark.parametrize("quote", ["", "   ", " … "])
def test_an_empty_quote_means_no_passage_was_claimed(quote):
    assert verify_quote(quote, REFERENCE) is None
