"""Results as a notebook shows them: the summary as text and HTML, the verdict rows as an HTML table.

Every text that came from the data or a model is escaped; the HTML has inline styles only, so it renders the
same in Jupyter, VS Code and a saved notebook.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from ragfacts.bench.summary import MethodSummary
from ragfacts.bench.verdicts import VerdictCounts, VerdictRow

HTML_ROWS = 50  # rows shown in a notebook; to_pandas() has them all
_COLOURS = {"consistent": "#1a7f37", "inconsistent": "#cf222e", "uncertain": "#8250df", "unscored": "#9a6700"}


def summary_line(s: MethodSummary) -> str:
    """One method's summary in a line, e.g. "lface4rag: 5/6 judged, 66.7% consistent [..], faithfulness 0.8 [..]"."""
    parts = [f"{s.judged}/{s.applicable} judged"]
    if s.kind == "precision":
        if s.consistent_share is not None:
            parts.append(f"{s.consistent_share.text(percent=True)} consistent")
        parts.append(f"faithfulness {s.score.text()}")
        if s.uncertain:
            parts.append(f"{s.uncertain} uncertain")
    else:
        parts.append(f"recall {s.score.text()}")
    if s.unscored:
        parts.append(f"{s.unscored} unscored")
    if s.incomplete:
        parts.append(f"{s.incomplete} with failed calls")
    return f"{s.method}: {', '.join(parts)}"


class Summary(list[MethodSummary]):
    """The per-method summaries (a list), shown as lines of text, or as a table in a notebook."""

    def __repr__(self) -> str:
        return "\n".join(summary_line(s) for s in self) or "(nothing judged)"

    def _repr_html_(self) -> str:
        return summary_html(self)


def summary_html(summaries: Sequence[MethodSummary]) -> str:
    head = ["method", "judged", "consistent", "faithfulness / recall", "uncertain", "unscored", "with failed calls"]
    rows = []
    for s in summaries:
        consistent = s.consistent_share.text(percent=True) if s.consistent_share is not None else "-"
        score = f"{'faithfulness' if s.kind == 'precision' else 'recall'} {s.score.text()}"
        cells = [s.method, f"{s.judged}/{s.applicable}", consistent, score, s.uncertain, s.unscored, s.incomplete]
        rows.append(cells)
    return _table(head, [[escape(str(c)) for c in row] for row in rows])


def rows_html(rows: Sequence[VerdictRow], limit: int = HTML_ROWS) -> str:
    """The verdict rows in input order (the first `limit`), the flagged ones with their flagged segments."""
    head = ["#", "id", "question", "answer", "verdict", "P / faith.", "recall", "why"]
    body = []
    for row in rows[:limit]:
        label = row.label or "-"
        colour = _COLOURS.get(label, "inherit")
        faithful = "-"
        if row.probability is not None:
            faithful = f"P={row.probability:.2f}"
        elif row.faithfulness is not None:
            faithful = f"{row.faithfulness:.2f}"
        recall = "-" if row.recall is None else f"{row.recall:.2f}"
        body.append(
            [
                str(row.position),
                escape(row.item.id or ""),
                escape(row.item.question or ""),
                escape(row.item.answer),
                f'<b style="color:{colour}">{escape(label)}</b>',
                faithful,
                recall,
                escape(row.reason or ""),
            ]
        )
    more = (
        f"<p>… {len(rows) - limit} more rows: <code>.to_pandas()</code> has them all.</p>" if len(rows) > limit else ""
    )
    return _table(head, body) + more


def results_html(summaries: Sequence[MethodSummary], rows: Sequence[VerdictRow]) -> str:
    """A notebook's view of a run: the counts line, the summary table, the verdict rows."""
    counts = VerdictCounts.of(rows)
    return f"<div><p><b>ragfacts</b>: {escape(counts.line())}</p>{summary_html(summaries)}{rows_html(rows)}</div>"


def _table(head: list[str], rows: list[list[str]]) -> str:
    cell = 'style="text-align:left;vertical-align:top;padding:2px 8px;max-width:32em"'
    header = "".join(f"<th {cell}>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td {cell}>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"
