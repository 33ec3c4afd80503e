"""Usage ledger: what every method stage cost, in calls and tokens."""

from __future__ import annotations

from collections.abc import Callable

from ragfacts.models._types import Completion
from ragfacts.usage import Usage


class UsageLedger:
    """Collects the usage of every completion, per stage; shared by all models of a run.

    A `sink` (the run directory's usage journal, while a run is judging) is told of every call as it is counted,
    so what was paid for is on disk even if the process is killed the next moment.
    """

    def __init__(self) -> None:
        self.stages: dict[str, Usage] = {}
        self.prefix = ""  # a second model of the run records its stages as "MODEL › stage"
        self.sink: Callable[[str, Usage], None] | None = None
        self._root = self
        self._given: dict[str, Usage] = {}  # what sinks were told of

    def record(self, completion: Completion) -> None:
        self._root.add(self.prefix + completion.stage, completion.usage)

    def add(self, stage: str, usage: Usage) -> None:
        """Count `usage` under `stage` (and tell the sink)."""
        self.stages.setdefault(stage, Usage()).add(usage)
        if self.sink is not None:
            self.sink(stage, usage)
            self._given.setdefault(stage, Usage()).add(usage)

    def attach(self, sink: Callable[[str, Usage], None] | None) -> None:
        """Tell `sink` of every later call, after the calls no sink was told of yet (e.g. a probe made before)."""
        self.sink = sink
        if sink is None:
            return
        for stage, total in list(self.stages.items()):
            given = self._given.get(stage, Usage())
            missing = Usage(**{n: getattr(total, n) - getattr(given, n) for n in Usage.model_fields})
            if any(getattr(missing, n) for n in Usage.model_fields):
                sink(stage, missing)
                self._given.setdefault(stage, Usage()).add(missing)

    def for_second_model(self, name: str) -> UsageLedger:
        """A view of this ledger for another model of the run: its calls go to this ledger (and its sink), in rows
        named after it."""
        view = UsageLedger()
        view.stages, view.prefix, view._root = self.stages, f"{name} › ", self
        return view

    def total(self) -> Usage:
        return Usage.sum(self.stages.values())

    def to_dict(self) -> dict[str, dict[str, float]]:
        data = {name: usage.model_dump() for name, usage in sorted(self.stages.items())}
        data["total"] = self.total().model_dump()
        return data
