"""Rate limits per endpoint: the limiter on a fake clock, then the model layer over HTTP against the scripted server."""

from __future__ import annotations

import asyncio
import time

import pytest

from ragfacts.models import Message, ModelOptions, UsageLedger
from ragfacts.models.http.openai_compat import OpenAICompatibleModel
from ragfacts.models.ratelimit import EndpointLimiter, endpoint_limiter, estimated_tokens
from tests.scripted_server import Reply

ASK = [Message(role="user", content="Is the answer supported?")]


class FakeClock:
    """A clock that only moves when the limiter sleeps: waits are exact and tests take no time."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def limiter(clock: FakeClock) -> EndpointLimiter:
    return EndpointLimiter(clock=clock, sleep=clock.sleep)


async def sent_at(limiter: EndpointLimiter, clock: FakeClock, **request) -> float:
    await limiter.acquire(**request)
    return clock.now


async def test_requests_per_minute_space_requests_evenly(limiter, clock):
    times = await asyncio.gather(*(sent_at(limiter, clock, rpm=60) for _ in range(3)))
    assert times == pytest.approx([0.0, 1.0, 2.0])


async def test_one_seconds_budget_may_go_at_once(limiter, clock):
    times = await asyncio.gather(*(sent_at(limiter, clock, rpm=600) for _ in range(11)))
    assert times[:10] == pytest.approx([0.0] * 10)
    assert times[10] == pytest.approx(0.1)


async def test_acquire_returns_the_seconds_waited(limiter, clock):
    waits = [await limiter.acquire(rpm=30) for _ in range(3)]
    assert waits == pytest.approx([0.0, 2.0, 2.0])


async def test_a_request_larger_than_the_bucket_goes_when_it_is_full_and_the_next_waits_for_the_debt(limiter, clock):
    # tpm=600: 10 tokens a second, a bucket of 10
    assert await sent_at(limiter, clock, tpm=600, tokens=30) == 0.0
    assert await sent_at(limiter, clock, tpm=600, tokens=5) == pytest.approx(2.5)  # -20 back to +5


async def test_settling_gives_back_an_over_estimate(limiter, clock):
    await limiter.acquire(tpm=600, tokens=30)
    limiter.settle(tpm=600, estimated=30, actual=10)
    assert await sent_at(limiter, clock, tpm=600, tokens=5) == pytest.approx(0.5)  # 0 back to +5


async def test_settling_charges_an_under_estimate(limiter, clock):
    await limiter.acquire(tpm=600, tokens=10)
    limiter.settle(tpm=600, estimated=10, actual=40)
    assert await sent_at(limiter, clock, tpm=600, tokens=10) == pytest.approx(4.0)  # -30 back to +10


async def test_without_reported_usage_the_estimate_stands(limiter, clock):
    await limiter.acquire(tpm=600, tokens=10)
    limiter.settle(tpm=600, estimated=10, actual=0)
    assert await sent_at(limiter, clock, tpm=600, tokens=10) == pytest.approx(1.0)


async def test_both_limits_hold_a_request_until_each_allows_it(limiter, clock):
    await limiter.acquire(rpm=60, tpm=6000, tokens=10)
    # the request budget is back after 1 s, the token budget (100 a second) after 0.5 s
    assert await sent_at(limiter, clock, rpm=60, tpm=6000, tokens=50) == pytest.approx(1.0)


async def test_requests_go_in_arrival_order(limiter, clock):
    await limiter.acquire(tpm=600, tokens=10)  # the bucket is empty
    order: list[str] = []

    async def request(name: str, tokens: int) -> None:
        await limiter.acquire(tpm=600, tokens=tokens)
        order.append(name)

    # The small request would fit first, but the large one came first.
    await asyncio.gather(request("large", 10), request("small", 1))
    assert order == ["large", "small"]


async def test_a_pause_holds_every_request_even_without_limits(limiter, clock):
    limiter.pause(3.0)
    assert limiter.paused_for() == pytest.approx(3.0)
    assert await limiter.acquire() == pytest.approx(3.0)
    assert limiter.paused_for() == 0.0
    assert await limiter.acquire() == 0.0


async def test_a_shorter_pause_does_not_cut_a_longer_one(limiter, clock):
    limiter.pause(3.0)
    limiter.pause(1.0)
    assert await limiter.acquire(rpm=6000) == pytest.approx(3.0)


async def test_models_declaring_different_limits_keep_separate_budgets(limiter, clock):
    await limiter.acquire(rpm=60)
    assert await sent_at(limiter, clock, rpm=30) == 0.0


def test_one_limiter_per_endpoint():
    first = endpoint_limiter("openai:http://a.example/v1")
    assert endpoint_limiter("openai:http://a.example/v1") is first
    assert endpoint_limiter("openai:http://b.example/v1") is not first


def test_the_estimate_counts_the_prompt_by_characters_and_the_reply_at_its_limit(model_at):
    assert estimated_tokens(["x" * 40], None, 100) == 10 + 4 + 100
    assert estimated_tokens(["事实核查"], None, 0) == 4 + 4  # one token per Chinese character
    assert estimated_tokens(["x" * 40], {"type": "object"}, 0) > estimated_tokens(["x" * 40], None, 0)


# Over HTTP. Each test gets its own server, so its endpoint (and limiter) is its own.


async def paused(model: OpenAICompatibleModel) -> float:
    """The endpoint's pause, once a reply has set one."""
    for _ in range(500):
        if model.limiter.paused_for() > 0:
            return model.limiter.paused_for()
        await asyncio.sleep(0.01)
    pytest.fail("the endpoint was not paused")


