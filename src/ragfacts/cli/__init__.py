"""The `ragfacts` command line: global options here, one module per command beside it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragfacts.cli._common import AppState
from ragfacts.runtime import Settings

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
    cache_dir: Annotated[Path | None, typer.Option(help="where the response cache lives")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="bypass the response cache")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable results on stdout")] = False,
) -> None:
    ctx.obj = AppState(
        Settings(model=model, base_url=base_url, concurrency=concurrency, cache_dir=cache_dir, use_cache=not no_cache),
        as_json,
    )


def main() -> None:
    """Console entry point."""
    app()


from ragfacts.cli import check as _check  # noqa: E402  (registers the command)
from ragfacts.cli import demo as _demo  # noqa: E402  (registers the command)
from ragfacts.cli import models as _models  # noqa: E402  (registers the command)
from ragfacts.cli import recall as _recall  # noqa: E402  (registers `facts` and `recall`)

__all__ = ["_check", "_demo", "_models", "_recall", "app", "main"]

if __name__ == "__main__":
    main()
