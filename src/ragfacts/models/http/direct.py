"""Chat completions sent on aiohttp without the openai SDK: the `openai` backend's default transport.

Why (`python benchmarks/http_stack.py`, 2 cores, the same recorded requests): the SDK's layers over the HTTP stack
(building its request options, its request and response objects, its own JSON encoder) cost about 3 ms of client
CPU per call, and importing the SDK 0.7-0.9 s a run. aiohttp alone replays the same calls for under 1 ms each, start-up
included, and reaches 84-90% of the latency bound where the SDK reaches 58-80%.

What the SDK does for a chat-completions call and this does too: the base URL (else OPENAI_BASE_URL, else OpenAI's),
the key as a Bearer token (or in Azure's `api-key` header: `key_headers`), OPENAI_ORG_ID and OPENAI_PROJECT_ID as
the `OpenAI-Organization` and `OpenAI-Project` headers, proxies from the environment (HTTP(S)_PROXY, NO_PROXY),
certificates from certifi (or SSL_CERT_FILE / SSL_CERT_DIR where set), a time limit per request, and the error's own
message from an error reply. No retries: ours count every retry, honour Retry-After and keep within --timeout.
`-M http=aiohttp` or `-M http=httpx` send through the SDK instead.

A base URL's query stays a query: `https://x/v1?api-version=2024-02-01` posts to
`https://x/v1/chat/completions?api-version=2024-02-01` (Azure OpenAI's form), on both transports (`split_query`).
"""

from __future__ import annotations

import asyncio
import os
import ssl
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import ragfacts
from ragfacts import jsontext
from ragfacts.models._errors import BackendError

if TYPE_CHECKING:
    import aiohttp

OPENAI_URL = "https://api.openai.com/v1"
_HEADERS_FROM_ENV = {"OpenAI-Organization": "OPENAI_ORG_ID", "OpenAI-Project": "OPENAI_PROJECT_ID"}
AZURE_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com")  # Azure OpenAI's resources
Auth = Literal["bearer", "api-key"]


class DirectClient:
    """POST {base_url}/chat/completions (with the base URL's query), one JSON body in and one JSON object out; on the
    event loop it was first used on (its connections belong to that loop)."""

    def __init__(self, base_url: str | None, api_key: str, timeout_s: float, auth: Auth | None = None) -> None:
        url = base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL
        root, query = split_query(url)
        self.url = f"{root.rstrip('/')}/chat/completions" + (f"?{query}" if query else "")
        self.timeout_s = timeout_s
        self.headers = {
            **key_headers(url, api_key, auth),
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"ragfacts/{ragfacts.__version__}",
        }
        for header, variable in _HEADERS_FROM_ENV.items():
            if os.environ.get(variable):
                self.headers[header] = os.environ[variable]
        self._session: aiohttp.ClientSession | None = None
        self._proxy: dict[str, Any] = {}
        self._headers = self.headers

    async def create(self, body: dict[str, Any]) -> dict[str, Any]:
        """The server's reply to one request; BackendError (transient or not, with the status and Retry-After) for
        anything else."""
        import aiohttp

        session = self._session or self._open()
        try:
            data = jsontext.dumps_bytes(body)
            async with session.post(self.url, data=data, headers=self._headers, **self._proxy) as response:
                status, retry_after = response.status, response.headers.get("Retry-After")
                raw = await response.read()
        except (TimeoutError, asyncio.TimeoutError) as error:  # one class from Python 3.11; aiohttp's timeouts too
            raise BackendError(f"timed out after {self.timeout_s:g} s", transient=True) from error
        except aiohttp.ClientError as error:
            raise BackendError(f"{type(error).__name__}: {error}", transient=True) from error
        if status >= 400:
            raise BackendError.http(status, short(error_message(raw)), retry_after)
        try:
            reply = jsontext.loads(raw)
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            text = raw.decode("utf-8", errors="replace")
            raise BackendError(f"the server's reply is not a JSON object: {short(text)}", transient=True)
        return reply

    def _open(self) -> aiohttp.ClientSession:
        import aiohttp

        https = self.url.startswith("https:")
        connector = aiohttp.TCPConnector(limit=0, ssl=_certificates() if https else True)  # --concurrency bounds
        self._session = aiohttp.ClientSession(  # headers go with each request: aiohttp adds a session's to a proxy's
            connector=connector,
            timeout=aiohttp.ClientTimeout(total=self.timeout_s),
        )
        self._proxy, to_proxy = _proxy_from_environment(self.url)
        self._headers = {**self.headers, **to_proxy}
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
        self._session = None


