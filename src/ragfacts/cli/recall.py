"""`ragfacts facts` and `ragfacts recall`: fact generation and factual recall (FaaF or the prompt baseline)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.markup import escape
from rich.table import Table

from ragfacts.bench.recall_metrics import RecallMetrics, recall_metrics
from ragfacts.cli import app
from ragfacts.cli._common import AppState, fail, run_with_runtime
from ragfacts.console import err, out, print_json
from ragfacts.datasets.wikieval import DatasetError, RecallItem, load_recall_jsonl, load_wikieval_facts
from ragfacts.methods.faaf import RecallResult, default_chunk_size, recall, verify_facts
from ragfacts.methods.facts import generate_facts, read_fact_list
from ragfacts.methods.prompt_tf import verify_facts_by_prompt
from ragfacts.methods.verdicts import Verification
from ragfacts.models import ChatModel
from ragfacts.runtime import Runtime

Lang = Literal["en", "zh"]


@app.command()
def facts(
    ctx: typer.Context,
    answer: Annotated[str, typer.Option("--answer", "-a", help="the ground-truth answer (text or @FILE)")],
    question: Annotated[str | None, typer.Option("--question", "-q", help="the question (text or @FILE)")] = None,
    lang: Annotated[Lang | None, typer.Option(help="prompt language; default: detected")] = None,
) -> None:
    """Generate short, independent facts that answer QUESTION from a ground-truth ANSWER."""
    state: AppState = ctx.obj
    ground_truth, question = _text(answer, "--answer"), _text(question, "--question")
    result = run_with_runtime(state, lambda runtime: generate_facts(runtime.model(), question, ground_truth, lang))
    if state.as_json:
        print_json(result.model_dump(mode="json"))
    else:
        sys.stdout.write("".join(f"- {fact}\n" for fact in result.facts))
        sys.stdout.flush()
    if not result.ok:
        assert result.failure is not None
        err.print(f"[red]fact generation failed ({result.failure.kind.value}):[/red] {escape(result.failure.message)}")
        raise typer.Exit(1)


@app.command("recall")
def recall_command(
    ctx: typer.Context,
    data: Annotated[
        Path | None, typer.Argument(help="a JSONL (WikiEval or {answer, facts|ground_truth}) or WikiEvalFacts CSV")
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="results JSONL (resumable)")] = None,
    answer: Annotated[str | None, typer.Option("--answer", "-a", help="the answer to check (text or @FILE)")] = None,
    facts_text: Annotated[
        str | None, typer.Option("--facts", "-f", help="facts, one per line or a JSON list (text or @FILE)")
    ] = None,
    ground_truth: Annotated[
        str | None, typer.Option("--ground-truth", "-g", help="generate the facts from this (text or @FILE)")
    ] = None,
    question: Annotated[str | None, typer.Option("--question", "-q", help="the question (text or @FILE)")] = None,
    method: Annotated[Literal["faaf", "prompt"], typer.Option(help="FaaF, or the one-call-per-fact baseline")] = "faaf",
    mode: Annotated[Literal["tf", "tfn"], typer.Option(help="FaaF values: True/False or True/False/Not clear")] = "tfn",
    citations: Annotated[bool, typer.Option("--citations", help="FaaF: ask for a supporting excerpt per fact")] = False,
    chunk_size: Annotated[
        int | None, typer.Option(min=0, help="FaaF: facts per call; 0 = all in one; default: per backend")
    ] = None,
    parsing: Annotated[
        Literal["faithful", "corrected"],
        typer.Option(help="prompt baseline: the paper's substring rule or negation-aware"),
    ] = "faithful",
    lang: Annotated[Lang | None, typer.Option(help="prompt language; default: detected")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="with DATA: check at most N new rows")] = None,
) -> None:
    """Check which facts an answer recalls; or, with DATA -o OUT, every row of a dataset."""
    state: AppState = ctx.obj
    options = {
        "method": method,
        "mode": mode,
        "citations": citations,
        "chunk_size": chunk_size,
        "parsing": parsing,
        "lang": lang,
    }
    if data is not None:
        if any(v is not None for v in (answer, facts_text, ground_truth, question)):
            fail("give either DATA -o OUT or --answer with --facts/--ground-truth, not both")
        if output is None:
            fail("checking a dataset needs -o OUT.jsonl (results are streamed there and the run can resume)")
        _recall_dataset(state, data, output, options, limit)
        return
    if answer is None or (facts_text is None) == (ground_truth is None):
        fail("give --answer and exactly one of --facts or --ground-truth (or DATA -o OUT.jsonl)")
    given: list[str] | None = None
    if facts_text is not None:
        try:
            given = read_fact_list(_text(facts_text, "--facts") or "")
        except ValueError as error:
            fail(f"--facts: {error}")
        if not given:
            fail("--facts holds no facts")

    async def job(runtime: Runtime) -> RecallResult:
        model = runtime.model()
        return await recall(
            model,
            _text(question, "--question"),
            _text(ground_truth, "--ground-truth"),
            _text(answer, "--answer") or "",
            facts=given,
            method=method,
            mode=mode,
            citations=citations,
            chunk_size=_chunk_size(chunk_size, model),
            parsing=parsing,
            lang=lang,
        )

    def report(result: RecallResult) -> None:
        if state.as_json:
            print_json(result.model_dump(mode="json"))
        else:
            _show_result(result)

    run_with_runtime(state, job, report=report)


def _recall_dataset(state: AppState, data: Path, output: Path, options: dict[str, Any], limit: int | None) -> None:
    """Check every row not yet in OUTPUT, appending one complete JSON line per row as it finishes."""
    try:
        items = load_wikieval_facts(data) if data.suffix.lower() == ".csv" else load_recall_jsonl(data)
    except DatasetError as error:
        fail(str(error))
    done = _finished_ids(output)
    todo = [item for item in items if item.id not in done][:limit]
    err.print(f"{len(items)} rows in {escape(str(data))}; {len(items) - len(todo)} already done or skipped")

    async def job(runtime: Runtime) -> int:
        model = runtime.model()
        slots = asyncio.Semaphore(max(state.settings.concurrency, 1))

        async def run(item: RecallItem) -> dict[str, Any]:
            async with slots:
                return await _check_item(model, item, options)

        written = 0
        _drop_partial_line(output)
        with output.open("a", encoding="utf-8") as handle:
            for next_done in asyncio.as_completed([run(item) for item in todo]):
                line = await next_done
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
                handle.flush()  # a line is either complete on disk or absent, so a resumed run never repeats work
                written += 1
                err.print(f"  {escape(line['id'])}: {_recall_summary(line)}")
        return written

    written = run_with_runtime(state, job) if todo else 0
    metrics = _dataset_metrics(output)
    if state.as_json:
        print_json(
            {
                "output": str(output),
                "written": written,
                "rows": len(items),
                "metrics": [m.model_dump() for m in metrics],
            }
        )
    else:
        err.print(_metrics_table(metrics))


async def _check_item(model: ChatModel, item: RecallItem, options: dict[str, Any]) -> dict[str, Any]:
    """Generate facts if the row has none, then verify them against every answer of the row."""
    generation = None
    facts = item.facts
    if not facts:
        generation = await generate_facts(model, item.question, item.ground_truth or "", options["lang"])
        facts = generation.facts
    kinds = list(item.answers)
    verifications = await asyncio.gather(*(_verify(model, facts, item.answers[kind], options) for kind in kinds))
    return {
        "id": item.id,
        "question": item.question,
        "facts": facts,
        "facts_source": "given" if item.facts else "generated",
        "fact_generation": generation.model_dump(mode="json") if generation else None,
        "results": {kind: v.model_dump(mode="json") for kind, v in zip(kinds, verifications, strict=True)},
        "labels": item.labels or None,
        "answers": item.answers,
    }


async def _verify(model: ChatModel, facts: list[str], passage: str, options: dict[str, Any]) -> Verification:
    if options["method"] == "prompt":
        return await verify_facts_by_prompt(model, facts, passage, options["parsing"], options["lang"])
    chunk = _chunk_size(options["chunk_size"], model)
    return await verify_facts(model, facts, passage, options["mode"], options["citations"], chunk, options["lang"])


def _chunk_size(requested: int | None, model: ChatModel) -> int | None:
    """None: the backend's default; 0: every fact in one call."""
    if requested is None:
        return default_chunk_size(model)
    return requested or None


