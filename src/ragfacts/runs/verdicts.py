"""One verdict per input row, in input order: what the terminal table, `Results.to_pandas()` and the notebook show.

A row joins the item (question, answer, reference, ground truth) with its precision and recall results as
views (`ragfacts.methods.view`). Counting needs only the outcomes; a row's views are built when first read, so
a run of thousands of rows pays for the ones shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ragfacts.items import Item
from ragfacts.methods.base import Kind, Outcome
from ragfacts.methods.view import ResultView, view_of
from ragfacts.usage import Usage

NOT_FAITHFUL = ("inconsistent", "uncertain")  # labels a gate counts as not consistent


@dataclass
class StoredResult:
    """One method's stored result on a row: its spec, kind, common outcome and its results line, whose result is
    read (from the run directory, where the line is read lazily) only when the row's view is built."""

    method: str
    kind: Kind
    outcome: Outcome
    line: Mapping[str, Any]

    @property
    def data(self) -> dict[str, Any]:
        data: dict[str, Any] = self.line["result"]
        return data

    @cached_property
    def view(self) -> ResultView:
        return view_of(self.method, self.data, self.outcome)


@dataclass
class VerdictRow:
    """One input row and what the run's precision and recall judges said of it."""

    position: int  # 1-based, in input order
    item: Item
    results: list[StoredResult] = field(default_factory=list)

    def _first(self, kind: Kind) -> StoredResult | None:
        return next((r for r in self.results if r.kind == kind), None)

    @property
    def precision(self) -> StoredResult | None:
        return self._first("precision")

    @property
    def recall_result(self) -> StoredResult | None:
        return self._first("recall")

    @property
    def label(self) -> str | None:
        return self.precision.outcome.label if self.precision else None

    @property
    def faithfulness(self) -> float | None:
        return self.precision.outcome.score if self.precision else None

    @property
    def recall(self) -> float | None:
        return self.recall_result.outcome.score if self.recall_result else None

    @property
    def failures(self) -> int:
        return sum(r.outcome.failures for r in self.results)

    @property
    def failed(self) -> bool:
        """A call failed and left a result undecided (the next run retries it)."""
        return any(not r.outcome.complete for r in self.results)

    @property
    def not_faithful(self) -> bool:
        return self.label in NOT_FAITHFUL

    @property
    def missing_facts(self) -> bool:
        recall = self.recall
        return recall is not None and recall < 1.0

    @property
    def flagged(self) -> bool:
        """Judged not faithful (inconsistent or uncertain), or missing expected facts."""
        return self.not_faithful or self.missing_facts

    @property
    def usage(self) -> Usage:
        return Usage.sum(r.outcome.usage for r in self.results)

    @property
    def probability(self) -> float | None:
        return self.precision.view.probability if self.precision else None

    @property
    def reason(self) -> str | None:
        """Why the row is flagged (or failed): the precision judge's reason first, then what recall missed."""
        if self.precision is not None and (self.not_faithful or not self.precision.outcome.complete):
            why = self.precision.view.why
            if why:
                return why
        if self.recall_result is not None and (self.missing_facts or not self.recall_result.outcome.complete):
            view = self.recall_result.view
            missing = [unit.text for unit in view.flagged]
            if missing:
                return f"missing {len(missing)} of {len(view.units)} facts: {'; '.join(missing)}"
            return view.why
        return None

    def record(self) -> dict[str, Any]:
        """The row as flat data (facts and flagged segments nested as lists): one row of `to_pandas()`."""
        precision = self.precision.view if self.precision else None
        recall = self.recall_result.view if self.recall_result else None
        return {
            "id": self.item.id,
            "question": self.item.question,
            "answer": self.item.answer,
            "reference": self.item.reference,
            "ground_truth": self.item.ground_truth,
            "label": self.label,
            "probability": self.probability,
            "faithfulness": self.faithfulness,
            "recall": self.recall,
            "flagged": self.flagged,
            "reason": self.reason,
            "error_types": precision.error_types if precision else [],
            "flagged_segments": [unit.text for unit in precision.flagged] if precision else [],
            "facts": [unit.text for unit in recall.units] if recall else [],
            "facts_present": [unit.verdict == "supported" for unit in recall.units] if recall else [],
            "failures": self.failures,
            "complete": not self.failed,
            "calls": self.usage.calls,
            "prompt_tokens": self.usage.prompt_tokens,
            "completion_tokens": self.usage.completion_tokens,
        }


def verdict_rows(outcomes: Iterable[tuple[Item, dict[str, Any]]], kinds: dict[str, Kind]) -> Iterator[VerdictRow]:
    """Rows in input order from each item's current results lines by method (`current.CurrentResults`)."""
    for position, (item, lines) in enumerate(outcomes, start=1):
        results = [
            StoredResult(method, kinds[method], Outcome.model_validate(line["outcome"]), line)
            for method, line in lines.items()
        ]
        yield VerdictRow(position, item, results)


@dataclass(frozen=True)
class VerdictCounts:
    """How many rows were flagged, and why; how many have a failed call."""

    rows: int = 0
    judged: int = 0  # rows with at least one result
    flagged: int = 0
    not_faithful: int = 0
    uncertain: int = 0
    missing_facts: int = 0
    failed: int = 0

    @classmethod
    def of(cls, rows: Iterable[VerdictRow]) -> VerdictCounts:
        listed = list(rows)
        return cls(
            rows=len(listed),
            judged=sum(bool(r.results) for r in listed),
            flagged=sum(r.flagged for r in listed),
            not_faithful=sum(r.not_faithful for r in listed),
            uncertain=sum(r.label == "uncertain" for r in listed),
            missing_facts=sum(r.missing_facts for r in listed),
            failed=sum(r.failed for r in listed),
        )

    def line(self) -> str:
        """e.g. "flagged 3 of 6: 2 not faithful (1 uncertain), 2 missing facts; failed 0"."""
        reasons = []
        if self.not_faithful:
            uncertain = f" ({self.uncertain} uncertain)" if self.uncertain else ""
            reasons.append(f"{self.not_faithful} not faithful{uncertain}")
        if self.missing_facts:
            reasons.append(f"{self.missing_facts} missing facts")
        why = f": {', '.join(reasons)}" if reasons else ""
        unjudged = f" ({self.rows - self.judged} not judged)" if self.judged < self.rows else ""
        return f"flagged {self.flagged} of {self.rows}{unjudged}{why}; failed {self.failed}"
