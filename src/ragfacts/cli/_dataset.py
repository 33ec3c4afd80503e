"""What `check`, `recall`, `evaluate` and `bench` share: the chosen method, one answer judged, and the dataset
path (open the data, evaluate the plan, report, gate).

Output order on stderr: how the data is read, progress, what ran, the summary (with its rule), any
command-specific tables, the verdict of every row (`--verdicts`, none with `--quiet`) and the counts line, failure
reasons, gate results, and the usage ledger last. With --json, stdout gets one document: the run directory,
the summaries and one row per item.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import Field as PydanticField
from rich.markup import escape

from ragfacts.bench.sampling import stratified_sample
from ragfacts.cli._common import (
    AppState,
    build_runtime,
    exit_for,
    fail,
    interrupted,
    run_async,
    run_with_runtime,
    show_gates,
    show_ledger,
)
from ragfacts.cli._escalation import Escalation, with_escalation
from ragfacts.cli._method_flags import resolved_parameters, settings_flag, with_parameters
from ragfacts.cli._render import show_result, summary_table
from ragfacts.cli._verdicts import RowsShown, show_verdicts
from ragfacts.console import err, print_json
from ragfacts.datasets.dataset import Dataset
from ragfacts.datasets.layouts import GOLD_LABEL_COLUMNS
from ragfacts.datasets.reader import DatasetError
from ragfacts.items import Item
from ragfacts.methods.base import Method, Task
from ragfacts.models import ConfigurationError
from ragfacts.runs.applicable import skipped_line
from ragfacts.runs.evaluation import Evaluation, RunResult, RunSettings, judge_item
from ragfacts.runs.failures import FailureCensus
from ragfacts.runs.gates import GATES, check_gates, option_name
from ragfacts.runs.planning import RunPlan
from ragfacts.runs.progress import RunProgress, progress_for
from ragfacts.runs.ray_engine import RayEngine, RayOptions, run_on_ray  # Ray itself is imported when used
from ragfacts.runs.rundir import RunDir, RunError
from ragfacts.runs.runner import RunReport
from ragfacts.runs.summary import summarise_method
from ragfacts.runtime import Runtime

# Called after the summary with the run's result, for a command's own tables (and files such as --csv-out); what it
# returns is added to the --json document.
AfterRun = Callable[[RunResult], dict[str, Any]]


# Thresholds that make the command exit 1, by gate name (`runs.gates.GATES`); a command takes those it names.
Gates = dict[str, float | None]


class RunOptions(RunSettings):
    """The options every dataset command takes: the run settings (declared in `RunSettings`, whose fields become
    flags), with how the file is read, which verdicts are listed and the gates (see `with_run_options`)."""

    mapping: list[str] | None = None
    verdicts: RowsShown = RowsShown.auto
    gates: Gates = PydanticField(default_factory=dict)

    def evaluation(
        self,
        dataset: Dataset,
        tasks: Sequence[Task],
        state: AppState,
        output: Path | RunDir,
        job: DatasetRun | None = None,
    ) -> Evaluation:
        """The run these options ask for of `tasks` over `dataset` into `output`, with as many items in flight as
        the model's concurrency keeps busy. With a `job`, its default judges that can judge no item are left out and
        rows a method cannot judge are refused by its rule (DatasetError); without (synth), the runner counts the
        rows its task cannot take."""
        return Evaluation(
            dataset,
            tasks,
            RunSettings.model_validate(self.model_dump(include=set(RunSettings.model_fields))),
            output=output,
            in_flight=2 * state.settings.concurrency,
            defaults=job.defaults if job is not None else (),
            strict=job.every_method_on_every_item if job is not None else True,
            check_rows=job is not None,
        )


@dataclass
class DatasetRun:
    """One dataset command's arguments, after parsing."""

    data: Path
    output: Path
    methods: list[Method]
    options: RunOptions
    every_method_on_every_item: bool = True  # check/recall: a row the method cannot judge is bad input
    other_outputs: tuple[Path, ...] = ()
    sample: tuple[int | None, int] = (None, 0)  # (size, seed) of a stratified sample (bench)
    require_labels: bool = False  # bench with precision methods: gold labels are the point
    report: Path | None = None  # write this report (.html or .md) at the end
    ray: RayOptions | None = None  # judge on Ray workers; None: in this process
    dataset: Dataset | None = None  # already built (evaluate --endpoint: the service's answers); else read `data`
    escalation: Escalation | None = None  # a cascade: uncertain answers re-judged by a second model
    output_chosen: bool = False  # the run directory was named for the user (no -o): say how to resume it
    incomplete: str | None = None  # why the rows are incomplete before judging (--endpoint: questions unanswered)
    defaults: frozenset[str] = frozenset()  # specs of judges the user did not name: left out where they judge no row


