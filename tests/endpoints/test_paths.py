"""Reply paths: dotted keys, [N] and [*] read a service's JSON reply; a miss says what is there instead."""

from __future__ import annotations

import pytest

from ragfacts.endpoints import PathError, parse_path

REPLY = {
    "data": {"answer": "A."},
    "choices": [{"message": {"content": "first"}}, {"message": {"content": "last"}}],
    "sources": [{"text": "one"}, {"text": "two"}],
    "odd.key": {"x": 1},
}


@pytest.mark.parametrize(
    ("path", "values"),
    [
        ("data.answer", ["A."]),
        ("choices[0].message.content", ["first"]),
        ("choices[-1].message.content", ["last"]),
        ("sources[*].text", ["one", "two"]),
        ("sources", [[{"text": "one"}, {"text": "two"}]]),
        ('["odd.key"].x', [1]),
        ("$.data.answer", ["A."]),
        ("$data.answer", ["A."]),
    ],
)
def test_keys_indices_wildcards_and_quoted_keys_read_the_reply(path, values):
    assert parse_path(path).find(REPLY) == values


def test_only_a_path_with_a_wildcard_says_so():
    assert parse_path("sources[*].text").has_wildcard and not parse_path("sources[0].text").has_wildcard


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("data..answer", "a key is missing before the dot at 6"),
        ("data.", "ends with a dot"),
        ("", "is empty"),
        ("sources[x]", "unexpected '['"),
        ("sources[0]text", "unexpected 't'"),
    ],
)
def test_a_malformed_path_is_refused_naming_where_and_showing_examples(path, problem):
    with pytest.raises(PathError) as error:
        parse_path(path)
    assert problem in str(error.value) and "sources[*].text" in str(error.value)


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("data.answr", "`data` has no key 'answr' (its keys: answer)"),
        ("answer", "the reply has no key 'answer' (its keys: data, choices, sources, odd.key)"),
        ("choices[5]", "`choices` has 2 elements, no [5]"),
        ("sources.text", "`sources` is a list, not an object with the key 'text'"),
        ("data[*]", "`data` is an object, not a list to take [*] of"),
        ("data.answer.text", "`data.answer` is text, not an object"),
    ],
)
def test_a_path_the_reply_does_not_have_names_what_is_there_instead(path, problem):
    with pytest.raises(PathError) as error:
        parse_path(path).find(REPLY)
    assert problem in str(error.value)
