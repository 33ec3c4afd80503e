"""Concurrency slots that serve waiting requests by priority, so answers already started finish first.

A runner judging many answers sets each answer's rank (its position in the run) with `request_priority`;
every request made while judging it, in whatever task, carries that rank. When all slots are taken, a freed
slot goes to the waiting request of the lowest rank, first come first served among equals. So the later
stages of answers already under way are served before the first calls of answers that started after them:
results are written steadily from the start, and memory holds only the answers in flight.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_RANK: ContextVar[int] = ContextVar("ragfacts_request_rank", default=0)


@contextmanager
def request_priority(rank: int) -> Iterator[None]:
    """Give the requests made inside this block (and in tasks it starts) `rank`: lower is served first."""
    token = _RANK.set(rank)
    try:
        yield
    finally:
        _RANK.reset(token)


class PrioritySlots:
    """An asyncio semaphore whose waiters are woken lowest rank first (FIFO within a rank)."""

    def __init__(self, size: int) -> None:
        self._free = size
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    async def __aenter__(self) -> None:
        if self._free > 0 and not self._waiting:
            self._free -= 1
            return
        slot: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (_RANK.get(), next(self._order), slot))
        try:
            await slot
        except asyncio.CancelledError:
            if slot.done() and not slot.cancelled():
                self._release()  # the slot was handed over just as the waiter was cancelled: pass it on
            raise

    async def __aexit__(self, *exc: Any) -> None:
        self._release()

    def _release(self) -> None:
        """Hand the slot to the best waiter still waiting, else free it."""
        while self._waiting:
            _, _, slot = heapq.heappop(self._waiting)
            if not slot.done():
                slot.set_result(None)
                return
        self._free += 1

    @property
    def waiting(self) -> int:
        return sum(not slot.done() for _, _, slot in self._waiting)
