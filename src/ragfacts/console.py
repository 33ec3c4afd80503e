"""Human output for the CLI: rich tables on stderr, so stdout stays machine-readable."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

from rich.console import Console, ConsoleDimensions
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from ragfacts import jsontext, redaction

if TYPE_CHECKING:
    from ragfacts.models import UsageLedger


class RedactingConsole(Console):
    """A console whose every rendered line passes the redaction step (`ragfacts.redaction`) before it is written."""

    def _render_buffer(self, buffer: Any) -> str:  # rich's one place where segments become the text written
        return redaction.redact(super()._render_buffer(buffer))


class PlainWhenPiped(RedactingConsole):
    """On a terminal, its width; piped (a log, `| less`, CI), 120 columns unless COLUMNS says otherwise. Messages
    are never hard-wrapped (paths stay whole in logs); tables, with their titles and captions, fit the width: their
    long cells wrap within their column, or end in "…" where the table asks for one line a row."""

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if self._width is None and not self.is_terminal and "COLUMNS" not in os.environ:
            return ConsoleDimensions(PIPED_WIDTH, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size

    def _render_buffer(self, buffer: Any) -> str:
        text = super()._render_buffer(buffer)
        if self.is_terminal:
            return text
        return "\n".join(line.rstrip(" ") for line in text.split("\n"))  # no padding to the width in a log

    def print(self, *objects: Any, soft_wrap: bool | None = None, **options: Any) -> None:
        if soft_wrap is None and any(not isinstance(thing, str | Text) for thing in objects):
            soft_wrap = False  # a table (or any other renderable) is laid out to the width, not left unwrapped
        if not self.is_terminal and len(objects) == 1 and isinstance(objects[0], Table):
            # A table too wide to fit even with its cells wrapped word by word (many columns: accuracy by error
            # type) is printed whole at its natural width, never cut into "…": wide, but every header readable
            measured = Measurement.get(self, self.options.update_width(MAX_PIPED_WIDTH), objects[0])
            if measured.minimum > self.width:
                width = self._width
                self._width = min(measured.maximum, MAX_PIPED_WIDTH)
                try:
                    super().print(*objects, soft_wrap=soft_wrap, **options)
                finally:
                    self._width = width
                return
        super().print(*objects, soft_wrap=soft_wrap, **options)


PIPED_WIDTH = 120  # a CI log or a file read in an editor: wide tables wrap their cells rather than run on
MAX_PIPED_WIDTH = 400  # a table of many columns that cannot fit PIPED_WIDTH is printed at most this wide
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
