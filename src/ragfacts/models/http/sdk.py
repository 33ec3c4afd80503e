"""Chat completions sent through the official `openai` SDK: `-M http=aiohttp` (the SDK's aiohttp client) or
`-M http=httpx` (its default), and a base URL with credentials in it, which the direct transport does not take.

The body is built by the backend to the API's shape already, so it is sent with the SDK's `post` (its documented way
to send a request as it is), as JSON bytes where the SDK takes them: `chat.completions.create` would walk it again
against its parameter types. The reply comes back as the JSON object the server sent (`cast_to=object`), as the
direct transport returns it.

The base URL's query goes in the SDK's `default_query`, not in its base URL (the SDK joins paths after a query: it
would send to `/v1?api-version=…/` or drop the path), and a key sent in Azure's `api-key` header goes with every
request in place of the SDK's Bearer header (`direct.key_headers` decides which, for both transports).
"""

from __future__ import annotations

import inspect
import os
from typing import TYPE_CHECKING, Any, Literal

from ragfacts import jsontext
from ragfacts.models._errors import BackendError, ConfigurationError
from ragfacts.models.http.direct import OPENAI_URL, Auth, key_headers, query_values, short, split_query

if TYPE_CHECKING:
    import openai


class SdkClient:
    """One `openai.AsyncOpenAI` on one event loop, with the SDK's retries off (ours count every retry in the ledger and
    honour Retry-After)."""

    def __init__(
        self,
        base_url: str | None,
        api_key: str,
        timeout_s: float,
        http: Literal["aiohttp", "httpx"],
        auth: Auth | None = None,
    ) -> None:
        import openai  # on the first request: a run answered from the cache never pays for importing the SDK

        url = base_url or os.environ.get("OPENAI_BASE_URL")  # as the SDK reads it
        root, query = split_query(url) if url else (None, "")
        self._client: openai.AsyncOpenAI = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=root,
            default_query=query_values(query) or None,
            max_retries=0,
            timeout=timeout_s,
            http_client=aiohttp_client(timeout_s) if http == "aiohttp" else None,
        )
        # whether the SDK's `post` takes a body as bytes (`content=`; older versions take a dict only)
        self._sends_bytes = "content" in inspect.signature(self._client.post).parameters
        key = key_headers(url or OPENAI_URL, api_key, auth)
        # Azure's header replaces the SDK's Bearer one (an omitted header is the SDK's way to drop its own)
        self._headers: dict[str, str | openai.Omit] = (
            {"Authorization": openai.Omit(), **key} if "api-key" in key else {}
        )

    async def create(self, body: dict[str, Any]) -> dict[str, Any]:
        import openai

        try:
            if self._sends_bytes:  # the body as JSON bytes (orjson), not through the SDK's encoder
                content = jsontext.dumps_bytes(body)
                reply = await self._client.post(
                    "/chat/completions", cast_to=object, content=content, options={"headers": self._headers}
                )
            else:
                reply = await self._client.post(
                    "/chat/completions", cast_to=object, body=body, options={"headers": self._headers}
                )
        except openai.APIStatusError as error:
            retry_after = error.response.headers.get("retry-after")
            raise BackendError.http(error.status_code, short(error.message), retry_after) from error
        except (openai.APITimeoutError, openai.APIConnectionError) as error:
            raise BackendError(f"{type(error).__name__}: {error}", transient=True) from error
        if not isinstance(reply, dict):
            raise BackendError(f"the server's reply is not a JSON object: {short(str(reply))}", transient=True)
        return reply

    async def close(self) -> None:
        await self._client.close()


def aiohttp_client(timeout_s: float) -> Any:
    """The SDK's aiohttp client (`openai[aiohttp]`); ConfigurationError where this SDK does not offer it."""
    try:
        from openai import DefaultAioHttpClient

        return DefaultAioHttpClient(timeout=timeout_s)
    except (ImportError, RuntimeError) as error:  # an SDK without it, or without aiohttp installed
        raise ConfigurationError(
            "-M http=aiohttp needs the openai SDK's aiohttp client: pip install 'openai[aiohttp]'"
        ) from error
