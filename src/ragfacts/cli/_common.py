"""What every command shares: the global state, clear failures, running with a runtime."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import NoReturn, TypeVar

import typer
from rich.markup import escape

from ragfacts.console import err, ledger_table
from ragfacts.models import ConfigurationError
from ragfacts.runtime import Runtime, Settings

T = TypeVar("T")


class AppState:
    """Global options, shared by every command through the typer context."""

    def __init__(self, settings: Settings, as_json: bool) -> None:
        self.settings = settings
        self.as_json = as_json


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a clear error and exit with `code` (2: bad usage or input)."""
    err.print(f"[red]error:[/red] {escape(message)}")
    raise typer.Exit(code)


def run_with_runtime(
    state: AppState,
    job: Callable[[Runtime], Awaitable[T]],
    show_ledger: bool = True,
    report: Callable[[T], None] | None = None,
) -> T:
    """Build the run's model, run `job`, `report` its result, then print the usage ledger on stderr.

    Exits 2 on bad configuration. The ledger comes last, so it closes every run's output.
    """
    try:
        runtime = Runtime(state.settings)
    except ConfigurationError as error:
        fail(str(error))

    async def go() -> T:
        try:
            return await job(runtime)
        finally:
            await runtime.aclose()

    try:
        result = asyncio.run(go())
    except ConfigurationError as error:
        fail(str(error))
    if report is not None:
        report(result)
    if show_ledger:
        err.print(ledger_table(runtime.ledger))
    return result