# The flags of the run settings, made from `RunSettings`' fields (their descriptions are the help), and the two
# that say how a file is read and which verdicts are listed.
_RUN_PARAMETERS: dict[str, tuple[Any, Any]] = {
    "mapping": (
        list[str] | None,
        typer.Option(
            "--map",
            help="read a column as a field: --map answer=response,reference=retrieved_contexts (fields: id, "
            "question, answer, reference, ground_truth, facts, label, error_type, source_model)",
        ),
    ),
    **{name: settings_flag(name, field) for name, field in RunSettings.model_fields.items() if name != "max_failed"},
    "verdicts": (
        RowsShown,
        typer.Option(
            "--verdicts",
            help="the rows the verdict table lists at the end: auto (all up to 50, else the flagged and failed "
            "ones), all, flagged or none",
        ),
    ),
    "max_failed": settings_flag("max_failed", RunSettings.model_fields["max_failed"]),  # listed last, as before
}
_GATE_PARAMETERS: dict[str, Any] = {
    name: typer.Option(option_name(name), min=0.0, max=1.0, help=f"exit 1 if {spec.measures} is below this")
    for name, spec in GATES.items()
}


def with_run_options(*gates: str, verdicts: bool = True) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a command the dataset options and the named gates; it receives them as `run_options`. A command that
    judges no answers (synth) takes no `--verdicts`."""
    parameters = {name: value for name, value in _RUN_PARAMETERS.items() if verdicts or name != "verdicts"}

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        signature, kept = resolved_parameters(command, drop="run_options")
        defaults = RunOptions()
        added = [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=getattr(defaults, name),
                annotation=Annotated[annotation, option],
            )
            for name, (annotation, option) in parameters.items()
        ] + [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=None,
                annotation=Annotated[float | None, _GATE_PARAMETERS[name]],
            )
            for name in gates
        ]

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = {name: kwargs.pop(name) for name in parameters}
            gate_values = {name: kwargs.pop(name) for name in gates}
            return command(*args, run_options=RunOptions(**values, gates=gate_values), **kwargs)

        return with_parameters(wrapper, signature, [*kept, *added])

    return decorate


def run_dataset(state: AppState, job: DatasetRun, after: AfterRun | None = None) -> None:
    """Run `job` and report; exits 2 on bad input (nothing written), 3 if stopped early, 1 if a gate fails."""
    options = job.options
    dataset = job.dataset if job.dataset is not None else open_dataset(job)
    try:
        evaluation = options.evaluation(dataset, job.methods, state, job.output, job)
    except DatasetError as error:
        fail(str(error))
    for method in evaluation.dropped:
        err.print(skipped_line(dataset, method), style="yellow")
    job.methods = [m for m in job.methods if m not in evaluation.dropped]
    try:
        evaluation.check_target([job.data, *job.other_outputs])
    except RunError as error:
        fail(str(error))
    for path in job.other_outputs:
        if path.resolve() == job.data.resolve():
            fail(f"the output {path} is also an input; give another path")
    err.print(f"{escape(dataset.name)}: {dataset.count} items from {dataset.rows} rows; {escape(dataset.describe())}")
    runtime = build_runtime(state)
    try:
        model = runtime.model()
    except ConfigurationError as error:  # e.g. no API key: bad usage, not a bug
        fail(str(error))
    if job.escalation is not None and job.ray is not None:
        fail("--escalate-to runs in this process; leave out --engine ray")
    evaluation.methods = with_escalation(job.methods, runtime, job.escalation)
    engine = None if job.ray is None else functools.partial(_on_ray, runtime, job.ray)

    async def judge_all(_: Runtime) -> RunResult:
        return await evaluation.run(model, progress_for(err), model_spec=str(runtime.spec), engine=engine)

    try:
        result = run_async(runtime, judge_all)
    except RunError as error:
        fail(str(error))
    except KeyboardInterrupt:
        interrupted(f"rerun with -o {job.output} to resume")
    run_dir = result.run_dir
    report = result.report
    show_report(report)
    err.print(summary_table(result.summaries))
    extra = after(result) if after is not None else {}
    if state.as_json:
        print_json({**result.document(), **extra}, one_per_line="rows")
    if not state.quiet:
        show_verdicts(result.verdicts(), options.verdicts)
    failed = result.failures()
    _show_failures(failed)
    gates = result.gates(options.gates)
    show_gates(gates)
    show_ledger(runtime.ledger)
    err.print(f"results: {escape(str(run_dir.results))}")
    if job.output_chosen:
        err.print(f"rerun with -o {escape(str(job.output))} to resume or add to this run", style="dim")
    if job.report is not None:
        from ragfacts.cli.report import write_report

        write_report([job.output], job.report)
    else:
        err.print(f"report: ragfacts report {escape(str(job.output))} -o report.html", style="dim")
    exit_for(gates, _incomplete(report.stopped, failed, options.max_failed) or job.incomplete)


def _incomplete(stopped: str | None, failed: FailureCensus, max_failed: float) -> str | None:
    """Why the results are incomplete (exit 3 unless a gate failed whatever they hide), or None."""
    if stopped:
        return f"{stopped}; nothing it did not finish is marked done: rerun to resume"
    if failed.rate > max_failed:
        return (
            f"{failed.failed} of {failed.results} results ({failed.rate:.0%}) have a failed call, more than "
            f"--max-failed {max_failed:g}; they are retried by the next run"
        )
    return None


def _show_failures(failed: FailureCensus) -> None:
    """The most frequent failure reasons of a run that has any (they are also in results.jsonl)."""
    if not failed.failed:
        return
    err.print(
        f"[yellow]{failed.failed} of {failed.results} results have a failed call; most frequent reasons:[/yellow]"
    )
    for reason, count in failed.top():
        err.print(f"  {count} × {escape(reason)}")


def open_dataset(job: DatasetRun) -> Dataset:
    """The job's dataset (mapped, sampled); bad input exits 2, and so does a bench without gold labels."""
    try:
        dataset = Dataset.open(job.data, parse_mapping(job.options.mapping))
        size, seed = job.sample
        if size is not None:
            dataset = stratified_sample(dataset, size, seed)
    except DatasetError as error:
        fail(str(error))
    if job.require_labels and not dataset.labelled:
        read = dataset.plan.sources.values() if dataset.plan is not None else ()
        unread = [column for column in dataset.columns if column not in read]
        fail(
            f"{dataset.name}: no gold labels (looked for a column named {', '.join(GOLD_LABEL_COLUMNS)}); the file is "
            f"read as: {dataset.describe()}; columns not read: {', '.join(unread) or 'none'}. Name the label column "
            "with --map label=COLUMN"
        )
    return dataset


