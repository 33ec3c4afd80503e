"""Shared fixtures: an isolated ragfacts home and the scripted OpenAI-compatible server."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest

from ragfacts import redaction
from ragfacts.models import ModelOptions, ResponseCache, UsageLedger
from ragfacts.models.http.openai_compat import OpenAICompatibleModel
from tests.scripted_server import ScriptedServer

TEST_KEY = "sk-test-SECRET-never-stored-0123456789"
# ragfacts alone: no method or backend of another installed package (set here, before any test is collected, so that
# the commands run in subprocesses inherit it too).
os.environ["RAGFACTS_NO_PLUGINS"] = "1"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own state directory and no inherited endpoint or key."""
    home = tmp_path / "ragfacts-home"
    monkeypatch.setenv("RAGFACTS_HOME", str(home))
    for variable in ("OPENAI_API_KEY", "RAGFACTS_API_KEY", "RAGFACTS_BASE_URL", "RAGFACTS_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    return home


@pytest.fixture(autouse=True)
def forget_secrets() -> Iterator[None]:
    """Each test registers its own secrets: one test's secret must not redact another test's text."""
    yield
    redaction.reset()


@pytest.fixture(scope="session")
def _server() -> Iterator[ScriptedServer]:
    server = ScriptedServer().start()
    yield server
    server.stop()


@pytest.fixture
def scripted_server(_server: ScriptedServer) -> Iterator[ScriptedServer]:
    """The scripted server, emptied of requests and script for each test."""
    _server.reset()
    yield _server
    _server.reset()


@pytest.fixture
async def make_model(
    scripted_server: ScriptedServer, tmp_path: Path
) -> AsyncIterator[Callable[..., OpenAICompatibleModel]]:
    """Build OpenAI-compatible models pointed at the scripted server; their connections are closed after the test."""
    built: list[OpenAICompatibleModel] = []

    def build(cache: bool = False, ledger: UsageLedger | None = None, **options) -> OpenAICompatibleModel:
        options.setdefault("retry_base_s", 0.01)
        model = OpenAICompatibleModel(
            "scripted-model",
            ModelOptions(**options),
            base_url=scripted_server.base_url,
            api_key=TEST_KEY,
            cache=ResponseCache(tmp_path / "cache.sqlite3") if cache else None,
            ledger=ledger,
        )
        built.append(model)
        return model

    yield build
    for model in built:
        await model.aclose()
