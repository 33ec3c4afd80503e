"""Markdown building blocks shared by the generators."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence


def cell(text: object) -> str:
    """Text made safe for one cell of a Markdown table: one line, no pipe, no raw HTML, no stray emphasis."""
    value = html.escape(" ".join(str(text).split()), quote=False)
    return value.replace("|", "\\|").replace("*", "\\*")


def code(text: object) -> str:
    """Inline code that survives a table cell (pipes escaped)."""
    return "`" + str(text).replace("|", "\\|") + "`"


def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table; cells are inserted as given (escape them with `cell` or `code`)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(value) for value in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
