"""OpenAI-compatible HTTP backend (OpenAI, Azure, vLLM, Ollama, LM Studio, DeepSeek, DashScope)."""

from __future__ import annotations

import asyncio
import os
from typing import Any, Literal
from urllib.parse import urlsplit

from ragfacts import redaction
from ragfacts.models._errors import BackendError, ConfigurationError
from ragfacts.models._types import Message, ModelSpec, RawReply, Request, StructuredMode
from ragfacts.models.base import ChatModel
from ragfacts.models.http.direct import DirectClient
from ragfacts.models.http.sdk import SdkClient, aiohttp_client
from ragfacts.models.labels import match_label_logprobs
from ragfacts.models.options import DEFAULT_ENDPOINT_CONTEXT, ModelOptions
from ragfacts.models.registry import backend
from ragfacts.models.spec import api_key_from_env
from ragfacts.models.structured import strict_schema


@backend("openai")
class OpenAICompatibleModel(ChatModel):
    """A model behind the OpenAI chat-completions API: sent on aiohttp directly (`models.http.direct`), or through the
    official SDK with `-M http=aiohttp|httpx` (`models.http.sdk`).

    Azure OpenAI: the base URL as Azure gives it, query included (`https://RESOURCE.openai.azure.com/openai/
    deployments/NAME?api-version=2024-02-01`, or `…/openai/v1`); calls go to `…/chat/completions?api-version=…`
    and the key in Azure's `api-key` header (`direct.key_headers`: by the URL's shape, or `-M auth=`)."""

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
        redaction.register_url(base_url or os.environ.get("OPENAI_BASE_URL"))  # the URL the transports send to
        self._client: DirectClient | SdkClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._http()  # a transport that cannot send to this URL is refused now, before a run starts
        if self.options.http == "aiohttp":
            aiohttp_client(self.options.timeout_s)  # and one this SDK does not offer

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
        choice = _first_choice(response)
        message = choice.get("message") or {}
        text = message.get("content") or ""
        calls = message.get("tool_calls")
        if mode is StructuredMode.TOOL and schema is not None and calls:
            text = calls[0]["function"]["arguments"]
        prompt_tokens, completion_tokens = _usage(response)
        return RawReply(
            text=text,
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
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
        choice = _first_choice(response)
        tokens = _logprobs(choice)
        prompt_tokens, completion_tokens = _usage(response)
        reply = RawReply(
            text=(choice.get("message") or {}).get("content") or "",
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
        )
        if not tokens:
            message = "the server returned no log-probabilities (unsupported by this model?)"
            raise BackendError(message, transient=False, reply=reply)
        candidates = [(t["token"], t["logprob"]) for t in tokens[0]["top"]] or [
            (tokens[0]["token"], tokens[0]["logprob"])
        ]
        return match_label_logprobs(labels, candidates), reply

    async def _create(self, body: dict[str, Any]) -> dict[str, Any]:
        """One chat-completions request on this loop's transport; the server's JSON object, or BackendError (transient
        or permanent, with the status and Retry-After)."""
        return await self._transport_for_loop().create(body)

    def _transport_for_loop(self) -> DirectClient | SdkClient:
        """The transport of the running event loop: its connections belong to one loop, and the synchronous API runs
        each call on a loop of its own. Direct (aiohttp, without the SDK) unless `-M http=` names the SDK's stack or
        the base URL carries credentials (the SDK's httpx sends them)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            http = self._http()
            if http == "direct":
                self._client = DirectClient(self.base_url, self._api_key, self.options.timeout_s, self.options.auth)
            else:
                self._client = SdkClient(self.base_url, self._api_key, self.options.timeout_s, http, self.options.auth)
            self._client_loop = loop
        return self._client

    def _http(self) -> Literal["direct", "aiohttp", "httpx"]:
        """The transport `-M http=` names; by default direct, or httpx for a base URL with credentials in it
        (`http://user:pass@host/v1`, a gateway's): aiohttp refuses them beside the key's Authorization header."""
        url = self.base_url or os.environ.get("OPENAI_BASE_URL")  # as both transports read it
        credentials = url is not None and "@" in urlsplit(url).netloc
        if credentials and self.options.http not in (None, "httpx"):
            raise ConfigurationError(
                f"-M http={self.options.http} cannot send to a base URL with credentials in it; leave -M http unset "
                "or use httpx"
            )
        return self.options.http or ("httpx" if credentials else "direct")

    async def close_connections(self) -> None:
        if self._client is not None and self._client_loop is asyncio.get_running_loop():
            await self._client.close()
        self._client = None

    async def aclose(self) -> None:
        await self.close_connections()


def _first_choice(response: dict[str, Any]) -> dict[str, Any]:
    choices = response.get("choices")
    if not choices or not isinstance(choices[0], dict):
        raise BackendError("the server returned no choices", transient=True, reply=_empty_reply(response))
    return choices[0]


def _usage(response: dict[str, Any]) -> tuple[int, int]:
    usage = response.get("usage") or {}
    return usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0


def _logprobs(choice: dict[str, Any]) -> list[dict[str, Any]] | None:
    content = (choice.get("logprobs") or {}).get("content")
    if not content:
        return None
    return [
        {
            "token": t["token"],
            "logprob": t["logprob"],
            "top": [{"token": a["token"], "logprob": a["logprob"]} for a in (t.get("top_logprobs") or [])],
        }
        for t in content
    ]


def _empty_reply(response: dict[str, Any]) -> RawReply | None:
    """A reply without choices, kept for the tokens the server says it spent on it (they are counted)."""
    if not response.get("usage"):
        return None
    prompt_tokens, completion_tokens = _usage(response)
    return RawReply(text="", prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
