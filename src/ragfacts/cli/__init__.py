"""The `ragfacts` command line: global options here, one module per command beside it.

Global options may come before or after the command (`ragfacts --model local check ...` or `ragfacts check
--model local ...`). Exit codes: 0 success, 1 a gate failed, 2 bad usage or input (nothing written), 3 the
run stopped early (rerun to resume), 4 an internal error (RAGFACTS_DEBUG=1 shows the traceback).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

import ragfacts
from ragfacts.cli._common import EXIT_INTERNAL, AppState, fail
from ragfacts.console import err
from ragfacts.runtime import Settings, parse_model_options


def hoist_global_options(args: list[str]) -> list[str]:
    """Move the global options found after the command name to before it, where the parser expects them."""
    takes_value: dict[str, bool] = {}
    for param in typer.main.get_command(app).params:
        for name in (*param.opts, *getattr(param, "secondary_opts", [])):
            if name.startswith("-"):
                takes_value[name] = not getattr(param, "is_flag", False)
    index = 0
    while index < len(args):  # skip the global options already in front
        name = args[index].split("=", 1)[0]
        if name not in takes_value:
            break
        index += 1 + (takes_value[name] and "=" not in args[index])
    if index >= len(args) or args[index].startswith("-"):
        return args
    head, command, tail = args[:index], args[index], args[index + 1 :]
    moved: list[str] = []
    rest: list[str] = []
    position = 0
    while position < len(tail):
        word = tail[position]
        if word == "--":
            rest += tail[position:]
            break
        name = word.split("=", 1)[0]
        if name in takes_value:
            width = 1 + (takes_value[name] and "=" not in word)
            moved += tail[position : position + width]
            position += width
            continue
        rest.append(word)
        position += 1
    return [*head, *moved, command, *rest]


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
    max_retries: Annotated[int, typer.Option(min=0, help="retries of a call after 429/5xx/timeouts")] = 4,
    timeout: Annotated[float, typer.Option(min=1.0, help="seconds before a model call times out")] = 120.0,
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


def main(argv: list[str] | None = None) -> None:
    """Console entry point: global options anywhere, and a message (exit 4) instead of a traceback for a bug."""
    args = hoist_global_options(sys.argv[1:] if argv is None else list(argv))
    try:
        app(args=args, prog_name="ragfacts")
    except SystemExit:
        raise
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/yellow]: finished results are saved; rerun to resume")
        raise SystemExit(130) from None
    except Exception as error:
        if os.environ.get("RAGFACTS_DEBUG"):
            raise
        err.print(
            f"[red]internal error:[/red] {escape(type(error).__name__)}: {escape(str(error))}\n"
            "This is a bug in ragfacts; please report it. RAGFACTS_DEBUG=1 shows the traceback."
        )
        raise SystemExit(EXIT_INTERNAL) from None


from ragfacts.cli import bench as _bench  # noqa: E402  (registers the command)
from ragfacts.cli import check as _check  # noqa: E402
from ragfacts.cli import demo as _demo  # noqa: E402
from ragfacts.cli import evaluate as _evaluate  # noqa: E402
from ragfacts.cli import methods as _methods  # noqa: E402
from ragfacts.cli import models as _models  # noqa: E402
from ragfacts.cli import recall as _recall  # noqa: E402  (registers `facts` and `recall`)
from ragfacts.cli import report as _report  # noqa: E402
from ragfacts.cli import serve as _serve  # noqa: E402
from ragfacts.cli import synth as _synth  # noqa: E402
from ragfacts.cli import train_head as _train_head  # noqa: E402

__all__ = [
    "_bench",
    "_check",
    "_demo",
    "_evaluate",
    "_methods",
    "_models",
    "_recall",
    "_report",
    "_serve",
    "_synth",
    "_train_head",
    "app",
    "main",
]

if __name__ == "__main__":
    main()
