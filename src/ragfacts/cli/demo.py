"""`ragfacts demo`: the main job on built-in examples — precision and recall of a faithful and a flawed answer."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ragfacts.cli._app import app
from ragfacts.cli._common import AppState, fail, run_with_runtime
from ragfacts.cli._render import show_legend
from ragfacts.console import err, print_json
from ragfacts.datasets.demo import DemoExample, load_demo_examples
from ragfacts.items import Item
from ragfacts.methods.base import Method, create_method
from ragfacts.methods.facts import generate_facts
from ragfacts.methods.lface4rag import AnswerLabel
from ragfacts.methods.view import ResultView, view_of
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
                    rows.append(_row(example, kind, checked, recalled, facts) | _methods(precision, recall))
        return rows

    def report(rows: list[dict[str, Any]]) -> None:
        _report(examples, rows)
        if state.as_json:
            print_json(rows)

    run_with_runtime(state, job, report=report)


def _methods(precision: Method, recall: Method) -> dict[str, str]:
    return {"precision_method": precision.spec, "recall_method": recall.spec}


def _row(example: DemoExample, kind: str, checked: Any, recalled: Any, facts: Any) -> dict[str, Any]:
    return {
        "example": example.id,
        "lang": example.lang,
        "answer_kind": kind,
        "planted_errors": example.flawed_errors if kind == "flawed" else [],
        "answer": example.answers[kind],
        "precision": checked.model_dump(mode="json"),
        "recall": recalled.model_dump(mode="json"),
        "fact_generation_failed": not facts.ok,
    }


def _report(examples: list[DemoExample], rows: list[dict[str, Any]]) -> None:
    """Each example in full (question, reference, both answers), the verdicts beside the planted errors, the
    flagged segments whole, what recall missed; then "caught N of M" and a legend for every code printed."""
    err.print("[bold]ragfacts demo[/bold]: a faithful and a flawed answer per example, each against its reference")
    codes: list[str] = []
    for example in examples:
        err.print(f"\n[bold]── {escape(example.id)} ({example.lang}) ──[/bold]")
        err.print(f"[bold]question:[/bold] {escape(example.question)}")
        err.print(f"[bold]reference:[/bold] {escape(example.reference)}")
        for row in rows:
            if row["example"] != example.id:
                continue
            precision = view_of(row["precision_method"], row["precision"])
            recall = view_of(row["recall_method"], row["recall"])
            planted = row["planted_errors"]
            codes += planted + precision.error_types
            what = f"{row['answer_kind']} answer" + (f" (planted: {', '.join(planted)})" if planted else "")
            err.print(f"[bold]{escape(what)}:[/bold] {escape(row['answer'])}")
            err.print(f"  verdict: {_verdict_text(precision, planted)}")
            for unit in precision.flagged:
                found = f" [{', '.join(unit.error_types)}]" if unit.error_types else ""
                err.print(f"  flagged{escape(found)}: {escape(unit.text)}")
            for failure in precision.failures:
                err.print(f"  [yellow]failed[/yellow] {escape(failure)}")
            err.print(f"  recall: {escape(_recall_text(recall))}")
    flawed = [r for r in rows if r["planted_errors"]]
    faithful = [r for r in rows if not r["planted_errors"]]
    caught = sum(r["precision"]["label"] == AnswerLabel.INCONSISTENT.value for r in flawed)
    uncertain = sum(r["precision"]["label"] == AnswerLabel.UNCERTAIN.value for r in flawed)
    passed = sum(r["precision"]["label"] == AnswerLabel.CONSISTENT.value for r in faithful)
    err.print()
    style = "green" if caught == len(flawed) else "red"
    apart = f" ({uncertain} left uncertain)" if uncertain else ""
    err.print(
        f"[{style}]caught {caught} of {len(flawed)} flawed answers{apart}[/{style}]; "
        f"{passed} of {len(faithful)} faithful answers judged consistent"
    )
    show_legend(codes)


def _verdict_text(view: ResultView, planted: list[str]) -> str:
    label = view.label or "-"
    style = {AnswerLabel.CONSISTENT.value: "green", AnswerLabel.INCONSISTENT.value: "red"}.get(label, "yellow")
    text = f"[{style}]{label}[/{style}]"
    if planted:
        text += " — caught" if label == AnswerLabel.INCONSISTENT.value else " — [red]missed[/red]"
    if view.probability is not None:
        text += f"  P(faithful) = {view.probability:.2f}"
    elif view.score is not None:
        text += f"  faithfulness {view.score:.2f}"
    if view.error_types:
        text += f"  found: {', '.join(view.error_types)}"
    return text


def _recall_text(view: ResultView) -> str:
    if not view.units:
        return view.reason or "no facts"
    present = sum(unit.verdict == "supported" for unit in view.units)
    missing = [unit.text for unit in view.flagged]
    text = f"{present}/{len(view.units)} facts"
    return text + (f"; missing: {'; '.join(missing)}" if missing else "")
