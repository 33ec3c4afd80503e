"""Human output for the CLI: rich tables on stderr, so stdout stays machine-readable."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from ragfacts.models import UsageLedger

err = Console(stderr=True, soft_wrap=True)  # messages are not hard-wrapped: paths stay whole in logs
out = Console(soft_wrap=True)


def print_json(data: Any) -> None:
    """Write one JSON document to stdout."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
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
