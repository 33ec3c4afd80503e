"""Human output of results on stderr: one answer's result (as its type's view), dataset summaries, legends."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.markup import escape
from rich.table import Table

from ragfacts.bench.recall_metrics import RecallMetrics
from ragfacts.console import err
from ragfacts.methods.view import ResultView, outcome_view
from ragfacts.report.display import consistent_text, score_text, upper_text
from ragfacts.runs.summary import RULE, MethodSummary
from ragfacts.text import clip
from ragfacts.typology import ErrorType, named, parse_error_type

CELL = 80  # characters of a unit's text in a table cell
LABEL_STYLE = {"consistent": "green", "inconsistent": "red", "unscored": "yellow", "uncertain": "magenta"}


def show_result(result: Any) -> None:
    """One answer's result, whatever method made it: as the view its own type gives (`ResultView`)."""
    view = result.view() if hasattr(result, "view") else outcome_view(result.outcome())
    if view.first is not None:  # a cascade: the first judge, then the one that decided
        show_view(view.first)
        err.print(f"[bold]{escape(view.decided_by or 'escalated')}[/bold]: its verdict decides")
    show_view(view)


def show_view(view: ResultView) -> None:
    """A result's view: its verdict and why, its units in a table, what each stage said against them, failures."""
    if view.kind == "precision":
        label = view.label or "unscored"
        judged = view.score is not None and label != "unscored"  # an unscored answer shows no score
        score = f"  faithfulness {view.score:.2f}" if judged else ""
        reason = f"  {escape(view.reason)}" if view.reason and view.reason != view.decision else ""
        err.print(f"[bold {LABEL_STYLE.get(label, 'yellow')}]{label.upper()}[/]{score}{reason}")
        if view.decision:
            err.print(f"judged: {escape(view.decision)}")
    if view.units:
        err.print(_units_table(view))
    for number, unit in enumerate(view.units, start=1):
        for explanation in unit.explanations:
            err.print(f"#{number} {escape(explanation)}")
        if unit.note:
            err.print(f"#{number} note: {escape(unit.note)}", style="yellow")
    show_legend(view.error_types)
    for failure in view.failures:
        err.print(f"[yellow]failed[/] {escape(failure)}")
    unverified = sum(not quote.found for unit in view.units for quote in unit.quotes)
    if unverified:
        err.print(f"[yellow]{unverified} quote(s) not found in the reference[/]")
    if view.kind == "recall":
        unjudged = bool(view.units) and all(unit.verdict == "unscored" for unit in view.units)
        headline = f"not judged ({len(view.units)} facts unscored)" if unjudged else view.headline or "-"
        err.print(f"recall: {escape(headline)}")  # no fact judged: no "0/2 facts (0%)"


def _units_table(view: ResultView) -> Table:
    """The units with the columns they carry: verdict (and P), each stage, error types, quotes, what was said."""
    units = view.units
    stages = list(dict.fromkeys(stage for unit in units for stage in unit.checks))
    columns = ["#", view.unit_name, "verdict", *stages]
    extra = {
        "P(supported)": any(unit.probability is not None for unit in units),
        "error types": any(unit.error_types for unit in units) or view.unit_name == "segment",
        "quotes": any(unit.quotes for unit in units),
        "model said": any(unit.said for unit in units),
        "citation": any(unit.citation for unit in units),
        "why": view.unit_name == "claim" and any(unit.explanation for unit in units),
    }
    columns += [name for name, shown in extra.items() if shown]
    table = Table(title=f"{view.unit_name.capitalize()}s checked", title_justify="left", show_lines=True)
    for column in columns:
        table.add_column(column)
    for number, unit in enumerate(units, start=1):
        cells = [str(number), escape(unit.text), _unit_verdict(unit.verdict)]
        cells += [_stage_verdict(unit.checks.get(stage)) for stage in stages]
        if extra["P(supported)"]:
            cells.append("-" if unit.probability is None else f"{unit.probability:.2f}")
        if extra["error types"]:
            cells.append(", ".join(unit.error_types) or "-")
        if extra["quotes"]:
            found = sum(quote.found for quote in unit.quotes)
            cells.append(f"{found}/{len(unit.quotes)} found" if unit.quotes else "-")
        if extra["model said"]:
            cells.append(escape(clip(unit.said or "", CELL)))
        if extra["citation"]:
            mark = "" if unit.citation is None else ("✓ " if unit.citation_found else "✗ not in answer ")
            cells.append(escape(clip(mark + (unit.citation or ""), CELL)))
        if extra["why"]:
            cells.append(escape(clip(unit.explanation, CELL)))
        table.add_row(*cells)
    return table


_UNIT_WORDS = {
    "supported": "[green]supported[/]",
    "unsupported": "[red]unsupported[/]",
    "uncertain": "[magenta]uncertain[/]",
    "unscored": "[yellow]unscored[/]",
}


def _unit_verdict(verdict: str) -> str:
    return _UNIT_WORDS.get(verdict, escape(verdict))


def _stage_verdict(verdict: str | None) -> str:
    if verdict is None:
        return "-"
    style = {"consistent": "green", "inconsistent": "red", "failed": "yellow"}.get(verdict)
    return f"[{style}]{verdict}[/]" if style else escape(verdict)


def show_legend(codes: Iterable[ErrorType | str]) -> None:
    """Explain the error-type codes that were printed, in one line."""
    types = [t if isinstance(t, ErrorType) else parse_error_type(t) for t in codes]
    known = list(dict.fromkeys(t for t in types if t is not None))
    if known:
        err.print("error types: " + " · ".join(named(t) for t in known), style="dim")


def summary_table(summaries: Sequence[MethodSummary]) -> Table:
    """Per method: rows judged, % consistent, mean faithfulness or recall (95% intervals), failures."""
    table = Table(title="Summary", title_justify="left", caption=RULE, caption_justify="left")
    for column in ("method", "judged", "consistent", "faithfulness / recall", "if failed = 1", "rows with failures"):
        table.add_column(column, justify="left" if column == "method" else "right")
    for s in summaries:
        consistent = consistent_text(s)
        apart = [f"{n} {name}" for n, name in ((s.uncertain, "uncertain"), (s.unscored, "unscored")) if n]
        if consistent != "-" and apart:
            consistent += f" ({', '.join(apart)})"
        cells = [s.method, f"{s.judged}/{s.applicable}", consistent, score_text(s), upper_text(s), str(s.incomplete)]
        table.add_row(*map(escape, cells))
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


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"
