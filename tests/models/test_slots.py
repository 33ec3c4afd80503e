"""Concurrency slots: a freed slot goes to the waiting request of the lowest rank, first come first served."""

from __future__ import annotations

import asyncio

from ragfacts.models.slots import PrioritySlots, request_priority


async def test_waiters_are_served_lowest_rank_first_and_in_arrival_order_within_a_rank():
    slots = PrioritySlots(1)
    served: list[str] = []
    gate = asyncio.Event()

    async def request(name: str, rank: int) -> None:
        with request_priority(rank):
            async with slots:
                served.append(name)
                await gate.wait()

    holder = asyncio.create_task(request("holder", 9))
    await asyncio.sleep(0)
    waiters = [asyncio.create_task(request(name, rank)) for name, rank in [("late", 5), ("a", 1), ("b", 1), ("c", 0)]]
    await asyncio.sleep(0)
    gate.set()
    await asyncio.gather(holder, *waiters)
    assert served == ["holder", "c", "a", "b", "late"]


async def test_the_rank_is_inherited_by_tasks_started_inside_the_block():
    slots = PrioritySlots(1)
    served: list[int] = []
    release = asyncio.Event()

    async def hold() -> None:
        async with slots:
            await release.wait()

    async def one(tag: int) -> None:
        async with slots:
            served.append(tag)

    holder = asyncio.create_task(hold())
    await asyncio.sleep(0)
    with request_priority(7):
        later = asyncio.create_task(one(7))
    with request_priority(2):
        earlier = asyncio.create_task(one(2))
    await asyncio.sleep(0)
    release.set()
    await asyncio.gather(holder, later, earlier)
    assert served == [2, 7]


async def test_a_cancelled_waiter_neither_takes_nor_loses_a_slot():
    slots = PrioritySlots(1)
    release = asyncio.Event()

    async def hold() -> None:
        async with slots:
            await release.wait()

    holder = asyncio.create_task(hold())
    await asyncio.sleep(0)
    cancelled = asyncio.create_task(hold())
    await asyncio.sleep(0)
    cancelled.cancel()
    release.set()
    await holder
    await asyncio.gather(cancelled, return_exceptions=True)
    assert slots.waiting == 0
    async with slots:  # the slot came back: a new request gets it at once
        pass
    await asyncio.wait_for(asyncio.gather(*(hold() for _ in range(3))), timeout=5)
