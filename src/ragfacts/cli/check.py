"""`ragfacts check`: precision of one answer, or of every row of a dataset (into a resumable run)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ragfacts.cli._app import app
from ragfacts.cli._common import AppState, fail, method_for, read_text_argument
from ragfacts.cli._dataset import DatasetRun, RunOptions, default_output, judge_one, run_dataset, with_run_options
from ragfacts.cli._escalation import DEFAULT_ESCALATE_METHOD, EscalateMethod, EscalateTo, escalation_for
from ragfacts.cli._method_flags import with_method_flags
from ragfacts.console import err
from ragfacts.items import Item
from ragfacts.methods.base import Outcome
from ragfacts.methods.lface4rag import CheckResult
from ragfacts.methods.view import view_of
from ragfacts.report.official_csv import write_official_csv
from ragfacts.runs.evaluation import RunResult
from ragfacts.typology import named


@app.command()
@with_run_options("min_consistent", "min_faithfulness")
@with_method_flags("precision")
def check(
    ctx: typer.Context,
    data: Annotated[
        Path | None,
        typer.Argument(
            help="a dataset (.jsonl, .json, .csv) with answer and reference columns; known layouts (Face4RAG CSV, "
            "RAGAS, WikiEval) are recognised, others mapped with --map",
            show_default=False,
        ),
    ] = None,
    reference: Annotated[str | None, typer.Option("--reference", "-r", help="the reference text, or @file")] = None,
    answer: Annotated[str | None, typer.Option("--answer", "-a", help="the answer to check, or @file")] = None,
    question: Annotated[str | None, typer.Option("--question", "-q", help="the question, or @file")] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="with DATA: a run directory or a .jsonl file, rerun to resume (default: runs/DATA-TIME)",
        ),
    ] = None,
    csv_out: Annotated[
        Path | None, typer.Option("--csv-out", help="also write the official Face4RAG output CSV, one row per segment")
    ] = None,
    method: Annotated[str, typer.Option(help="the precision method (`ragfacts methods`)")] = "lface4rag",
    fail_on_inconsistent: Annotated[
        bool,
        typer.Option("--fail-on-inconsistent", help="exit 1 if any answer is inconsistent, unscored or uncertain"),
    ] = False,
    escalate_to: EscalateTo = None,
    escalate_method: EscalateMethod = DEFAULT_ESCALATE_METHOD,
    *,
    method_options: dict[str, Any],
    run_options: RunOptions,
) -> None:
    """Check whether answers are faithful to their references (L-Face4RAG by default)."""
    state: AppState = ctx.obj
    judge = method_for("precision", method, method_options)
    escalation = escalation_for([judge], escalate_to, escalate_method)
    if csv_out is not None and (judge.result_type is not CheckResult or escalation is not None):
        fail(
            f"--csv-out writes L-Face4RAG's segments and their fact and logic stages (the official Face4RAG format); "
            f"{judge.spec}{' with --escalate-to' if escalation is not None else ''} gives none: use --method lface4rag"
        )
    if fail_on_inconsistent:
        run_options.gates["min_consistent"] = 1.0
    if data is None:
        if output is not None or csv_out is not None or run_options.limit is not None:
            fail("-o, --csv-out and --limit are for a dataset file: ragfacts check DATA [-o RUN_DIR]")
        if reference is None or answer is None:
            fail("give --reference and --answer (text or @file), or a dataset file: ragfacts check DATA")
        item = Item(
            question=read_text_argument(question, "--question"),
            reference=read_text_argument(reference, "--reference") or "",
            answer=read_text_argument(answer, "--answer") or "",
        )
        judge_one(state, judge, item, run_options.gates, run_options.max_failed, escalation)
        return
    if reference is not None or answer is not None or question is not None:
        fail("--reference, --answer and --question are for one pair; a dataset file brings its own columns")
    outputs = (csv_out,) if csv_out else ()
    job = DatasetRun(
        data,
        output or default_output(data),
        [judge],
        run_options,
        other_outputs=outputs,
        escalation=escalation,
        output_chosen=output is None,
    )
    run_dataset(state, job, after=lambda result: _after(result, csv_out))


def _after(result: RunResult, csv_out: Path | None) -> dict[str, Any]:
    """Error types found over the dataset (as each method's view names them), with their names; the official CSV
    (L-Face4RAG's segments and stages: its format) if asked for."""
    results: list[CheckResult] = []
    counts: dict[str, int] = {}
    for _, lines in result.judged:
        for method, line in lines.items():
            stored = line["result"]  # read from the run directory: once
            for code in view_of(method, stored, Outcome.model_validate(line["outcome"])).error_types:
                counts[code] = counts.get(code, 0) + 1
            if csv_out is not None:
                results.append(CheckResult.model_validate(stored))
    if counts:
        err.print("error types found: " + ", ".join(f"{n} × {named(code)}" for code, n in sorted(counts.items())))
    if csv_out is not None:
        write_official_csv(results, csv_out)
        err.print(f"official Face4RAG CSV: {csv_out}")
    return {"error_types": dict(sorted(counts.items()))}
