"""The OpenAI-compatible backend, driven over HTTP against the scripted server."""

from __future__ import annotations

import asyncio
import time
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from ragfacts.methods.prompting import reask_wording
from ragfacts.models import ConfigurationError, FailureKind, Message, StructuredMode, UsageLedger
from tests.conftest import TEST_KEY
from tests.scripted_server import Reply


class Verdict(BaseModel):
    reasoning: str = Field(description="why")
    verdict: Literal["consistent", "inconsistent"] = Field(description="the verdict")


ASK = [Message(role="user", content="Is the answer supported?")]
ASK_2 = [Message(role="user", content="Is the second answer supported?")]


async def test_structured_parse_success_sends_json_schema(make_model, scripted_server):
    scripted_server.enqueue(Reply.json({"reasoning": "stated", "verdict": "inconsistent"}))
    completion = await make_model().complete(ASK, Verdict, stage="judge")
    assert completion.ok
    assert completion.parsed == Verdict(reasoning="stated", verdict="inconsistent")
    fmt = scripted_server.requests[0].body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["additionalProperties"] is False
    assert completion.usage.calls == 1 and completion.attempts == 1


async def test_the_body_is_json_with_its_content_type(make_model, scripted_server):
    ask = [Message(role="user", content="答案是否有依据？")]
    assert (await make_model().complete(ask, Verdict)).ok
    (request,) = scripted_server.requests
    assert request.headers["content-type"] == "application/json"
    assert request.body["messages"] == [{"role": "user", "content": "答案是否有依据？"}]


async def test_defaults_are_deterministic_and_recorded(make_model, scripted_server):
    completion = await make_model().complete(ASK, Verdict, prompt_version="judge@1")
    body = scripted_server.requests[0].body
    assert body["temperature"] == 0 and body["seed"] == 42
    assert completion.params["temperature"] == 0 and completion.params["seed"] == 42
    assert completion.model == "scripted-model" and completion.prompt_version == "judge@1"


async def test_tool_mode_forces_the_function_and_reads_its_arguments(make_model, scripted_server):
    scripted_server.enqueue(Reply.json({"reasoning": "r", "verdict": "consistent"}))
    completion = await make_model(mode=StructuredMode.TOOL).complete(ASK, Verdict)
    body = scripted_server.requests[0].body
    assert body["tool_choice"] == {"type": "function", "function": {"name": "Verdict"}}
    assert "response_format" not in body
    assert completion.parsed.verdict == "consistent"


async def test_json_text_mode_shows_the_schema_and_extracts_fenced_json(make_model, scripted_server):
    scripted_server.enqueue(Reply.text('Sure:\n```json\n{"reasoning": "r", "verdict": "consistent"}\n```'))
    completion = await make_model(mode=StructuredMode.JSON_TEXT).complete(ASK, Verdict)
    request = scripted_server.requests[0]
    assert request.schema is None
    assert '"verdict"' in request.prompt and '"consistent" | "inconsistent"' in request.prompt
    assert completion.parsed.verdict == "consistent"


async def test_schema_in_prompt_can_be_forced_for_guided_decoding_servers(make_model, scripted_server):
    await make_model(schema_in_prompt=True).complete(ASK, Verdict)
    assert "the verdict" in scripted_server.requests[0].prompt
    scripted_server.reset()
    await make_model().complete(ASK, Verdict)
    assert "the verdict" not in scripted_server.requests[0].prompt


async def test_reask_after_invalid_json_succeeds(make_model, scripted_server):
    scripted_server.enqueue(Reply.malformed(), Reply.json({"reasoning": "r", "verdict": "consistent"}))
    completion = await make_model().complete(ASK, Verdict, reask=reask_wording("en"))
    assert completion.ok and completion.attempts == 2 and completion.usage.calls == 2
    second = scripted_server.requests[1].body["messages"]
    assert second[-2] == {"role": "assistant", "content": '{"verdict": "yes", '}
    assert "could not be used" in second[-1]["content"]


async def test_reask_carries_the_validation_error(make_model, scripted_server):
    scripted_server.enqueue(Reply.json({"reasoning": "r", "verdict": "maybe"}), Reply.schema_valid())
    completion = await make_model().complete(ASK, Verdict)
    assert completion.ok
    assert "verdict" in scripted_server.requests[1].body["messages"][-1]["content"]


