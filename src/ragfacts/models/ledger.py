"""Usage ledger: what every method stage cost, in calls and tokens."""

from __future__ import annotations

from ragfacts.models._types import Completion
from ragfacts.usage import Usage


class UsageLedger:
    """Collects the usage of every completion, per stage; shared by all models of a run."""

    def __init__(self) -> None:
        self.stages: dict[str, Usage] = {}
        self.prefix = ""  # a second model of the run records its stages as "MODEL › stage"

    def record(self, completion: Completion) -> None:
        self.stages.setdefault(self.prefix + completion.stage, Usage()).add(completion.usage)

    def for_second_model(self, name: str) -> UsageLedger:
        """A view of this ledger for another model of the run: the same stages dict, its rows named after it."""
        view = UsageLedger()
        view.stages, view.prefix = self.stages, f"{name} › "
        return view

    def total(self) -> Usage:
        return Usage.sum(self.stages.values())

    def to_dict(self) -> dict[str, dict[str, float]]:
        data = {name: usage.model_dump() for name, usage in sorted(self.stages.items())}
        data["total"] = self.total().model_dump()
        return data
