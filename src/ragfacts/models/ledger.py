"""Usage ledger: what every method stage cost, in calls and tokens."""

from __future__ import annotations

from pydantic import BaseModel

from ragfacts.models._types import Completion


class StageUsage(BaseModel):
    """Counters for one stage (e.g. "decompose", "fact_check")."""

    completions: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    reasks: int = 0
    retries: int = 0
    failures: int = 0
    model_s: float = 0.0  # time the model worked, queueing excluded

    def add(self, other: StageUsage) -> None:
        for name in type(self).model_fields:
            setattr(self, name, getattr(self, name) + getattr(other, name))


class UsageLedger:
    """Collects the usage of every completion, per stage; shared by all models of a run."""

    def __init__(self) -> None:
        self.stages: dict[str, StageUsage] = {}

    def record(self, completion: Completion) -> None:
        stage = self.stages.setdefault(completion.stage, StageUsage())
        stage.completions += 1
        stage.calls += completion.usage.calls
        stage.prompt_tokens += completion.usage.prompt_tokens
        stage.completion_tokens += completion.usage.completion_tokens
        stage.cache_hits += int(completion.cached)
        stage.reasks += max(completion.attempts - 1, 0)
        stage.retries += completion.retries
        stage.failures += int(not completion.ok)
        stage.model_s += completion.usage.model_s

    def total(self) -> StageUsage:
        total = StageUsage()
        for stage in self.stages.values():
            total.add(stage)
        return total

    def to_dict(self) -> dict[str, dict[str, float]]:
        data = {name: usage.model_dump() for name, usage in sorted(self.stages.items())}
        data["total"] = self.total().model_dump()
        return data
