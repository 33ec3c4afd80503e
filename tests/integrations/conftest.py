"""The adapters' fixtures: a judge on the scripted server, and a guard that fails a test reaching past loopback."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from ragfacts.integrations import Judge
from tests.conftest import TEST_KEY
from tests.scripted_server import ScriptedServer

# Before any adapter's library is imported: RAGAS and DeepEval send usage telemetry unless told not to.
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")


@pytest.fixture
def server(scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> ScriptedServer:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    return scripted_server


@pytest.fixture
def judge(server: ScriptedServer) -> Judge:
    """A judge whose model calls go over HTTP to the scripted server."""
    return Judge(
        model="openai:scripted-model", base_url=server.base_url, settings={"model_options": {"retry_base_s": 0.01}}
    )


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Every connection a test (or a library's background thread) opens must stay on this machine: the adapters
    need no vendor service, key or telemetry. A connection elsewhere is refused and fails the test."""
    attempts: list[Any] = []
    connect = socket.socket.connect

    def guarded(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else address
        if self.family in (socket.AF_INET, socket.AF_INET6) and host not in ("127.0.0.1", "::1", "localhost"):
            attempts.append(address)
            raise ConnectionRefusedError(f"test refused a connection to {address}")
        return connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    yield attempts
    assert attempts == [], f"connections past loopback: {attempts}"