async def test_chinese_reask_is_in_chinese(make_model, scripted_server):
    scripted_server.enqueue(Reply.malformed(), Reply.schema_valid())
    await make_model().complete(ASK, Verdict, lang="zh", reask=reask_wording("zh"))
    assert "修正" in scripted_server.requests[1].body["messages"][-1]["content"]


async def test_without_a_wording_the_reask_carries_the_problems_alone(make_model, scripted_server):
    scripted_server.enqueue(Reply.json({"reasoning": "r", "verdict": "maybe"}), Reply.schema_valid())
    await make_model().complete(ASK, Verdict, lang="zh")
    reask = scripted_server.requests[1].body["messages"][-1]["content"]
    assert reask.startswith("- verdict:") and "修正" not in reask


async def test_explicit_failure_after_reasks_run_out(make_model, scripted_server):
    scripted_server.enqueue(Reply.malformed(), Reply.malformed(), Reply.malformed(), Reply.schema_valid())
    completion = await make_model(reasks=2).complete(ASK, Verdict)
    assert not completion.ok
    assert completion.failure.kind is FailureKind.INVALID_OUTPUT
    assert completion.failure.last_text == '{"verdict": "yes", '
    assert completion.parsed is None
    assert len(scripted_server.requests) == 3 and completion.attempts == 3


async def test_truncated_output_is_its_own_failure(make_model, scripted_server):
    scripted_server.enqueue(Reply.truncated(), Reply.truncated())
    completion = await make_model(reasks=1).complete(ASK, Verdict, reask=reask_wording("en"))
    assert completion.failure.kind is FailureKind.TRUNCATED
    assert "token limit" in scripted_server.requests[1].body["messages"][-1]["content"]


async def test_retry_after_500(make_model, scripted_server):
    scripted_server.enqueue(Reply.error(500), Reply.error(503), Reply.schema_valid())
    completion = await make_model().complete(ASK, Verdict)
    assert completion.ok and completion.retries == 2 and completion.attempts == 1
    assert completion.usage.calls == 3


async def test_retry_honours_retry_after(make_model, scripted_server):
    scripted_server.enqueue(Reply.error(429, retry_after=0.3), Reply.schema_valid())
    started = time.perf_counter()
    completion = await make_model(retry_base_s=0.0).complete(ASK, Verdict)
    assert completion.ok and completion.retries == 1
    assert time.perf_counter() - started >= 0.3


async def test_a_retry_after_given_as_an_http_date_is_honoured(make_model, scripted_server):
    from email.utils import formatdate

    when = formatdate(time.time() + 2, usegmt=True)  # whole seconds: 1 to 2 s from now
    scripted_server.enqueue(Reply(status=429, headers={"Retry-After": when}), Reply.schema_valid())
    started = time.perf_counter()
    completion = await make_model(retry_base_s=0.0).complete(ASK, Verdict)
    assert completion.ok and completion.retries == 1
    assert time.perf_counter() - started >= 0.9  # without reading the date: retry_base_s=0, at once


@pytest.mark.parametrize("header", ["nan", "inf"])
async def test_a_retry_after_that_is_not_a_finite_number_is_ignored(make_model, scripted_server, header):
    scripted_server.enqueue(Reply(status=429, headers={"Retry-After": header}), Reply.schema_valid())
    completion = await asyncio.wait_for(make_model(retry_base_s=0.01).complete(ASK, Verdict), timeout=10)
    assert completion.ok and completion.retries == 1


async def test_transient_failure_after_retries_run_out(make_model, scripted_server):
    scripted_server.enqueue(*[Reply.error(500)] * 3)
    completion = await make_model(max_retries=2).complete(ASK, Verdict)
    assert completion.failure.kind is FailureKind.TRANSIENT
    assert "500" in completion.failure.message
    assert completion.retries == 2 and len(scripted_server.requests) == 3


