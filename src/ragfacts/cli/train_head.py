"""`ragfacts train-head`: fit the trained judge's head to your labelled answers and your model.

    ragfacts --model local:/models/my.gguf train-head labelled.jsonl -o head.json
    ragfacts --model local:/models/my.gguf check -O strategy=trained_head -O head=head.json -r ... -a ...

Each answer is read once by the model (one forward pass; the readings are kept in FEATURES, so a rerun after an
interruption reads only the rest). The answers are split by reference into train, dev and test
(`ragfacts.methods.precision.training`); the head is fitted on train, its strength, thresholds, calibration and
abstain band chosen on dev, and it is measured once on test against the default judge of the same model (the head
that ships for it, else holistic_score). A head worse than the default on test is not written (exit 1).
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from ragfacts.cli._app import app
from ragfacts.cli._common import EXIT_GATE, AppState, build_runtime, fail, run_async, show_ledger
from ragfacts.cli._dataset import parse_mapping
from ragfacts.console import err, print_json
from ragfacts.datasets.dataset import Dataset
from ragfacts.datasets.reader import DatasetError
from ragfacts.items import Item
from ragfacts.methods.precision.readings import default_judge, head_fields, read_all
from ragfacts.methods.precision.training import fit_head
from ragfacts.models import ConfigurationError

MIN_ANSWERS = 40  # fewer cannot give a dev and a test split with both labels


@app.command("train-head")
def train_head(
    ctx: typer.Context,
    data: Annotated[
        Path,
        typer.Argument(help="labelled answers (.jsonl, .json, .csv): answer, reference, label", show_default=False),
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="the head file to write (JSON)")],
    mapping: Annotated[
        list[str] | None, typer.Option("--map", help="read a column as a field, e.g. --map label=is_faithful")
    ] = None,
    dev: Annotated[float, typer.Option(min=0.1, max=0.4, help="share of answers for dev (choices)")] = 0.2,
    test: Annotated[float, typer.Option(min=0.1, max=0.4, help="share of answers for test (the report)")] = 0.2,
    seed: Annotated[int, typer.Option(help="shuffles the references before the split")] = 0,
    features: Annotated[
        Path | None,
        typer.Option(help="where the model's readings are kept, to resume (default: OUTPUT.features.jsonl)"),
    ] = None,
) -> None:
    """Fit a head to your labelled answers and model; report it on a test split it never saw."""
    state: AppState = ctx.obj
    if output.suffix.lower() != ".json":
        fail(f"-o {output}: a head file is JSON; name it e.g. head.json")
    if output.resolve() == data.resolve():
        fail(f"the output {output} is also the input; give another path")
    items = _labelled_items(data, mapping)
    cache = features or output.with_name(output.name + ".features.jsonl")
    runtime = build_runtime(state)
    try:
        model = runtime.model()
    except ConfigurationError as error:
        fail(str(error))
    started = time.perf_counter()
    examples, failed, identity = run_async(runtime, lambda _: read_all(model, items, cache, _progress))
    reading_s = time.perf_counter() - started
    if failed:
        err.print(f"[yellow]{failed} answer(s) could not be read (failed calls); they are left out[/yellow]")
    started = time.perf_counter()
    try:
        head, report = fit_head(
            examples,
            dev=dev,
            test=test,
            seed=seed,
            default=default_judge(identity),
            head_fields=head_fields(model, identity, examples),
        )
    except ValueError as error:
        fail(str(error))
    fitting_s = time.perf_counter() - started
    report["timing_s"] = {"reading": round(reading_s, 1), "fitting": round(fitting_s, 1)}
    report["data"] = {"file": data.name, "sha256": _file_sha256(data), "answers": len(items), "failed": failed}
    _show(report)
    show_ledger(runtime.ledger)
    if state.as_json:
        print_json(report)
    new, default = report["test"]["head"]["balanced_accuracy"]["value"], report["test"]["default"]["value"]
    if new < default:
        err.print(
            f"[red]not written: on the test split the head's balanced accuracy {new:.3f} is below the default "
            f"judge's {default:.3f} ({escape(report['default'])}); more labelled answers may help[/red]"
        )
        raise typer.Exit(EXIT_GATE)
    head.name = output.stem
    head.training = report
    head.save(output)
    err.print(
        f"head written to {escape(str(output))}; use it with -O strategy=trained_head -O head={escape(str(output))}"
    )


def _labelled_items(data: Path, mapping: list[str] | None) -> list[Item]:
    try:
        dataset = Dataset.open(data, parse_mapping(mapping))
        items = [
            i for i in dataset.items() if i.label in ("consistent", "inconsistent") and (i.reference or "").strip()
        ]
    except DatasetError as error:
        fail(str(error))
    labels = {i.label for i in items}
    if len(items) < MIN_ANSWERS or len(labels) < 2:
        fail(
            f"{data}: {len(items)} answers with a reference and a label (consistent/inconsistent); a head needs at "
            f"least {MIN_ANSWERS}, with both labels (name the label column with --map label=COLUMN)"
        )
    return items


def _show(report: dict[str, Any]) -> None:
    def cell(value: dict[str, Any]) -> str:
        if value.get("value") is None:
            return "-"
        return f"{value['value']:.3f} [{value['low']:.3f}, {value['high']:.3f}] (n={value['n']})"

    figures = report["test"]["head"]
    split = report["split"]
    err.print(
        f"split by reference: train {split['train']}, dev {split['dev']}, test {split['test']}; features: "
        f"{report['features']}; calibration chosen on dev: {report['calibration']}"
    )
    err.print(f"test, the head: balanced accuracy {cell(figures['balanced_accuracy'])}, ECE {figures['ece']:.3f}")
    for key, value in figures.items():
        if key.startswith("balanced_accuracy:"):
            err.print(f"  {key.split(':')[1]}: {cell(value)}")
    if "band" in figures:
        band = figures["band"]
        err.print(
            f"  abstain band chosen on dev [{band['band'][0]:.2f}, {band['band'][1]:.2f}): {band['abstain']:.1%} of "
            f"test uncertain, balanced accuracy on the rest {cell(band['balanced_accuracy_decided'])}"
        )
    err.print(f"test, the default ({escape(report['default'])}): balanced accuracy {cell(report['test']['default'])}")
    timing = report["timing_s"]
    err.print(f"reading the answers took {timing['reading']:.1f} s, fitting {timing['fitting']:.1f} s", style="dim")


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _progress(done: int, total: int) -> None:
    err.print(f"read {done}/{total} answers", style="dim")
