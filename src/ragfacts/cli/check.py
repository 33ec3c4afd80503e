"""`ragfacts check`: precision (L-Face4RAG) of one answer, or of every row of a dataset file."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.markup import escape
from rich.table import Table

from ragfacts.cli import app
from ragfacts.cli._common import AppState, fail, run_with_runtime
from ragfacts.console import err, print_json
from ragfacts.datasets.face4rag import DatasetError, load_items, read_results, write_official_csv
from ragfacts.methods.lface4rag import (
    AnswerLabel,
    CheckItem,
    CheckOptions,
    CheckResult,
    DecompositionMethod,
    ScoreResult,
    StageResult,
    Strategy,
    check_answer,
    check_many,
)
from ragfacts.runtime import Runtime

_STYLE = {AnswerLabel.CONSISTENT: "green", AnswerLabel.INCONSISTENT: "red", AnswerLabel.UNSCORED: "yellow"}


@app.command()
def check(
    ctx: typer.Context,
    data: Annotated[
        Path | None,
        typer.Argument(
            help="a dataset to check: .jsonl or .csv with answer, reference (or ref), optional question and id; "
            "the official Face4RAG input CSV (question, ref, answer, id) works as is",
            show_default=False,
        ),
    ] = None,
    reference: Annotated[str | None, typer.Option("--reference", "-r", help="the reference text, or @file")] = None,
    answer: Annotated[str | None, typer.Option("--answer", "-a", help="the answer to check, or @file")] = None,
    question: Annotated[str | None, typer.Option("--question", "-q", help="the question, or @file")] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="results JSONL for DATA, one line per answer; rerun to resume"),
    ] = None,
    csv_out: Annotated[
        Path | None, typer.Option("--csv-out", help="also write the official Face4RAG output CSV, one row per segment")
    ] = None,
    strategy: Annotated[
        Strategy,
        typer.Option(
            help="paper = L-Face4RAG; holistic_then_localise = one whole-answer call first; sentence_scores = "
            "P(Yes) per sentence against --threshold (small models); auto = sentence_scores on local models, "
            "else paper"
        ),
    ] = "auto",
    threshold: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="sentence_scores: pass iff P(supported) >= threshold")
    ] = 0.75,
    decomposition: Annotated[
        DecompositionMethod, typer.Option(help="conventional = atomic statements (the paper's ablation A.D.)")
    ] = "logic_preserving",
    cot: Annotated[bool, typer.Option("--cot/--no-cot", help="--no-cot: direct verdicts (ablation w/o COT)")] = True,
    logic: Annotated[
        bool, typer.Option("--logic/--no-logic", help="--no-logic: fact stage only (ablation w/o logi. eval)")
    ] = True,
    lang: Annotated[
        Literal["auto", "zh", "en"], typer.Option(help="prompt language; auto = detected from the answer")
    ] = "auto",
    limit: Annotated[int | None, typer.Option(min=1, help="check at most N rows not yet in the output")] = None,
    fail_on_inconsistent: Annotated[
        bool, typer.Option("--fail-on-inconsistent", help="exit 1 if an answer is inconsistent or unscored")
    ] = False,
) -> None:
    """Check whether answers are factually consistent with their references (L-Face4RAG)."""
    state: AppState = ctx.obj
    options = CheckOptions(
        strategy=strategy,
        threshold=threshold,
        decomposition=decomposition,
        chain_of_thought=cot,
        logic_stage=logic,
        lang=lang,
    )
    if data is None:
        if output is not None or csv_out is not None or limit is not None:
            fail("-o, --csv-out and --limit are for a dataset file: ragfacts check DATA.jsonl -o OUT.jsonl")
        if reference is None or answer is None:
            fail("give --reference and --answer (text or @file), or a dataset file: ragfacts check DATA -o OUT.jsonl")
        item = CheckItem(
            question=_argument(question, "--question") if question is not None else None,
            reference=_argument(reference, "--reference"),
            answer=_argument(answer, "--answer"),
        )
        results = [_check_one(state, item, options)]
    else:
        if reference is not None or answer is not None or question is not None:
            fail("--reference, --answer and --question are for one pair; a dataset file brings its own columns")
        if output is None:
            fail("a dataset needs -o OUT.jsonl: results are streamed there, and a rerun resumes from it")
        results = _check_dataset(state, data, output, csv_out, options, limit)
    if fail_on_inconsistent and any(r.label is not AnswerLabel.CONSISTENT for r in results):
        raise typer.Exit(1)


def _argument(value: str, option: str) -> str:
    """Return the option's text, read from the file for @path; an empty text is bad input."""
    text = value
    if value.startswith("@"):
        path = Path(value[1:])
        if not path.is_file():
            fail(f"{option} {value}: no such file")
        text = path.read_text(encoding="utf-8")
    if not text.strip():
        fail(f"{option} is empty")
    return text