async def test_tokens_of_replies_without_choices_are_counted_as_the_server_reports_them(make_model, scripted_server):
    scripted_server.enqueue(*[Reply(no_choices=True, prompt_tokens=30, completion_tokens=5)] * 2)
    ledger = UsageLedger()
    completion = await make_model(max_retries=1, ledger=ledger).complete(ASK, Verdict, stage="judge")
    assert completion.failure is not None and "no choices" in completion.failure.message
    usage = ledger.stages["judge"]
    assert (usage.calls, usage.failures, usage.prompt_tokens, usage.completion_tokens) == (2, 1, 60, 10)


async def test_client_error_is_not_retried(make_model, scripted_server):
    scripted_server.enqueue(Reply.error(400))
    completion = await make_model().complete(ASK, Verdict)
    assert completion.failure.kind is FailureKind.REQUEST
    assert len(scripted_server.requests) == 1


async def test_a_request_that_times_out_ends_the_call(make_model, scripted_server):
    """--timeout bounds the whole call, retries included: a request that used all of it leaves nothing to retry in."""
    scripted_server.enqueue(Reply.schema_valid().delayed(1.5))
    started = time.perf_counter()
    completion = await make_model(timeout_s=0.5).complete(ASK, Verdict)
    assert time.perf_counter() - started < 1.0
    assert completion.failure.kind is FailureKind.TRANSIENT and "timed out" in completion.failure.message
    assert completion.retries == 0 and len(scripted_server.requests) == 1


async def test_cache_hit_on_rerun_makes_zero_requests(make_model, scripted_server):
    first = await make_model(cache=True).complete(ASK, Verdict)
    ledger = UsageLedger()
    again = await make_model(cache=True, ledger=ledger).complete(ASK, Verdict)
    assert len(scripted_server.requests) == 1
    assert again.cached and again.parsed == first.parsed and again.usage.calls == 0
    assert ledger.total().cache_hits == 1 and ledger.total().calls == 0


async def test_cache_key_changes_with_params_and_schema(make_model, scripted_server):
    model = make_model(cache=True)
    await model.complete(ASK, Verdict)
    await model.complete(ASK, Verdict, temperature=0.7)
    await model.complete(ASK, None)
    assert len(scripted_server.requests) == 3


async def test_the_cache_keys_on_the_model_not_on_where_it_is_served(scripted_server, tmp_path):
    """A local server restarted on another address keeps its cache; the address stays in the run's configuration."""
    from ragfacts.models import ModelOptions, ResponseCache
    from ragfacts.models.http.openai_compat import OpenAICompatibleModel

    def at(url: str) -> OpenAICompatibleModel:
        cache = ResponseCache(tmp_path / "cache.sqlite3")
        return OpenAICompatibleModel("scripted-model", ModelOptions(), base_url=url, api_key=TEST_KEY, cache=cache)

    here, there = at(scripted_server.base_url), at(scripted_server.base_url.replace("127.0.0.1", "localhost"))
    await here.complete(ASK, Verdict)
    again = await there.complete(ASK, Verdict)
    assert again.cached and len(scripted_server.requests) == 1
    assert here.fingerprint()["base_url"] != there.fingerprint()["base_url"]
    assert OpenAICompatibleModel("another-model", base_url=scripted_server.base_url).identity() != here.identity()
    await here.aclose()


async def test_failures_are_not_cached(make_model, scripted_server):
    scripted_server.enqueue(Reply.error(400))
    assert not (await make_model(cache=True).complete(ASK, Verdict)).ok
    assert (await make_model(cache=True).complete(ASK, Verdict)).ok
    assert len(scripted_server.requests) == 2


async def test_key_is_sent_but_never_stored(make_model, scripted_server, tmp_path):
    completion = await make_model(cache=True).complete(ASK, Verdict)
    assert scripted_server.requests[0].headers["authorization"] == f"Bearer {TEST_KEY}"
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("cache.sqlite3*"))
    assert stored and TEST_KEY.encode() not in stored
    assert TEST_KEY not in completion.model_dump_json()


async def test_cache_file_is_user_only(make_model, tmp_path):
    await make_model(cache=True).complete(ASK, Verdict)
    assert (tmp_path / "cache.sqlite3").stat().st_mode & 0o777 == 0o600


