"""JSON text on the hot paths: compact UTF-8, any value the standard library writes, and what it reads back."""

from __future__ import annotations

import json
import math

from ragfacts import jsontext


def test_text_is_compact_utf8_with_keys_in_their_order_and_non_string_keys_written_as_strings():
    value = {"b": "回答 “ok”\n", "a": [1, 2.5, None, True], 3: "three"}
    assert jsontext.dumps(value) == '{"b":"回答 “ok”\\n","a":[1,2.5,null,true],"3":"three"}'
    assert jsontext.loads(jsontext.dumps(value)) == json.loads(json.dumps(value))
    assert jsontext.dumps_indented({"a": [1]}) == '{\n  "a": [\n    1\n  ]\n}'


def test_an_integer_beyond_64_bits_is_written_as_the_standard_library_writes_it():
    big = {"row_number": 2**70, "text": "été"}
    assert jsontext.loads(jsontext.dumps(big)) == big
    assert jsontext.loads(jsontext.dumps_indented(big)) == big


def test_nan_is_written_as_null_and_read_back_from_text_that_has_it():
    assert jsontext.dumps({"score": math.nan}) == '{"score":null}'
    assert math.isnan(jsontext.loads(b'{"score": NaN}')["score"])  # text written by earlier versions


def test_text_that_is_not_json_raises_a_value_error():
    for text in (b'{"torn": ', b"\xff\xfe", "not json"):
        try:
            jsontext.loads(text)
        except ValueError:
            continue
        raise AssertionError(f"{text!r} was read")
