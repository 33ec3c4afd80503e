"""`ragfacts facts` and `ragfacts recall`: fact generation, and factual recall of one answer or of a dataset."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.markup import escape

from ragfacts.bench.scoring import score
from ragfacts.cli._app import app
from ragfacts.cli._common import EXIT_STOPPED, AppState, fail, method_for, read_text_argument, run_with_runtime
from ragfacts.cli._dataset import DatasetRun, RunOptions, default_output, judge_one, run_dataset, with_run_options
from ragfacts.cli._method_flags import with_method_flags
from ragfacts.cli._render import recall_metrics_table
from ragfacts.console import err, print_json
from ragfacts.items import Item
from ragfacts.methods.facts import generate_facts, read_fact_list
from ragfacts.runs.evaluation import RunResult


@app.command()
def facts(
    ctx: typer.Context,
    ground_truth: Annotated[str, typer.Option("--ground-truth", "-g", help="the ground-truth answer (text or @FILE)")],
    question: Annotated[str | None, typer.Option("--question", "-q", help="the question (text or @FILE)")] = None,
    lang: Annotated[Literal["en", "zh"] | None, typer.Option(help="prompt language; default: detected")] = None,
) -> None:
    """Generate short, independent facts that answer QUESTION from a GROUND TRUTH; one per line on stdout."""
    state: AppState = ctx.obj
    text = read_text_argument(ground_truth, "--ground-truth") or ""
    asked = read_text_argument(question, "--question")
    result = run_with_runtime(state, lambda runtime: generate_facts(runtime.model(), asked, text, lang))
    if state.as_json:
        print_json(result.model_dump(mode="json"))
    else:
        sys.stdout.write("".join(f"- {fact}\n" for fact in result.facts))
        sys.stdout.flush()
    if result.failure is not None:
        err.print(f"[red]fact generation failed ({result.failure.kind.value}):[/red] {escape(result.failure.message)}")
        raise typer.Exit(EXIT_STOPPED)  # a failed call, not a gate: rerun


@app.command("recall")
@with_run_options("min_recall")
@with_method_flags("recall")
def recall_command(
    ctx: typer.Context,
    data: Annotated[
        Path | None,
        typer.Argument(
            help="a dataset (.jsonl, .json, .csv) with answer and ground_truth (or facts) columns; WikiEval, "
            "WikiEvalFacts and RAGAS layouts are recognised",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="with DATA: a run directory or a .jsonl file, resumable (default: runs/DATA-TIME)",
        ),
    ] = None,
    answer: Annotated[str | None, typer.Option("--answer", "-a", help="the answer to check (text or @FILE)")] = None,
    facts_text: Annotated[
        str | None, typer.Option("--facts", "-f", help="facts, one per line or a JSON list (text or @FILE)")
    ] = None,
    ground_truth: Annotated[
        str | None, typer.Option("--ground-truth", "-g", help="generate the facts from this (text or @FILE)")
    ] = None,
    question: Annotated[str | None, typer.Option("--question", "-q", help="the question (text or @FILE)")] = None,
    method: Annotated[str, typer.Option(help="the recall method: faaf or prompt-tf (`ragfacts methods`)")] = "faaf",
    *,
    method_options: dict[str, Any],
    run_options: RunOptions,
) -> None:
    """Check which facts an answer recalls; or, with DATA, every row of a dataset."""
    state: AppState = ctx.obj
    judge = method_for("recall", method, method_options)
    if data is not None:
        if any(v is not None for v in (answer, facts_text, ground_truth, question)):
            fail("give either DATA or --answer with --facts/--ground-truth, not both")
        job = DatasetRun(data, output or default_output(data), [judge], run_options, output_chosen=output is None)
        run_dataset(state, job, after=_after)
        return
    if output is not None or run_options.limit is not None:
        fail("-o and --limit are for a dataset file: ragfacts recall DATA [-o RUN_DIR]")
    if answer is None or (facts_text is None) == (ground_truth is None):
        fail("give --answer and exactly one of --facts or --ground-truth (or DATA)")
    given: list[str] | None = None
    if facts_text is not None:
        try:
            given = read_fact_list(read_text_argument(facts_text, "--facts") or "")
        except ValueError as error:
            fail(f"--facts: {error}")
        if not given:
            fail("--facts holds no facts")
    item = Item(
        question=read_text_argument(question, "--question"),
        ground_truth=read_text_argument(ground_truth, "--ground-truth"),
        answer=read_text_argument(answer, "--answer") or "",
        facts=given,
    )
    judge_one(state, judge, item, run_options.gates, run_options.max_failed)


def _after(result: RunResult) -> dict[str, Any]:
    """The FaaF paper's view per method and answer type: judged True, N/A, and ER/F1m where humans labelled facts."""
    _, metrics = score(result.kinds, result.judged)
    if len(metrics) > 1 or any(m.labelled for m in metrics):
        err.print(recall_metrics_table(metrics))
    return {"recall_metrics": [m.model_dump() for m in metrics]}
