"""What every command shares: the global state, exit codes, clear failures, running with a runtime."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import typer
from rich.markup import escape

from ragfacts.console import err, ledger_table
from ragfacts.methods.base import Kind, Method, MethodError, method_of_kind
from ragfacts.models import ConfigurationError, UsageLedger
from ragfacts.models.registry import backend_class
from ragfacts.runtime import Runtime, Settings

T = TypeVar("T")

EXIT_GATE = 1  # a gate failed (--min-*, --fail-on-inconsistent)
EXIT_USAGE = 2  # bad usage or input; nothing was written
EXIT_STOPPED = 3  # the run stopped early (e.g. the endpoint is down); rerun to resume
EXIT_INTERNAL = 4  # a bug in ragfacts: the message says how to see the traceback


class AppState:
    """Global options, shared by every command through the typer context."""

    def __init__(self, settings: Settings, as_json: bool, quiet: bool = False) -> None:
        self.settings = settings
        self.as_json = as_json
        self.quiet = quiet  # no per-row verdict table: the summary, gates, errors and the ledger


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print a clear error and exit with `code` (2: bad usage or input)."""
    err.print(f"[red]error:[/red] {escape(message)}")
    raise typer.Exit(code)


def read_text_argument(value: str | None, option: str) -> str | None:
    """The option's text, read from the file for @path; an unreadable file or an empty text is bad input."""
    if value is None:
        return None
    text = value
    if value.startswith("@"):
        path = Path(value[1:])
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            fail(f"{option} {value}: no such file")
        except UnicodeDecodeError:
            fail(f"{option} {value}: not UTF-8 text; save the file as UTF-8")
        except OSError as error:
            fail(f"{option} {value}: cannot read it: {error.strerror or error}")
    if not text.strip():
        fail(f"{option} is empty")
    return text


def build_runtime(state: AppState) -> Runtime:
    """The run's runtime (model, cache, ledger); bad configuration exits 2.

    Where the model's backend has a notice (the embedded default model: what it is and what it measured), it is
    printed first.
    """
    try:
        runtime = Runtime(state.settings)
    except ConfigurationError as error:
        fail(str(error))
    notice = backend_class(runtime.spec.backend).notice(runtime.spec)
    if notice:
        err.print(notice, style="dim")
    return runtime


def run_async(runtime: Runtime, job: Callable[[Runtime], Awaitable[T]]) -> T:
    """Run `job` with the runtime and close it; a configuration problem found on the way exits 2."""

    async def go() -> T:
        try:
            return await job(runtime)
        finally:
            await runtime.aclose()

    try:
        return asyncio.run(go())
    except ConfigurationError as error:
        fail(str(error))


def run_with_runtime(
    state: AppState,
    job: Callable[[Runtime], Awaitable[T]],
    report: Callable[[T], None] | None = None,
) -> T:
    """Build the run's model, run `job`, `report` its result, then print the usage ledger on stderr.

    Exits 2 on bad configuration. The ledger comes last, so it closes every run's output.
    """
    runtime = build_runtime(state)
    result = run_async(runtime, job)
    if report is not None:
        report(result)
    show_ledger(runtime.ledger)
    return result


def show_ledger(ledger: UsageLedger) -> None:
    err.print(ledger_table(ledger))
    waited = ledger.total().waited_s
    if waited:
        err.print(
            f"Requests waited {waited:.1f} s before being sent (rate limits -M rpm/tpm, Retry-After, retry backoff; "
            "summed over requests)"
        )


def method_for(kind: Kind, name: str, options: dict[str, Any]) -> Method:
    """The `kind` method called `name` with `options`; anything else exits 2 naming what is possible."""
    try:
        return method_of_kind(kind, name, options)
    except MethodError as error:
        fail(str(error))
