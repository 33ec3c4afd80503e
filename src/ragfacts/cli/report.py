"""`ragfacts report`: one self-contained HTML file (or Markdown) from one or more run directories."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ragfacts.cli._app import app
from ragfacts.cli._common import fail
from ragfacts.console import err
from ragfacts.files import replace_text
from ragfacts.report.report import load_runs, report_markdown
from ragfacts.runs.rundir import RunError


@app.command()
def report(
    runs: Annotated[list[Path], typer.Argument(help="one or more run directories (or OUT.jsonl files)")],
    output: Annotated[Path, typer.Option("--output", "-o", help="report.html (one self-contained file) or report.md")],
) -> None:
    """Write a report of one or more runs: summary, tables with intervals, charts, every answer with filters."""
    write_report(runs, output)


def write_report(runs: list[Path], output: Path) -> None:
    """Read the runs and write the report to `output` (format by its suffix), atomically; bad input exits 2."""
    suffix = output.suffix.lower()
    if suffix not in (".html", ".htm", ".md"):
        fail(f"-o {output}: give a file name ending in .html or .md")
    if output.is_dir():
        fail(f"-o {output} is a directory; give a file name ending in .html or .md")
    try:
        loaded = load_runs(runs)
    except (RunError, OSError) as error:
        fail(str(error))
    if suffix == ".md":
        text = report_markdown(loaded)
    else:
        from ragfacts.report.html_report import render_html

        text = render_html(loaded)
    replace_text(output, text)
    answers = len({item_id for run in loaded for item_id in run.items})
    size = output.stat().st_size
    err.print(f"report: {escape(str(output))} ({answers} answers, {size / 1024:,.0f} kB)")
