"""The bearer token, and secrets kept out of every response."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")

from ragfacts.runtime import Settings
from ragfacts.service.auth import BearerToken
from ragfacts.service.logs import REDACTED, Redactor, service_secrets
from ragfacts.service.settings import ServiceSettings
from tests.conftest import TEST_KEY
from tests.scripted_server import Reply
from tests.service.conftest import SERVICE_TOKEN

CHECK = {"reference": "R.", "answer": "A.", "method": "holistic"}
CONSISTENT = Reply.json({"problems": [], "verdict": "consistent"})


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong-token"}, {"Authorization": f"Basic {SERVICE_TOKEN}"}, {"Authorization": ""}],
    ids=["none", "wrong", "other-scheme", "empty"],
)
async def test_a_request_without_the_token_is_answered_401_and_judges_nothing(
    service_settings, open_client, scripted_server, headers
):
    client = await open_client(service_settings(token=SERVICE_TOKEN))
    response = await client.post("/check", json=CHECK, headers=headers)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert response.json()["error"] == "unauthorized" and "Authorization: Bearer <token>" in response.json()["message"]
    assert scripted_server.requests == []


async def test_the_token_is_checked_before_the_body(service_settings, open_client):
    client = await open_client(service_settings(token=SERVICE_TOKEN))
    response = await client.post("/check", json={"not": "a valid body"})
    assert response.status_code == 401  # an outsider learns nothing about what the body should hold


async def test_with_the_token_every_endpoint_answers(service_settings, open_client, scripted_server):
    scripted_server.enqueue(CONSISTENT, Reply.json({"fact_0": "True"}))
    client = await open_client(service_settings(token=SERVICE_TOKEN))
    auth = {"Authorization": f"Bearer {SERVICE_TOKEN}"}
    assert (await client.post("/check", json=CHECK, headers=auth)).status_code == 200
    assert (await client.post("/recall", json={"answer": "A.", "facts": ["A."]}, headers=auth)).status_code == 200
    assert (await client.get("/metrics", headers=auth)).status_code == 200
    assert (await client.get("/metrics")).status_code == 401


async def test_health_and_the_docs_need_no_token(service_settings, open_client):
    client = await open_client(service_settings(token=SERVICE_TOKEN))
    assert (await client.get("/health")).status_code == 200
    assert (await client.get("/docs")).status_code == 200
    document = (await client.get("/openapi.json")).json()
    assert document["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    assert SERVICE_TOKEN not in str(document)


async def test_without_a_token_the_service_is_open(service_settings, open_client, scripted_server):
    scripted_server.enqueue(CONSISTENT)
    client = await open_client(service_settings())
    assert (await client.post("/check", json=CHECK)).status_code == 200
    assert "securitySchemes" not in (await client.get("/openapi.json")).json().get("components", {})


async def test_a_secret_a_model_reply_echoes_never_reaches_the_client(service_settings, open_client, scripted_server):
    echoed = f"the key is {TEST_KEY} and the token {SERVICE_TOKEN}"
    scripted_server.enqueue(Reply.json({"problems": [echoed], "verdict": "inconsistent"}))
    client = await open_client(service_settings(token=SERVICE_TOKEN))
    response = await client.post("/check", json=CHECK, headers={"Authorization": f"Bearer {SERVICE_TOKEN}"})
    assert response.status_code == 200
    assert TEST_KEY not in response.text and SERVICE_TOKEN not in response.text
    assert response.json()["result"]["judgement"]["problems"] == [f"the key is {REDACTED} and the token {REDACTED}"]


def test_the_secrets_are_the_key_the_token_and_the_base_urls_credentials(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    runtime = Settings(model="openai:m", base_url="https://gateway-user:p%40ss-word@llm.example/v1?api-key=q-secret-1")
    redact = Redactor(service_secrets(ServiceSettings(runtime=runtime, token=SERVICE_TOKEN)))
    for secret in (TEST_KEY, SERVICE_TOKEN, "gateway-user", "p@ss-word", "p%40ss-word", "q-secret-1"):
        assert redact(f"echo: {secret}.") == f"echo: {REDACTED}."


def test_the_redactor_also_catches_a_secret_escaped_inside_json():
    redact = Redactor(['pa"ss\\word', "short", "abc"])
    assert redact('{"m": "pa\\"ss\\\\word"}') == f'{{"m": "{REDACTED}"}}'
    assert redact("short abc") == f"{REDACTED} abc"  # too short to be a secret: ordinary words stay


def test_the_token_comparison_accepts_only_the_exact_token():
    token = BearerToken(None)
    assert not token.enabled and token.accepts(None)
    from pydantic import SecretStr

    token = BearerToken(SecretStr("abc-123"), "MY_TOKEN")
    assert token.enabled and token.accepts("abc-123")
    assert not any(token.accepts(other) for other in (None, "", "abc-12", "abc-1234", "ABC-123"))
