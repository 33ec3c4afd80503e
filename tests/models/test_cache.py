"""The response cache: a new cache opened by several threads at once is created once; the keys of requests."""

from __future__ import annotations

import threading
from pathlib import Path

from ragfacts.hashing import digest
from ragfacts.models import Message, ResponseCache
from ragfacts.models.cache import CACHE_KEY_VERSION, cache_key
from ragfacts.models.calls import CallCache


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


def test_settings_seen_again_key_as_they_did_first_and_equal_values_of_other_types_keep_their_own_keys(tmp_path):
    calls = CallCache(ResponseCache(tmp_path / "cache.sqlite3"), "openai", "m")
    identity = {"backend": "openai", "model": "m"}
    temperatures = [0, 0.0, -0.0, False, 0, 0.0, -0.0, False]  # equal in Python, written 0, 0.0, -0.0 and false
    keys = [
        calls.key(lambda: identity, [Message(role="user", content="q")], mode="json_schema", params={"temperature": t})
        for t in temperatures
    ]
    made_afresh = [
        cache_key(
            {
                "v": CACHE_KEY_VERSION,
                "model": digest(identity, length=64),
                "mode": "json_schema",
                "params": {"temperature": t},
            },
            [("user", "q")],
        )
        for t in temperatures
    ]
    assert keys == made_afresh
    assert len(set(keys)) == 4
    listed = calls.key(lambda: identity, [Message(role="user", content="q")], params={"stop": ["\n"]})  # not kept
    assert listed == cache_key(
        {"v": CACHE_KEY_VERSION, "model": digest(identity, length=64), "params": {"stop": ["\n"]}}, [("user", "q")]
    )
