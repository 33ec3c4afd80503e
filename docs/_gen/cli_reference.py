"""The CLI reference page, generated from the typer app: every command's usage, help and options."""

from __future__ import annotations

import inspect
from typing import Any

import typer

from _gen.markdown import cell, code, table


def cli_commands(app: typer.Typer) -> list[str]:
    """The names of the app's top-level commands, in the order `ragfacts --help` lists them."""
    group = typer.main.get_command(app)
    return [name for name, command in getattr(group, "commands", {}).items() if not command.hidden]


def render_cli_reference(app: typer.Typer, prog_name: str = "ragfacts") -> str:
    """The Markdown of the CLI reference: global options first, then one section per command."""
    group = typer.main.get_command(app)
    context = group.context_class(group, info_name=prog_name)
    parts = [
        "# Command line\n",
        "_Generated from the command line's own definitions on every build of these pages; "
        f"`{prog_name} COMMAND --help` prints the same._\n",
        _help(group.help),
        f"Usage: `{_usage(group, context)}`\n",
        "Global options go before or after the command "
        f"(`{prog_name} --model local check ...` or `{prog_name} check --model local ...`); "
        "exit codes are listed in [Exit codes and environment](exit-codes.md).\n",
        "## Global options\n",
        _options(group.params, context),
    ]
    for name, command in getattr(group, "commands", {}).items():
        if command.hidden:
            continue
        parts += _command(name, command, context, level=2)
    return "\n".join(parts)


def _command(name: str, command: Any, parent: Any, level: int) -> list[str]:
    context = command.context_class(command, info_name=name, parent=parent)
    parts = [
        f"{'#' * level} `{context.command_path}` {{#{context.command_path.replace(' ', '-')}}}\n",
        _help(command.help),
        f"Usage: `{_usage(command, context)}`\n",
    ]
    if command.params:
        parts.append(_options(command.params, context))
    for sub_name, sub_command in getattr(command, "commands", {}).items():
        if not sub_command.hidden:
            parts += _command(sub_name, sub_command, context, level + 1)
    return parts


def _usage(command: Any, context: Any) -> str:
    return " ".join([context.command_path, *command.collect_usage_pieces(context)])


def _help(text: str | None) -> str:
    """A command's help as paragraphs; click's `\\b` no-rewrap markers dropped."""
    cleaned = inspect.cleandoc(text or "").replace("\b\n", "").replace("\b", "")
    paragraphs = [" ".join(paragraph.split()) for paragraph in cleaned.split("\n\n") if paragraph.strip()]
    return "".join(cell(paragraph).replace("\\|", "|") + "\n\n" for paragraph in paragraphs)


def _options(params: list[Any], context: Any) -> str:
    rows = []
    for param in params:
        if getattr(param, "hidden", False):
            continue
        record = param.get_help_record(context)
        names, description = record if record else (param.human_readable_name, getattr(param, "help", "") or "")
        rows.append([code(names.replace("\\[", "[")), cell(description.replace("\\[", "["))])
    return table(["option", "what it does"], rows)
