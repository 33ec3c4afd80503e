"""Human output of results on stderr: one answer's check or recall, dataset summaries, error-type legends."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.markup import escape
from rich.table import Table

from ragfacts.bench.recall_metrics import RecallMetrics
from ragfacts.bench.summary import RULE, Estimate, MethodSummary
from ragfacts.console import err
from ragfacts.methods.cascade import CascadeResult
from ragfacts.methods.holistic import HolisticCheck
from ragfacts.methods.lface4rag import AnswerLabel, CheckResult, ScoreResult, StageResult
from ragfacts.methods.recall import RecallResult
from ragfacts.typology import ErrorType, parse_error_type

_STYLE = {
    AnswerLabel.CONSISTENT: "green",
    AnswerLabel.INCONSISTENT: "red",
    AnswerLabel.UNSCORED: "yellow",
    AnswerLabel.UNCERTAIN: "magenta",
}


def show_check(result: CheckResult) -> None:
    """One answer's check: label, segments with their verdicts, error types (with a legend), quotes, failures."""
    label = result.label
    reason = f"  {escape(result.reason)}" if result.reason else ""
    faithfulness = f"  faithfulness {result.faithfulness:.2f}" if result.faithfulness is not None else ""
    err.print(f"[bold {_STYLE[label]}]{label.value.upper()}[/]{faithfulness}{reason}")
    if result.holistic is not None:
        verdict = _verdict(result.holistic)
        if label is AnswerLabel.UNCERTAIN:  # the threshold's side, said as a leaning, not as the verdict
            verdict = f"uncertain, leans {escape(result.holistic.verdict or '-')}"
        if result.holistic.probability is not None:  # the probability strategies: what decided, on screen
            verdict += f" — {escape(result.holistic.explanation)}"
        err.print(f"holistic judgement: {verdict}")
    if result.segments:
        table = Table(title_justify="left", show_lines=True)
        scored = any(segment.score is not None for segment in result.segments)
        columns = ("#", "segment", "P(supported)", "fact") if scored else ("#", "segment", "fact", "logic")
        for column in (*columns, "error types", "quotes"):
            table.add_column(column)
        for segment in result.segments:
            quotes = [q for stage in segment.stages() for q in stage.quotes()]
            unverified = sum(not q.verified for q in quotes)
            stages = (segment.score, segment.fact) if scored else (segment.fact, segment.logic)
            table.add_row(
                str(segment.index + 1),
                escape(segment.text),
                *(_verdict(stage) for stage in stages),
                ", ".join(t.value for t in segment.error_types) or "-",
                f"{len(quotes) - unverified}/{len(quotes)} found" if quotes else "-",
            )
        err.print(table)
    for segment in result.segments:
        for stage in segment.stages():
            if stage.verdict == "inconsistent" and stage.explanation:
                err.print(f"#{segment.index + 1} {stage.call.stage}: {escape(stage.explanation)}")
        if segment.note:
            err.print(f"#{segment.index + 1} note: {escape(segment.note)}", style="yellow")
    show_legend(result.error_types)
    for failure in result.failures:
        where = f" (segment {failure.segment + 1})" if failure.segment is not None else ""
        err.print(f"[yellow]failed[/] {failure.stage}{where}: {failure.kind.value}: {escape(failure.message)}")
    if result.unverified_quotes:
        err.print(f"[yellow]{result.unverified_quotes} quote(s) not found in the reference[/]")


def show_result(result: Any) -> None:
    """One answer's result, whatever method made it."""
    if isinstance(result, CheckResult):
        show_check(result)
    elif isinstance(result, RecallResult):
        show_recall(result)
    elif isinstance(result, CascadeResult):
        _show_stored(result.first)
        if result.second is not None:
            err.print(f"[bold]escalated to {escape(result.second_model)}[/bold]: its verdict decides")
            _show_stored(result.second)
    elif isinstance(result, HolisticCheck):
        label = result.label
        err.print(f"[bold {_STYLE[label]}]{label.value.upper()}[/]  (one judgement of the whole answer)")
        for problem in result.judgement.problems:
            err.print(f"- {escape(problem)}")
        if result.judgement.call.failure is not None:
            failure = result.judgement.call.failure
            err.print(f"[yellow]failed[/]: {failure.kind.value}: {escape(failure.message)}")
    else:
        err.print(escape(str(result.outcome())))


def _show_stored(data: dict[str, Any]) -> None:
    """A stored precision result (a cascade keeps its judges' results as data), shown as when it was made."""
    for kind in (CheckResult, HolisticCheck):
        try:
            show_result(kind.model_validate(data))
            return
        except ValueError:
            continue
    err.print(escape(str(data.get("label"))))


