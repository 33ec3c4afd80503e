"""The command-line tests' server: the scripted server, with an API key in the environment as a user would set it."""

from __future__ import annotations

import pytest

from tests.conftest import TEST_KEY
from tests.scripted_server import ScriptedServer


@pytest.fixture
def server(scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> ScriptedServer:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    return scripted_server
