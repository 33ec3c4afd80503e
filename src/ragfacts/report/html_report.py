"""One self-contained HTML file per report: summary, tables, charts, and a per-answer view with filters.

Nothing is fetched at view time (CSS, script, charts and data are inline; a Content-Security-Policy forbids
any load). Everything from data and models is escaped: tables with `html.escape`, the per-answer data as JSON
whose `<`, `>` and `&` are written as \\u escapes (it cannot close its <script> element), and the page's
script inserts every text with textContent, never as HTML.
"""

from __future__ import annotations

import html
import json
import string
from collections.abc import Sequence
from datetime import datetime, timezone
from importlib import resources
from typing import Any

from ragfacts.bench.scoring import bench_tables
from ragfacts.bench.tables import TableData
from ragfacts.report import charts
from ragfacts.report.display import not_judged_text, nothing_judged
from ragfacts.report.report import (
    RunData,
    differing_labels,
    ledger_table,
    manifest_rows,
    report_payload,
    summary_table,
    tradeoff_table,
)
from ragfacts.runs.summary import MethodSummary


def render_html(runs: Sequence[RunData]) -> str:
    """The report of one or more runs as one HTML document."""
    payload = report_payload(runs)
    sections = [_run_section(run, f"run-{n}") for n, run in enumerate(runs, 1)]
    links = [(f"run-{n}", f"Run {run.name}") for n, run in enumerate(runs, 1)]
    if len(runs) > 1:
        sections.append(_comparison(runs))
        links.append(("compare", "Runs compared"))
    links.append(("answers-title", f"Answers ({len(payload['items'])})"))
    types = sorted({t for item in payload["items"] for t in item["types"]})
    langs = sorted({item["lang"] for item in payload["items"]})
    names = ", ".join(run.name for run in runs)
    title = f"ragfacts report: {names}"
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    template = string.Template(_asset("report.html"))
    return template.safe_substitute(
        title=html.escape(title),
        subtitle=html.escape(f"{len(payload['items'])} answers · made {stamp}"),
        css=_asset("report.css"),
        js=_asset("report.js"),
        nav=" · ".join(f'<a href="#{anchor}">{html.escape(text)}</a>' for anchor, text in links),
        summary="\n".join(sections),
        data=script_json(payload),
        type_options="".join(f'<option value="{html.escape(t)}">{html.escape(t)}</option>' for t in types),
        lang_options="".join(f'<option value="{html.escape(x)}">{html.escape(x)}</option>' for x in langs),
        differs_hidden="" if len(runs) > 1 else ' class="hidden"',
    )


def script_json(data: Any) -> str:
    """JSON that is safe inside a <script> element: it cannot end the element or start markup."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


def table_html(table: TableData) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in table.rows)
    note = f'<div class="note">{html.escape(table.note)}</div>' if table.note else ""
    return f'<h3>{html.escape(table.title)}</h3><div class="scroll"><table><tr>{head}</tr>{rows}</table></div>{note}'


def _run_section(run: RunData, anchor: str) -> str:
    config = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in manifest_rows(run))
    parts = [
        f'<h2 id="{anchor}">Run {html.escape(run.name)}</h2>',
        f'<div class="scroll"><table class="config">{config}</table></div>',
        table_html(summary_table(run)),
        *(table_html(t) for t in bench_tables(run.precision, run.recall)),
        *(table_html(tradeoff_table(t)) for t in run.tradeoffs),
        _charts(run),
        table_html(ledger_table(run)),
    ]
    return "\n".join(parts)


def _charts(run: RunData) -> str:
    if not charts.available():
        return '<p class="note">Charts need matplotlib: pip install "ragfacts[report]".</p>'
    order = [m["key"] for m in run.methods]
    colours = charts.method_colours(order)
    scores: dict[str, list[float]] = {method: [] for method in order}
    for by_method in run.lines.values():
        for method, line in by_method.items():
            value = line["outcome"].get("score")
            if value is not None:
                scores.setdefault(method, []).append(value)
    figures = [
        (
            charts.accuracy_by_error_type(run.precision, colours),
            "Accuracy per error type, per method (labelled answers)",
        ),
        (charts.cost_against_accuracy(run.precision, colours), "Cost against balanced accuracy, per method"),
        (charts.score_distribution(scores, colours), "Distribution of faithfulness and recall per method"),
        (
            charts.reliability_diagram(run.precision, colours),
            "Reliability of P(faithful): share of faithful answers per bin of probability (diagonal: calibrated)",
        ),
        (
            charts.cascade_tradeoff(run.tradeoffs),
            "Cascade: balanced accuracy against tokens per answer; labels: share of answers escalated",
        ),
    ]
    shown = [
        f"<figure>{svg}<figcaption>{html.escape(caption)}</figcaption></figure>" for svg, caption in figures if svg
    ]
    return '<h3>Charts</h3><div class="charts">' + "".join(shown) + "</div>" if shown else ""


def _comparison(runs: Sequence[RunData]) -> str:
    methods = [m["key"] for m in runs[0].methods if all(m["key"] in r.kinds() for r in runs[1:])]
    table = TableData("Side by side", ["method", "measure", *(run.name for run in runs)])
    for method in methods:
        summaries = [next(s for s in run.summaries if s.method == method) for run in runs]
        if summaries[0].kind == "precision":
            table.rows.append(
                [
                    method,
                    "consistent %",
                    *(_percent(s.consistent_share.value if s.consistent_share else None, s) for s in summaries),
                ]
            )
        table.rows.append([method, "faithfulness / recall", *(_number(s.score.value, s) for s in summaries)])
        table.rows.append([method, "rows with failures", *(str(s.incomplete) for s in summaries)])
        scored = [next((m for m in run.precision if m.method == method), None) for run in runs]
        if all(scored):
            table.rows.append(
                [method, "balanced accuracy %", *(_percent(m.balanced_accuracy.value) for m in scored if m)]
            )
    differing = differing_labels(runs)
    listing = "".join(
        f"<li><code>{html.escape(str(d['id']))}</code> {html.escape(d['method'])}: "
        + html.escape(", ".join(f"{k} {v}" for k, v in d["labels"].items()))
        + "</li>"
        for d in differing[:200]
    )
    more = (
        f"<p class='note'>… and {len(differing) - 200} more: use the filter below.</p>" if len(differing) > 200 else ""
    )
    return (
        '<h2 id="compare">Runs compared</h2>'
        + table_html(table)
        + f"<h3>Answers whose labels differ ({len(differing)})</h3><ul>{listing}</ul>{more}"
    )


def _asset(name: str) -> str:
    return resources.files("ragfacts.report").joinpath("report_assets").joinpath(name).read_text(encoding="utf-8")


def _percent(value: float | None, summary: MethodSummary | None = None) -> str:
    if summary is not None and nothing_judged(summary):
        return "-"
    return "-" if value is None else f"{100 * value:.1f}"


def _number(value: float | None, summary: MethodSummary) -> str:
    if nothing_judged(summary):
        return not_judged_text(summary)
    return "-" if value is None else f"{value:.3f}"
