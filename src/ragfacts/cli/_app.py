"""The `ragfacts` application: its commands, global options, the state every command shares, exit codes, clear
failures.

Kept light (typer and rich, nothing of the models or methods): `ragfacts --help` and every command import it,
and a command imports what it needs itself. Each command is a module beside this one that registers it on `app`;
`COMMANDS` names that module, which is imported when the command runs (`_group.LazyGroup`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.markup import escape

import ragfacts
from ragfacts.cli._group import LazyCommand, LazyGroup
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


def _command(module: str, summary: str) -> LazyCommand:
    """A command registered by `ragfacts.cli.<module>`, listed with `summary`."""
    return LazyCommand(f"ragfacts.cli.{module}", summary)


# Every command, in the order `ragfacts --help` lists them, with the module that registers it and its one-line help
# (tests/cli/test_main.py checks each summary against the command's own help).
COMMANDS: dict[str, LazyCommand] = {
    "bench": _command(
        "bench", "Compare judges against gold labels: the papers' tables, per method, with intervals and costs."
    ),
    "check": _command("check", "Check whether answers are faithful to their references (L-Face4RAG by default)."),
    "demo": _command("demo", "Check the built-in examples: is each answer faithful (precision) and complete (recall)?"),
    "evaluate": _command(
        "evaluate",
        "Judge every row: precision against its reference and, where it has a ground truth or facts, recall.",
    ),
    "methods": _command("methods", "List the methods (precision and recall judges) and the options each takes."),
    "models": _command("models", "Show which model backends are configured and installed."),
    "facts": _command(
        "recall", "Generate short, independent facts that answer QUESTION from a GROUND TRUTH; one per line on stdout."
    ),
    "recall": _command("recall", "Check which facts an answer recalls; or, with DATA, every row of a dataset."),
    "report": _command(
        "report",
        "Write a report of one or more runs: summary, tables with intervals, charts, every answer with filters.",
    ),
    "serve": _command(
        "serve",
        "Serve POST /check, /recall, /evaluate, GET /health, /metrics and /docs over HTTP (JSON logs on stderr).",
    ),
    "synth": _command(
        "synth", "Make a labelled dataset from faithful answers: one flawed answer per error type, and paraphrases."
    ),
    "train-head": _command(
        "train_head", "Fit a head to your labelled answers and model; report it on a test split it never saw."
    ),
}


class Commands(LazyGroup):
    """The `ragfacts` group: the commands of `COMMANDS`, each imported when it runs."""

    declared = COMMANDS


app = typer.Typer(
    name="ragfacts",
    help="Faithfulness (L-Face4RAG) and factual recall (FaaF) of RAG answers, on any model.",
    cls=Commands,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
Commands.source = app  # the application the command modules register on


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
