"""What model work cost: the one usage type, for a completion, an answer, a stage or a whole run."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel


class Usage(BaseModel):
    """Counters that add up: a completion's, an answer's (the sum of its completions'), a run's."""

    completions: int = 0  # results asked of the model; one may take several calls (re-asks, retries)
    calls: int = 0  # requests sent (HTTP requests or forward passes)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    reasks: int = 0
    retries: int = 0
    failures: int = 0  # completions that ended without a usable reply
    model_s: float = 0.0  # time the model worked, queueing and backoff excluded
    # Time requests waited before being sent: rate limits (-M rpm/tpm), Retry-After pauses of the endpoint and
    # retry backoff; summed over requests, so concurrent waits add up to more than the wall-clock time.
    waited_s: float = 0.0

    def add(self, other: Usage) -> None:
        """Add `other`'s counters to these (on the fields' values directly: a run adds usages per call, and pydantic's
        attribute assignment would cost more than the sums)."""
        mine, theirs = self.__dict__, other.__dict__
        for name in _COUNTERS:
            mine[name] += theirs[name]

    def since(self, before: Usage) -> Usage:
        """The usage counted after `before` was taken from the same counters: each field's difference."""
        return Usage(**{name: getattr(self, name) - getattr(before, name) for name in Usage.model_fields})

    @classmethod
    def sum(cls, usages: Iterable[Usage]) -> Usage:
        """The total of `usages`."""
        total = cls()
        for usage in usages:
            total.add(usage)
        total.model_s = round(total.model_s, 3)
        total.waited_s = round(total.waited_s, 3)
        return total

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


_COUNTERS = tuple(Usage.model_fields)
