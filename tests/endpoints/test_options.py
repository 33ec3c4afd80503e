"""Endpoint options: the body template, ${VAR}s from the environment, and a configuration without secrets."""

from __future__ import annotations

import json

import pytest

from ragfacts.endpoints import EndpointError, EndpointOptions, resolve

SECRET = "rag-SECRET-token-0123456789"


def test_the_question_fills_string_values_and_cannot_break_the_json():
    options = EndpointOptions(
        url="http://127.0.0.1:1/ask", body='{"query": "Q: {question}", "k": 3, "tags": ["{question}"]}'
    )
    question = 'He said "stop" {question} ${HOME} {{x}} \\ done'
    body = resolve(options, {}).body(question)
    assert body == {"query": f"Q: {question}", "k": 3, "tags": [question]}  # filled once, never re-read
    assert json.loads(json.dumps(body)) == body


def test_double_braces_are_literal_braces():
    options = EndpointOptions(url="http://x/ask", body='{"q": "{question}", "note": "{{not a placeholder}}"}')
    assert resolve(options, {}).body("Q")["note"] == "{not a placeholder}"


def test_variables_are_read_from_the_environment_into_url_headers_and_body_and_redacted():
    options = EndpointOptions(
        url="http://x/${RAG_PATH}",
        body='{"q": "{question}", "key": "${RAG_TOKEN}"}',
        headers=["Authorization: Bearer ${RAG_TOKEN}", "X-Index: docs-v2"],
    )
    request = resolve(options, {"RAG_TOKEN": SECRET, "RAG_PATH": "ask"})
    assert request.url == "http://x/ask"
    assert request.headers == {"Authorization": f"Bearer {SECRET}", "X-Index": "docs-v2"}
    assert request.body("Q") == {"q": "Q", "key": SECRET}
    assert request.redact(f"401: bad token Bearer {SECRET}") == "401: bad token [redacted]"


def test_the_configuration_holds_templates_and_header_names_never_values():
    options = EndpointOptions(url="http://x/ask", headers=["Authorization: Bearer ${RAG_TOKEN}", "X-Literal: abc123"])
    text = json.dumps(options.configuration())
    assert "${RAG_TOKEN}" not in text and "abc123" not in text and SECRET not in text
    assert options.configuration()["headers"] == ["authorization", "x-literal"]


def test_the_configuration_changes_with_what_decides_the_answers_only():
    base = EndpointOptions(url="http://x/ask")
    assert (
        base.configuration_hash()
        == EndpointOptions(url="http://x/ask", timeout_s=5, concurrency=1).configuration_hash()
    )
    for other in (
        EndpointOptions(url="http://x/other"),
        EndpointOptions(url="http://x/ask", body='{"query": "{question}"}'),
        EndpointOptions(url="http://x/ask", answer_path="data.answer"),
        EndpointOptions(url="http://x/ask", contexts_path="none"),
        EndpointOptions(url="http://x/ask", headers=["X-Index: a"]),
    ):
        assert other.configuration_hash() != base.configuration_hash()


def test_contexts_path_none_reads_no_contexts():
    assert resolve(EndpointOptions(url="http://x/ask", contexts_path="none"), {}).contexts_path is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"body": '{"q": {question}}'},
            "not JSON: Expecting property name enclosed in double quotes at line 1 column 8 (put the placeholder in "
            'quotes: "{question}")',
        ),
        ({"body": '{"q": "fixed"}'}, "--endpoint-body has no {question}"),
        ({"body": '{"q": "{query}"}'}, "unknown placeholder {query} (only {question} is filled in"),
        ({"body": '{"q": "{question}", "k": "${MISSING}"}'}, "the environment variable MISSING is not set"),
        (
            {"headers": ["Authorization: Bearer ${MISSING}"]},
            "--endpoint-header Authorization: the environment variable MISSING",
        ),
        ({"headers": [f"Authorization Bearer {SECRET}"]}, "is not 'Name: value' (its text is not shown"),
        ({"url": "ftp://x/ask"}, "give an http:// or https:// URL"),
        ({"answer_path": "data..answer"}, "--answer-path: path 'data..answer': a key is missing"),
        ({"answer_path": "choices[*].text"}, "the answer is one value; [*] is for the contexts"),
        ({"contexts_path": "sources[x]"}, "--contexts-path: path 'sources[x]': unexpected '['"),
    ],
)
def test_unusable_settings_are_refused_naming_the_option_and_the_fix(options, message):
    with pytest.raises(EndpointError) as error:
        resolve(EndpointOptions(**{"url": "http://x/ask", **options}), {})
    assert message in str(error.value)
    assert SECRET not in str(error.value)


def test_a_misspelled_option_fails_loudly():
    with pytest.raises(ValueError, match="timeout"):
        EndpointOptions(url="http://x/ask", timeout=3)


def test_a_credential_written_into_the_url_is_neither_stored_nor_printed():
    url = f"https://user:pw-{SECRET}@rag.example/ask?key={SECRET}&k=3"
    options = EndpointOptions(url=url)
    stored = json.dumps(options.configuration())
    assert SECRET not in stored and "https://rag.example/ask?key=...&k=..." in stored
    assert (
        options.configuration_hash()
        != EndpointOptions(url="https://rag.example/ask?key=other&k=3").configuration_hash()
    )
    assert SECRET not in resolve(options, {}).redact(f"failed at {url}")
