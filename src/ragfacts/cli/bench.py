"""`ragfacts bench`: judges compared against gold labels — every method on every item, one resumable run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from ragfacts.bench.scoring import bench_tables, score, write_scores
from ragfacts.bench.tables import to_rich
from ragfacts.bench.tradeoff import TradeOff, cascade_tradeoff, tradeoff_table
from ragfacts.cli._app import app
from ragfacts.cli._common import AppState, build_runtime, fail
from ragfacts.cli._dataset import DatasetRun, RunOptions, open_dataset, run_dataset, with_run_options
from ragfacts.cli._escalation import DEFAULT_ESCALATE_METHOD, EscalateMethod, EscalateTo, escalation_for
from ragfacts.console import err, print_json
from ragfacts.methods.base import Method, MethodError, create_method
from ragfacts.methods.cascade import Cascade
from ragfacts.models import ConfigurationError
from ragfacts.runs.dryrun import estimate_run
from ragfacts.runs.evaluation import Evaluation, RunResult


@app.command()
@with_run_options()
def bench(
    ctx: typer.Context,
    data: Annotated[
        Path,
        typer.Argument(
            help="a labelled dataset (.jsonl, .json, .csv): answer, reference, label (consistent/inconsistent or "
            "1/0), optional error_type and source_model; the Face4RAG benchmark CSVs and WikiEvalFacts work as is",
            show_default=False,
        ),
    ],
    methods: Annotated[
        str,
        typer.Option(
            "--methods",
            help="methods with options, e.g. lface4rag,lface4rag:cot=false,holistic,factscore,felm,ragas,refchecker",
        ),
    ],
    output: Annotated[Path | None, typer.Option("--output", "-o", help="the run directory; rerun to resume")] = None,
    sample: Annotated[
        int | None, typer.Option(min=1, help="judge a sample of N items, stratified by label, error type and language")
    ] = None,
    seed: Annotated[int, typer.Option(help="the sample's seed")] = 0,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="print the expected calls and tokens per method; spend nothing")
    ] = False,
    report: Annotated[
        Path | None, typer.Option("--report", help="also write this report at the end (.html or .md)")
    ] = None,
    escalate_to: EscalateTo = None,
    escalate_method: EscalateMethod = DEFAULT_ESCALATE_METHOD,
    *,
    run_options: RunOptions,
) -> None:
    """Compare judges against gold labels: the papers' tables, per method, with intervals and costs.

    With --escalate-to MODEL, every precision judge that gives a probability is run as a cascade whose band is
    [0, 1): each answer gets both verdicts, and the trade-off table shows, for a few bands, the share escalated,
    the balanced accuracy and the cost per answer against either judge alone.
    """
    state: AppState = ctx.obj
    judges = parse_methods(methods)
    if escalate_to is not None:
        judges = [_every_answer_uncertain(judge) for judge in judges]
    job = DatasetRun(
        data,
        output or Path("."),
        judges,
        run_options,
        every_method_on_every_item=False,
        sample=(sample, seed),
        require_labels=any(judge.kind == "precision" for judge in judges),
        report=report,
        escalation=escalation_for(judges, escalate_to, escalate_method),
    )
    if dry_run:
        _dry_run(state, job)
        return
    if output is None:
        fail("bench needs -o RUN_DIR: results are written there, with tables.md and metrics.json, and it resumes")
    run_dataset(state, job, after=_after)


def parse_methods(text: str) -> list[Method]:
    """ "lface4rag,lface4rag:cot=false,faaf:mode=tf,citations=true" -> methods (a key=value part belongs to the
    method before it)."""
    specs: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if specs and (("=" in part and ":" not in part.split("=", 1)[0]) or _is_number(part)):
            specs[-1] += "," + part  # an option of the method before, or the second number of uncertain=0.3,0.7
        else:
            specs.append(part)
    try:
        judges = [create_method(spec) for spec in specs]
    except MethodError as error:
        fail(str(error))
    keys = [judge.spec for judge in judges]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        fail(f"--methods names {', '.join(repeated)} more than once")
    if not judges:
        fail("--methods names no method (`ragfacts methods` lists them)")
    return judges


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _every_answer_uncertain(judge: Method) -> Method:
    """The judge with the band [0, 1), so that a cascade's second judge sees every answer (bench only)."""
    if judge.kind != "precision":
        return judge
    if "uncertain" not in type(judge.options).model_fields:
        fail(f"--escalate-to compares bands of a probability; {judge.spec} gives none (use lface4rag:strategy=...)")
    spec = judge.spec
    changed = type(judge)(judge.options.model_copy(update={"uncertain": (0.0, 1.0)}), spec=spec)
    return changed


def _dry_run(state: AppState, job: DatasetRun) -> None:
    dataset = open_dataset(job)
    runtime = build_runtime(state)
    plan = Evaluation(dataset, job.methods, check_rows=False).plan
    try:
        estimates = estimate_run(plan, runtime.model())
    except ConfigurationError as error:  # e.g. no API key: bad usage, as in a real run
        fail(str(error))
    table = Table(title=f"Expected cost on {runtime.spec} (nothing spent)", title_justify="left")
    for column in ("method", "items", "calls", "prompt tokens", "completion tokens", "per item: calls / tokens"):
        table.add_column(column, justify="left" if column == "method" else "right")
    for e in estimates:
        per = max(e.items, 1)
        table.add_row(
            escape(e.method),
            str(e.items),
            f"{e.usage.calls:,}",
            f"{e.usage.prompt_tokens:,}",
            f"{e.usage.completion_tokens:,}",
            f"{e.usage.calls / per:.1f} / {e.usage.tokens / per:,.0f}",
        )
    err.print(table)
    err.print(
        "Tokens are estimated from characters (1 per CJK character, 1 per 4 others); replies from the stage's "
        "schema and the text's size. Real counts come with the run's ledger."
    )
    if state.as_json:
        print_json([{"method": e.method, "items": e.items, **e.usage.model_dump()} for e in estimates])


def _after(result: RunResult) -> dict[str, Any]:
    run_dir, plan = result.run_dir, result.plan
    precision, recall = score(result.kinds, result.judged)
    tradeoffs = _tradeoffs(result)
    for table in [*bench_tables(precision, recall), *map(tradeoff_table, tradeoffs)]:
        err.print(to_rich(table))
    selection = f"; sample {plan.dataset.selection}" if plan.dataset.selection else ""
    header = (
        f"# ragfacts bench: {plan.dataset.name}\n\nModel {plan.model_spec}; {plan.dataset.count} items"
        f"{selection}. Methods: {', '.join(m.spec for m in plan.methods)}."
    )
    data = write_scores(run_dir, precision, recall, header, tradeoffs)
    err.print(f"tables: {run_dir.manifest.parent}")
    return {"bench": data}


def _tradeoffs(result: RunResult) -> list[TradeOff]:
    """The cascade trade-off of each cascade of the run (bench --escalate-to)."""
    cascades = [m.spec for m in result.plan.methods if isinstance(m, Cascade)]
    if not cascades:
        return []
    found: dict[str, list[Any]] = {spec: [] for spec in cascades}
    for item, lines in result.judged:
        for spec in cascades:
            if spec in lines:
                found[spec].append((item, lines[spec]))
    return [t for spec in cascades if (t := cascade_tradeoff(spec, found[spec])) is not None]