def _check_one(state: AppState, item: CheckItem, options: CheckOptions) -> CheckResult:
    async def job(runtime: Runtime) -> CheckResult:
        return await check_answer(runtime.model(), item.reference, item.answer, item.question, options)

    def report(result: CheckResult) -> None:
        show_result(result)
        if state.as_json:
            print_json(result.model_dump(mode="json"))

    result = run_with_runtime(state, job, report=report)
    return result


def _check_dataset(
    state: AppState, data: Path, output: Path, csv_out: Path | None, options: CheckOptions, limit: int | None
) -> list[CheckResult]:
    try:
        items = load_items(data)
        done = {result.id for result in read_results(output, repair=True)}
    except DatasetError as error:
        fail(str(error))
    todo = [item for item in items if item.id not in done][:limit]
    err.print(f"{len(items)} rows in {escape(str(data))}: {len(items) - len(todo)} already done, {len(todo)} to check")
    if todo:
        output.parent.mkdir(parents=True, exist_ok=True)
        with output.open("a", encoding="utf-8") as handle:

            def write(result: CheckResult) -> None:
                handle.write(result.model_dump_json() + "\n")
                handle.flush()

            async def job(runtime: Runtime) -> list[CheckResult]:
                return await check_many(runtime.model(), todo, options, on_result=write)

            run_with_runtime(state, job)
    by_id = {result.id: result for result in read_results(output)}
    results = [by_id[item.id] for item in items if item.id in by_id]
    if csv_out is not None:
        write_official_csv(results, csv_out)
    summary = summarise(results)
    err.print(summary_table(summary))
    if state.as_json:
        print_json(summary)
    return results


def summarise(results: list[CheckResult]) -> dict[str, object]:
    """Counts over a dataset's results: labels, failures, unverified quotes, error types."""
    labels = Counter(result.label.value for result in results)
    return {
        "answers": len(results),
        **{label.value: labels[label.value] for label in AnswerLabel},
        "failures": sum(result.failure_count for result in results),
        "unverified_quotes": sum(result.unverified_quotes for result in results),
        "error_types": dict(Counter(t.value for result in results for t in result.error_types).most_common()),
    }


def summary_table(summary: dict[str, object]) -> Table:
    table = Table(title="Precision (L-Face4RAG)", title_justify="left")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for key, value in summary.items():
        shown = ", ".join(f"{k} {v}" for k, v in value.items()) if isinstance(value, dict) else str(value)
        table.add_row(key, escape(shown or "-"))
    return table


def show_result(result: CheckResult) -> None:
    """Print one answer's check on stderr: label, segments with both verdicts, error types, quote flags."""
    label = result.label
    reason = f"  {escape(result.reason)}" if result.reason else ""
    err.print(f"[bold {_STYLE[label]}]{label.value.upper()}[/]{reason}")
    if result.holistic is not None:
        err.print(f"holistic judgement: {_verdict(result.holistic)}")
    if result.segments:
        table = Table(title_justify="left", show_lines=True)
        scored = any(segment.score is not None for segment in result.segments)
        columns = (
            ("#", "segment", "P(supported)", "fact", "error types", "quotes")
            if scored
            else ("#", "segment", "fact", "logic", "error types", "quotes")
        )
        for column in columns:
            table.add_column(column)
        for segment in result.segments:
            quotes = [q for stage in segment.stages() for q in stage.quotes()]
            unverified = sum(not q.verified for q in quotes)
            table.add_row(
                str(segment.index + 1),
                escape(segment.text),
                *(
                    (_verdict(segment.score), _verdict(segment.fact))
                    if scored
                    else (_verdict(segment.fact), _verdict(segment.logic))
                ),
                ", ".join(t.value for t in segment.error_types) or "-",
                f"{len(quotes) - unverified}/{len(quotes)} found" if quotes else "-",
            )
        err.print(table)
    for segment in result.segments:
        for stage in segment.stages():
            if stage.verdict == "inconsistent" and stage.explanation:
                err.print(f"#{segment.index + 1} {stage.call.stage}: {escape(stage.explanation)}")
    for failure in result.failures:
        where = f" (segment {failure.segment + 1})" if failure.segment is not None else ""
        err.print(f"[yellow]failed[/] {failure.stage}{where}: {failure.kind.value}: {escape(failure.message)}")
    if result.unverified_quotes:
        err.print(f"[yellow]{result.unverified_quotes} quote(s) not found in the reference[/]")


def _verdict(stage: StageResult | None) -> str:
    if stage is None:
        return "-"
    if stage.failed:
        return "[yellow]failed[/]"
    word = "[green]consistent[/]" if stage.verdict == "consistent" else "[red]inconsistent[/]"
    if isinstance(stage, ScoreResult) and stage.probability is not None:
        return f"{word} {stage.probability:.2f}"
    return word
