"""One question to a RAG service over real HTTP: answer, contexts, latency; retries and failures as results."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from ragfacts.endpoints import EndpointClient, EndpointOptions, resolve
from tests.rag_server import RagReply, RagServer, running_rag_server

SECRET = "rag-SECRET-token-0123456789"


@pytest.fixture(scope="module")
def _rag() -> Iterator[RagServer]:
    with running_rag_server() as server:
        yield server


@pytest.fixture
def rag(_rag: RagServer) -> Iterator[RagServer]:
    _rag.reset()
    yield _rag


async def ask(rag: RagServer, question: str, environ: dict[str, str] | None = None, **settings):
    settings = {"body": '{"query": "{question}"}', "contexts_path": "sources[*].text", "retry_base_s": 0.01, **settings}
    options = EndpointOptions(url=rag.url, **settings)
    async with EndpointClient(options, resolve(options, environ or {})) as client:
        return await client.ask(question)


async def test_the_answer_its_contexts_and_the_latency_are_read_from_the_reply(rag):
    answer = await ask(rag, "What is RAG?")
    assert answer.ok and answer.answer == "Answer to What is RAG?"
    assert answer.contexts == ["What is RAG? context one", "What is RAG? context two"]
    assert answer.latency_s is not None and answer.latency_s > 0
    assert (answer.attempts, answer.status, answer.error) == (1, 200, None)
    (request,) = rag.requests
    assert request.body == {"query": "What is RAG?"} and request.path == "/ask"


async def test_headers_are_sent_with_values_from_the_environment(rag):
    await ask(rag, "Q", {"RAG_TOKEN": SECRET}, headers=["Authorization: Bearer ${RAG_TOKEN}", "X-Index: v2"])
    assert rag.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert rag.requests[0].headers["x-index"] == "v2"


async def test_429_and_5xx_are_retried_honouring_retry_after_then_answered(rag):
    past = "Wed, 21 Oct 2015 07:28:00 GMT"  # an HTTP date already passed: retry at once
    rag.script("Q", RagReply(503, {"error": "busy"}, {"Retry-After": "0"}), RagReply(429, {}, {"Retry-After": past}))
    # Without Retry-After the backoff would be 30-60 s, and wait_for would give up after 10.
    answer = await asyncio.wait_for(ask(rag, "Q", retry_base_s=60), timeout=10)
    assert answer.ok and answer.attempts == 3 and rag.asked("Q") == 3


async def test_a_persistent_500_is_a_failed_answer_after_the_retries_not_an_exception(rag):
    rag.script("Q", *[RagReply(500, {"error": "index offline"})] * 5)
    answer = await ask(rag, "Q", max_retries=2)
    assert not answer.ok and answer.answer is None
    assert (answer.attempts, answer.status) == (3, 500) and rag.asked("Q") == 3
    assert answer.error == 'HTTP 500: {"error": "index offline"}'


async def test_a_client_error_is_not_retried(rag):
    rag.script("Q", RagReply(404, "no such route"))
    answer = await ask(rag, "Q")
    assert not answer.ok and answer.attempts == 1 and rag.asked("Q") == 1
    assert answer.error == "HTTP 404: no such route"


async def test_a_timeout_is_a_failed_answer(rag):
    rag.script("Q", RagReply(delay_s=2.0))
    answer = await ask(rag, "Q", timeout_s=0.2, max_retries=0)
    assert not answer.ok and answer.error == "timed out after 0.2 s" and answer.status is None


async def test_an_unreachable_service_is_a_failed_answer(rag):
    options = EndpointOptions(url="http://127.0.0.1:9/ask", max_retries=1, retry_base_s=0.01)
    async with EndpointClient(options, resolve(options, {})) as client:
        answer = await client.ask("Q")
    assert not answer.ok and answer.attempts == 2 and answer.error.startswith("cannot reach the service: ConnectError")


@pytest.mark.parametrize(
    ("reply", "settings", "error"),
    [
        ({"result": "A"}, {}, "--answer-path answer: the reply has no key 'answer' (its keys: result)"),
        ({"answer": ""}, {}, "the answer is empty"),
        ({"answer": {"text": "A"}}, {}, "the answer at answer is an object, not text"),
        (
            {"answer": "A", "sources": [{"text": "one"}]},
            {"contexts_path": "sources"},
            "--contexts-path sources: a context is an object",
        ),
        ({"answer": "A"}, {}, "--contexts-path sources[*].text: the reply has no key 'sources'"),
        ("<html>oops</html>", {}, "the reply is not JSON: <html>oops</html>"),
    ],
)
async def test_a_reply_without_the_answer_where_the_path_says_is_a_failure_naming_what_is_there(
    rag, reply, settings, error
):
    rag.script("Q", RagReply(200, reply))
    answer = await ask(rag, "Q", **settings)
    assert not answer.ok and answer.status == 200 and answer.error.startswith(error)
    assert rag.asked("Q") == 1  # the reply's shape will not change by asking again


@pytest.mark.parametrize(
    ("reply", "path", "contexts"),
    [
        ({"answer": "A", "contexts": ["one", "", "two"]}, "contexts", ["one", "two"]),
        ({"answer": "A", "contexts": "only one"}, "contexts", ["only one"]),
        ({"answer": "A", "contexts": None}, "contexts", []),
        ({"answer": "A", "docs": [{"t": "one"}, {"t": None}]}, "docs[*].t", ["one"]),
    ],
)
async def test_contexts_may_be_a_list_one_text_or_none(rag, reply, path, contexts):
    rag.script("Q", RagReply(200, reply))
    answer = await ask(rag, "Q", contexts_path=path)
    assert answer.ok and answer.contexts == contexts


async def test_failure_messages_never_hold_a_secret(rag):
    rag.script("Q", RagReply(401, {"error": f"token Bearer {SECRET} is revoked"}))
    answer = await ask(rag, "Q", {"RAG_TOKEN": SECRET}, headers=["Authorization: Bearer ${RAG_TOKEN}"])
    assert (
        not answer.ok
        and SECRET not in answer.model_dump_json()
        and answer.error == 'HTTP 401: {"error": "token [redacted] is revoked"}'
    )


async def test_a_secret_the_service_echoes_in_its_answer_or_contexts_is_neither_stored_nor_judged(rag):
    reply = {"answer": f"the token is {SECRET}", "sources": [{"text": f"ctx {SECRET} here"}]}
    rag.script("Q", RagReply(200, reply))
    headers = ["Authorization: Bearer ${RAG_TOKEN}"]
    answer = await ask(rag, "Q", {"RAG_TOKEN": SECRET}, headers=headers, contexts_path="sources[*].text")
    assert answer.ok and answer.answer == "the token is [redacted]" and answer.contexts == ["ctx [redacted] here"]
