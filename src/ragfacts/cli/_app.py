"""The `ragfacts` application: its global options, the state every command shares, exit codes, clear failures.

Kept light (typer and rich, nothing of the models or methods): `ragfacts --help` and every command import it,
and a command imports what it needs itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.markup import escape

import ragfacts
from ragfacts.console import err

if TYPE_CHECKING:
    from ragfacts.runtime import Settings

EXIT_GATE = 1  # a gate failed (--min-*, --fail-on-inconsistent)
EXIT_USAGE = 2  # bad usage or input; nothing was written
EXIT_STOPPED = 3  # incomplete: stopped early, or failed calls past --max-failed; rerun to resume
EXIT_INTERNAL = 4  # a bug in ragfacts: the message says how to see the traceback
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it): what finished is saved


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


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ragfacts {ragfacts.__version__}")
        raise typer.Exit(0)


app = typer.Typer(
    name="ragfacts",
    help="Faithfulness (L-Face4RAG) and factual recall (FaaF) of RAG answers, on any model.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def main_options(
    ctx: typer.Context,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            "-m",
            envvar="RAGFACTS_MODEL",
            help="openai:MODEL | local | local:/path/model.gguf (default: a configured API, else local)",
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", envvar="RAGFACTS_BASE_URL", help="OpenAI-compatible endpoint (vLLM, Ollama, ...)"),
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="model requests in flight at once")] = 8,
    max_retries: Annotated[
        int, typer.Option(min=0, help="retries of a call after 429/5xx/connection errors, all within --timeout")
    ] = 4,
    timeout: Annotated[
        float, typer.Option(min=1.0, help="seconds a model call may take in all, its retries and waits included")
    ] = 120.0,
    cache_dir: Annotated[Path | None, typer.Option(help="where the response cache lives")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="bypass the response cache")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable results on stdout")] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", help="no per-row verdict table: the summary, gates and errors only")
    ] = False,
    model_option: Annotated[
        list[str] | None,
        typer.Option(
            "--model-option",
            "-M",
            help="a model option as key=value (repeatable), e.g. -M mode=tool -M schema_in_prompt=true for "
            "llama_cpp.server or vLLM; see ModelOptions",
        ),
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="print the version and exit")
    ] = False,
) -> None:
    from ragfacts.runtime import Settings, parse_model_options  # here: `ragfacts --help` never needs the models

    try:
        extra = parse_model_options(model_option or [])
    except ValueError as error:
        fail(str(error))
    settings = Settings(
        model=model,
        base_url=base_url,
        concurrency=concurrency,
        cache_dir=cache_dir,
        use_cache=not no_cache,
        options={"max_retries": max_retries, "timeout_s": timeout, **extra},
    )
    ctx.obj = AppState(settings, as_json, quiet)
