"""Results as a notebook shows them: the summary as text and HTML, the verdict rows as an HTML table.

Every text that came from the data or a model is escaped; the HTML has inline styles only, so it renders the
same in Jupyter, VS Code and a saved notebook.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from ragfacts.runs.summary import MethodSummary
from ragfacts.runs.verdicts import StoredResult, VerdictCounts, VerdictRow

HTML_ROWS = 50  # rows shown in a notebook; to_pandas() has them all
_COLOURS = {"consistent": "#1a7f37", "inconsistent": "#cf222e", "uncertain": "#8250df", "unscored": "#9a6700"}


def summary_line(s: MethodSummary) -> str:
    """One method's summary in a line, e.g. "lface4rag: 5/6 judged, 66.7% consistent [..], faithfulness 0.8 [..]"."""
    parts = [f"{s.judged}/{s.applicable} judged"]
    if nothing_judged(s):
        parts.append(score_text(s))
    elif s.kind == "precision":
        if s.consistent_share is not None:
            parts.append(f"{s.consistent_share.text(percent=True)} consistent")
        parts.append(score_text(s))
        if s.uncertain:
            parts.append(f"{s.uncertain} uncertain")
    else:
        parts.append(score_text(s))
    if s.unscored and not nothing_judged(s):
        parts.append(f"{s.unscored} unscored")
    if s.incomplete:
        parts.append(f"{s.incomplete} with failed calls")
    return f"{s.method}: {', '.join(parts)}"


def nothing_judged(s: MethodSummary) -> bool:
    """Whether the method judged no answer, so that any score would be a number about nothing: no result yet, every
    precision answer unscored, or no recall known (every row 0 with its failures counted as 0 and 1 as 1)."""
    if s.judged == 0 or s.score.n == 0 or s.score.value is None:
        return True
    if s.kind == "precision":
        return s.unscored >= s.judged
    return s.score.value == 0 and s.score_if_failed_is_1 == 1


def score_text(s: MethodSummary) -> str:
    """e.g. "faithfulness 0.812 [0.700, 0.905]", "recall 0.5 [..]"; "faithfulness not judged (5 unscored)" where the
    method judged no answer (`nothing_judged`)."""
    name = "faithfulness" if s.kind == "precision" else "recall"
    return f"{name} {not_judged_text(s) if nothing_judged(s) else s.score.text()}"


def not_judged_text(s: MethodSummary) -> str:
    """The words "not judged", with how many rows: unscored, or not run yet."""
    if s.judged:
        return f"not judged ({s.judged} unscored)"
    return f"not judged ({s.not_judged} not run yet)" if s.not_judged else "not judged (no row)"


def consistent_text(s: MethodSummary) -> str:
    """The share judged consistent, e.g. "66.7% [40.0, 90.0]"; "-" for recall and where nothing was judged."""
    if s.consistent_share is None or nothing_judged(s):
        return "-"
    return s.consistent_share.text(percent=True)


def upper_text(s: MethodSummary) -> str:
    """The mean score with failed rows counted as 1; "-" where nothing was judged."""
    return "-" if s.score_if_failed_is_1 is None or nothing_judged(s) else f"{s.score_if_failed_is_1:.3f}"


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
        cells = [
            s.method,
            f"{s.judged}/{s.applicable}",
            consistent_text(s),
            score_text(s),
            s.uncertain,
            s.unscored,
            s.incomplete,
        ]
        rows.append(cells)
    return _table(head, [[escape(str(c)) for c in row] for row in rows])


def unjudged(result: StoredResult | None) -> bool:
    """Whether a method could not judge the answer: unscored (precision), or no fact's verdict known (recall: 0 with
    its failed facts counted as missing and 1 with them counted as present). Such an answer shows no score."""
    if result is None:
        return True
    outcome = result.outcome
    if outcome.kind == "precision":
        return outcome.label == "unscored"
    return outcome.score is None or (outcome.score == 0 and outcome.score_upper == 1)


def faithfulness_text(row: VerdictRow) -> str:
    """A row's P(faithful) ("P=0.91") where its judge gives one, else its faithfulness; "-" where it was not judged."""
    if unjudged(row.precision):
        return "-"
    if row.probability is not None:
        return f"P={row.probability:.2f}"
    return "-" if row.faithfulness is None else f"{row.faithfulness:.2f}"


def rows_html(rows: Sequence[VerdictRow], limit: int = HTML_ROWS) -> str:
    """The verdict rows in input order (the first `limit`), the flagged ones with their flagged segments."""
    head = ["#", "id", "question", "answer", "verdict", "P / faith.", "recall", "why"]
    body = []
    for row in rows[:limit]:
        label = row.label or "-"
        colour = _COLOURS.get(label, "inherit")
        recall = "-" if row.recall is None or unjudged(row.recall_result) else f"{row.recall:.2f}"
        body.append(
            [
                str(row.position),
                escape(row.item.id or ""),
                escape(row.item.question or ""),
                escape(row.item.answer),
                f'<b style="color:{colour}">{escape(label)}</b>',
                faithfulness_text(row),
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
