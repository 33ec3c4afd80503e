"""What failed in a run: how many current results have a failed call, and the most frequent reasons.

Every method keeps its failed calls inside its result as `{"kind": ..., "message": ...}` objects (a call's
`failure`); the census finds them wherever they are, so it needs no knowledge of any method's result shape.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

TOP = 3


@dataclass
class FailureCensus:
    """Results judged, results with a failed call, and the failure reasons with their counts."""

    results: int = 0
    failed: int = 0
    reasons: Counter[str] = field(default_factory=Counter)

    @property
    def rate(self) -> float:
        return self.failed / self.results if self.results else 0.0

    def top(self, n: int = TOP) -> list[tuple[str, int]]:
        return self.reasons.most_common(n)


def census(lines: Iterable[dict[str, Any]]) -> FailureCensus:
    """The census of these results lines (the run's current ones)."""
    found = FailureCensus()
    for line in lines:
        found.results += 1
        if line.get("complete", True):
            continue
        found.failed += 1
        found.reasons.update(set(_failures(line.get("result"))))
    return found


def _failures(value: Any) -> Iterable[str]:
    """Every failure's "kind: message" inside a result, messages cut to one line of 160 characters."""
    if isinstance(value, dict):
        if isinstance(value.get("kind"), str) and isinstance(value.get("message"), str) and len(value) <= 5:
            message = " ".join(value["message"].split())
            yield f"{value['kind']}: {message[:160]}"
            return
        for item in value.values():
            yield from _failures(item)
    elif isinstance(value, list):
        for item in value:
            yield from _failures(item)
