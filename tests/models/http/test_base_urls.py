"""Base URLs with a path and a query (Azure OpenAI's), and how the key is sent, over HTTP on every transport."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from ragfacts.models import Message, ModelOptions
from ragfacts.models.http.openai_compat import OpenAICompatibleModel
from tests.conftest import TEST_KEY
from tests.scripted_server import Reply, ScriptedServer

ASK = [Message(role="user", content="Is the answer supported?")]
TRANSPORTS = ["direct", "aiohttp", "httpx"]


class Verdict(BaseModel):
    verdict: bool


def root_of(server: ScriptedServer) -> str:
    return server.base_url.removesuffix("/v1")


@pytest.mark.parametrize("http", TRANSPORTS)
async def test_an_azure_deployment_url_keeps_its_path_and_query_and_sends_the_key_as_api_key(
    scripted_server, model_at, http
):
    """Azure OpenAI's base URL `…/openai/deployments/NAME?api-version=…`: the call goes to
    `…/openai/deployments/NAME/chat/completions?api-version=…`, the query kept after the path, and the key goes in
    an `api-key` header (an api-version query makes the URL Azure-shaped), never as a Bearer token."""
    url = f"{root_of(scripted_server)}/openai/deployments/gpt-4o-mini?api-version=2024-02-01"
    completion = await model_at(url, max_retries=0, http=http).complete(ASK, Verdict)
    assert completion.ok, completion.failure
    (request,) = scripted_server.requests
    assert request.route == "/openai/deployments/gpt-4o-mini/chat/completions"
    assert request.query == {"api-version": ["2024-02-01"]}
    assert request.headers["api-key"] == TEST_KEY
    assert "authorization" not in request.headers


@pytest.mark.parametrize("http", TRANSPORTS)
async def test_a_host_under_openai_azure_com_sends_the_key_as_api_key(scripted_server, model_at, monkeypatch, http):
    """Azure's v1 API (`https://RESOURCE.openai.azure.com/openai/v1`, no api-version): the host alone makes the URL
    Azure-shaped. The scripted server plays an HTTP proxy, so the call to the Azure host name reaches it."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", root_of(scripted_server))
    completion = await model_at("http://judge-resource.openai.azure.com/openai/v1", max_retries=0, http=http).complete(
        ASK, Verdict
    )
    assert completion.ok, completion.failure
    (request,) = scripted_server.requests
    assert request.path == "http://judge-resource.openai.azure.com/openai/v1/chat/completions"
    assert request.headers["api-key"] == TEST_KEY
    assert "authorization" not in request.headers


@pytest.mark.parametrize("http", TRANSPORTS)
@pytest.mark.parametrize(
    ("query", "auth", "expected"),
    [
        ("?tenant=acme", None, "bearer"),  # a query alone is not Azure's
        ("?api-version=2024-02-01", "bearer", "bearer"),  # Azure with a Microsoft Entra token
        ("?tenant=acme", "api-key", "api-key"),  # a gateway that takes Azure's header
    ],
)
async def test_any_query_is_kept_and_auth_chooses_the_header(scripted_server, model_at, http, query, auth, expected):
    """Every base URL keeps its query after `/chat/completions`; `-M auth=bearer|api-key` overrides the header the
    URL's shape chooses."""
    chosen = {"auth": auth} if auth else {}  # left unset: the URL's shape chooses
    completion = await model_at(f"{scripted_server.base_url}{query}", max_retries=0, http=http, **chosen).complete(
        ASK, Verdict
    )
    assert completion.ok, completion.failure
    (request,) = scripted_server.requests
    assert request.route == "/v1/chat/completions"
    assert request.query == {k: [v] for k, _, v in [query[1:].partition("=")]}
    if expected == "bearer":
        assert request.headers["authorization"] == f"Bearer {TEST_KEY}" and "api-key" not in request.headers
    else:
        assert request.headers["api-key"] == TEST_KEY and "authorization" not in request.headers


@pytest.mark.parametrize("http", TRANSPORTS)
async def test_an_echoed_api_key_and_a_secret_query_value_never_reach_the_failure_or_the_manifest(
    scripted_server, model_at, http
):
    """A server that echoes the `api-key` header in its 401, and a base URL carrying a signature in its query: the
    failure kept in results shows neither; the endpoint recorded in the manifest keeps the api-version only."""
    signature = "sig-zyxwvutsrq-ponmlkjihg"
    url = f"{root_of(scripted_server)}/openai/deployments/d?api-version=2024-02-01&sig={signature}"
    scripted_server.enqueue(Reply.error(401, error_message="Access denied: invalid subscription key {key}."))
    model = model_at(url, max_retries=0, http=http)
    completion = await model.complete(ASK, Verdict)
    (request,) = scripted_server.requests
    assert request.headers["api-key"] == TEST_KEY and request.query["sig"] == [signature]  # sent, as it must be
    assert completion.failure is not None and completion.failure.message.startswith("HTTP 401: ")
    assert completion.failure.message.endswith("Access denied: invalid subscription key [redacted].")
    recorded = completion.model_dump_json() + repr(model.fingerprint())
    assert TEST_KEY not in recorded and signature not in recorded
    assert model.endpoint_identity()["base_url"].endswith("?api-version=2024-02-01&sig=[redacted]")


def test_a_secret_in_the_query_of_openai_base_url_is_redacted_too(monkeypatch):
    """Without --base-url the transports send to OPENAI_BASE_URL: its secret-looking query values are secrets of the
    process as a --base-url's are, redacted wherever they are echoed, even without their URL."""
    from ragfacts import redaction

    signature = "sig-from-the-environment-qwertyuiop"
    monkeypatch.setenv("OPENAI_BASE_URL", f"https://gateway.example/v1?api-version=2024-02-01&sig={signature}")
    OpenAICompatibleModel("gpt-4o-mini", ModelOptions(), api_key=TEST_KEY)
    assert redaction.redact(f"denied for {signature}") == "denied for [redacted]"
