"""The current results of a plan in a run directory: each item, in the dataset's order, with the lines made from its
inputs and the methods' configurations, and the summaries of the judges over them.

What reads a run's results goes through here (the evaluation's read-back, reports, synth's dataset). A line's outcome
comes from the run directory's index; its other fields are read from the file when asked for, so a run of any size
is never held in memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ragfacts.items import Item
from ragfacts.methods.base import Method, Outcome
from ragfacts.models import ChatModel
from ragfacts.runs.planning import RunPlan
from ragfacts.runs.rundir import Entry, RunDir, RunError
from ragfacts.runs.summary import MethodSummary, summarise_method


class CurrentResults:
    """The plan's items, in the dataset's order, each with its current results lines by method (made from the same
    inputs and configuration). Iterable any number of times; a line's outcome comes from the index, its other fields
    are read from the file when asked for: a run of any size is never held in memory."""

    def __init__(self, run_dir: RunDir, plan: RunPlan, model: ChatModel) -> None:
        self.run_dir, self.plan = run_dir, plan
        methods = [m.resolved(model) for m in plan.methods]
        configs = {m.spec: m.configuration_hash(model) for m in methods}
        index = run_dir.index()
        self._current: dict[str, dict[str, Entry]] = {}
        for item in plan.dataset.items():
            content = item.content_hash()
            found = {
                m.spec: entry
                for m in methods
                if (entry := index.get(item.key, m.spec)) is not None and entry.current(content, configs[m.spec])
            }
            if found:
                self._current[item.key] = found

    def __iter__(self) -> Iterator[tuple[Item, dict[str, Any]]]:
        for item in self.plan.dataset.items():
            entries = self._current.get(item.key, {})
            yield item, {spec: StoredLine(self.run_dir, item.key, spec, entry) for spec, entry in entries.items()}


class StoredLine(Mapping[str, Any]):
    """One current results line: its outcome at hand, the rest read from the results file on each use."""

    def __init__(self, run_dir: RunDir, item: str, method: str, entry: Entry) -> None:
        self._run_dir, self._key, self._entry = run_dir, (item, method), entry

    def __getitem__(self, name: str) -> Any:
        if name == "outcome":
            return self._entry.outcome
        return self._line()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._line())

    def __len__(self) -> int:
        return len(self._line())

    def _line(self) -> dict[str, Any]:
        line = self._run_dir.log.line_at(self._entry.offset, self._entry.line)
        if (line["id"], line["method"]) != self._key:
            raise RunError(f"{self._run_dir.results} changed since it was read (another run?); read the run again")
        return line


def summarise(run_dir: RunDir, plan: RunPlan, model: ChatModel) -> list[MethodSummary]:
    """One summary per judge over the dataset's items, from the current results only."""
    judges = [m.resolved(model) for m in plan.methods if isinstance(m, Method)]
    return summarise_judged(CurrentResults(run_dir, plan, model), judges)


def summarise_judged(
    judged: Iterable[tuple[Item, dict[str, dict[str, Any]]]], methods: list[Method]
) -> list[MethodSummary]:
    """One summary per method from each item's current lines (`CurrentResults`): its judged outcomes over the
    items it can judge (those it cannot are in no denominator)."""
    outcomes: dict[str, list[Outcome]] = {m.spec: [] for m in methods}
    applicable = dict.fromkeys(outcomes, 0)
    for item, lines in judged:
        for m in methods:
            if m.accepts(item) is not None:
                continue
            applicable[m.spec] += 1
            if m.spec in lines:
                outcomes[m.spec].append(Outcome.model_validate(lines[m.spec]["outcome"]))
    return [summarise_method(m.spec, m.kind, applicable[m.spec], outcomes[m.spec]) for m in methods]
