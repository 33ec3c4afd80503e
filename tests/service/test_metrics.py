"""Prometheus metrics that move with the work, and one structured log line per request with no body or secret."""

from __future__ import annotations

import json
import logging

import pytest

pytest.importorskip("fastapi")

from prometheus_client.parser import text_string_to_metric_families

from ragfacts.service.logs import REQUEST_LOGGER, JsonLines, Redactor
from tests.conftest import TEST_KEY
from tests.scripted_server import Reply
from tests.service.conftest import SERVICE_TOKEN

CHECK = {"reference": "R.", "answer": "A.", "method": "holistic"}
AUTH = {"Authorization": f"Bearer {SERVICE_TOKEN}"}


async def scrape(client) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of /metrics, by name and labels."""
    response = await client.get("/metrics", headers=AUTH)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def total(samples, name: str, **labels: str) -> float:
    """The sum of `name`'s samples whose labels include `labels`."""
    return sum(
        value for (sample, have), value in samples.items() if sample == name and set(labels.items()) <= set(have)
    )


async def test_requests_latency_results_and_model_usage_are_counted(service_settings, open_client, scripted_server):
    client = await open_client(service_settings(token=SERVICE_TOKEN))
    before = await scrape(client)
    scripted_server.enqueue(
        Reply.json({"problems": [], "verdict": "consistent"}, prompt_tokens=100, completion_tokens=20)
    )
    scripted_server.enqueue(Reply.malformed(), Reply.malformed(), Reply.malformed())  # one failed completion
    assert (await client.post("/check", json={**CHECK, "min_consistent": 1}, headers=AUTH)).status_code == 200
    assert (await client.post("/check", json={**CHECK, "answer": "B."}, headers=AUTH)).status_code == 200
    assert (await client.post("/check", json={"answer": "no reference"}, headers=AUTH)).status_code == 422
    assert (await client.post("/check", json=CHECK)).status_code == 401
    after = await scrape(client)

    def moved(name: str, **labels: str) -> float:
        return total(after, name, **labels) - total(before, name, **labels)

    assert moved("ragfacts_http_requests_total", endpoint="/check", status="200") == 2
    assert moved("ragfacts_http_requests_total", endpoint="/check", status="422") == 1
    assert moved("ragfacts_http_requests_total", endpoint="/check", status="401") == 1
    assert moved("ragfacts_http_request_duration_seconds_count", endpoint="/check") == 4
    assert moved("ragfacts_model_calls_total") == len(scripted_server.requests) == 4  # 1 + 1 with 2 re-asks
    assert moved("ragfacts_model_failures_total") == 1 and moved("ragfacts_model_reasks_total") == 2
    assert moved("ragfacts_model_tokens_total", type="prompt") == 100 + 3 * 11
    assert moved("ragfacts_model_tokens_total", type="completion") == 20 + 3 * 7
    assert moved("ragfacts_results_total", method="holistic", label="consistent", complete="true") == 1
    assert moved("ragfacts_results_total", method="holistic", label="unscored", complete="false") == 1
    assert moved("ragfacts_gates_total", endpoint="/check", result="passed") == 1
    assert total(after, "ragfacts_http_requests_in_progress") == 1  # the scrape itself


async def test_a_refused_body_is_counted_under_its_path(service_settings, open_client):
    client = await open_client(service_settings(token=SERVICE_TOKEN, max_body_kb=1))
    await client.post("/evaluate", json={"rows": [{"answer": "A" * 4000}]}, headers=AUTH)
    await client.get("/no/such/path")
    samples = await scrape(client)
    assert total(samples, "ragfacts_http_requests_total", endpoint="/evaluate", status="413") == 1
    assert total(samples, "ragfacts_http_requests_total", endpoint="unmatched", status="404") == 1


async def test_each_request_logs_one_json_line_without_body_or_secret(
    service_settings, open_client, scripted_server, caplog
):
    secret_answer = "A private answer that must never be logged."
    scripted_server.enqueue(
        Reply.json({"problems": [], "verdict": "consistent"}, prompt_tokens=30, completion_tokens=5)
    )
    client = await open_client(service_settings(token=SERVICE_TOKEN))
    with caplog.at_level(logging.INFO, logger=REQUEST_LOGGER):
        await client.post("/check", json={**CHECK, "answer": secret_answer}, headers=AUTH)
        await client.post("/check", json=CHECK, headers={"Authorization": "Bearer a-guess-at-the-token"})
    plain = JsonLines(Redactor([]))  # no redaction: what the lines hold, not what a filter hides
    lines = [json.loads(plain.format(r)) for r in caplog.records if r.getMessage() == "request"]
    judged, refused = lines
    assert {k: judged[k] for k in ("method", "path", "status", "calls", "tokens")} == {
        "method": "POST",
        "path": "/check",
        "status": 200,
        "calls": 1,
        "tokens": 35,
    }
    assert judged["latency_ms"] >= 0 and judged["level"] == "info" and len(judged["request_id"]) == 32
    assert (refused["status"], refused["calls"]) == (401, 0)
    text = "\n".join(plain.format(r) for r in caplog.records)
    for secret in (secret_answer, SERVICE_TOKEN, "a-guess-at-the-token", TEST_KEY):
        assert secret not in text
