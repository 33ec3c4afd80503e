"""How a request reaches the endpoint: concurrency slots served by priority, rate limits, retries with backoff.

A mixin of `ChatModel`: backends send one request; this decides when, how often, and what waiting cost.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ragfacts.models._errors import BackendError
from ragfacts.models._types import Message, RawReply
from ragfacts.models.options import ModelOptions
from ragfacts.models.ratelimit import EndpointLimiter, endpoint_limiter, estimated_tokens
from ragfacts.models.slots import PrioritySlots
from ragfacts.usage import Usage

T = TypeVar("T")


class Transport:
    """Slots, limits and retries for the requests of one model (the state lives on the model)."""

    backend: str
    base_url: str | None
    model_id: str
    options: ModelOptions
    serves_one_at_a_time: bool
    _limiter: EndpointLimiter | None = None
    _slots: PrioritySlots | None = None
    _slots_loop: asyncio.AbstractEventLoop | None = None

    def endpoint(self) -> str:
        """Where requests go: the models of a process on one endpoint share its rate limits and pauses.

        The backend and base URL; the model where there is none (a backend's default service limits each model
        on its own, as OpenAI does; an in-process model is its own endpoint).
        """
        return f"{self.backend}:{self.base_url or self.model_id}"

    @property
    def limiter(self) -> EndpointLimiter:
        """The rate limiter of this model's endpoint (looked up on first use: the endpoint may need the subclass)."""
        if self._limiter is None:
            self._limiter = endpoint_limiter(self.endpoint())
        return self._limiter

    async def _with_retries(
        self, send: Callable[[], Awaitable[tuple[T, RawReply]]], usage: Usage, tokens: int = 0
    ) -> tuple[T, int]:
        """Run one request within the endpoint's rate limits, retrying transient errors with backoff.

        `tokens` is the request's estimated size for a tokens-per-minute limit. Returns the result and the
        retries used.
        """
        rpm, tpm = self.options.rpm, self.options.tpm
        for retry in range(self.options.max_retries + 1):
            try:
                async with self._concurrency_slots():
                    # Inside the slot: a request let through by the limiter is sent at once, not later in a burst.
                    usage.waited_s += await self.limiter.acquire(rpm=rpm, tpm=tpm, tokens=tokens)
                    started = time.perf_counter()
                    result, reply = await send()
                if not reply.seconds:  # backends that queue internally (llama.cpp) time themselves
                    reply = reply.model_copy(update={"seconds": time.perf_counter() - started})
                reply.counted_in(usage)
                self.limiter.settle(tpm=tpm, estimated=tokens, actual=reply.prompt_tokens + reply.completion_tokens)
                return result, retry
            except BackendError as error:
                if error.reply is not None:
                    error.reply.counted_in(usage)  # the server answered: its tokens were spent
                    spent = error.reply.prompt_tokens + error.reply.completion_tokens
                    self.limiter.settle(tpm=tpm, estimated=tokens, actual=spent)
                else:
                    usage.calls += 1
                if not error.transient or retry == self.options.max_retries:
                    error.retries_used = retry
                    raise
                delay = self._backoff(retry, error.retry_after)
                if error.retry_after is not None:
                    # The server asked the endpoint to back off: every request to it waits, not only this one
                    # (this one waits in the limiter on its next attempt, and the wait is counted there).
                    self.limiter.pause(delay)
                else:
                    await asyncio.sleep(delay)
                    usage.waited_s += delay
        raise AssertionError("unreachable")

    def _estimated_tokens(
        self, messages: list[Message], schema: dict[str, Any] | None, completion_tokens: int | None
    ) -> int:
        """The request's size for a tokens-per-minute limit (0 without one: the estimate is not free)."""
        if self.options.tpm is None:
            return 0
        return estimated_tokens([m.content for m in messages], schema, completion_tokens or 0)

    def _concurrency_slots(self) -> PrioritySlots:
        # One set of slots per event loop: a CLI may run several loops over one model's lifetime. A model that
        # serves one call at a time (in-process) gets one slot: its calls queue here, in order, not on its lock.
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots_loop is not loop:
            size = 1 if self.serves_one_at_a_time else self.options.concurrency
            self._slots, self._slots_loop = PrioritySlots(size), loop
        return self._slots

    def _backoff(self, retry: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.options.retry_max_s)
        exponential = self.options.retry_base_s * (2**retry)
        return min(exponential * (0.5 + random.random() / 2), self.options.retry_max_s)
