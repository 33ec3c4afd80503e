"""`ragfacts evaluate`: precision and recall of every row of a dataset, in one resumable run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragfacts.cli import app
from ragfacts.cli._common import AppState, fail
from ragfacts.cli._dataset import DatasetRun, RunOptions, run_dataset, with_run_options
from ragfacts.cli._endpoint import run_with_endpoint, with_endpoint_options
from ragfacts.endpoints import EndpointOptions
from ragfacts.methods.base import (
    Kind,
    Method,
    MethodError,
    create_method,
    method_class,
    option_names,
    parse_method_spec,
    parse_option_pairs,
)


@app.command()
@with_run_options("min_consistent", "min_faithfulness", "min_recall")
@with_endpoint_options
def evaluate(
    ctx: typer.Context,
    data: Annotated[
        Path,
        typer.Argument(
            help="a dataset (.jsonl, .json, .csv): answer, reference (the retrieved context) and/or ground_truth "
            "(or facts); RAGAS, WikiEval and Face4RAG layouts are recognised, others mapped with --map. With "
            "--endpoint: the questions (question, optionally ground_truth or facts), answered by the service",
            show_default=False,
        ),
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="the run directory (or OUT.jsonl); rerun to resume")],
    precision: Annotated[
        str, typer.Option(help="precision method with options, e.g. lface4rag:strategy=paper; none to skip")
    ] = "lface4rag",
    recall: Annotated[str, typer.Option(help="recall method with options, e.g. faaf:mode=tf; none to skip")] = "faaf",
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-O", help="key=value for whichever chosen method takes that option (repeatable)"),
    ] = None,
    report: Annotated[
        Path | None, typer.Option("--report", help="also write this report at the end (.html or .md)")
    ] = None,
    *,
    run_options: RunOptions,
    endpoint: EndpointOptions | None,
) -> None:
    """Judge every row: precision against its reference and, where it has a ground truth or facts, recall.

    Per row: the label, faithfulness (share of supported segments), recall (share of facts present) and
    failures; then the summary with bootstrap 95% intervals, and the usage ledger.

    With --endpoint URL, each question is first POSTed to a live RAG service (e.g. --endpoint-body
    '{"query": "{question}"}' --answer-path answer --contexts-path 'sources[*].text'); its answer is judged
    against its retrieved contexts, and its latency kept. Answers are stored in the run directory
    (answers.jsonl): a rerun asks only for what is missing or failed.
    """
    state: AppState = ctx.obj
    methods = _methods({"precision": precision, "recall": recall}, option or [])
    job = DatasetRun(data, output, methods, run_options, every_method_on_every_item=False, report=report)
    if endpoint is not None:
        run_with_endpoint(state, job, endpoint)
    else:
        run_dataset(state, job)


def _methods(specs: dict[Kind, str], pairs: list[str]) -> list[Method]:
    """Build the chosen methods; each -O option goes to the chosen methods that take it."""
    try:
        extra = parse_option_pairs(pairs)
        chosen = {kind: parse_method_spec(spec) for kind, spec in specs.items() if spec.strip().lower() != "none"}
        if not chosen:
            fail("--precision none and --recall none leave nothing to evaluate")
        classes = {kind: method_class(name) for kind, (name, _) in chosen.items()}
        for key in extra:
            if not any(key in option_names(cls) for cls in classes.values()):
                names = ", ".join(cls.name for cls in classes.values())
                fail(f"-O {key}: none of {names} takes this option (`ragfacts methods` lists them)")
        methods = []
        for kind, (name, options) in chosen.items():
            cls = classes[kind]
            if cls.kind != kind:
                fail(f"--{kind} {name}: {name} is a {cls.kind} method")
            own = {key: value for key, value in extra.items() if key in option_names(cls)}
            methods.append(create_method(name, **{**own, **options}))
        return methods
    except MethodError as error:
        fail(str(error))
