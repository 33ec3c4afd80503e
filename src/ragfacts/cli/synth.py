"""`ragfacts synth`: a labelled dataset of flawed answers (one per error type) and faithful paraphrases.

Output order on stderr: how the rows are read, progress, what ran, the counts per error type, the usage
ledger, then where the dataset is and how to bench a judge on it. With --json, stdout gets the counts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.table import Table

from ragfacts.cli._app import app
from ragfacts.cli._common import EXIT_STOPPED, AppState, build_runtime, fail, run_async, show_ledger
from ragfacts.cli._dataset import RunOptions, parse_mapping, show_report, with_run_options
from ragfacts.console import err, print_json
from ragfacts.datasets.reader import DatasetError
from ragfacts.runs.dryrun import estimate_run
from ragfacts.runs.planning import RunPlan
from ragfacts.runs.progress import progress_for
from ragfacts.runs.rundir import RunError
from ragfacts.synth import SourceDataset, Synthesiser, SynthOptions, SynthOutput, SynthSummary, Tally, write_dataset
from ragfacts.typology import named

_OPTION = SynthOptions.model_fields


@app.command()
@with_run_options(verdicts=False)
def synth(
    ctx: typer.Context,
    rows: Annotated[
        Path,
        typer.Argument(
            help="rows (.jsonl, .json, .csv) with a reference and a faithful answer, or a reference (and a question) "
            "alone: the model then writes the faithful answer first",
            show_default=False,
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="the dataset to write, OUT.jsonl (the run's files go beside it)")
    ],
    types: Annotated[str | None, typer.Option(help=_OPTION["types"].description, show_default=False)] = None,
    positives: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=10,
            help=f"{_OPTION['positives'].description} [default: {_OPTION['positives'].default}]",
            show_default=False,
        ),
    ] = None,
    verify: Annotated[
        bool | None, typer.Option("--verify/--no-verify", help=_OPTION["verify"].description, show_default=False)
    ] = None,
    lang: Annotated[str | None, typer.Option(help=_OPTION["lang"].description, show_default=False)] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="print the expected calls and tokens; spend nothing")
    ] = False,
    *,
    run_options: RunOptions,
) -> None:
    """Make a labelled dataset from faithful answers: one flawed answer per error type, and paraphrases.

    Each flawed answer carries exactly one error of the Face4RAG typology, made by editing one span of the
    faithful answer; a second call checks each (without being told the intended type) and only those that
    carry their type and nothing else are kept. `ragfacts bench OUT.jsonl --methods ...` then measures any
    judge per error type. Rerun to resume.
    """
    state: AppState = ctx.obj
    given = {"types": types, "positives": positives, "verify": verify, "lang": lang}
    try:
        options = SynthOptions(**{key: value for key, value in given.items() if value is not None})
    except ValidationError as error:
        fail(
            "; ".join(
                f"--{'.'.join(map(str, e['loc']))}: {e['msg'].removeprefix('Value error, ')}" for e in error.errors()
            )
        )
    try:
        dataset = SourceDataset.open(rows, parse_mapping(run_options.mapping))
    except DatasetError as error:
        fail(str(error))
    target = SynthOutput(output)
    evaluation = run_options.evaluation(dataset, [Synthesiser(options)], state, target)
    err.print(f"{escape(dataset.name)}: {dataset.count} rows; {escape(dataset.describe())}")
    if dry_run:
        _dry_run(state, evaluation.plan)
        return
    try:
        evaluation.check_target([rows])
    except RunError as error:
        fail(str(error))
    runtime = build_runtime(state)
    model = runtime.model()
    try:
        result = run_async(runtime, lambda _: evaluation.run(model, progress_for(err), model_spec=str(runtime.spec)))
        with target.locked():
            summary = write_dataset(target, result)
    except RunError as error:
        fail(str(error))
    report = result.report
    show_report(report, results="rows", done="synthesised")
    err.print(summary_table(summary))
    if state.as_json:
        print_json(summary.model_dump(mode="json"))
    show_ledger(runtime.ledger)
    err.print(f"dataset: {escape(str(target.dataset))} ({summary.items} answers); log: {escape(str(target.results))}")
    err.print(
        f"bench a judge on it: ragfacts bench {escape(str(target.dataset))} --methods holistic -o RUN", style="dim"
    )
    if report.stopped:
        err.print(f"[red]{escape(report.stopped)}[/red]; nothing it did not finish is marked done: rerun to resume")
        raise typer.Exit(EXIT_STOPPED)


def summary_table(summary: SynthSummary) -> Table:
    """The counts per error type and per kind of positive, with what was dropped and why."""
    table = Table(title=f"Synthesised from {summary.done} of {summary.rows} rows", title_justify="left")
    for column in ("answers", "asked", "kept", "rejected by the check", "no usable edit", "failed calls"):
        table.add_column(column, justify="left" if column == "answers" else "right")
    for code, tally in summary.by_type.items():
        table.add_row(named(code), *_cells(tally))
    for kind, tally in summary.positives.items():
        if tally.asked:
            table.add_row(f"consistent: {kind}", *_cells(tally))
    table.caption = (
        f"{summary.items} answers written; a kept edit was checked to carry its error type and no other, a kept "
        "paraphrase to stay faithful"
        + (
            f"; {summary.without_base} rows gave nothing: their written answer was not supported"
            if summary.without_base
            else ""
        )
        + (f"; {summary.incomplete} rows with failed calls are retried by the next run" if summary.incomplete else "")
    )
    table.caption_justify = "left"
    return table


def _cells(tally: Tally) -> list[str]:
    return [str(tally.asked), str(tally.kept), str(tally.rejected), str(tally.not_applied), str(tally.failed)]


def _dry_run(state: AppState, plan: RunPlan) -> None:
    runtime = build_runtime(state)
    (estimate,) = estimate_run(plan, runtime.model())
    usage = estimate.usage
    err.print(
        f"Expected cost on {escape(str(runtime.spec))} (nothing spent): {estimate.items} rows, {usage.calls:,} calls, "
        f"{usage.prompt_tokens:,} prompt + {usage.completion_tokens:,} completion tokens (estimated from characters: "
        "1 per CJK character, 1 per 4 others; replies from each call's schema and the answer's size)"
    )
    if state.as_json:
        document: dict[str, Any] = {"rows": estimate.items, **usage.model_dump()}
        print_json(document)