async def test_ledger_counts_exact_per_stage(make_model, scripted_server):
    ledger = UsageLedger()
    model = make_model(ledger=ledger, reasks=1)
    scripted_server.enqueue(
        Reply.malformed(prompt_tokens=100, completion_tokens=10),
        Reply.schema_valid(prompt_tokens=120, completion_tokens=20),
        Reply.error(500),
        Reply.schema_valid(prompt_tokens=50, completion_tokens=5),
        Reply.malformed(),
        Reply.malformed(),
    )
    await model.complete(ASK, Verdict, stage="decompose")
    await model.complete(ASK, Verdict, stage="fact")
    await model.complete(ASK, Verdict, stage="fact")
    decompose, fact = ledger.stages["decompose"], ledger.stages["fact"]
    assert (decompose.calls, decompose.prompt_tokens, decompose.completion_tokens) == (2, 220, 30)
    assert (decompose.reasks, decompose.failures) == (1, 0)
    assert (fact.completions, fact.calls, fact.retries, fact.reasks, fact.failures) == (2, 4, 1, 1, 1)
    assert fact.prompt_tokens == 50 + 11 + 11
    assert ledger.total().calls == 6


async def test_one_bad_call_does_not_kill_a_batch(make_model, scripted_server):
    import asyncio

    scripted_server.when("poison", Reply.error(400))
    model = make_model(concurrency=2)
    prompts = [[Message(role="user", content=f"item {i} {'poison' if i == 3 else ''}")] for i in range(6)]
    results = await asyncio.gather(*(model.complete(p, Verdict) for p in prompts))
    assert [r.ok for r in results] == [True, True, True, False, True, True]


@pytest.mark.parametrize("mode", [StructuredMode.JSON_SCHEMA, StructuredMode.TOOL, StructuredMode.JSON_TEXT])
async def test_chinese_text_round_trips_in_every_mode(make_model, scripted_server, mode):
    scripted_server.enqueue(Reply.json({"reasoning": "参考文本明确说明了这一点。", "verdict": "consistent"}))
    completion = await make_model(mode=mode).complete([Message(role="user", content="答案是否一致？")], Verdict)
    assert completion.parsed.reasoning == "参考文本明确说明了这一点。"


async def test_calls_are_sent_directly_unless_the_sdk_is_asked_for(make_model, scripted_server):
    import openai

    for http in (None, "aiohttp", "httpx"):
        model = make_model(http=http)
        assert (await model.complete(ASK, Verdict)).ok, http
        if http is not None:  # the SDK's client, on the stack asked for
            on_aiohttp = isinstance(model._client._client._client, openai.DefaultAioHttpClient)
            assert on_aiohttp is (http == "aiohttp")
        await model.aclose()
        assert model._client is None  # closed on the loop that opened it
    agents = [r.headers["user-agent"] for r in scripted_server.requests]
    assert agents[0].startswith("ragfacts/")
    assert agents[1:] and all(agent.startswith("AsyncOpenAI/Python") for agent in agents[1:])
    bodies = [r.body for r in scripted_server.requests]
    assert bodies[0] == bodies[1] == bodies[2]  # the same request whichever way it goes


@pytest.mark.parametrize("http", [None, "httpx"])
async def test_both_transports_sort_errors_alike(make_model, scripted_server, http):
    scripted_server.enqueue(Reply.error(503, retry_after=0.01), Reply.error(400, error_message="bad schema"))
    model = make_model(http=http, max_retries=1)
    failed = await model.complete(ASK, Verdict)
    assert not failed.ok
    assert failed.failure.message.startswith("HTTP 400: ") and failed.failure.message.endswith("bad schema")
    assert len(scripted_server.requests) == 2  # the 503 was retried, the 400 was not


async def test_the_organization_and_project_from_the_environment_are_sent(make_model, scripted_server, monkeypatch):
    monkeypatch.setenv("OPENAI_ORG_ID", "org-test")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-test")
    assert (await make_model().complete(ASK, Verdict)).ok
    (request,) = scripted_server.requests
    assert (request.headers["openai-organization"], request.headers["openai-project"]) == ("org-test", "proj-test")


