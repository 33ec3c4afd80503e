"""The `ragfacts` command line: the entry point here, the commands and global options in `_app`, one module per
command beside them, imported only when its command runs (`_group.LazyGroup`).

Global options may come before or after the command (`ragfacts --model local check ...` or `ragfacts check
--model local ...`). Exit codes: 0 success, 1 a gate failed, 2 bad usage or input (nothing written), 3 the
run stopped early (rerun to resume), 4 an internal error (RAGFACTS_DEBUG=1 shows the traceback).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import typer
from rich.markup import escape

from ragfacts.cli import _app
from ragfacts.cli._app import COMMANDS
from ragfacts.cli._group import hoist_options
from ragfacts.console import err


def hoist_global_options(args: list[str]) -> list[str]:
    """Move the global options found after the command name to before it (what the group does itself when it
    parses; for callers that want to see the arguments as the group reads them)."""
    return hoist_options(typer.main.get_command(_app.app).params, args)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: global options anywhere, and a message (exit 4) instead of a traceback for a bug."""
    try:
        _app.app(args=sys.argv[1:] if argv is None else list(argv), prog_name="ragfacts")
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
        raise SystemExit(_app.EXIT_INTERNAL) from None


def run() -> None:
    """The `ragfacts` program (`python -m ragfacts` too): `main`, ending as Python ends (exit handlers, flushing,
    waiting for threads that are not daemons)."""
    main()


def load_all() -> typer.Typer:
    """The application with every command loaded (the documentation's reference, the tests)."""
    for command in COMMANDS.values():
        importlib.import_module(command.module)
    return _app.app


def __getattr__(name: str) -> Any:
    if name == "app":  # `from ragfacts.cli import app`: the whole application, every command loaded
        return load_all()
    raise AttributeError(name)


__all__ = ["COMMANDS", "app", "hoist_global_options", "load_all", "main", "run"]

if __name__ == "__main__":
    main()
