"""Edits are applied by code at the span the model names, so the recorded span is exactly what changed."""

from __future__ import annotations

import pytest

from ragfacts.synth.edits import EditError, Span, apply_edit, rewording_differs

ANSWER = "The Nile flows north into the Mediterranean Sea."


def test_an_edit_replaces_the_named_span_and_records_where():
    edited, span = apply_edit(ANSWER, "north", "south")
    assert edited == "The Nile flows south into the Mediterranean Sea."
    assert span == Span(original="north", replacement="south", start=15)
    assert ANSWER[span.start : span.start + len(span.original)] == span.original


def test_a_span_with_other_spacing_is_found_and_recorded_as_the_answer_writes_it():
    edited, span = apply_edit("The Nile  flows\nnorth.", "Nile flows north", "Nile flows south")
    assert edited == "The Nile flows south."
    assert span.original == "Nile  flows\nnorth" and span.start == 4


def test_a_span_in_chinese_is_replaced_verbatim():
    edited, span = apply_edit("尼罗河向北流，注入地中海。", "向北", "向南")
    assert edited == "尼罗河向南流，注入地中海。" and span.start == 3


@pytest.mark.parametrize(
    ("original", "replacement", "why"),
    [
        ("flows east", "flows west", "not in the answer"),
        ("", "south", "no text to change"),
        ("north into", "north  into", "changes nothing"),
        ("Sea.", "Sea!", "changes nothing"),
    ],
)
def test_an_edit_that_cannot_be_applied_says_why(original, replacement, why):
    with pytest.raises(EditError, match=why):
        apply_edit(ANSWER, original, replacement)


def test_a_rewording_must_differ_in_more_than_punctuation_and_case():
    assert rewording_differs(ANSWER, "The Nile runs northward to the Mediterranean.")
    assert not rewording_differs(ANSWER, "the nile flows north into the mediterranean sea")
    assert not rewording_differs(ANSWER, "  ")


def test_a_span_copied_with_other_quotes_or_half_width_punctuation_is_found_as_the_answer_writes_it():
    edited, span = apply_edit('Two films are titled "Veeram" (Valour).', "titled 'Veeram'", "titled 'Veera'")
    assert span.original == 'titled "Veeram"' and edited == "Two films are titled 'Veera' (Valour)."
    edited, span = apply_edit("长江向东流，注入东海。", "向东流,注入东海", "向南流,注入南海")
    assert span.original == "向东流，注入东海" and edited == "长江向南流,注入南海。"
