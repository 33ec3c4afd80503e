"""Per-endpoint request and token budgets, and Retry-After pauses that every request to the endpoint honours.

aiolimiter was considered: it enforces one rate per limiter, cannot give back an over-estimate, has no pause,
and must not be shared across event loops (a CLI runs several over one model's life); this is smaller than
the glue it would need.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from ragfacts.models.structured import schema_tokens
from ragfacts.text import approx_tokens

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]

_EPSILON = 1e-9


class TokenBucket:
    """A budget refilled at `per_minute / 60` a second that holds one second's worth, and at least one unit.

    Providers enforce per-minute limits over shorter windows (OpenAI: 60,000 RPM may be enforced as 1,000 a
    second), so a burst of a whole minute's budget would be answered with 429s. A request larger than the
    bucket goes once the bucket is full and leaves it in debt: later requests wait, the average holds.
    """

    def __init__(self, per_minute: float, now: float) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(self.rate, 1.0)
        self.level = self.capacity
        self._updated = now

    def wait_for(self, amount: float, now: float) -> float:
        """Seconds until `amount` may be taken (0 when it may be taken now)."""
        self._refill(now)
        missing = min(amount, self.capacity) - self.level
        return 0.0 if missing <= _EPSILON else missing / self.rate

    def take(self, amount: float, now: float) -> None:
        self._refill(now)
        self.level -= amount

    def give_back(self, amount: float, now: float) -> None:
        """Return an over-estimate (or, negative, charge an under-estimate) once the real amount is known."""
        self._refill(now)
        self.level = min(self.level + amount, self.capacity)

    def _refill(self, now: float) -> None:
        self.level = min(self.level + max(now - self._updated, 0.0) * self.rate, self.capacity)
        self._updated = now


class EndpointLimiter:
    """What every request to one endpoint waits for: its requests and tokens per minute, and Retry-After pauses.

    Buckets are kept per declared limit: models that declare the same limit for an endpoint share its budget.
    Requests wait in arrival order (one queue per event loop); the arithmetic is guarded by a thread lock, so
    loops in several threads may share the limiter.
    """

    def __init__(self, clock: Clock = time.monotonic, sleep: Sleep = asyncio.sleep) -> None:
        self._clock = clock
        self._sleep = sleep
        self._buckets: dict[tuple[str, float], TokenBucket] = {}
        self._paused_until = float("-inf")
        self._state = threading.Lock()
        self._queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()

    def pause(self, seconds: float) -> None:
        """Hold every request to the endpoint for `seconds` from now (a server's Retry-After)."""
        with self._state:
            self._paused_until = max(self._paused_until, self._clock() + seconds)

    def paused_for(self) -> float:
        """Seconds left of the current pause; 0 when there is none."""
        return max(self._paused_until - self._clock(), 0.0)

    async def acquire(self, *, rpm: float | None = None, tpm: float | None = None, tokens: int = 0) -> float:
        """Wait until a request of about `tokens` tokens may be sent, and take its share; returns seconds waited."""
        started = self._clock()
        if rpm is None and tpm is None and started >= self._paused_until:
            return 0.0
        async with self._queue():
            while True:
                with self._state:
                    now = self._clock()
                    wait = self._paused_until - now
                    if rpm is not None:
                        wait = max(wait, self._bucket("rpm", rpm, now).wait_for(1, now))
                    if tpm is not None:
                        wait = max(wait, self._bucket("tpm", tpm, now).wait_for(tokens, now))
                    if wait <= _EPSILON:
                        if rpm is not None:
                            self._bucket("rpm", rpm, now).take(1, now)
                        if tpm is not None:
                            self._bucket("tpm", tpm, now).take(tokens, now)
                        return now - started
                await self._sleep(wait)

    def settle(self, *, tpm: float | None, estimated: int, actual: int) -> None:
        """Correct the token budget by what the request really used, once its reply says so."""
        if tpm is None or actual <= 0:
            return
        with self._state:
            now = self._clock()
            self._bucket("tpm", tpm, now).give_back(estimated - actual, now)

    def _bucket(self, kind: str, per_minute: float, now: float) -> TokenBucket:
        bucket = self._buckets.get((kind, per_minute))
        if bucket is None:
            bucket = self._buckets[(kind, per_minute)] = TokenBucket(per_minute, now)
        return bucket

    def _queue(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        with self._state:
            queue = self._queues.get(loop)
            if queue is None:
                queue = self._queues[loop] = asyncio.Lock()
        return queue


_limiters: weakref.WeakValueDictionary[str, EndpointLimiter] = weakref.WeakValueDictionary()
_limiters_lock = threading.Lock()


def endpoint_limiter(endpoint: str) -> EndpointLimiter:
    """The limiter of `endpoint`, shared by every live model of this process that names the same endpoint."""
    with _limiters_lock:
        limiter = _limiters.get(endpoint)
        if limiter is None:
            limiter = _limiters[endpoint] = EndpointLimiter()
        return limiter


def estimated_tokens(texts: Iterable[str], schema: dict[str, Any] | None, completion_tokens: int) -> int:
    """A request's tokens as a tokens-per-minute limit counts them, before it is sent.

    The prompt is estimated from its characters (`approx_tokens`, plus a few tokens a message) and the reply
    is counted at `completion_tokens` (max_tokens: OpenAI reserves that much on admission). The reply's usage
    then corrects the budget (`EndpointLimiter.settle`).
    """
    prompt = sum(approx_tokens(text) + 4 for text in texts)
    if schema is not None:
        prompt += schema_tokens(schema)
    return prompt + completion_tokens
