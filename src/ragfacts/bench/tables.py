"""The papers' tables from bench metrics: one data structure, rendered with rich or as Markdown.

Precision (Face4RAG): accuracy by error type (Tables 3 and 7), by source model (Table 4), overall/positive/
negative per method (Tables 6 and 8: ablations are methods like `lface4rag:cot=false`), plus balanced
accuracy, P/R/F1 of the inconsistent class with intervals, confusion matrices and cost per answer.
Recall (FaaF): N/A, error rate and F1-micro on False per answer type (Table 2), calls and tokens per method
(Table 3). The scoring rule is stated under each table.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.markup import escape
from rich.table import Table

from ragfacts.bench.metrics import PREDICTIONS, RULE, ClassificationMetrics, Rate
from ragfacts.bench.recall_metrics import RecallMetrics
from ragfacts.runs.summary import Estimate
from ragfacts.typology import ErrorType
from ragfacts.usage import Usage

_TYPE_ORDER = {t.value: n for n, t in enumerate(ErrorType)}
RECALL_RULE = (
    "N/A: facts without a verdict (failed calls included), out of all facts; ER: wrong verdicts among facts "
    "with a human label and a verdict (the paper's rule); F1m: F1 of the False class, 0 when undefined"
)


@dataclass
class TableData:
    """A table: title, columns, rows of text, and the rule that made its numbers."""

    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    note: str = ""


def precision_tables(metrics: Sequence[ClassificationMetrics]) -> list[TableData]:
    """The Face4RAG-shaped tables for precision methods judged against gold labels."""
    if not metrics:
        return []
    tables = [_by_error_type(metrics)]
    models = sorted({name for m in metrics for name in m.by_source_model})
    if models:
        table = TableData(
            "Accuracy by source model (%, the shape of Face4RAG Table 4)",
            ["method", "Total", *[f"{name} (n={_n(metrics, 'by_source_model', name)})" for name in models]],
            note=RULE,
        )
        for m in metrics:
            table.rows.append(
                [m.method, _percent(m.accuracy.value), *[_rate(m.by_source_model.get(x)) for x in models]]
            )
        tables.append(table)
    overall = TableData(
        "Overall, positive and negative accuracy (%, Face4RAG Tables 6 and 8)",
        ["", *[m.method for m in metrics]],
        note=RULE,
    )
    overall.rows = [
        ["Overall", *[_percent(m.accuracy.value) for m in metrics]],
        ["-Positive", *[_rate(m.positive_accuracy) for m in metrics]],
        ["-Negative", *[_rate(m.negative_accuracy) for m in metrics]],
    ]
    tables.append(overall)
    classification = TableData(
        "Classification of the inconsistent class",
        ["method", "answers", "accuracy", "balanced accuracy", "precision", "recall", "F1", "unscored", "failed calls"],
        note=RULE,
    )
    for m in metrics:
        classification.rows.append(
            [
                m.method,
                f"{m.answers} ({m.positives}+/{m.negatives}-)",
                _estimate(m.accuracy),
                _estimate(m.balanced_accuracy),
                _percent(m.precision_inconsistent),
                _percent(m.recall_inconsistent),
                _percent(m.f1_inconsistent),
                str(m.unscored),
                str(m.failed_calls),
            ]
        )
    tables.append(classification)
    if any(m.uncertain for m in metrics):
        tables.append(_abstention(metrics))
    if any(m.with_probability for m in metrics):
        tables.append(_calibration(metrics))
    languages = sorted({lang for m in metrics for lang in m.by_language})
    if len(languages) > 1:
        table = TableData(
            "Balanced accuracy by language (%)",
            ["method", *[f"{lang} (n={_n_estimates(metrics, lang)})" for lang in languages]],
            note=RULE,
        )
        for m in metrics:
            table.rows.append([m.method, *[_estimate(m.by_language.get(lang, Estimate())) for lang in languages]])
        tables.append(table)
    predictions = [p for p in PREDICTIONS if p != "uncertain" or any(m.uncertain for m in metrics)]
    confusion = TableData("Confusion (gold → predicted)", ["method", "gold", *predictions])
    for m in metrics:
        for gold, row in m.confusion.items():
            confusion.rows.append([m.method, gold, *[str(row.get(p, 0)) for p in predictions]])
    tables.append(confusion)
    tables.append(_cost([(m.method, m.answers, m.usage) for m in metrics]))
    return tables


def _abstention(metrics: Sequence[ClassificationMetrics]) -> TableData:
    """Methods with an abstain band: how many answers they left uncertain, and how well they decided the rest."""
    languages = sorted({lang for m in metrics for lang in m.decided_by_language})
    table = TableData(
        "Abstain band: answers left uncertain, balanced accuracy on the decided ones (%)",
        ["method", "uncertain", "balanced accuracy (all)", "decided", *[f"decided {lang}" for lang in languages]],
        note="all: uncertain answers count as wrong; decided: the answers not uncertain; "
        "intervals: bootstrap 95% over answers",
    )
    for m in metrics:
        share = f"{m.uncertain} ({_percent(m.uncertain / m.answers if m.answers else None)})"
        decided = _estimate(m.decided_balanced_accuracy) if m.uncertain else _estimate(m.balanced_accuracy)
        by_lang = [
            _estimate(m.decided_by_language.get(lang) or m.by_language.get(lang, Estimate())) for lang in languages
        ]
        table.rows.append([m.method, share, _estimate(m.balanced_accuracy), decided, *by_lang])
    return table


def _calibration(metrics: Sequence[ClassificationMetrics]) -> TableData:
    """Judges that give a probability: how far it is from the share of faithful answers (ECE)."""
    table = TableData(
        "Calibration of P(faithful) against the gold labels",
        ["method", "answers with a probability", "calibrated", "expected calibration error"],
        note="ECE: answers in 10 equal-width bins of their probability; the answer-weighted mean of |mean probability "
        "- share faithful| per bin (0 = the probability is the share of faithful answers); interval: bootstrap 95%",
    )
    for m in metrics:
        if m.with_probability:
            e = m.calibration_error
            cell = f"{e.value:.3f} [{e.low:.3f}, {e.high:.3f}]" if e.value is not None else "-"
            table.rows.append([m.method, str(m.with_probability), "yes" if m.calibrated else "no", cell])
    return table


def recall_tables(metrics: Sequence[RecallMetrics]) -> list[TableData]:
    """The FaaF-shaped tables: per method and answer type (Table 2), and cost per method (Table 3)."""
    if not metrics:
        return []
    tables = []
    table = TableData(
        "Fact verification against human labels (FaaF Table 2)",
        ["method", "answer type", "N/A", "ER %", "F1m %", "judged True %", "mean recall %", "labelled facts"],
        note=RECALL_RULE,
    )
    for m in metrics:
        table.rows.append(
            [
                m.method,
                m.answer_type,
                f"{m.na}/{m.facts}",
                _percent(m.error_rate),
                _percent(m.f1_micro),
                _percent(m.true_fraction),
                _percent(m.mean_recall),
                str(m.labelled),
            ]
        )
    totals: dict[str, list[int]] = {}
    for m in metrics:
        total = totals.setdefault(m.method, [0, 0, 0, 0])
        for index, value in enumerate((m.answers, m.calls, m.prompt_tokens, m.completion_tokens)):
            total[index] += value
    cost = TableData(
        "Verification cost (FaaF Table 3)",
        ["method", "answers", "calls", "prompt tokens", "completion tokens"],
        note="fact generation is shared by the methods and counted in the ledger, not here",
    )
    cost.rows = [[method, *map(str, values)] for method, values in totals.items()]
    if any(m.labelled for m in metrics):  # Table 2 compares with human labels: without any, it would say nothing
        tables.append(table)
    return [*tables, cost]


def to_rich(table: TableData) -> Table:
    rendered = Table(title=table.title, title_justify="left", caption=table.note or None, caption_justify="left")
    for index, column in enumerate(table.columns):
        rendered.add_column(escape(column), justify="left" if index == 0 else "right")
    for row in table.rows:
        rendered.add_row(*(escape(cell) for cell in row))
    return rendered


def to_markdown(tables: Sequence[TableData]) -> str:
    """The tables as GitHub-flavoured Markdown, every text escaped (`markdown_text`): data stays text in its cell."""
    parts = []
    for table in tables:
        head = "| " + " | ".join(map(markdown_text, table.columns)) + " |"
        lines = [f"### {markdown_text(table.title)}", "", head, "|" + "---|" * len(table.columns)]
        lines += ["| " + " | ".join(map(markdown_text, row)) + " |" for row in table.rows]
        if table.note:
            lines += ["", f"_{markdown_text(table.note)}_"]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


_LINE_BREAK = re.compile(r"\r\n|[\r\n\v\f\u2028\u2029]")
# What can start markup within a line: backslash escapes, code spans, emphasis and strike-through, links and images,
# HTML and autolinks, entities, a heading's closing #, a table's cell border; `_` only where it can open or close
# emphasis (not between letters or digits: chain_of_thought stays readable).
_MARKDOWN_SPECIAL = re.compile(r"[\\`*~\[\]<>&#|]|_(?![^\W_])|(?<![^\W_])_")


def markdown_text(text: str) -> str:
    """`text` (from data or a model) as Markdown that shows it as it is in any CommonMark or GFM renderer, on one line:
    no HTML, link, emphasis or code span can form, and a `|` cannot end a table cell."""
    return _MARKDOWN_SPECIAL.sub(lambda found: "\\" + found[0], _LINE_BREAK.sub(" ", text))


def markdown_code(text: str) -> str:
    """`text` as one inline code span, whatever backticks it holds: its fence is one backtick longer than its longest
    run of them, with a space inside where it begins or ends with one (CommonMark). Not for table cells (a `|`)."""
    text = _LINE_BREAK.sub(" ", text)
    if not text:
        return ""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    padded = "`" in (text[0], text[-1]) or (text[0] == text[-1] == " " and bool(text.strip()))
    return f"{fence} {text} {fence}" if padded else f"{fence}{text}{fence}"


def _by_error_type(metrics: Sequence[ClassificationMetrics]) -> TableData:
    types = sorted({t for m in metrics for t in m.by_error_type}, key=lambda t: (_TYPE_ORDER.get(t, 99), t))
    table = TableData(
        "Accuracy by error type (%, the shape of Face4RAG Tables 3 and 7)",
        [
            "method",
            "Total",
            f"Pos. (n={max(m.positives for m in metrics)})",
            *[f"{t} (n={_n(metrics, 'by_error_type', t)})" for t in types],
        ],
        note=RULE + "; error-type columns: inconsistent answers judged inconsistent",
    )
    for m in metrics:
        table.rows.append(
            [
                m.method,
                _percent(m.accuracy.value),
                _rate(m.positive_accuracy),
                *[_rate(m.by_error_type.get(t)) for t in types],
            ]
        )
    return table


def _cost(rows: list[tuple[str, int, Usage]]) -> TableData:
    table = TableData(
        "Cost per answer",
        ["method", "calls", "prompt tokens", "completion tokens", "cache hits", "model s"],
        note="from the stored results; a cached reply costs nothing, so a resumed or repeated run shows less",
    )
    for method, answers, usage in rows:
        per = max(answers, 1)
        table.rows.append(
            [
                method,
                f"{usage.calls / per:.1f}",
                f"{usage.prompt_tokens / per:,.0f}",
                f"{usage.completion_tokens / per:,.0f}",
                str(usage.cache_hits),
                f"{usage.model_s / per:.1f}",
            ]
        )
    return table


def _n(metrics: Sequence[ClassificationMetrics], attribute: str, key: str) -> int:
    return max(getattr(m, attribute).get(key, Rate()).n for m in metrics)


def _n_estimates(metrics: Sequence[ClassificationMetrics], lang: str) -> int:
    return max((m.by_language[lang].n for m in metrics if lang in m.by_language), default=0)


def _rate(rate: Rate | None) -> str:
    return "-" if rate is None or rate.value is None else f"{100 * rate.value:.1f}"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _estimate(estimate: Estimate) -> str:
    if estimate.value is None:
        return "-"
    if estimate.low is None or estimate.high is None:
        return _percent(estimate.value)
    return f"{100 * estimate.value:.1f} [{100 * estimate.low:.1f}, {100 * estimate.high:.1f}]"
