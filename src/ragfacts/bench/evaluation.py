"""One evaluation, whoever asks: the command line, the Python API and the service run a plan and read its results
through `evaluate_plan` and `RunResult`, so each of them shows the same rows, summaries and gates.

    result = await evaluate_plan(run_dir, plan, model, progress)  # runs what is not done yet, then reads back once
    result.summaries, result.rows(), result.verdicts(), result.document(), result.gates(thresholds)

The results are read from the run directory once, after the run: each item's current lines (those made from
the same inputs and configuration), in the dataset's order. Every view of the run is computed from them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ragfacts.bench.current import CurrentResults, summarise_judged
from ragfacts.bench.gates import GateResult, check_gates
from ragfacts.bench.progress import RunProgress
from ragfacts.bench.rundir import RunDir
from ragfacts.bench.runner import RunPlan, RunReport, run
from ragfacts.bench.summary import MethodSummary, row_view
from ragfacts.bench.verdicts import VerdictRow, verdict_rows
from ragfacts.items import Item
from ragfacts.methods.base import Kind, Method, Outcome
from ragfacts.models import ChatModel

# How the pairs are judged when not in this process: called instead of `run` (the Ray engine).
Engine = Callable[[RunDir, RunPlan, RunProgress | None], Awaitable[RunReport]]


@dataclass
class RunResult:
    """What one evaluation did and found: the run's report, and each item with its current results lines."""

    run_dir: RunDir
    plan: RunPlan
    report: RunReport
    judged: CurrentResults  # in the dataset's order; lines by method spec, read from the run directory when used
    summaries: list[MethodSummary]

    @property
    def kinds(self) -> dict[str, Kind]:
        return {m.spec: m.kind for m in self.plan.methods if isinstance(m, Method)}

    def rows(self) -> list[dict[str, Any]]:
        """One row per item: id, label, faithfulness, recall, failures, complete."""
        return rows_of(self.judged, self.kinds)

    def verdicts(self) -> list[VerdictRow]:
        """One verdict row per item, with the texts and the methods' views (built when read)."""
        return list(verdict_rows(self.judged, self.kinds))

    def lines(self) -> list[dict[str, Any]]:
        """Every current results line."""
        return [line for _, by_method in self.judged for line in by_method.values()]

    def document(self) -> dict[str, Any]:
        """The run as one JSON document (`--json`, the service's reply): report, summaries, rows with results."""
        rows = [
            {**row, "results": {method: line["result"] for method, line in lines.items()}}
            for row, (_, lines) in zip(self.rows(), self.judged, strict=True)
        ]
        described = {key: value for key, value in vars(self.report).items() if key != "usage"}
        return {
            "run": str(self.run_dir.target),
            "results_file": str(self.run_dir.results),
            "report": described | {"usage": self.report.usage.model_dump()},
            "summary": [s.model_dump() for s in self.summaries],
            "rows": rows,
        }

    def gates(self, thresholds: Mapping[str, float | None]) -> list[GateResult]:
        """Each threshold given, checked against the summary of each method of its kind."""
        return check_gates(self.summaries, thresholds)


def rows_of(
    judged: Iterable[tuple[Item, Mapping[str, Mapping[str, Any]]]], kinds: dict[str, Kind]
) -> list[dict[str, Any]]:
    """One row per item (id, label, faithfulness, recall, failures, complete) from its current lines."""
    rows = []
    for item, lines in judged:
        outcomes = {method: Outcome.model_validate(line["outcome"]) for method, line in lines.items()}
        rows.append(row_view(item.model_dump(), outcomes, kinds))
    return rows


async def evaluate_plan(
    run_dir: RunDir,
    plan: RunPlan,
    model: ChatModel,
    progress: RunProgress | None = None,
    *,
    engine: Engine | None = None,
) -> RunResult:
    """Run `plan` into `run_dir` (on `engine`, else in this process) and read its results back once."""
    report = await (engine(run_dir, plan, progress) if engine is not None else run(run_dir, plan, model, progress))
    return read_result(run_dir, plan, model, report)


def read_result(run_dir: RunDir, plan: RunPlan, model: ChatModel, report: RunReport | None = None) -> RunResult:
    """The current results of `plan` in `run_dir`, with the report of the run that made them."""
    judged = CurrentResults(run_dir, plan, model)
    judges = [m.resolved(model) for m in plan.methods if isinstance(m, Method)]
    summaries = summarise_judged(judged, judges)  # from the lines read, once
    return RunResult(run_dir, plan, report or RunReport(), judged, summaries)