async def test_an_sdk_without_its_aiohttp_client_refuses_it_when_asked_for(make_model, scripted_server, monkeypatch):
    import openai

    class Missing:  # what the SDK offers when aiohttp is not installed
        def __init__(self, **_options: object) -> None:
            raise RuntimeError("To use the aiohttp client you must have installed the package with the `aiohttp` extra")

    monkeypatch.setattr(openai, "DefaultAioHttpClient", Missing)
    assert (await make_model().complete(ASK, Verdict)).ok  # sent directly: the SDK's client is not needed
    with pytest.raises(ConfigurationError, match=r"pip install 'openai\[aiohttp\]'"):
        make_model(http="aiohttp")


async def test_a_base_url_with_credentials_goes_on_httpx_which_accepts_them(scripted_server, tmp_path):
    import openai

    from ragfacts.models import ModelOptions
    from ragfacts.models.http.openai_compat import OpenAICompatibleModel

    host = scripted_server.base_url.split("://", 1)[1]
    url = f"http://gateway-user:p4ss-w0rd-123456@{host}"
    model = OpenAICompatibleModel("scripted-model", ModelOptions(), base_url=url, api_key=TEST_KEY)
    assert (await model.complete(ASK, Verdict)).ok
    assert not isinstance(model._client._client._client, openai.DefaultAioHttpClient)  # the SDK's httpx
    assert scripted_server.requests[0].headers["user-agent"].startswith("AsyncOpenAI/Python")
    await model.aclose()
    with pytest.raises(ConfigurationError, match="credentials"):
        OpenAICompatibleModel("scripted-model", ModelOptions(http="aiohttp"), base_url=url, api_key=TEST_KEY)


@pytest.mark.parametrize("http", ["direct", "aiohttp", "httpx"])
async def test_a_proxy_from_the_environment_carries_the_calls_on_every_transport(scripted_server, monkeypatch, http):
    from ragfacts.models import ModelOptions
    from ragfacts.models.http.openai_compat import OpenAICompatibleModel

    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", scripted_server.base_url.removesuffix("/v1"))  # the server plays the proxy
    url = "http://judge.invalid/v1"  # reached only through the proxy
    model = OpenAICompatibleModel("scripted-model", ModelOptions(http=http, max_retries=0), base_url=url, api_key="k")
    completion = await model.complete(ASK, Verdict)
    await model.aclose()
    assert completion.ok, completion.failure
    assert scripted_server.requests[0].path == "http://judge.invalid/v1/chat/completions"


@pytest.mark.parametrize("http", ["direct", "aiohttp", "httpx"])
async def test_a_proxys_credentials_go_to_the_proxy_and_no_proxy_is_honoured(scripted_server, monkeypatch, http):
    import base64

    from ragfacts.models import ModelOptions
    from ragfacts.models.http.openai_compat import OpenAICompatibleModel

    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    proxy = scripted_server.base_url.removesuffix("/v1").replace("http://", "http://proxyuser:proxypass@")
    monkeypatch.setenv("HTTP_PROXY", proxy)
    url = "http://judge.invalid/v1"
    model = OpenAICompatibleModel("scripted-model", ModelOptions(http=http, max_retries=0), base_url=url, api_key="k")
    assert (await model.complete(ASK, Verdict)).ok
    assert (await model.complete(ASK_2, Verdict)).ok  # the proxy is kept for every call, not only the first
    await model.aclose()
    expected = "Basic " + base64.b64encode(b"proxyuser:proxypass").decode()
    assert [r.headers.get("proxy-authorization") for r in scripted_server.requests] == [expected, expected]

    monkeypatch.setenv("NO_PROXY", "judge.invalid")  # bypassed: the call goes to judge.invalid itself, and fails
    model = OpenAICompatibleModel("scripted-model", ModelOptions(http=http, max_retries=0), base_url=url, api_key="k")
    assert not (await model.complete(ASK, Verdict)).ok
    await model.aclose()
    assert len(scripted_server.requests) == 2


async def test_without_a_base_url_openai_base_url_is_read_as_the_sdk_reads_it(scripted_server, monkeypatch):
    from ragfacts.models import ModelOptions
    from ragfacts.models.http.openai_compat import OpenAICompatibleModel

    monkeypatch.setenv("OPENAI_BASE_URL", scripted_server.base_url)
    model = OpenAICompatibleModel("scripted-model", ModelOptions(), api_key=TEST_KEY)
    completion = await model.complete(ASK, Verdict)
    await model.aclose()
    assert completion.ok and len(scripted_server.requests) == 1
