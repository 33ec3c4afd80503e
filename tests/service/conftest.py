"""Fixtures of the service tests: settings pointed at the scripted server, and clients of real apps."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from typing import Any

import pytest

from ragfacts.runtime import Settings
from tests.conftest import TEST_KEY
from tests.scripted_server import ScriptedServer

SERVICE_TOKEN = "svc-token-SECRET-4f1d2c9b8a7e"


@pytest.fixture
def service_settings(scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Any]:
    """Build ServiceSettings whose shared model is the scripted server (no response cache unless asked)."""
    from ragfacts.service import ServiceSettings

    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)

    def build(cache: bool = False, concurrency: int = 8, **overrides: Any) -> ServiceSettings:
        runtime = Settings(
            model="openai:scripted",
            base_url=scripted_server.base_url,
            concurrency=concurrency,
            use_cache=cache,
            options={"retry_base_s": 0.01},
        )
        return ServiceSettings(runtime=runtime, **overrides)

    return build


@pytest.fixture
async def open_client() -> AsyncIterator[Callable[..., Any]]:
    """Open an httpx client on a real app (lifespan run: startup, then shutdown at the end of the test)."""
    import httpx

    from ragfacts.service import create_app

    async with AsyncExitStack() as stack:

        async def open(settings: Any) -> httpx.AsyncClient:
            app = create_app(settings)
            await stack.enter_async_context(app.router.lifespan_context(app))
            transport = httpx.ASGITransport(app=app)
            return await stack.enter_async_context(httpx.AsyncClient(transport=transport, base_url="http://service"))

        yield open