async def test_a_low_rpm_spaces_the_requests_and_the_ledger_shows_the_wait(server, model_at):
    ledger = UsageLedger()
    model = model_at(server, rpm=60, ledger=ledger)
    asks = [[Message(role="user", content=f"question {i}")] for i in range(3)]
    # Lower bounds from before the first request: no request can be sent before the limiter lets it go, but
    # the first one's transit may take longer than the others'.
    started = time.monotonic()
    completions = await asyncio.gather(*(model.complete(ask) for ask in asks))
    assert completions and all(c.ok for c in completions)
    received = sorted(r.received_at - started for r in server.requests)
    assert received[1] >= 0.95 and received[2] >= 1.95  # one a second
    assert sorted(c.usage.waited_s > 0.1 for c in completions) == [False, True, True]
    assert ledger.total().waited_s == pytest.approx(sum(c.usage.waited_s for c in completions), abs=0.01)
    assert ledger.total().waited_s > 1.0  # the third waited behind the second: summed over requests


async def test_without_limits_nothing_waits(server, model_at):
    ledger = UsageLedger()
    model = model_at(server, ledger=ledger)
    await asyncio.gather(*(model.complete([Message(role="user", content=f"q{i}")]) for i in range(5)))
    assert ledger.total().waited_s == 0.0


async def test_models_on_one_base_url_share_its_budget(server, model_at):
    first, second = model_at(server, "model-a", rpm=60), model_at(server, "model-b", rpm=60)
    assert first.limiter is second.limiter
    started = time.monotonic()
    await first.complete(ASK)
    await second.complete(ASK)
    assert server.requests[1].received_at - started >= 0.95


def test_models_on_other_base_urls_do_not_share(server, model_at):
    here = model_at(server, rpm=60)
    elsewhere = OpenAICompatibleModel("scripted-model", ModelOptions(rpm=60), base_url="http://127.0.0.1:9/v1")
    assert here.limiter is not elsewhere.limiter


async def test_a_tokens_per_minute_limit_holds_the_next_request_until_the_tokens_are_back(server, model_at):
    # 600 tokens a minute = 10 a second; each request is estimated at ~10 prompt + 20 reply tokens and
    # reports 11 + 7 used: the budget is ~8 in debt after the first, so the second waits ~1.8 s.
    model = model_at(server, tpm=600, max_tokens=20)
    started = time.monotonic()
    await model.complete(ASK)
    second = await model.complete(ASK)
    assert server.requests[1].received_at - started >= 1.5
    assert second.usage.waited_s >= 1.0


async def test_retry_after_pauses_every_request_to_the_endpoint(server, model_at):
    server.enqueue(Reply.error(429, retry_after=1.0))
    first, other = model_at(server, "model-a"), model_at(server, "model-b")
    throttled = asyncio.create_task(first.complete(ASK))
    await paused(first)  # the 429 has come back
    bystander = await other.complete([Message(role="user", content="an unrelated request")])
    retried = await throttled
    assert retried.ok and retried.retries == 1 and bystander.ok
    rejected_at = server.requests[0].received_at  # the pause began after this, when the 429 came back
    assert [r.received_at - rejected_at >= 0.95 for r in server.requests[1:]] == [True, True]
    assert bystander.usage.waited_s > 0.5 and retried.usage.waited_s > 0.5


async def test_a_retry_after_longer_than_retry_max_s_is_capped(server, model_at):
    server.enqueue(Reply.error(429, retry_after=600))
    model = model_at(server, retry_max_s=0.5)
    throttled = asyncio.create_task(model.complete(ASK))
    assert 0 < await paused(model) <= 0.5
    completion = await throttled
    assert completion.ok and completion.retries == 1


async def test_backoff_without_retry_after_is_counted_as_waiting(server, model_at):
    server.enqueue(Reply.error(503))
    completion = await model_at(server, retry_base_s=0.2).complete(ASK)
    assert completion.ok and completion.retries == 1
    assert completion.usage.waited_s >= 0.1  # 0.2 s with jitter of up to half