def _proxy_from_environment(url: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The proxy the environment names for `url` (HTTP(S)_PROXY, ALL_PROXY, NO_PROXY), read once per client: `post`'s
    proxy arguments, and the headers each request adds.

    aiohttp's `trust_env` reads the same settings (with its own helper, used here), but on every request, in a
    worker thread, together with ~/.netrc: two thread hops a call, about 1 ms of CPU at 64 in flight
    (`benchmarks/performance.py`). The server's credentials are the key's header, as with the SDK, so .netrc
    is read only for the proxy's. A proxy's credentials go in `Proxy-Authorization`: on the request itself to an
    http:// server (the proxy forwards it), on the tunnel's CONNECT to an https:// one.
    """
    from aiohttp.helpers import get_env_proxy_for_url
    from yarl import URL

    try:
        proxy, auth = get_env_proxy_for_url(URL(url))
    except LookupError:  # none set, or NO_PROXY covers the host
        return {}, {}
    credentials = {"Proxy-Authorization": auth.encode()} if auth is not None else {}
    if url.startswith("https:"):
        return {"proxy": proxy, "proxy_headers": credentials or None}, {}
    return {"proxy": proxy}, credentials


def split_query(url: str) -> tuple[str, str]:
    """The base URL without its query (and fragment), and its query: requests go to a path under the first and carry
    the second (`https://x/v1?api-version=1` -> `https://x/v1`, `api-version=1`)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")), parts.query


def query_values(query: str) -> dict[str, str]:
    """A query's parameters, for a client that takes them apart from the URL (the SDK's `default_query`)."""
    return dict(parse_qsl(query, keep_blank_values=True))


def key_headers(url: str, api_key: str, auth: Auth | None) -> dict[str, str]:
    """The header that carries the key: `-M auth=` where set; else Azure's `api-key` for an Azure-shaped base URL (a
    host under .openai.azure.com or .cognitiveservices.azure.com, or an `api-version` query, which Azure OpenAI's
    URLs carry, gateways in front of it included), else `Authorization: Bearer` (OpenAI's, and every other server's).
    `-M auth=bearer` sends a Microsoft Entra token to Azure; `-M auth=api-key` the key to a gateway that takes it so."""
    if auth is None:
        parts = urlsplit(url)
        azure = (parts.hostname or "").endswith(AZURE_HOSTS) or "api-version" in query_values(parts.query)
        auth = "api-key" if azure else "bearer"
    return {"api-key": api_key} if auth == "api-key" else {"Authorization": f"Bearer {api_key}"}


def _certificates() -> ssl.SSLContext:
    """Certificates as httpx (under the SDK) reads them: SSL_CERT_FILE or SSL_CERT_DIR where set, else certifi's."""
    cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
    if not cafile and not capath:
        import certifi

        cafile = certifi.where()
    return ssl.create_default_context(cafile=cafile or None, capath=capath or None)


def error_message(raw: bytes) -> str:
    """An error reply's own message (OpenAI's `{"error": {"message": ...}}`), else its text."""
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        body = jsontext.loads(text)
    except ValueError:
        return text
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) and message else text


def short(message: str, limit: int = 300) -> str:
    return message if len(message) <= limit else message[:limit] + "…"
