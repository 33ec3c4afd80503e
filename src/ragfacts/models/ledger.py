"""Usage ledger: what every method stage cost, in calls and tokens."""

from __future__ import annotations

from ragfacts.models._types import Completion
from ragfacts.usage import Usage


class UsageLedger:
    """Collects the usage of every completion, per stage; shared by all models of a run."""

    def __init__(self) -> None:
        self.stages: dict[str, Usage] = {}

    def record(self, completion: Completion) -> None:
        self.stages.setdefault(completion.stage, Usage()).add(completion.usage)

    def total(self) -> Usage:
        return Usage.sum(self.stages.values())

    def to_dict(self) -> dict[str, dict[str, float]]:
        data = {name: usage.model_dump() for name, usage in sorted(self.stages.items())}
        data["total"] = self.total().model_dump()
        return data
