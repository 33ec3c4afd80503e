"""Usage ledger: what every method stage cost, in calls and tokens."""

from __future__ import annotations

from collections.abc import Callable

from ragfacts.models._types import Completion
from ragfacts.usage import Usage


class UsageLedger:
    """Collects the usage of every completion, per stage; shared by all models of a run.

    A `sink` (the run directory's usage journal, while a run is judging) is told of every call as it is counted,
    so what was paid for is on disk even if the process is killed the next moment. Cache hits, which cost nothing,
    are told in one sum per stage every `HITS_PER_LINE` hits and when the sink is detached: a fully cached run of
    1,000 answers writes a few lines, not 7,000. The price: a process killed mid-run (kill -9) leaves up to
    `HITS_PER_LINE - 1` hits per stage out of its ledger's `cached` column; every paid call and every failure is in.
    """

    HITS_PER_LINE = 256

    def __init__(self) -> None:
        self.stages: dict[str, Usage] = {}
        self.prefix = ""  # a second model of the run records its stages as "MODEL › stage"
        self.sink: Callable[[str, Usage], None] | None = None
        self._root = self
        self._given: dict[str, Usage] = {}  # what sinks were told of
        self._hits: dict[str, Usage] = {}  # cache hits not told yet

    def record(self, completion: Completion) -> None:
        self._root.add(self.prefix + completion.stage, completion.usage)

    def add(self, stage: str, usage: Usage) -> None:
        """Count `usage` under `stage` (and tell the sink: at once, unless it is a cache hit)."""
        _counter(self.stages, stage).add(usage)
        sink = self.sink
        if sink is None:
            return
        if usage.calls or usage.failures or not usage.cache_hits:
            self._tell(sink, stage, usage)
            return
        hits = _counter(self._hits, stage)
        hits.add(usage)
        if hits.completions >= self.HITS_PER_LINE:
            self._tell(sink, stage, self._hits.pop(stage))

    def _tell(self, sink: Callable[[str, Usage], None], stage: str, usage: Usage) -> None:
        sink(stage, usage)
        _counter(self._given, stage).add(usage)

    def attach(self, sink: Callable[[str, Usage], None] | None) -> None:
        """Tell `sink` of every later call, after the calls no sink was told of yet (e.g. a probe made before);
        None detaches the sink, after telling it of the cache hits it was not told of yet."""
        if self.sink is not None:
            for stage, hits in self._hits.items():
                self._tell(self.sink, stage, hits)
            self._hits.clear()
        self.sink = sink
        if sink is None:
            return
        for stage, total in list(self.stages.items()):
            given = self._given.get(stage, Usage())
            missing = Usage(**{n: getattr(total, n) - getattr(given, n) for n in Usage.model_fields})
            if any(getattr(missing, n) for n in Usage.model_fields):
                self._tell(sink, stage, missing)

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


def _counter(usages: dict[str, Usage], stage: str) -> Usage:
    """The usage counted under `stage`, a new one the first time (not made on every call, as `setdefault` would)."""
    usage = usages.get(stage)
    if usage is None:
        usage = usages[stage] = Usage()
    return usage
