"""Fixtures of the model tests that need a scripted server of their own: a Retry-After pauses that endpoint for every
later request, so a test that sets one gets its own server and its own models at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator

import pytest

from ragfacts.models import ModelOptions
from ragfacts.models.http.openai_compat import OpenAICompatibleModel
from tests.conftest import TEST_KEY
from tests.scripted_server import ScriptedServer


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    server = ScriptedServer().start()
    yield server
    server.stop()


@pytest.fixture
async def model_at() -> AsyncIterator[Callable[..., OpenAICompatibleModel]]:
    """Build models at a server or a base URL (`ledger=` a shared UsageLedger, other keywords ModelOptions); their
    connections are closed after the test."""
    built: list[OpenAICompatibleModel] = []

    def build(at: ScriptedServer | str, name: str = "scripted-model", **options) -> OpenAICompatibleModel:
        options.setdefault("retry_base_s", 0.01)
        ledger = options.pop("ledger", None)
        url = at if isinstance(at, str) else at.base_url
        model = OpenAICompatibleModel(name, ModelOptions(**options), base_url=url, api_key=TEST_KEY, ledger=ledger)
        built.append(model)
        return model

    yield build
    for model in built:
        await model.aclose()