def show_recall(result: RecallResult) -> None:
    """One answer's recall: each fact with its verdict and citation, then the score and any failures."""
    verification = result.verification
    table = Table(title=f"Facts checked ({verification.method})", title_justify="left")
    for name in ("#", "fact", "verdict", "model said", "citation"):
        table.add_column(name)
    for v in verification.verdicts:
        verdict = {True: "[green]True[/green]", False: "[red]False[/red]", None: "[yellow]unscored[/yellow]"}[v.verdict]
        said = v.raw if v.raw is not None else (v.unscored or "")
        cite = f"{'✓' if v.citation_match else '✗ not in answer'} {v.citation}" if v.citation else ""
        table.add_row(str(v.index), escape(v.fact), verdict, escape(_short(said)), escape(_short(cite)))
    err.print(table)
    generation = result.fact_generation
    if generation is not None and generation.failure is not None:
        failure = generation.failure
        err.print(f"[red]fact generation failed ({failure.kind.value}):[/red] {escape(failure.message)}")
    err.print(f"recall: {_recall_text(result)}")
    if verification.citations_given:
        err.print(f"citations found in the answer: {verification.citations_verified}/{verification.citations_given}")
    for failure in verification.failures:
        err.print(f"[red]failed call ({failure.kind.value}):[/red] {escape(failure.message)}")


def show_legend(codes: Iterable[ErrorType | str]) -> None:
    """Explain the error-type codes that were printed, in one line."""
    types = [t if isinstance(t, ErrorType) else parse_error_type(t) for t in codes]
    known = list(dict.fromkeys(t for t in types if t is not None))
    if known:
        err.print("error types: " + " · ".join(f"{t.value} {t.info.name_en}" for t in known), style="dim")


def summary_table(summaries: Sequence[MethodSummary]) -> Table:
    """Per method: rows judged, % consistent, mean faithfulness or recall (95% intervals), failures."""
    table = Table(title="Summary", title_justify="left", caption=RULE, caption_justify="left")
    for column in ("method", "judged", "consistent", "faithfulness / recall", "if failed = 1", "rows with failures"):
        table.add_column(column, justify="left" if column == "method" else "right")
    for s in summaries:
        judged = f"{s.judged}/{s.applicable}"
        consistent = "-"
        if s.consistent_share is not None:
            consistent = _estimate(s.consistent_share, percent=True)
            apart = [f"{n} {name}" for n, name in ((s.uncertain, "uncertain"), (s.unscored, "unscored")) if n]
            if apart:
                consistent += f" ({', '.join(apart)})"
        label = "faithfulness" if s.kind == "precision" else "recall"
        upper = f"{s.score_if_failed_is_1:.3f}" if s.score_if_failed_is_1 is not None else "-"
        table.add_row(escape(s.method), judged, consistent, f"{label} {_estimate(s.score)}", upper, str(s.incomplete))
    return table


def recall_metrics_table(metrics: Sequence[RecallMetrics]) -> Table:
    """The FaaF paper's per-answer-type view: facts judged True, N/A, failures, recall, ER and F1m vs humans."""
    table = Table(title="Recall by answer type", title_justify="left")
    columns = ["method", "answer type", "answers", "facts", "judged True", "N/A", "failed", "mean recall", "ER", "F1m"]
    for name in columns:
        table.add_column(name, justify="left" if name in ("method", "answer type") else "right")
    for m in metrics:
        table.add_row(
            escape(m.method),
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


def _estimate(estimate: Estimate, percent: bool = False) -> str:
    if estimate.value is None:
        return "-"
    scale, unit = (100, "%") if percent else (1, "")
    digits = 1 if percent else 3
    text = f"{scale * estimate.value:.{digits}f}{unit}"
    if estimate.low is not None and estimate.high is not None:
        text += f" [{scale * estimate.low:.{digits}f}, {scale * estimate.high:.{digits}f}]"
    return text


def _verdict(stage: StageResult | None) -> str:
    if stage is None:
        return "-"
    if stage.failed:
        return "[yellow]failed[/]"
    word = "[green]consistent[/]" if stage.verdict == "consistent" else "[red]inconsistent[/]"
    if isinstance(stage, ScoreResult) and stage.probability is not None:
        return f"{word} {stage.probability:.2f}"
    return word


def _recall_text(result: RecallResult) -> str:
    v = result.verification
    if v.recall is None:
        return "– (no facts)"
    text = f"{v.n_true}/{v.n_facts} facts ({100 * v.recall:.0f}%)"
    unscored = v.n_failed + v.n_no_verdict
    if unscored:
        text += f"; {unscored} unscored ({v.n_failed} failed calls, {v.n_no_verdict} without a verdict)"
    return text


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"
