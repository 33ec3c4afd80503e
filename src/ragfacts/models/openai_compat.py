"""OpenAI-compatible HTTP backend (OpenAI, Azure, vLLM, Ollama, LM Studio, DeepSeek, DashScope)."""

from __future__ import annotations

import asyncio
import inspect
import os
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ragfacts import jsontext, redaction
from ragfacts.models._errors import BackendError, ConfigurationError
from ragfacts.models._types import Message, ModelSpec, RawReply, Request, StructuredMode
from ragfacts.models.base import ChatModel
from ragfacts.models.labels import match_label_logprobs
from ragfacts.models.options import DEFAULT_ENDPOINT_CONTEXT, ModelOptions
from ragfacts.models.registry import backend
from ragfacts.models.spec import api_key_from_env
from ragfacts.models.structured import strict_schema

if TYPE_CHECKING:
    import openai


@backend("openai")
class OpenAICompatibleModel(ChatModel):
    """A model behind the OpenAI chat-completions API, driven by the official SDK."""

    spec_forms = "openai:MODEL (with --base-url for other servers)"
    default_mode = StructuredMode.JSON_SCHEMA
    # OpenAI shows response_format schemas and tool parameters to the model; servers that only
    # constrain decoding (vLLM guided decoding, Ollama `format`) need `schema_in_prompt=True`.
    modes_that_show_schema = frozenset({StructuredMode.JSON_SCHEMA, StructuredMode.TOOL})

    def __init__(
        self,
        model_id: str,
        options: ModelOptions | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(model_id, options, **kwargs)
        if self.mode is StructuredMode.GRAMMAR:
            raise ValueError("the grammar mode is for the local backend; use json_schema, tool or json_text")
        self.base_url = base_url
        self._api_key = api_key or "no-key"
        redaction.register(api_key)  # a key this model holds is never stored or printed, whatever echoes it
        redaction.register_url(base_url)
        self._client: openai.AsyncOpenAI | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._sends_bytes = False
        if self.options.http == "aiohttp":
            self._http_client()  # asked for by name: refused now, before a run starts, where the SDK lacks it

    @classmethod
    def spec_from(cls, name: str | None, base_url: str | None) -> ModelSpec:
        """`openai:MODEL`, sent to `base_url`, else RAGFACTS_BASE_URL, else OpenAI."""
        if not name:
            raise ConfigurationError("`openai:` needs a model name, e.g. --model openai:gpt-4o-mini")
        url = base_url or os.environ.get("RAGFACTS_BASE_URL") or None
        redaction.register_url(url)  # credentials in a base URL are secrets: never stored, never printed
        return ModelSpec(cls.backend, name, url)

    @classmethod
    def check_credentials(cls, spec: ModelSpec) -> None:
        if api_key_from_env() is None and spec.base_url is None:
            raise ConfigurationError(
                "no API key: set OPENAI_API_KEY (or RAGFACTS_API_KEY), pass --base-url for a local server, or use "
                "--model local"
            )

    @classmethod
    def build(cls, spec: ModelSpec, options: ModelOptions | None, **shared: Any) -> OpenAICompatibleModel:
        assert spec.name is not None
        return cls(spec.name, options, base_url=spec.base_url, api_key=api_key_from_env(), **shared)

    def endpoint_identity(self) -> dict[str, Any]:
        # the server's address without credentials: it is stored in manifests, not in cache keys
        return {"base_url": redaction.redact_url(self.base_url) if self.base_url else None}

    def context_tokens(self) -> int | None:
        """The endpoint model's context: -M n_ctx=, else the largest common one (prompts are estimated)."""
        return self.options.n_ctx or DEFAULT_ENDPOINT_CONTEXT

    async def _send(self, request: Request) -> RawReply:
        body: dict[str, Any] = {
            "model": self.model_id,
            "messages": [m.model_dump() for m in request.messages],
            **request.params,
        }
        schema, mode, schema_name = request.schema, request.mode, request.schema_name
        if schema is not None and mode is StructuredMode.JSON_SCHEMA:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": strict_schema(schema), "strict": True},
            }
        elif schema is not None and mode is StructuredMode.TOOL:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": schema_name,
                        "description": schema.get("description", ""),
                        "parameters": schema,
                    },
                }
            ]
            body["tool_choice"] = {"type": "function", "function": {"name": schema_name}}
        response = await self._create(body)
        if not response.choices:
            raise BackendError("the server returned no choices", transient=True, reply=_empty_reply(response))
        choice = response.choices[0]
        text = choice.message.content or ""
        if mode is StructuredMode.TOOL and schema is not None and choice.message.tool_calls:
            text = choice.message.tool_calls[0].function.arguments
        usage = response.usage
        return RawReply(
            text=text,
            finish_reason=choice.finish_reason,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            logprobs=_logprobs(choice),
        )

    async def _label_logprobs(
        self, messages: list[Message], labels: list[str], params: dict[str, Any], hidden_state: bool = False
    ) -> tuple[dict[str, float | None], RawReply]:
        request = {
            "model": self.model_id,
            "messages": [m.model_dump() for m in messages],
            **params,
            "max_tokens": 1,
            "logprobs": True,
            "top_logprobs": 20,
        }
        response = await self._create(request)
        if not response.choices:
            raise BackendError("the server returned no choices", transient=True, reply=_empty_reply(response))
        choice = response.choices[0]
        tokens = _logprobs(choice)
        usage = response.usage
        reply = RawReply(
            text=choice.message.content or "",
            finish_reason=choice.finish_reason,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
        )
        if not tokens:
            message = "the server returned no log-probabilities (unsupported by this model?)"
            raise BackendError(message, transient=False, reply=reply)
        candidates = [(t["token"], t["logprob"]) for t in tokens[0]["top"]] or [
            (tokens[0]["token"], tokens[0]["logprob"])
        ]
        return match_label_logprobs(labels, candidates), reply

    async def _create(self, request: dict[str, Any]) -> Any:
        """One chat-completions request, with errors sorted into transient and permanent.

        The body is built here to the API's shape already, so it is sent with the SDK's `post` (its documented way to
        send a request as it is): `chat.completions.create` would walk it again against its parameter types, which
        costs more client time per call than the rest of our model layer together (benchmarks/performance.py).
        """
        import openai  # on the first request: a run answered from the cache never pays for importing the SDK
        from openai.types.chat import ChatCompletion

        client = self._client_for_loop()
        try:
            if self._sends_bytes:  # the body as JSON bytes (orjson), not through the SDK's encoder
                content = jsontext.dumps_bytes(request)
                return await client.post("/chat/completions", cast_to=ChatCompletion, content=content)
            return await client.post("/chat/completions", cast_to=ChatCompletion, body=request)
        except openai.APIStatusError as error:
            status = error.status_code
            raise BackendError(
                f"HTTP {status}: {_short(error.message)}",
                transient=status in (408, 409, 429) or status >= 500,
                retry_after=_retry_after(error.response.headers.get("retry-after")),
                status=status,
            ) from error
        except (openai.APITimeoutError, openai.APIConnectionError) as error:
            raise BackendError(f"{type(error).__name__}: {error}", transient=True) from error

    def _client_for_loop(self) -> openai.AsyncOpenAI:
        """The SDK client of the running event loop: its connections belong to one loop, and the synchronous
        API runs each call on a loop of its own."""
        import openai

        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            # The SDK's own retries are off: ours count every retry in the ledger and honour Retry-After.
            self._client = openai.AsyncOpenAI(
                api_key=self._api_key,
                base_url=self.base_url,
                max_retries=0,
                timeout=self.options.timeout_s,
                http_client=self._http_client(),
            )
            self._client_loop = loop
            # whether the SDK's `post` takes a body as bytes (`content=`; older versions take a dict only)
            self._sends_bytes = "content" in inspect.signature(self._client.post).parameters
        return self._client

    def _http_client(self) -> Any:
        """The SDK's aiohttp client where it offers one (`openai[aiohttp]`), unless `-M http=httpx`; else None (the
        SDK's own httpx client). With 32 to 64 calls in flight it costs 13–25% less client CPU per call
        (`benchmarks/http_stack.py`). Proxies from the environment are honoured either way (httpx reads them).

        A base URL with credentials in it (`http://user:pass@host/v1`, a gateway's) goes on httpx: aiohttp refuses
        them beside the API key's Authorization header."""
        credentials = self.base_url is not None and "@" in urlsplit(self.base_url).netloc
        if self.options.http == "httpx" or (credentials and self.options.http is None):
            return None
        if credentials:
            raise ConfigurationError(
                "-M http=aiohttp cannot send to a base URL with credentials in it; leave -M http unset or use httpx"
            )
        try:
            from openai import DefaultAioHttpClient

            return DefaultAioHttpClient(timeout=self.options.timeout_s)
        except (ImportError, RuntimeError) as error:  # an SDK without it, or without aiohttp installed
            if self.options.http == "aiohttp":
                raise ConfigurationError(
                    "-M http=aiohttp needs the openai SDK's aiohttp client: pip install 'openai[aiohttp]'"
                ) from error
            return None

    async def close_connections(self) -> None:
        if self._client is not None and self._client_loop is asyncio.get_running_loop():
            await self._client.close()
        self._client = None

    async def aclose(self) -> None:
        await self.close_connections()


def _retry_after(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to exponential backoff


def _short(message: str, limit: int = 300) -> str:
    return message if len(message) <= limit else message[:limit] + "…"


def _logprobs(choice: Any) -> list[dict[str, Any]] | None:
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    if not content:
        return None
    return [
        {
            "token": t.token,
            "logprob": t.logprob,
            "top": [{"token": a.token, "logprob": a.logprob} for a in (t.top_logprobs or [])],
        }
        for t in content
    ]


def _empty_reply(response: Any) -> RawReply | None:
    """A reply without choices, kept for the tokens the server says it spent on it (they are counted)."""
    usage = getattr(response, "usage", None)
    if usage is None:
        return None
    return RawReply(text="", prompt_tokens=usage.prompt_tokens or 0, completion_tokens=usage.completion_tokens or 0)
