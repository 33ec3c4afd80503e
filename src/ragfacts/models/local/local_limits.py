"""Bounds on one call of an in-process model: a deadline (--timeout), a cancel flag for a caller that went away,
the wait for the model, and the cost of a call nobody waits for any more.

The model serves one call at a time, so calls queue for it. The deadline runs from when a call holds the model:
`--timeout` bounds the model's work on the call, as it bounds one HTTP request to a server (waiting for a
concurrency slot is not part of either). The queue always moves, since every call ahead ends by its own deadline,
and a call whose caller went away leaves the queue.

llama.cpp calls an abort callback between the steps of every decode (the prompt's and each generated token's);
`LlamaCppModel` answers it from the `CallGuard` of the call holding the model, so a call past its deadline, or
whose caller was cancelled, ends at its next decode and frees the model.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from ragfacts.models._errors import BackendError
from ragfacts.models.ledger import UsageLedger
from ragfacts.usage import Usage

ABANDONED_STAGE = "abandoned (caller went away)"
CLOSE_WAIT_S = 30.0  # how long closing waits for a stopped call to let go of the model
QUEUE_POLL_S = 0.1  # how often a call waiting for the model looks whether its caller went away


def count_later(loop: asyncio.AbstractEventLoop, ledger: UsageLedger, usage: Usage) -> None:
    """Count an abandoned call's usage in the ledger, on the event loop's thread (the ledger is not thread-safe)."""
    with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is left to read the ledger
        loop.call_soon_threadsafe(ledger.add, ABANDONED_STAGE, usage)


class CallGuard:
    """Bounds one local call: a deadline (--timeout, from when it holds the model) and a cancel flag, which
    llama.cpp's abort callback checks during every decode."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.deadline = math.inf  # set when the call holds the model
        self.cancel = threading.Event()
        self.tokens = 0
        self.abandoned: Callable[[Usage], None] = lambda usage: None  # counts a call whose caller went away

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        """As a logits processor: count a generated token (an exception here would be lost in llama.cpp)."""
        self.tokens += 1
        return scores

    def due(self) -> bool:
        """Whether the call must end now."""
        return self.cancel.is_set() or time.monotonic() > self.deadline

    def reason(self) -> str:
        if self.cancel.is_set():
            return f"stopped: the caller went away after {self.tokens} generated tokens"
        return f"timed out after {self.timeout_s:g} s (--timeout) with {self.tokens} tokens generated"

    @contextlib.contextmanager
    def holding(self, lock: threading.Lock) -> Iterator[None]:
        """The model's lock, waited for while the calls ahead run (or until the caller goes away); the deadline
        starts once it is held."""
        while not lock.acquire(timeout=QUEUE_POLL_S):
            if self.cancel.is_set():
                raise BackendError("stopped: the caller went away while waiting for the local model", transient=False)
        self.deadline = time.monotonic() + self.timeout_s
        try:
            yield
        finally:
            lock.release()
