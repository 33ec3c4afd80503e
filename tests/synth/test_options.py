"""Synthesis options: error types by code, name or Chinese name; unknown ones refused with the list."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ragfacts.synth.options import INJECTABLE, NINE_TYPES, SynthOptions
from ragfacts.typology import ErrorType


def test_the_default_is_the_nine_types_of_the_typology():
    assert SynthOptions().types == NINE_TYPES
    assert len(NINE_TYPES) == 9 and ErrorType.OTHER_LOGICAL_FALLACY not in NINE_TYPES
    assert set(INJECTABLE) == set(ErrorType) - {ErrorType.OTHER}


def test_types_are_read_from_codes_names_and_chinese_names_in_the_order_given_without_repeats():
    options = SynthOptions(types="kcont, Causal Confusion,幻觉错误,KCont.,LOthe")
    assert options.types == (
        ErrorType.CONTRADICTION,
        ErrorType.CAUSAL_CONFUSION,
        ErrorType.HALLUCINATION,
        ErrorType.OTHER_LOGICAL_FALLACY,
    )
    assert SynthOptions(types="all").types == NINE_TYPES


@pytest.mark.parametrize(
    ("types", "message"),
    [("KCont,typo", "'typo' is not an error type"), ("Other", "no recipe"), (",", "no error type")],
)
def test_an_unknown_type_is_refused_naming_the_types(types, message):
    with pytest.raises(ValidationError, match=message) as raised:
        SynthOptions(types=types)
    assert "Hallu., KCont." in str(raised.value)


def test_a_misspelled_option_is_refused():
    with pytest.raises(ValidationError, match="positivs"):
        SynthOptions(positivs=2)
