"""The command group: each command's module imported when the command runs, global options before or after it.

`ragfacts --help` lists the commands by the summaries declared beside their names, so it imports none of them;
`ragfacts check ...` imports `ragfacts.cli.check` and nothing of the other commands (click's lazy group pattern,
given to typer as `cls=`).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from difflib import get_close_matches
from typing import TYPE_CHECKING, ClassVar, NamedTuple

import typer
import typer.core
import typer.main

if TYPE_CHECKING:  # the click typer runs on (its vendored copy in recent typer): named for the type checker only
    from typer._click import Command, Context, HelpFormatter, Parameter


class LazyCommand(NamedTuple):
    """A command not imported yet: the module that registers it, and its one-line help (what the group's help lists)."""

    module: str
    summary: str


class LazyGroup(typer.core.TyperGroup):
    """A typer group whose declared commands are imported on demand, and whose options may follow the command.

    A subclass declares the commands (`declared`, in the order the help lists them) and the typer application their
    modules register on (`source`).
    """

    declared: ClassVar[Mapping[str, LazyCommand]] = {}
    source: ClassVar[typer.Typer | None] = None
    _listing = False  # True while the group's help is written: commands are listed by their declared summaries

    def list_commands(self, ctx: Context) -> list[str]:
        """The declared commands in their order, then any other registered."""
        return [*self.declared, *(name for name in self.commands if name not in self.declared)]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        """The command `cmd_name`, its module imported first if need be; None if there is no such command."""
        command = self.commands.get(cmd_name)
        if command is not None or cmd_name not in self.declared:
            return command
        if self._listing:  # a row of the help: name and summary, nothing imported
            return typer.core.TyperCommand(cmd_name, short_help=self.declared[cmd_name].summary)
        return self._load(cmd_name)

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        """Write the group's help, listing each command by its declared summary (no command imported)."""
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        """Parse the group's options, those written after the command's name included."""
        return super().parse_args(ctx, hoist_options(self.params, args))

    def resolve_command(self, ctx: Context, args: list[str]) -> tuple[str | None, Command | None, list[str]]:
        """The command named first in `args`; an unknown name fails with the closest names, as typer says it."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and not ctx.resilient_parsing and self.get_command(ctx, name) is None:
            close = get_close_matches(name, self.list_commands(ctx))
            suggestion = f" Did you mean {', '.join(repr(match) for match in close)}?" if close else ""
            ctx.fail(f"No such command {name!r}.{suggestion}")
        return super().resolve_command(ctx, args)

    def _load(self, name: str) -> Command:
        """Import the module of command `name` and add the command it registers to the group."""
        source = self.source
        if source is None:
            raise TypeError(f"{type(self).__name__}.source is not set: the typer app the commands register on")
        importlib.import_module(self.declared[name].module)
        for info in source.registered_commands:
            if info.callback is not None and (info.name or typer.main.get_command_name(info.callback.__name__)) == name:
                command = typer.main.get_command_from_info(
                    info,
                    pretty_exceptions_short=source.pretty_exceptions_short,
                    rich_markup_mode=self.rich_markup_mode,
                )
                self.commands[name] = command
                return command
        raise LookupError(f"{self.declared[name].module} registers no command {name!r}")


def hoist_options(params: Sequence[Parameter], args: list[str]) -> list[str]:
    """`args` with the options of `params` found after the command's name moved before it, where a group reads
    them; what follows `--` stays."""
    takes_value = _takes_value(params)
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


def _takes_value(params: Sequence[Parameter]) -> dict[str, bool]:
    """Each option's spellings, and whether it takes a value."""
    takes_value: dict[str, bool] = {}
    for param in params:
        for name in (*param.opts, *getattr(param, "secondary_opts", [])):
            if name.startswith("-"):
                takes_value[name] = not getattr(param, "is_flag", False)
    return takes_value


def _command_index(args: list[str], takes_value: dict[str, bool]) -> int:
    """Where the command's name is in `args` (after the options in front); len(args) if there is none."""
    index = 0
    while index < len(args):
        name = args[index].split("=", 1)[0]
        if name not in takes_value:
            break
        index += 1 + (takes_value[name] and "=" not in args[index])
    return index
