"""One evaluation, whoever asks: the command line, the Python API, the service and `synth` describe a run as an
`Evaluation` (the data, the methods, the run settings, where it goes) and read what it found as a `RunResult`, so
each of them shows the same rows, summaries and gates.

    evaluation = Evaluation(dataset, methods, RunSettings(limit=10), output="runs/mine")
    result = await evaluation.run(model, progress)  # runs what is not done yet (resuming), then reads back once
    result.summaries, result.rows(), result.verdicts(), result.document(), result.gates(thresholds)

The results are read from the run directory once, after the run: each item's current lines (those made from
the same inputs and configuration), in the dataset's order. Every view of the run is computed from them.
"""

from __future__ import annotations

import tempfile
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragfacts.datasets.dataset import Dataset
from ragfacts.items import Item
from ragfacts.methods.base import Kind, Method, MethodResult, Outcome, Task
from ragfacts.models import ChatModel
from ragfacts.runs.applicable import check_applicable, drop_idle
from ragfacts.runs.current import CurrentResults, summarise_judged
from ragfacts.runs.failures import FailureCensus, census
from ragfacts.runs.gates import GateResult, check_gates
from ragfacts.runs.planning import RunPlan, prepare
from ragfacts.runs.progress import RunProgress
from ragfacts.runs.rundir import RunDir
from ragfacts.runs.runner import RunReport, run
from ragfacts.runs.summary import MethodSummary, row_view
from ragfacts.runs.verdicts import VerdictRow, verdict_rows

# An item's current results lines by method spec: read from the run directory when used, or held in memory.
Judged = Iterable[tuple[Item, dict[str, Any]]]

# How the pairs are judged when not in this process: called instead of `run` (the Ray engine).
Engine = Callable[[RunDir, RunPlan, RunProgress | None], Awaitable[RunReport]]


@dataclass
class RunResult:
    """What one evaluation did and found: the run's report, and each item with its current results lines."""

    run_dir: RunDir
    plan: RunPlan
    report: RunReport
    judged: Judged  # in the dataset's order; lines by method spec, read from the run directory when used
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

    def failures(self) -> FailureCensus:
        """How many results have a failed call, of how many, and (only when some have) the most frequent reasons."""
        summaries = self.summaries
        failed = FailureCensus(results=sum(s.judged for s in summaries), failed=sum(s.incomplete for s in summaries))
        if failed.failed:  # reading every line's result is only worth it then
            failed.reasons = census(self.lines()).reasons
        return failed

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


class RunSettings(BaseModel):
    """How a run treats what is already in its output and what fails, declared once: the dataset commands' flags
    (`--limit`, `--force`, ...), the Python API's `settings` and the service's runs are made from these fields."""

    model_config = ConfigDict(extra="forbid")

    limit: int | None = Field(None, ge=1, description="judge at most N items that still need judging")
    force: bool = Field(
        False, description="use an output made with another model or options: keep what matches, redo the rest"
    )
    keep_failed: bool = Field(False, description="do not retry results whose calls failed")
    repair: bool = Field(
        False,
        description="keep the readable lines of a damaged results file (an edit, a disk error) and drop the others, "
        "saying how many; they are judged again",
    )
    stop_after: int = Field(
        5, ge=0, description="stop (exit 3) after N calls in a row could not reach the endpoint; 0 = never"
    )
    max_failed: float = Field(
        0.05,
        ge=0.0,
        le=1.0,
        description="exit 3 if more than this share of the results have a failed call (they are retried by the next "
        "run); 1 = never",
    )


@dataclass
class Evaluation:
    """One run, whoever asks for it: `methods` over `dataset` with `settings`, into `output` (a run directory, a
    `RunDir`, or None for a scratch directory that is gone once `run` has read the results back).

    Made, it has left out the default judges (`defaults`, the specs the user did not name) that can judge no item
    (`dropped`, for the caller to say so) and refused methods that cannot judge the rows (DatasetError; by the rule
    of `strict` and `every_judge`, unless `check_rows` is False). `run` resumes from what the output holds: a result
    is reused only for the same inputs and configuration. `max_failed` of the settings is the caller's to apply
    (the command line's exit 3).
    """

    dataset: Dataset
    methods: Sequence[Task]
    settings: RunSettings = field(default_factory=RunSettings)
    output: str | Path | RunDir | None = None
    in_flight: int = 16  # items judged at once: twice the model's concurrency keeps it busy
    defaults: Collection[str] = ()
    strict: bool = True  # every method must judge every item (check, recall); else each judges the items it can
    every_judge: bool = True  # every method must judge some item (a request's judges may each judge some rows)
    check_rows: bool = True  # False: no refusal before the run, which counts the items a task cannot take (synth)
    dropped: list[Task] = field(init=False)
    plan: RunPlan = field(init=False)
    run_dir: RunDir | None = field(init=False)  # None: a scratch directory

    def __post_init__(self) -> None:
        settings = self.settings
        self.plan = RunPlan(
            dataset=self.dataset,
            methods=list(self.methods),
            limit=settings.limit,
            force=settings.force,
            retry_incomplete=not settings.keep_failed,
            repair=settings.repair,
            stop_after_failures=settings.stop_after,
            in_flight=self.in_flight,
        )
        self.dropped = drop_idle(self.plan, self.defaults)
        self.methods = self.plan.methods
        if self.check_rows:
            check_applicable(self.plan, strict=self.strict, every_judge=self.every_judge)
        output = self.output
        self.run_dir = output if output is None or isinstance(output, RunDir) else RunDir(output)

    def check_target(self, inputs: Iterable[Path]) -> None:
        """Refuse an output that is one of `inputs` or a path of the wrong kind (RunError); nothing is created."""
        if self.run_dir is not None:
            self.run_dir.check_target(list(inputs))

    async def run(
        self,
        model: ChatModel,
        progress: RunProgress | None = None,
        *,
        model_spec: str | None = None,
        engine: Engine | None = None,
    ) -> RunResult:
        """Judge what the output does not hold yet with `model` (on `engine`, else in this process) and read the
        results back once; `model_spec` names the model in the manifest."""
        if model_spec is not None:
            self.plan.model_spec = model_spec
        self.plan.methods = self.methods
        if self.run_dir is not None:
            return await evaluate_plan(self.run_dir, self.plan, model, progress, engine=engine)
        with tempfile.TemporaryDirectory(prefix="ragfacts-") as scratch:  # read before it goes
            result = await evaluate_plan(RunDir(Path(scratch) / "run"), self.plan, model, progress, engine=engine)
            result.judged = [(item, {spec: dict(line) for spec, line in by.items()}) for item, by in result.judged]
            return result


async def judge_item(model: ChatModel, judge: Method, item: Item) -> MethodResult:
    """`judge`'s result for one `item` (no run directory): resolved for `model` first, as a run resolves its methods;
    raises ConfigurationError when the model cannot serve it."""
    (prepared,) = await prepare(model, [judge])
    return await prepared.evaluate(item, model)
