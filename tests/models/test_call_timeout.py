"""`--timeout` bounds a whole call, its retries and the waits between them included, over HTTP against the scripted
server. Each test has a server of its own: a Retry-After pauses that endpoint for every later request."""

from __future__ import annotations

import asyncio
import time

import pytest

from ragfacts.models import FailureKind, Message, UsageLedger
from ragfacts.models.http.openai_compat import OpenAICompatibleModel
from tests.scripted_server import Reply

ASK = [Message(role="user", content="Is the answer supported?")]
SLACK_S = 0.5  # the time a call may take past its --timeout: the client's own work on a 2-core machine
GIVE_UP_S = 8.0  # the tests' own limit: the calls here wait up to 60 s when the timeout is not kept


async def timed(model: OpenAICompatibleModel):
    started = time.monotonic()
    completion = await asyncio.wait_for(model.complete(ASK), timeout=GIVE_UP_S)
    return completion, time.monotonic() - started


@pytest.mark.parametrize("http", ["direct", "httpx"])
async def test_a_retry_after_longer_than_the_time_left_fails_the_call_at_once(server, model_at, http):
    """A 429 asking for 60 s (within the default retry_max_s of 60) on a call with --timeout 1 s: waiting would
    take the call past its timeout, so it fails at once, a transient failure counted as one failed call, whose
    message says what the server asked for and what was left."""
    server.enqueue(Reply.error(429, retry_after=60))
    ledger = UsageLedger()
    completion, elapsed = await timed(model_at(server, timeout_s=1.0, http=http, ledger=ledger))
    assert elapsed < 1.0 + SLACK_S
    assert completion.failure is not None and completion.failure.kind is FailureKind.TRANSIENT
    message = completion.failure.message
    assert message.startswith("HTTP 429: ") and "the server asked to wait 60 s" in message
    assert "left of --timeout 1 s" in message
    assert len(server.requests) == 1 and completion.retries == 0
    total = ledger.total()
    assert (total.calls, total.failures, total.retries) == (1, 1, 0)


async def test_a_backoff_longer_than_the_time_left_fails_the_call_at_once(server, model_at):
    """Without Retry-After the jittered backoff is held to the same bound: 2 to 4 s after a 503 do not fit in
    --timeout 1 s."""
    server.enqueue(Reply.error(503))
    completion, elapsed = await timed(model_at(server, timeout_s=1.0, retry_base_s=4.0))
    assert elapsed < 1.0 + SLACK_S
    assert completion.failure is not None and completion.failure.kind is FailureKind.TRANSIENT
    assert completion.failure.message.startswith("HTTP 503: ") and "backoff" in completion.failure.message
    assert len(server.requests) == 1


async def test_a_retry_is_cut_when_the_call_reaches_its_timeout(server, model_at):
    """A Retry-After that fits (0.4 s of --timeout 1.5 s), then a retry the server answers after 3 s: the retry gets
    only the time left, so the call ends at 1.5 s, not one timeout after the retry began."""
    server.enqueue(Reply.error(429, retry_after=0.4), Reply.schema_valid().delayed(3.0))
    ledger = UsageLedger()
    completion, elapsed = await timed(model_at(server, timeout_s=1.5, ledger=ledger))
    assert elapsed < 1.5 + SLACK_S
    assert completion.failure is not None and completion.failure.kind is FailureKind.TRANSIENT
    assert "timed out" in completion.failure.message and "--timeout 1.5 s" in completion.failure.message
    assert len(server.requests) == 2 and completion.retries == 1
    assert (ledger.total().calls, ledger.total().failures) == (2, 1)


async def test_retries_that_fit_in_the_timeout_go_on(server, model_at):
    """The bound takes nothing from a call that keeps within it: two short Retry-After waits, then a reply."""
    server.enqueue(Reply.error(429, retry_after=0.2), Reply.error(503, retry_after=0.2), Reply.schema_valid())
    completion, elapsed = await timed(model_at(server, timeout_s=2.0))
    assert completion.ok and completion.retries == 2
    assert 0.4 <= elapsed < 2.0


async def test_a_pause_another_call_set_counts_as_this_calls_wait(server, model_at):
    """A Retry-After of 2 s on one call pauses the endpoint; another call (--timeout 1 s) whose 503 comes back during
    the pause would wait it out before retrying, past its timeout: it fails at once, saying the endpoint is paused."""
    server.when("slow", Reply.error(503).delayed(0.5), times=1)
    server.when("throttled", Reply.error(429, retry_after=2), times=1)
    patient, hurried = model_at(server), model_at(server, timeout_s=1.0)
    throttled = asyncio.create_task(patient.complete([Message(role="user", content="throttled")]))
    started = time.monotonic()
    completion = await asyncio.wait_for(hurried.complete([Message(role="user", content="slow")]), GIVE_UP_S)
    elapsed = time.monotonic() - started
    throttled.cancel()
    assert elapsed < 1.0 + SLACK_S
    assert completion.failure is not None and completion.failure.message.startswith("HTTP 503: ")
    assert "the endpoint is paused" in completion.failure.message
