"""The `ragfacts` command line: the entry point here, the global options in `_app`, one module per command beside
them, imported only when its command runs (`COMMANDS`).

Global options may come before or after the command (`ragfacts --model local check ...` or `ragfacts check
--model local ...`). Exit codes: 0 success, 1 a gate failed, 2 bad usage or input (nothing written), 3 the
run stopped early (rerun to resume), 4 an internal error (RAGFACTS_DEBUG=1 shows the traceback).
"""

from __future__ import annotations

import atexit
import importlib
import os
import sys
import threading
from typing import Any, NamedTuple

import typer
from rich.markup import escape

from ragfacts.cli import _app
from ragfacts.console import err


class Command(NamedTuple):
    """A command: the module that registers it, and its one-line help (what `ragfacts --help` lists)."""

    module: str
    summary: str


# Every command, in the order `ragfacts --help` lists them. A run imports the module of its command only, so that
# `ragfacts --help` and each command start without loading the others (tests/cli/test_main.py checks this table
# against the commands themselves).
COMMANDS: dict[str, Command] = {
    "bench": Command(
        "bench", "Compare judges against gold labels: the papers' tables, per method, with intervals and costs."
    ),
    "check": Command("check", "Check whether answers are faithful to their references (L-Face4RAG by default)."),
    "demo": Command("demo", "Check the built-in examples: is each answer faithful (precision) and complete (recall)?"),
    "evaluate": Command(
        "evaluate",
        "Judge every row: precision against its reference and, where it has a ground truth or facts, recall.",
    ),
    "methods": Command("methods", "List the methods (precision and recall judges) and the options each takes."),
    "models": Command("models", "Show which model backends are configured and installed."),
    "facts": Command(
        "recall", "Generate short, independent facts that answer QUESTION from a GROUND TRUTH; one per line on stdout."
    ),
    "recall": Command("recall", "Check which facts an answer recalls; or, with DATA, every row of a dataset."),
    "report": Command(
        "report",
        "Write a report of one or more runs: summary, tables with intervals, charts, every answer with filters.",
    ),
    "serve": Command(
        "serve",
        "Serve POST /check, /recall, /evaluate, GET /health, /metrics and /docs over HTTP (JSON logs on stderr).",
    ),
    "synth": Command(
        "synth", "Make a labelled dataset from faithful answers: one flawed answer per error type, and paraphrases."
    ),
    "train-head": Command(
        "train_head", "Fit a head to your labelled answers and model; report it on a test split it never saw."
    ),
}


def _global_options() -> dict[str, bool]:
    """Each global option's spellings, and whether it takes a value."""
    takes_value: dict[str, bool] = {}
    for param in typer.main.get_command(_app.app).params:
        for name in (*param.opts, *getattr(param, "secondary_opts", [])):
            if name.startswith("-"):
                takes_value[name] = not getattr(param, "is_flag", False)
    return takes_value


def _command_index(args: list[str], takes_value: dict[str, bool]) -> int:
    """Where the command's name is in `args` (after the global options in front); len(args) if there is none."""
    index = 0
    while index < len(args):
        name = args[index].split("=", 1)[0]
        if name not in takes_value:
            break
        index += 1 + (takes_value[name] and "=" not in args[index])
    return index


def hoist_global_options(args: list[str]) -> list[str]:
    """Move the global options found after the command name to before it, where the parser expects them."""
    takes_value = _global_options()
    index = _command_index(args, takes_value)
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


def main(argv: list[str] | None = None) -> None:
    """Console entry point: global options anywhere, and a message (exit 4) instead of a traceback for a bug."""
    args = hoist_global_options(sys.argv[1:] if argv is None else list(argv))
    index = _command_index(args, _global_options())
    asked = args[index] if index < len(args) else None
    try:
        if asked in COMMANDS:
            importlib.import_module(f"ragfacts.cli.{COMMANDS[asked].module}")
        else:  # the command list (--help, no command, a misspelt one): each command by its summary, none loaded
            _list_commands()
        _app.app(args=args, prog_name="ragfacts")
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
    """The `ragfacts` program (`python -m ragfacts` too): `main`, then the process ends without tearing its objects
    down one by one.

    At the end of a run, Python's own shutdown frees every module and object (numpy, pydantic, the results): 0.11-0.13 s
    after a cached run of 1,000 answers on 2 cores, time the user waits for and nothing needs. Everything a
    command writes is already on disk (run-directory files are written unbuffered, the response cache's commits are
    in the kernel's hands), so, as mypy does, this exits at once: after the exit handlers (logging, Ray, temporary
    directories) and with stdout and stderr flushed. Where that cannot be done cleanly (a thread that is still
    running and not a daemon, an exit code that is a message, a stream that cannot be flushed), Python ends the
    process as usual. `main` itself, which tests and embedding code call, returns or raises as before.
    """
    try:
        main()
        code: object = 0
    except SystemExit as done:
        code = done.code
    if code is None:
        code = 0
    if not isinstance(code, int) or any(
        t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()
    ):
        raise SystemExit(code)
    atexit._run_exitfuncs()  # run once: Python does not run them again
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # e.g. stdout piped into `head`: Python reports it and exits 120, as without this
        raise SystemExit(code) from None
    os._exit(code)


def _list_commands() -> None:
    """Register every command not loaded yet as its name and summary only: what the command list shows."""
    loaded = {info.name or (info.callback.__name__ if info.callback else "") for info in _app.app.registered_commands}
    for name, command in COMMANDS.items():
        if name not in loaded:
            _app.app.command(name, help=command.summary)(_not_loaded)


def _not_loaded() -> None:
    raise AssertionError("a command runs from its own module, which main() imports first")


def load_all() -> typer.Typer:
    """The application with every command loaded (the documentation's reference, the tests)."""
    for command in COMMANDS.values():
        importlib.import_module(f"ragfacts.cli.{command.module}")
    return _app.app


def __getattr__(name: str) -> Any:
    if name == "app":  # `from ragfacts.cli import app`: the whole application, every command loaded
        return load_all()
    raise AttributeError(name)


__all__ = ["COMMANDS", "app", "load_all", "main"]

if __name__ == "__main__":
    main()
