"""Bounds on what one request may take: its body (413), its time (504), a place among those judged at once (429)."""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from starlette.types import ASGIApp, Message, Receive, Scope, Send

T = TypeVar("T")
# (status, error code, message, headers) -> an ASGI response
ErrorResponder = Callable[[int, str, str, dict[str, str]], Any]
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


class Busy(Exception):
    """Every place is taken; `retry_after` is the seconds a client should wait."""

    def __init__(self, limit: int, retry_after: int) -> None:
        super().__init__(f"the server is judging {limit} requests, its limit (--max-concurrent); retry later")
        self.retry_after = retry_after


class TimedOut(Exception):
    """The judgement ran past the request timeout and was cancelled."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"the judgement took longer than {seconds:g} s (--request-timeout) and was cancelled; "
            "send a shorter answer, fewer rows, or ask the operator for a longer timeout"
        )


class RequestSlots:
    """At most `limit` requests judged at once; one more is refused at once, never queued.

    Refusing (429 with Retry-After) instead of queueing keeps latency bounded for those admitted and tells a
    client's backoff how long to wait: about as long as a request has recently taken.
    """

    def __init__(self, limit: int, max_wait_s: float) -> None:
        self.limit = limit
        self.active = 0
        self._max_wait_s = max_wait_s
        self._recent_s: float | None = None  # moving average of how long a held place is held

    @contextlib.asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """Hold a place while judging; raises Busy when none is free."""
        if self.active >= self.limit:
            raise Busy(self.limit, self.retry_after())
        self.active += 1
        started = time.perf_counter()
        try:
            yield
        finally:
            self.active -= 1
            held = time.perf_counter() - started
            self._recent_s = held if self._recent_s is None else 0.8 * self._recent_s + 0.2 * held

    def retry_after(self) -> int:
        """Whole seconds to wait: about how long a request has recently held its place, 1 at least."""
        recent = self._recent_s if self._recent_s is not None else 1.0
        return max(1, min(math.ceil(recent), math.ceil(self._max_wait_s)))


async def within(seconds: float, work: Awaitable[T]) -> T:
    """`work`'s result, or TimedOut once `seconds` have passed (the work is cancelled)."""
    try:
        return await asyncio.wait_for(work, seconds)
    except asyncio.TimeoutError:
        raise TimedOut(seconds) from None


class BodyLimit:
    """ASGI middleware: a body over `max_bytes` is answered 413 before the app sees any of it.

    A declared Content-Length over the limit is refused before reading; a chunked body is read up to the
    limit and refused as soon as it passes it. A body within the limit is handed on whole.
    """

    def __init__(self, app: ASGIApp, max_bytes: int, respond: ErrorResponder) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.respond = respond

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._too_large(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client left: nobody to answer
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._too_large(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        kb = self.max_bytes // 1024
        message = f"the request body is larger than {kb} KiB (--max-body-kb); send fewer or shorter texts"
        response = self.respond(413, "too_large", message, {"Connection": "close"})
        await response(scope, receive, send)