def _finished_ids(output: Path) -> set[str]:
    """Ids already in OUTPUT; a torn last line (no newline) is ignored and later dropped."""
    if not output.exists():
        return set()
    ids: set[str] = set()
    text = output.read_text(encoding="utf-8")
    complete = text if text.endswith("\n") else text[: text.rfind("\n") + 1]
    for number, line in enumerate(complete.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            ids.add(str(json.loads(line)["id"]))
        except (json.JSONDecodeError, KeyError, TypeError):
            fail(f"{output}: line {number} is not a result line; move the file away or pass another -o")
    return ids


def _drop_partial_line(output: Path) -> None:
    """Cut a line torn by an interrupted run, so appended lines start on a fresh line."""
    if not output.exists():
        return
    data = output.read_bytes()
    if data and not data.endswith(b"\n"):
        with output.open("r+b") as handle:
            handle.truncate(data.rfind(b"\n") + 1)


def _dataset_metrics(output: Path) -> list[RecallMetrics]:
    """Per answer type metrics over every line of OUTPUT (labels, where present, give ER and F1m)."""
    grouped: dict[tuple[str, str], list[tuple[Verification, list[bool | None] | None]]] = {}
    if not output.exists():
        return []
    for line in output.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        labels = row.get("labels") or {}
        for kind, raw in row["results"].items():
            verification = Verification.model_validate(raw)
            aligned = labels.get(kind) if row.get("facts_source") == "given" else None
            grouped.setdefault((verification.method, kind), []).append((verification, aligned))
    return [recall_metrics(method, kind, pairs) for (method, kind), pairs in grouped.items()]


def _metrics_table(metrics: list[RecallMetrics]) -> Table:
    table = Table(title="Recall", title_justify="left")
    columns = ["method", "answer type", "answers", "facts", "judged True", "N/A", "failed", "mean recall", "ER", "F1m"]
    for name in columns:
        table.add_column(name, justify="left" if name in ("method", "answer type") else "right")
    for m in metrics:
        table.add_row(
            m.method,
            m.answer_type,
            str(m.answers),
            str(m.facts),
            str(m.judged_true),
            str(m.na),
            str(m.failed),
            _percent(m.mean_recall),
            _percent(m.error_rate),
            _percent(m.f1_micro),
        )
    return table


def _show_result(result: RecallResult) -> None:
    verification = result.verification
    table = Table(title=f"Facts checked ({verification.method})", title_justify="left")
    for name in ("#", "fact", "verdict", "model said", "citation"):
        table.add_column(name)
    for v in verification.verdicts:
        verdict = {True: "[green]True[/green]", False: "[red]False[/red]", None: "[yellow]unscored[/yellow]"}[v.verdict]
        said = v.raw if v.raw is not None else (v.unscored or "")
        cite = ""
        if v.citation:
            cite = f"{'✓' if v.citation_match else '✗ not in answer'} {v.citation}"
        table.add_row(str(v.index), escape(v.fact), verdict, escape(_short(said)), escape(_short(cite)))
    out.print(table)
    if result.fact_generation is not None and not result.fact_generation.ok:
        failure = result.fact_generation.failure
        assert failure is not None
        err.print(f"[red]fact generation failed ({failure.kind.value}):[/red] {escape(failure.message)}")
    out.print(f"recall: {_recall_text(verification)}")
    if verification.citations_given:
        out.print(f"citations found in the answer: {verification.citations_verified}/{verification.citations_given}")
    for failure in verification.failures:
        err.print(f"[red]failed call ({failure.kind.value}):[/red] {escape(failure.message)}")


def _recall_text(v: Verification) -> str:
    if v.recall is None:
        return "– (no facts)"
    text = f"{v.n_true}/{v.n_facts} facts ({100 * v.recall:.0f}%)"
    unscored = v.n_failed + v.n_no_verdict
    if unscored:
        text += f"; {unscored} unscored ({v.n_failed} failed calls, {v.n_no_verdict} without a verdict)"
    return text


def _recall_summary(line: dict[str, Any]) -> str:
    parts = []
    for kind, raw in line["results"].items():
        value = raw.get("recall")
        parts.append(f"{kind}={'–' if value is None else f'{value:.2f}'}")
    failed = sum(raw.get("n_failed", 0) for raw in line["results"].values())
    if line.get("fact_generation") and line["fact_generation"].get("failure"):
        parts.append("fact generation failed")
    if failed:
        parts.append(f"{failed} facts unscored (failed calls)")
    return ", ".join(parts)


def _text(value: str | None, option: str) -> str | None:
    """Resolve `@FILE` to the file's text; exit 2 with a clear message if it cannot be read."""
    if value is None or not value.startswith("@"):
        return value
    path = Path(value[1:])
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        fail(f"{option}: cannot read {path}: {error}")


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"
