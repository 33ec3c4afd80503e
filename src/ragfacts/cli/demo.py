"""`ragfacts demo`: the main job on built-in examples — precision and recall of a faithful and a flawed answer."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ragfacts.cli import app
from ragfacts.cli._common import AppState, fail, run_with_runtime
from ragfacts.cli._render import show_legend
from ragfacts.console import err, print_json
from ragfacts.datasets.demo import DemoExample, load_demo_examples
from ragfacts.items import Item
from ragfacts.methods.base import create_method
from ragfacts.methods.facts import generate_facts
from ragfacts.methods.lface4rag import AnswerLabel
from ragfacts.runtime import Runtime


@app.command()
def demo(
    ctx: typer.Context,
    lang: Annotated[str | None, typer.Option(help="only the examples in this language (zh or en)")] = None,
) -> None:
    """Check the built-in examples: is each answer faithful (precision) and complete (recall)?"""
    state: AppState = ctx.obj
    examples = [e for e in load_demo_examples() if lang is None or e.lang == lang]
    if not examples:
        fail(f"no demo example in language {lang!r}; use zh or en")
    # strategy auto: the model's trained head where one ships, holistic_score on other small models, else the paper's
    precision = create_method("lface4rag")
    recall = create_method("faaf")

    async def job(runtime: Runtime) -> list[dict[str, Any]]:
        model = runtime.model()
        err.print(f"model: [bold]{escape(model.model_id)}[/bold] ({model.backend})")
        steps = sum(1 + 2 * len(e.answers) for e in examples)
        rows: list[dict[str, Any]] = []
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err,
            transient=True,
        ) as progress:
            task = progress.add_task("demo", total=steps)
            for example in examples:
                progress.update(task, description=f"{example.id}: generating facts")
                facts = await generate_facts(model, example.question, example.ground_truth, example.lang)
                progress.advance(task)
                for kind, answer in example.answers.items():
                    item = Item(
                        id=f"{example.id}/{kind}",
                        question=example.question,
                        reference=example.reference,
                        ground_truth=example.ground_truth,
                        facts=facts.facts or None,
                        answer=answer,
                    )
                    progress.update(task, description=f"{example.id}/{kind}: precision")
                    checked = await precision.evaluate(item, model)
                    progress.advance(task)
                    progress.update(task, description=f"{example.id}/{kind}: recall")
                    recalled = await recall.evaluate(item, model)
                    progress.advance(task)
                    rows.append(_row(example, kind, checked, recalled, facts))
        return rows

    def report(rows: list[dict[str, Any]]) -> None:
        err.print(_report(rows))
        show_legend(code for row in rows for code in row["precision"]["error_types"])
        if state.as_json:
            print_json(rows)

    run_with_runtime(state, job, report=report)


def _row(example: DemoExample, kind: str, checked: Any, recalled: Any, facts: Any) -> dict[str, Any]:
    return {
        "example": example.id,
        "lang": example.lang,
        "answer_kind": kind,
        "planted_errors": example.flawed_errors if kind == "flawed" else [],
        "precision": checked.model_dump(mode="json"),
        "recall": recalled.model_dump(mode="json"),
        "fact_generation_failed": not facts.ok,
    }


def _report(rows: list[dict[str, Any]]) -> Table:
    table = Table(title="ragfacts demo", title_justify="left", show_lines=True)
    for column in ("example", "answer", "planted", "precision", "failing segments (error type)", "recall"):
        table.add_column(column)
    for row in rows:
        precision = row["precision"]
        label = precision["label"]
        style = {AnswerLabel.CONSISTENT.value: "green", AnswerLabel.INCONSISTENT.value: "red"}.get(label, "yellow")
        failing = [
            f"{escape(s['text'][:60])} ({', '.join(s['error_types']) or '?'})"
            for s in precision["segments"]
            if s["label"] == AnswerLabel.INCONSISTENT.value
        ]
        verification = row["recall"]["verification"]
        recall_text = (
            f"{verification['n_true']}/{verification['n_facts']} facts"
            + (f", {verification['n_failed']} failed" if verification["n_failed"] else "")
            if verification["n_facts"]
            else "no facts (generation failed)"
        )
        table.add_row(
            row["example"],
            row["answer_kind"],
            ", ".join(row["planted_errors"]) or "-",
            f"[{style}]{label}[/{style}]"
            + (f" ({precision['failure_count']} failed calls)" if precision["failure_count"] else ""),
            "\n".join(failing) or "-",
            recall_text,
        )
    return table
