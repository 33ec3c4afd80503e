"""How a request reaches the endpoint: concurrency slots served by priority, rate limits, retries with backoff.

A mixin of `ChatModel`: backends send one request; this decides when, how often, and what waiting cost.

`--timeout` (`timeout_s`) bounds a whole call: from when its first request goes out (it holds a concurrency slot
and the rate limits let it go: the queue before that is the run's, as a local model's queue is), its retries, the
waits between them (backoff, a server's Retry-After, the endpoint's pauses and limits) and the retries' own
requests are all within it. A retry whose wait would end past the call's deadline is not waited for: the call
fails at once (transient, counted as a failed call), saying what it was asked to wait and what was left; a retry
that is sent gets only the time left. The first request is bounded by its transport's own time limit, the same
`--timeout`. All of it is decided here, in `_with_retries`.
"""

from __future__ import annotations

import asyncio
import math
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
        """Run one request within the endpoint's rate limits, retrying transient errors with backoff, all of it within
        the call's `--timeout` (the module's docstring says how).

        `tokens` is the request's estimated size for a tokens-per-minute limit. Returns the result and the
        retries used.
        """
        rpm, tpm = self.options.rpm, self.options.tpm
        deadline = math.inf  # set when the first request goes out

        async def attempt() -> tuple[T, RawReply]:
            nonlocal deadline
            async with self._concurrency_slots():
                # Inside the slot: a request let through by the limiter is sent at once, not later in a burst.
                usage.waited_s += await self.limiter.acquire(rpm=rpm, tpm=tpm, tokens=tokens)
                started = time.perf_counter()
                if deadline == math.inf:
                    deadline = time.monotonic() + self.options.timeout_s
                result, reply = await send()
            if not reply.seconds:  # backends that queue internally (llama.cpp) time themselves
                reply = reply.model_copy(update={"seconds": time.perf_counter() - started})
            return result, reply

        for retry in range(self.options.max_retries + 1):
            try:
                result, reply = await (attempt() if retry == 0 else self._before(deadline, attempt()))
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
                late = self._out_of_time(error, delay, deadline)  # before this reply's own pause is added
                if error.retry_after is not None:
                    # The server asked the endpoint to back off: every request to it waits, not only this one
                    # (this one waits in the limiter on its next attempt, and the wait is counted there).
                    self.limiter.pause(delay)
                if late is not None:
                    late.retries_used = retry
                    if late is error:
                        raise
                    raise late from error
                if error.retry_after is None:
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

    async def _before(self, deadline: float, attempt: Awaitable[tuple[T, RawReply]]) -> tuple[T, RawReply]:
        """A retry's attempt (its slot, its turn at the limits, its request), cut when the call reaches its deadline."""
        try:
            return await asyncio.wait_for(attempt, max(deadline - time.monotonic(), 0.0))
        except asyncio.TimeoutError:  # TimeoutError itself from Python 3.11
            message = (
                f"timed out: the call used its --timeout {_s(self.options.timeout_s)} s, retries and waits included"
            )
            raise BackendError(message, transient=True) from None

    def _out_of_time(self, error: BackendError, delay: float, deadline: float) -> BackendError | None:
        """The failure that ends a call whose next wait (`delay`, or the endpoint's pause where longer) would end past
        its deadline; None when the retry fits. A retry cut at the deadline ends the call with its own error."""
        left = deadline - time.monotonic()
        paused = self.limiter.paused_for()  # another request's Retry-After, before this one's is added
        if max(delay, paused) < left:
            return None
        if left <= 0:
            return error
        if paused > delay:
            asked = f"the endpoint is paused {_s(paused)} s more (a server's Retry-After)"
        elif error.retry_after is not None:
            asked = f"the server asked to wait {_s(error.retry_after)} s (Retry-After)"
        else:
            asked = f"the next retry's backoff is {_s(delay)} s"
        timeout = _s(self.options.timeout_s)
        message = f"{error}; not retried: {asked}, more than the {_s(left)} s left of --timeout {timeout} s"
        return BackendError(message, transient=True, status=error.status)

    def _backoff(self, retry: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.options.retry_max_s)
        exponential = self.options.retry_base_s * (2**retry)
        return min(exponential * (0.5 + random.random() / 2), self.options.retry_max_s)


def _s(seconds: float) -> str:
    """Seconds as a message writes them: 60, 0.37, 1.5."""
    return f"{round(seconds, 2):g}"
