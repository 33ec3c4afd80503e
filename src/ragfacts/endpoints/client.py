"""Ask a RAG service one question over HTTP: the answer, its contexts and the latency, or why not.

Failures are sorted before retrying, as for model calls: 408, 409, 425, 429, 5xx, timeouts and
connection errors are retried with jittered exponential backoff (Retry-After honoured, in seconds or as
an HTTP date), at most `max_retries` times; any other status, and a reply without the answer where the
path says it is, fail at once. A failure is an `Answer` with `ok=False` and the reason, never an exception;
every message is redacted of the values read from the environment and of header values.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ragfacts.endpoints.options import EndpointOptions, EndpointRequest
from ragfacts.endpoints.paths import PathError, kind_of
from ragfacts.retry_after import seconds_to_wait

if TYPE_CHECKING:
    import httpx

_TRANSIENT_STATUS = frozenset({408, 409, 425, 429})
_SHOWN = 300  # characters of a reply shown in a failure


class Answer(BaseModel):
    """What the service gave for one question: the answer and contexts, or the failure."""

    question: str
    ok: bool
    answer: str | None = None
    contexts: list[str] = []
    latency_s: float | None = None  # the request that got the reply (the last attempt)
    attempts: int = 1
    status: int | None = None  # the last HTTP status, if the service answered
    error: str | None = None


class EndpointClient:
    """An HTTP client for one service; use `async with`, then `await ask(question)` from many tasks at once."""

    def __init__(self, options: EndpointOptions, request: EndpointRequest) -> None:
        self.options = options
        self.request = request
        self._client: httpx.AsyncClient | None = None

    async def __aenter__(self) -> EndpointClient:
        import httpx  # here: a judging run without --endpoint never pays for importing it

        limits = httpx.Limits(max_connections=self.options.concurrency)
        self._client = httpx.AsyncClient(timeout=self.options.timeout_s, limits=limits)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def ask(self, question: str) -> Answer:
        """The service's answer to `question`, after any retries; never raises for the service's failures."""
        import httpx

        body = self.request.body(question)
        failure = Answer(question=question, ok=False)
        for retry in range(self.options.max_retries + 1):
            started = time.perf_counter()
            retry_after: float | None = None
            try:
                response = await asyncio.wait_for(self._post(body), timeout=self.options.timeout_s)
            except (asyncio.TimeoutError, httpx.TimeoutException):
                failure = self._failed(question, retry, None, f"timed out after {self.options.timeout_s:g} s")
                transient = True
            except httpx.TransportError as error:
                failure = self._failed(question, retry, None, f"cannot reach the service: {_describe(error)}")
                transient = True
            else:
                latency = time.perf_counter() - started
                if response.is_success:
                    return self._read(question, response, latency, retry + 1)
                status = response.status_code
                failure = self._failed(question, retry, status, f"HTTP {status}: {_shown(response.text)}")
                failure.latency_s = round(latency, 4)
                transient = status in _TRANSIENT_STATUS or status >= 500
                retry_after = seconds_to_wait(response.headers.get("retry-after"))
            if not transient or retry == self.options.max_retries:
                break
            await asyncio.sleep(self._backoff(retry, retry_after))
        return failure

    async def _post(self, body: Any) -> httpx.Response:
        assert self._client is not None, "use EndpointClient in `async with`"
        return await self._client.post(self.request.url, json=body, headers=self.request.headers)

    def _read(self, question: str, response: httpx.Response, latency: float, attempts: int) -> Answer:
        """The answer and contexts from a successful reply; a reply they are not in is a failure."""
        done = Answer(
            question=question, ok=False, latency_s=round(latency, 4), attempts=attempts, status=response.status_code
        )
        answer_path, contexts_path = self.request.answer_path, self.request.contexts_path
        try:
            reply = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return self._with_error(done, f"the reply is not JSON: {_shown(response.text)}")
        try:
            (value,) = answer_path.find(reply)
        except PathError as error:
            return self._with_error(done, f"--answer-path {answer_path.text}: {error}")
        answer = _text(value)
        if answer is None:
            return self._with_error(done, f"the answer at {answer_path.text} is {kind_of(value)}, not text")
        if not answer.strip():
            return self._with_error(done, "the answer is empty")
        contexts: list[str] = []
        if contexts_path is not None:
            try:
                contexts = _contexts(contexts_path.find(reply), contexts_path.has_wildcard)
            except PathError as error:
                return self._with_error(done, f"--contexts-path {contexts_path.text}: {error}")
        # A service that echoes a secret in its answer or contexts: never stored, never sent to the judge.
        contexts = [self.request.redact(text) for text in contexts]
        return done.model_copy(update={"ok": True, "answer": self.request.redact(answer), "contexts": contexts})

    def _with_error(self, answer: Answer, message: str) -> Answer:
        return answer.model_copy(update={"error": self.request.redact(message)})

    def _failed(self, question: str, retry: int, status: int | None, message: str) -> Answer:
        failed = Answer(question=question, ok=False, attempts=retry + 1, status=status)
        return self._with_error(failed, message)

    def _backoff(self, retry: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.options.retry_max_s)
        exponential = self.options.retry_base_s * (2**retry)
        return min(exponential * (0.5 + random.random() / 2), self.options.retry_max_s)


def _contexts(values: list[Any], wildcard: bool) -> list[str]:
    """The contexts as texts: a list of texts, one text, or (with [*]) one text per element; raises PathError."""
    if not wildcard and len(values) == 1 and isinstance(values[0], list):
        values = values[0]
    elif not wildcard and values == [None]:
        return []
    texts = []
    for value in values:
        text = _text(value) if value is not None else ""
        if text is None:
            raise PathError(f"a context is {kind_of(value)}, not text; point the path at the text: sources[*].text")
        if text.strip():
            texts.append(text)
    return texts


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def _describe(error: Exception) -> str:
    detail = str(error).strip()
    return f"{type(error).__name__}: {detail}" if detail else type(error).__name__


def _shown(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"
