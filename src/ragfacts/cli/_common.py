"""What every command shares: the global state, exit codes, clear failures, running with a runtime."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import typer
from rich.markup import escape

from ragfacts.cli._app import EXIT_GATE, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_STOPPED, EXIT_USAGE, AppState, fail
from ragfacts.console import err, ledger_table
from ragfacts.methods.base import Kind, Method, MethodError, method_of_kind
from ragfacts.models import ConfigurationError, UsageLedger
from ragfacts.models.registry import backend_class
from ragfacts.runs.gates import GateResult, option_name
from ragfacts.runtime import Runtime

T = TypeVar("T")
__all__ = [  # with those defined here
    "EXIT_GATE",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_STOPPED",
    "EXIT_USAGE",
    "AppState",
    "fail",
]


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


def show_gates(gates: Sequence[GateResult]) -> None:
    """A line per failed gate, naming its option, the method and the value (and, for one that failed only through
    failed calls, that it is undecided)."""
    for result in gates:
        if not result.passed:
            line = result.message(option_name(result.name))
            if not result.decided:
                line += "; undecided: it fails only through failed calls, which the next run retries"
            err.print(f"[red]{escape(line)}[/red]")


def exit_for(gates: Sequence[GateResult], incomplete: str | None = None) -> None:
    """End a command that judged with the exit code of docs/reference/exit-codes.md, decided here only.

    1 when a gate failed whatever its failed calls would have said; else 3, with the reason, when the results are
    incomplete (`incomplete`: the run stopped early, or more results than --max-failed have a failed call); else 1
    when a gate failed (through failed calls the user tolerates); else 0 (returns). Bad input (2) and bugs (4) end
    a command before it judges, and Ctrl-C ends it with 130.
    """
    failed = [result for result in gates if not result.passed]
    if incomplete:  # said whichever code wins: a rerun completes the results either way
        err.print(f"[red]{escape(incomplete)}[/red]")
    if any(result.decided for result in failed):
        raise typer.Exit(EXIT_GATE)
    if incomplete:
        raise typer.Exit(EXIT_STOPPED)
    if failed:
        raise typer.Exit(EXIT_GATE)


def interrupted(resume: str | None = None) -> NoReturn:
    """Ctrl-C: say what was kept and how to go on, and exit 130 (the shell's code for an interrupt)."""
    err.print(f"[yellow]interrupted[/yellow]: what finished is saved; {escape(resume or 'rerun to resume')}")
    raise typer.Exit(EXIT_INTERRUPTED)


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
