"""The bounds of one in-process call: its --timeout runs from when it holds the model, and a caller that goes away
leaves the queue."""

from __future__ import annotations

import threading
import time

import pytest

from ragfacts.models._errors import BackendError
from ragfacts.models.local.local_limits import CallGuard


def test_waiting_for_the_model_does_not_count_against_the_calls_timeout():
    lock = threading.Lock()
    lock.acquire()  # another call holds the model for longer than this call's timeout
    threading.Timer(0.3, lock.release).start()
    guard = CallGuard(timeout_s=0.1)
    with guard.holding(lock):
        held = time.monotonic()
        assert not guard.due()  # its 0.1 s start now, not when it began to wait
        assert guard.deadline == pytest.approx(held + 0.1, abs=0.05)
    assert not lock.locked()


def test_a_call_whose_caller_went_away_stops_waiting_for_the_model():
    lock = threading.Lock()
    lock.acquire()
    guard = CallGuard(timeout_s=60)
    threading.Timer(0.2, guard.cancel.set).start()
    started = time.monotonic()
    with pytest.raises(BackendError, match="went away while waiting"), guard.holding(lock):
        pass
    assert time.monotonic() - started < 2 and lock.locked()  # it left the queue; the holder keeps the model
