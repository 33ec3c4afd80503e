"""The bare `openai` client replaying recorded requests: the same calls at the same concurrency, and nothing else.

What a command of ours is measured against (`benchmarks/performance.py`): the requests it sent, recorded by
`latency_server.py --record`, sent again with `AsyncOpenAI.chat.completions.create` from a fresh process, all at
once within `--concurrency` (no dependencies between them, so this is at least as fast as any client can be).

    python benchmarks/sdk_replay.py URL REQUESTS.jsonl --concurrency 32 [--http aiohttp|httpx|raw-aiohttp]

`--http` is the HTTP stack under the SDK: aiohttp (`DefaultAioHttpClient`, the SDK's fastest, the default here) or
httpx (the SDK's own default); raw-aiohttp is aiohttp without the SDK, as ragfacts sends by default, as a reference
for what the SDK's layers cost.

Prints one JSON line: the calls made and the seconds spent sending them (the caller times the whole process).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path


async def replay(url: str, bodies: list[dict], concurrency: int, http: str = "aiohttp") -> float:
    if http == "raw-aiohttp":
        return await replay_raw(url, bodies, concurrency)
    from openai import AsyncOpenAI, DefaultAioHttpClient

    stack = DefaultAioHttpClient(timeout=120) if http == "aiohttp" else None
    client = AsyncOpenAI(base_url=url, api_key="sk-replay", max_retries=0, timeout=120, http_client=stack)
    slots = asyncio.Semaphore(concurrency)

    async def one(body: dict) -> None:
        async with slots:
            await client.chat.completions.create(**body)

    started = time.perf_counter()
    await asyncio.gather(*(one(body) for body in bodies))
    seconds = time.perf_counter() - started
    await client.close()
    return seconds


async def replay_raw(url: str, bodies: list[dict], concurrency: int) -> float:
    """aiohttp alone, without the SDK: each body posted as JSON, each reply read as JSON. What the SDK's layers cost
    on top of the HTTP stack, for comparison only (no error handling a client needs)."""
    import aiohttp

    headers = {"Authorization": "Bearer sk-replay", "Content-Type": "application/json"}
    slots = asyncio.Semaphore(concurrency)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(headers=headers, timeout=timeout) as session:

        async def one(body: dict) -> None:
            async with slots, session.post(f"{url}/chat/completions", data=json.dumps(body)) as response:
                response.raise_for_status()
                await response.json()

        started = time.perf_counter()
        await asyncio.gather(*(one(body) for body in bodies))
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("requests", type=Path)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--http", choices=["aiohttp", "httpx", "raw-aiohttp"], default="aiohttp")
    args = parser.parse_args()
    bodies = [json.loads(line) for line in args.requests.read_text(encoding="utf-8").splitlines() if line.strip()]
    seconds = asyncio.run(replay(args.url, bodies, args.concurrency, args.http))
    print(json.dumps({"calls": len(bodies), "seconds": round(seconds, 3)}))


if __name__ == "__main__":
    main()
