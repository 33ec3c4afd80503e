"""`ragfacts serve` as a real uvicorn process on 127.0.0.1: answers over a socket, JSON logs, no mix-ups."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

import httpx

from tests.conftest import TEST_KEY
from tests.scripted_server import Reply, ScriptedServer
from tests.service.conftest import SERVICE_TOKEN

ROOT = Path(__file__).resolve().parents[2]
AUTH = {"Authorization": f"Bearer {SERVICE_TOKEN}"}
START_S = 60  # bounds for waiting on the process, never asserted on


@dataclass
class Served:
    """A running `ragfacts serve` process and what it has written to stderr so far."""

    process: subprocess.Popen[str]
    url: str = ""
    lines: list[str] = field(default_factory=list)

    def requests_logged(self) -> list[dict[str, Any]]:
        entries = [json.loads(line) for line in list(self.lines)]
        return [entry for entry in entries if entry.get("event") == "request"]


def wait_for(condition, seconds: float = 10.0) -> None:
    """Wait (bounded) until `condition()` holds."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the condition never held")
        time.sleep(0.02)


@pytest.fixture(scope="module")
def served(_server: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("serve-home")
    env = {
        **os.environ,
        "OPENAI_API_KEY": TEST_KEY,
        "RAGFACTS_HOME": str(home),
        "RAGFACTS_SERVE_TOKEN": SERVICE_TOKEN,
    }
    command = [sys.executable, "-m", "ragfacts", "--model", "openai:scripted", "--base-url", _server.base_url]
    command += ["--no-cache", "--concurrency", "8", "serve", "--port", "0", "--max-concurrent", "64"]
    process = subprocess.Popen(command, env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    served = Served(process)
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in process.stderr:  # type: ignore[union-attr]
            served.lines.append(line)
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + START_S
    while not served.url:
        try:
            entry = json.loads(lines.get(timeout=max(deadline - time.monotonic(), 0.1)))
        except queue.Empty:
            process.kill()
            raise AssertionError(f"ragfacts serve did not start: {''.join(served.lines)}") from None
        if entry.get("event") == "listening":
            served.url = entry["url"]
    wait_for(lambda: _up(served.url), START_S)
    yield served
    process.terminate()
    process.wait(timeout=START_S)


def _up(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def test_every_endpoint_answers_over_a_real_socket(served: Served, scripted_server: ScriptedServer):
    scripted_server.enqueue(Reply.json({"problems": [], "verdict": "consistent"}), Reply.json({"fact_0": "False"}))
    with httpx.Client(base_url=served.url, headers=AUTH) as client:
        assert client.get("/health").json()["model"] == "openai:scripted"
        check = client.post("/check", json={"reference": "R.", "answer": "A.", "method": "holistic"})
        assert check.status_code == 200 and check.json()["result"]["label"] == "consistent"
        recall = client.post("/recall", json={"answer": "A.", "facts": ["B."], "min_recall": 0.5})
        assert recall.status_code == 200 and recall.json()["gate"]["passed"] is False
        rows = [{"answer": "A.", "reference": "R."}]
        evaluate = client.post("/evaluate", json={"rows": rows, "precision": "holistic", "recall": None})
        assert evaluate.status_code == 200 and len(evaluate.json()["rows"]) == 1
        assert "ragfacts_http_requests_total" in client.get("/metrics").text
        assert client.post("/check", json={}, headers={"Authorization": "Bearer nope"}).status_code == 401


def test_the_log_is_json_lines_with_calls_and_tokens_and_no_secret(served: Served, scripted_server: ScriptedServer):
    private = "An answer whose words must stay out of the log."
    scripted_server.enqueue(
        Reply.json({"problems": [], "verdict": "consistent"}, prompt_tokens=40, completion_tokens=2)
    )
    with httpx.Client(base_url=served.url) as client:
        body = {"reference": "R.", "answer": private, "method": "holistic"}
        assert client.post("/check", json=body, headers={**AUTH, "X-Request-ID": "log-test-1"}).status_code == 200
        assert client.post("/check", json=body, headers={"Authorization": "Bearer guessed-token"}).status_code == 401
    wait_for(lambda: any(e.get("request_id") == "log-test-1" for e in served.requests_logged()))
    (line,) = [e for e in served.requests_logged() if e["request_id"] == "log-test-1"]
    assert (line["method"], line["path"], line["status"], line["calls"], line["tokens"]) == (
        "POST",
        "/check",
        200,
        1,
        42,
    )
    assert isinstance(line["latency_ms"], float) and line["level"] == "info"
    text = "".join(served.lines)
    assert served.lines and all(json.loads(entry) for entry in served.lines)  # every line is one JSON object
    for secret in (SERVICE_TOKEN, TEST_KEY, "guessed-token", private):
        assert secret not in text
    ready = next(json.loads(entry) for entry in served.lines if '"ready"' in entry)
    assert ready["auth"] == "bearer token from RAGFACTS_SERVE_TOKEN"


def test_concurrent_requests_over_the_socket_each_get_their_own_answer(served: Served, scripted_server: ScriptedServer):
    count = 40
    for n in range(count):
        reply = Reply.json({"problems": [f"problem of socket case {n}"], "verdict": "inconsistent"})
        scripted_server.when(f"socket-case-{n:03d}-end", reply.delayed(0.02 * (n % 5)))

    async def ask_all() -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=served.url, headers=AUTH, timeout=60) as client:
            bodies = [
                {"reference": "R.", "answer": f"Answer socket-case-{n:03d}-end.", "method": "holistic", "id": str(n)}
                for n in range(count)
            ]
            return await asyncio.gather(*(client.post("/check", json=body) for body in bodies))

    responses = asyncio.run(ask_all())
    for n, response in enumerate(responses):
        assert response.status_code == 200
        data = response.json()
        assert data["id"] == str(n)
        assert data["result"]["judgement"]["problems"] == [f"problem of socket case {n}"]
    assert scripted_server.max_in_flight > 1


def test_a_client_that_disconnects_has_its_judgement_cancelled(served: Served, scripted_server: ScriptedServer):
    scripted_server.enqueue(Reply.json({"problems": [], "verdict": "consistent"}).delayed(3.0))
    body = json.dumps({"reference": "R.", "answer": "A client that leaves.", "method": "holistic"}).encode()
    host, port = served.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port))) as raw:
        head = f"POST /check HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {SERVICE_TOKEN}\r\n"
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nX-Request-ID: leaves-1\r\n\r\n"
        raw.sendall(head.encode() + body)
        wait_for(lambda: scripted_server.in_flight == 1)  # it is being judged
    wait_for(lambda: any(e.get("request_id") == "leaves-1" for e in served.requests_logged()))
    (line,) = [e for e in served.requests_logged() if e["request_id"] == "leaves-1"]
    assert line["status"] == 499  # cancelled as the client left, long before the model's reply
    assert httpx.get(f"{served.url}/health").json()["judging"] == 0
