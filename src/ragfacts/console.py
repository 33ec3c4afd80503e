"""Human output for the CLI: rich tables on stderr, so stdout stays machine-readable."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

from rich.console import Console, ConsoleDimensions
from rich.table import Table

from ragfacts import jsontext, redaction

if TYPE_CHECKING:
    from ragfacts.models import UsageLedger


class RedactingConsole(Console):
    """A console whose every rendered line passes the redaction step (`ragfacts.redaction`) before it is written."""

    def _render_buffer(self, buffer: Any) -> str:  # rich's one place where segments become the text written
        return redaction.redact(super()._render_buffer(buffer))


class PlainWhenPiped(RedactingConsole):
    """On a terminal, its width; piped (a log, `| less`, CI), lines as wide as their text: tables never wrap."""

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if self._width is None and not self.is_terminal and "COLUMNS" not in os.environ:
            return ConsoleDimensions(PIPED_WIDTH, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size


PIPED_WIDTH = 1_000  # wide enough for any table row; a table takes only the width its cells need
err = PlainWhenPiped(stderr=True, soft_wrap=True)  # messages are not hard-wrapped: paths stay whole in logs
out = PlainWhenPiped(soft_wrap=True)


def print_json(data: Any, one_per_line: str | None = None) -> None:
    """Write one JSON document to stdout, indented; the list under `one_per_line` (a dataset's rows) goes last,
    one compact element per line: readable, and a thousand rows cost milliseconds rather than seconds."""
    if one_per_line is None or not isinstance(data, dict) or not isinstance(data.get(one_per_line), list):
        sys.stdout.write(redaction.redact(jsontext.dumps_indented(data)) + "\n")
        sys.stdout.flush()
        return
    head = {key: value for key, value in data.items() if key != one_per_line}
    parts = [jsontext.dumps_indented(head)[:-2].rstrip()] if head else ["{"]
    opening = ",\n" if head else "\n"
    rows = ",\n".join("    " + jsontext.dumps(row) for row in data[one_per_line])
    parts.append(
        f"{opening}  {json.dumps(one_per_line)}: [\n{rows}\n  ]\n}}\n"
        if rows
        else f"{opening}  {json.dumps(one_per_line)}: []\n}}\n"
    )
    sys.stdout.write(redaction.redact("".join(parts)))
    sys.stdout.flush()


def ledger_table(ledger: UsageLedger) -> Table:
    """The usage ledger as a table: one row per stage and a total."""
    table = Table(title="Usage ledger", title_justify="left")
    columns = [
        "stage",
        "done",
        "calls",
        "prompt tok",
        "compl. tok",
        "cached",
        "re-asks",
        "retries",
        "failed",
        "model s",
    ]
    for name in columns:
        table.add_column(name, justify="left" if name == "stage" else "right", overflow="fold")
    rows = [*sorted(ledger.stages.items()), ("total", ledger.total())]
    for name, usage in rows:
        table.add_row(
            name,
            str(usage.completions),
            str(usage.calls),
            str(usage.prompt_tokens),
            str(usage.completion_tokens),
            str(usage.cache_hits),
            str(usage.reasks),
            str(usage.retries),
            str(usage.failures),
            f"{usage.model_s:.1f}",
            style="bold" if name == "total" else None,
        )
    return table
