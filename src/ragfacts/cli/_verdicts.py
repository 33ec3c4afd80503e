"""The per-row verdicts a dataset command ends with: a table in input order, then each flagged row in full.

The table fits the terminal's width, or piped 120 columns (COLUMNS sets another), one line a row: long texts end
in "…".
The flagged rows' segments, reasons and missing facts are printed whole, each on a line of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

from rich import box
from rich.console import JustifyMethod
from rich.markup import escape
from rich.table import Table

from ragfacts.cli._render import LABEL_STYLE, show_legend
from ragfacts.console import err
from ragfacts.report.display import faithfulness_text, unjudged
from ragfacts.runs.verdicts import VerdictCounts, VerdictRow
from ragfacts.text import clip

SNIPPET = 48  # characters of a question or answer in the table (the terminal may cut further)
WHY = 72  # characters of the reason in the table; the flagged rows' details below hold it whole
AUTO_ALL_ROWS = 50  # --rows auto: every row up to this many, else the flagged and failed rows only


class RowsShown(str, Enum):
    """Which rows the verdict table lists."""

    auto = "auto"  # all rows up to 50, else the flagged and failed ones
    all = "all"
    flagged = "flagged"
    none = "none"


def show_verdicts(rows: Sequence[VerdictRow], shown: RowsShown = RowsShown.auto) -> VerdictCounts:
    """Print the verdict table, the flagged rows in full, the error-type legend and the counts line."""
    counts = VerdictCounts.of(rows)
    listed = _listed(rows, shown)
    if listed:
        err.print(_table(listed, hidden=len(rows) - len(listed), width=err.width))
        details = [row for row in listed if row.flagged or row.failed]
        for row in details:
            _show_details(row)
        show_legend(code for row in details if row.precision for code in row.precision.view.error_types)
    style = "red" if counts.flagged else "green"
    err.print(f"[{style}]{escape(counts.line())}[/{style}]")
    return counts


def _listed(rows: Sequence[VerdictRow], shown: RowsShown) -> list[VerdictRow]:
    if shown is RowsShown.none:
        return []
    if shown is RowsShown.all or (shown is RowsShown.auto and len(rows) <= AUTO_ALL_ROWS):
        return list(rows)
    return [row for row in rows if row.flagged or row.failed]


def _table(rows: Sequence[VerdictRow], hidden: int, width: int) -> Table:
    caption = f"{hidden} rows not flagged are not listed (--verdicts all lists them)" if hidden else None
    judges = list(dict.fromkeys(r.method for row in rows for r in (row.precision, row.recall_result) if r))
    title = f"Verdicts ({escape(', '.join(judges))})" if judges else "Verdicts"
    table = Table(title=title, title_justify="left", caption=caption, caption_justify="left", box=box.SIMPLE)
    has_question = any(row.item.question for row in rows)
    has_gold = any(row.item.label for row in rows)
    has_precision = any(row.precision for row in rows)
    has_recall = any(row.recall_result for row in rows)
    # The short columns keep their width; the texts share what is left of the terminal (rich would otherwise
    # squeeze every column, the short ones to nothing).
    short = {"#": len(str(rows[-1].position)), "id": min(max(len(row.item.id or "") for row in rows), 24)}
    if has_gold:
        short["gold"] = 12
    if has_precision:
        short |= {"verdict": 12, "P / faith.": 10}
    if has_recall:
        short["recall"] = 6
    texts = {"question": 0.25, "answer": 0.35, "why": 0.4} if has_question else {"answer": 0.45, "why": 0.55}
    left = max(width - sum(short.values()) - 3 * (len(short) + len(texts)), 12 * len(texts))
    limits = {name: max(8, int(share * left)) for name, share in texts.items()}
    for name in ("#", "id", "question", "answer", "gold", "verdict", "P / faith.", "recall", "why"):
        if name in short:
            justify: JustifyMethod = "right" if name in ("#", "P / faith.", "recall") else "left"
            table.add_column(name, justify=justify, no_wrap=True, overflow="ellipsis", width=short[name])
        elif name in limits:
            table.add_column(name, no_wrap=True, overflow="ellipsis", max_width=limits[name])
    for row in rows:
        cells = [str(row.position), escape(row.item.id or "")]
        if has_question:
            cells.append(escape(clip(row.item.question or "", SNIPPET)))
        cells.append(escape(clip(row.item.answer, SNIPPET)))
        if has_gold:
            cells.append(row.item.label or "-")
        if has_precision:
            cells += [_label(row), faithfulness_text(row)]
        if has_recall:
            cells.append(_recall(row))
        why = row.reason or ("-" if not row.failed else "a call failed")
        cells.append(escape(clip(why, WHY)))
        table.add_row(*cells)
    return table


def _show_details(row: VerdictRow) -> None:
    """A flagged or failed row in full: its verdict with what decided it, its flagged segments, missing facts."""
    head = f"#{row.position} {escape(row.item.id or '')} {_label(row) if row.precision else ''}"
    precision = row.precision.view if row.precision else None
    if precision is not None and precision.probability is not None and (precision.reason or precision.decision):
        head += f" — {escape(precision.reason or precision.decision or '')}"
    if precision is not None and precision.decided_by:
        head += f" ({escape(precision.decided_by)})"
    err.print(head.rstrip())
    if precision is not None:
        for unit in precision.flagged:
            codes = f" [{', '.join(unit.error_types)}]" if unit.error_types else ""
            err.print(f"   flagged{escape(codes)}: {escape(unit.text)}")
            if unit.explanation:
                err.print(f"     why: {escape(unit.explanation)}", style="dim")
        if not precision.flagged and precision.reason and precision.probability is None and row.not_faithful:
            err.print(f"   why: {escape(precision.reason)}")
        for failure in precision.failures:
            err.print(f"   [yellow]failed[/yellow] {escape(failure)}")
    if row.recall_result is not None:
        recall = row.recall_result.view
        for unit in recall.flagged:
            err.print(f"   missing fact: {escape(unit.text)}")
        if recall.reason and not recall.units:
            err.print(f"   recall: {escape(recall.reason)}")
        for failure in recall.failures:
            err.print(f"   [yellow]failed[/yellow] {escape(failure)}")


def _label(row: VerdictRow) -> str:
    label = row.label or "-"
    style = LABEL_STYLE.get(label)
    return f"[{style}]{label}[/{style}]" if style else label


def _recall(row: VerdictRow) -> str:
    if row.recall_result is None or unjudged(row.recall_result):
        return "-"
    view = row.recall_result.view
    if not view.units:
        return "-"
    present = sum(unit.verdict == "supported" for unit in view.units)
    return f"{present}/{len(view.units)}"