def judge_one(
    state: AppState,
    judge: Method,
    item: Item,
    gates: Gates,
    max_failed: float,
    escalation: Escalation | None = None,
) -> None:
    """Judge one answer, show the result (JSON on stdout with --json), then the ledger; exit as `exit_for` decides
    (1 for a failed gate; 3 when a call failed, past --max-failed: an answer that could not be judged is no pass)."""

    async def job(runtime: Runtime) -> Any:
        model = runtime.model()
        (judging,) = with_escalation([judge], runtime, escalation)
        return await judge_item(model, judging, item)

    def report(result: Any) -> None:
        show_result(result)
        if state.as_json:
            print_json(result.model_dump(mode="json"))

    try:
        result = run_with_runtime(state, job, report=report)
    except KeyboardInterrupt:
        interrupted("nothing of this answer was kept: run it again")
    outcome = result.outcome()
    summary = summarise_method(judge.spec, judge.kind, 1, [outcome])
    results = check_gates([summary], gates)
    show_gates(results)
    incomplete = None
    if not outcome.complete and max_failed < 1:
        incomplete = f"a call failed, so this answer was not fully judged (--max-failed {max_failed:g}): run it again"
    exit_for(results, incomplete)


def default_output(data: Path, now: datetime | None = None) -> Path:
    """Where a run goes without -o: ./runs/DATASET-YYYYmmdd-HHMMSS (a new directory each time)."""
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{data.stem or 'data'}-{stamp}"


def parse_mapping(pairs: list[str] | None) -> dict[str, str]:
    """`--map answer=response,reference=retrieved_contexts` (repeatable) as {field: column}."""
    mapping: dict[str, str] = {}
    for text in pairs or []:
        for pair in text.split(","):
            field, sep, column = pair.partition("=")
            if not sep or not field.strip() or not column.strip():
                fail(f"--map takes field=column pairs, e.g. --map answer=response; got {pair!r}")
            name = field.strip()
            if name in mapping:
                fail(f"--map maps {name} twice ({name}={mapping[name]} and {name}={column.strip()}); keep one")
            mapping[name] = column.strip()
    return mapping


def _on_ray(
    runtime: Runtime, options: RayOptions, run_dir: RunDir, plan: RunPlan, progress: RunProgress | None
) -> Awaitable[RunReport]:
    """The run judged on Ray workers (an evaluation's engine)."""
    return run_on_ray(run_dir, plan, runtime, options, progress, announce=_show_engine)


def _show_engine(engine: RayEngine) -> None:
    err.print(f"judging on {escape(engine.where)} with {len(engine.workers)} workers")


def show_report(report: RunReport, *, results: str = "results", done: str = "judged") -> None:
    """One line: what the run did (`results` and `done` name its results and what made them)."""
    parts = [f"{report.results} {results}: {report.reused} reused, {report.ran} {done} now"]
    if report.incomplete:
        parts.append(f"{report.incomplete} with failed calls (retried by the next run)")
    if report.not_run:
        parts.append(f"{report.not_run} not run yet")
    if report.unreadable:
        parts.append(f"--repair dropped {report.unreadable} unreadable lines of the results file")
    skipped = ", ".join(f"{method} cannot judge {n}" for method, n in report.not_applicable.items())
    if skipped:
        parts.append(skipped)
    err.print("; ".join(parts))
    if report.ledger_warning:
        err.print(f"[yellow]warning:[/yellow] {escape(report.ledger_warning)}")
