"""What one request may take: its body (413), its time (504), a place among those judged at once (429)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

pytest.importorskip("fastapi")

from ragfacts.service.limits import Busy, RequestSlots
from tests.scripted_server import Reply, ScriptedServer

CHECK = {"reference": "R.", "answer": "A.", "method": "holistic"}


async def until(condition, attempts: int = 500) -> None:
    """Wait (bounded) until `condition()` holds: the test waits for a state, never for a duration."""
    for _ in range(attempts):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition never held")


async def test_a_body_over_the_limit_is_answered_413_before_anything_is_judged(
    service_settings, open_client, scripted_server
):
    client = await open_client(service_settings(max_body_kb=1))
    response = await client.post("/check", json={**CHECK, "answer": "A" * 2000})
    assert response.status_code == 413
    data = response.json()
    assert data["error"] == "too_large" and "larger than 1 KiB (--max-body-kb)" in data["message"]
    assert scripted_server.requests == []


async def test_a_chunked_body_over_the_limit_is_refused_too(service_settings, open_client, scripted_server):
    client = await open_client(service_settings(max_body_kb=1))

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: the size is only known by reading
        yield b'{"reference": "R.", "answer": "'
        for _ in range(40):
            yield b"A" * 100
        yield b'"}'

    response = await client.post("/check", content=chunks(), headers={"Content-Type": "application/json"})
    assert response.status_code == 413 and scripted_server.requests == []


async def test_a_body_within_the_limit_is_judged(service_settings, open_client, scripted_server):
    scripted_server.enqueue(Reply.json({"problems": [], "verdict": "consistent"}))
    client = await open_client(service_settings(max_body_kb=1))
    response = await client.post("/check", json={**CHECK, "answer": "A" * 800})
    assert response.status_code == 200 and response.json()["result"]["label"] == "consistent"


async def test_one_request_more_than_the_limit_is_answered_429_with_retry_after(
    service_settings, open_client, scripted_server: ScriptedServer
):
    scripted_server.enqueue(Reply.json({"problems": [], "verdict": "consistent"}).delayed(2.0))
    client = await open_client(service_settings(max_concurrent=1))
    first = asyncio.ensure_future(client.post("/check", json=CHECK))
    await until(lambda: scripted_server.in_flight == 1)  # the first holds the only place
    refused = await client.post("/check", json={**CHECK, "answer": "B."})
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) >= 1
    assert refused.json()["error"] == "busy" and "--max-concurrent" in refused.json()["message"]
    assert (await first).status_code == 200
    scripted_server.enqueue(Reply.json({"problems": [], "verdict": "consistent"}))
    assert (await client.post("/check", json={**CHECK, "answer": "C."})).status_code == 200  # the place is free
    assert len(scripted_server.requests) == 2  # the refused request never reached the model


async def test_health_and_metrics_answer_while_every_place_is_taken(service_settings, open_client, scripted_server):
    scripted_server.enqueue(Reply.json({"problems": [], "verdict": "consistent"}).delayed(2.0))
    client = await open_client(service_settings(max_concurrent=1))
    first = asyncio.ensure_future(client.post("/check", json=CHECK))
    await until(lambda: scripted_server.in_flight == 1)
    health = await client.get("/health")
    assert health.status_code == 200 and health.json()["judging"] == 1
    assert (await client.get("/metrics")).status_code == 200
    await first


async def test_a_judgement_past_the_timeout_is_answered_504_and_frees_its_place(
    service_settings, open_client, scripted_server
):
    # The timeout is far from both the slow reply and a quick one, so a loaded machine cannot blur the two.
    scripted_server.enqueue(Reply.json({"problems": [], "verdict": "consistent"}).delayed(6.0))
    client = await open_client(service_settings(request_timeout_s=1.5, max_concurrent=1))
    response = await client.post("/check", json=CHECK)
    assert response.status_code == 504
    data = response.json()
    assert data["error"] == "timeout" and "longer than 1.5 s (--request-timeout)" in data["message"]
    assert (await client.get("/health")).json()["judging"] == 0
    scripted_server.enqueue(Reply.json({"problems": [], "verdict": "consistent"}))
    assert (await client.post("/check", json={**CHECK, "answer": "B."})).status_code == 200


async def test_retry_after_follows_how_long_requests_have_recently_taken():
    slots = RequestSlots(limit=1, max_wait_s=30)
    assert slots.retry_after() == 1  # nothing measured yet
    slots._recent_s = 4.2
    assert slots.retry_after() == 5
    slots._recent_s = 400.0
    assert slots.retry_after() == 30  # never longer than a request may take
    async with slots.hold():
        with pytest.raises(Busy):
            async with slots.hold():
                pass
    assert slots.active == 0


async def test_a_local_judgement_past_the_timeout_is_answered_504_and_the_model_is_free_again(open_client):
    """The local backend stops a call whose request timed out (at its next decode), so the next request is
    judged at once instead of queueing behind a generation nobody waits for."""
    from ragfacts.runtime import Settings
    from ragfacts.service import ServiceSettings
    from tests.models.local.test_llamacpp import SMOLLM2

    if SMOLLM2 is None:
        pytest.skip("the SmolLM2 test model is not installed")
    runtime = Settings(model=f"local:{SMOLLM2}", use_cache=False, options={"n_ctx": 16384})
    client = await open_client(ServiceSettings(runtime=runtime, request_timeout_s=2.0, max_concurrent=1))
    long = "The bridge opened in 1932 and carries six lanes of traffic over the bay. " * 700  # ~11,000 tokens
    response = await client.post(
        "/check", json={"reference": long, "answer": "It opened in 1932.", "method": "holistic"}
    )
    assert response.status_code == 504
    metrics = (await client.get("/metrics")).text
    assert "ragfacts_http_requests_in_progress 1.0" in metrics  # only the /metrics request itself
    quick = await client.post("/check", json={"reference": "It opened in 1932.", "answer": "It opened in 1932.",
                                              "method": "holistic:cot=false"})  # fmt: skip
    assert quick.status_code == 200, quick.text
