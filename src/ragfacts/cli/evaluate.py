"""`ragfacts evaluate`: precision and recall of every row of a dataset, in one resumable run."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from ragfacts.cli._app import app
from ragfacts.cli._common import AppState, fail
from ragfacts.cli._dataset import DatasetRun, RunOptions, default_output, run_dataset, with_run_options
from ragfacts.cli._endpoint import run_with_endpoint, with_endpoint_options
from ragfacts.cli._escalation import DEFAULT_ESCALATE_METHOD, EscalateMethod, EscalateTo, escalation_for
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
from ragfacts.methods.precision.options import CheckOptions
from ragfacts.runs.ray_engine import RayOptions

UNCERTAIN_HELP = CheckOptions.model_fields["uncertain"].description  # declared once, with the option


class Engine(str, Enum):
    local = "local"
    ray = "ray"


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
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="the run directory (or OUT.jsonl); rerun to resume (default: runs/DATA-TIME)"
        ),
    ] = None,
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
    engine: Annotated[
        Engine,
        typer.Option(
            help="local: judge in this process; ray: on Ray workers, written here (pip install 'ragfacts\\[ray]')"
        ),
    ] = Engine.local,
    ray_address: Annotated[
        str | None,
        typer.Option(
            help="with --engine ray: a running cluster, ray://HOST:PORT, HOST:PORT or auto (the one `ray start` "
            "started here); default: RAY_ADDRESS, else a local Ray started for this run",
            show_default=False,
        ),
    ] = None,
    ray_workers: Annotated[
        int | None,
        typer.Option(min=1, help="with --engine ray: worker processes (default: one per CPU of the cluster)"),
    ] = None,
    uncertain: Annotated[
        str | None,
        typer.Option(help=f"{UNCERTAIN_HELP} (the precision method's -O uncertain=)", show_default=False),
    ] = None,
    escalate_to: EscalateTo = None,
    escalate_method: EscalateMethod = DEFAULT_ESCALATE_METHOD,
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
    pairs = [*(option or []), *([f"uncertain={uncertain}"] if uncertain is not None else [])]
    methods = _methods({"precision": precision, "recall": recall}, pairs)
    escalation = escalation_for(methods, escalate_to, escalate_method)
    ray = _ray_options(engine, ray_address, ray_workers)
    named = {kind for kind in ("precision", "recall") if _given(ctx, kind)}
    job = DatasetRun(
        data,
        output or default_output(data),
        methods,
        run_options,
        every_method_on_every_item=False,
        report=report,
        ray=ray,
        escalation=escalation,
        output_chosen=output is None,
        defaults=frozenset(m.spec for m in methods if m.kind not in named),
    )
    if endpoint is not None:
        run_with_endpoint(state, job, endpoint)
    else:
        run_dataset(state, job)


def _given(ctx: typer.Context, parameter: str) -> bool:
    """Whether the user gave `parameter` (on the command line or from the environment), rather than its default.
    By the source's name: typer carries a click of its own, whose ParameterSource is not click's."""
    source = ctx.get_parameter_source(parameter)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def _ray_options(engine: Engine, address: str | None, workers: int | None) -> RayOptions | None:
    """Where to judge on Ray, or None to judge here; Ray options without --engine ray are bad usage."""
    if engine is Engine.local:
        given = [name for name, value in (("--ray-address", address), ("--ray-workers", workers)) if value is not None]
        if given:
            fail(f"{' and '.join(given)} need --engine ray")
        return None
    return RayOptions(address=address, workers=workers)


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
