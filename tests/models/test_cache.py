"""The response cache: a new cache opened by several threads at once is created once."""

from __future__ import annotations

import threading
from pathlib import Path

from ragfacts.models import ResponseCache


def open_at_once(path: Path, count: int) -> tuple[list[ResponseCache], list[BaseException]]:
    """Open the cache at `path` from `count` threads released together."""
    start = threading.Barrier(count)
    caches: list[ResponseCache] = []
    errors: list[BaseException] = []

    def open_it() -> None:
        start.wait()
        try:
            caches.append(ResponseCache(path))
        except BaseException as error:  # the failure before: "table responses already exists"
            errors.append(error)

    threads = [threading.Thread(target=open_it) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return caches, errors


def test_a_new_cache_opened_by_many_threads_at_once_is_migrated_once(tmp_path: Path):
    for attempt in range(10):
        caches, errors = open_at_once(tmp_path / f"cache-{attempt}.sqlite3", 6)
        assert errors == []
        caches[0].put("k", backend="openai", model="m", stage="s", record={"text": "ok"})
        assert all(cache.get("k") == {"text": "ok"} for cache in caches)
        for cache in caches:
            cache.close()
