"""`ragfacts methods`: the registered methods and their options."""

from __future__ import annotations

from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from ragfacts.cli._app import app
from ragfacts.cli._common import AppState
from ragfacts.console import err, print_json
from ragfacts.methods.base import Method, option_names, registered_methods


@app.command()
def methods(ctx: typer.Context) -> None:
    """List the methods (precision and recall judges) and the options each takes."""
    state: AppState = ctx.obj
    described = [describe(cls) for cls in registered_methods().values()]
    if state.as_json:
        print_json(described)
        return
    for method in described:  # its heading wraps to the width, and its table fits it (long texts wrap in their cells)
        heading = f"[bold]{escape(method['name'])}[/bold] ({method['kind']}): {escape(method['description'])}"
        err.print(heading, soft_wrap=False)
        table = Table(show_header=True)
        for column in ("option", "type", "default", "what it does"):
            table.add_column(column)
        for option in method["options"]:
            name = " / ".join(option["names"])
            table.add_row(escape(name), escape(option["type"]), escape(str(option["default"])), escape(option["help"]))
        err.print(table)
    err.print(
        "Use: --precision NAME:key=value,... (evaluate), --method NAME with flags or -O key=value (check, recall)",
        soft_wrap=False,
    )


def describe(cls: type[Method]) -> dict[str, Any]:
    """A method's name, kind, description and options (names, type, default, help), from its Options model."""
    schema = cls.Options.model_json_schema()
    options = []
    aliases = option_names(cls)
    for name, field in cls.Options.model_fields.items():
        prop = schema.get("properties", {}).get(name, {})
        kind = " | ".join(map(str, prop["enum"])) if "enum" in prop else _type_name(prop)
        options.append(
            {
                "names": [name, *[a for a in aliases if a != name and _is_alias_of(cls, a, name)]],
                "type": kind,
                "default": field.default,
                "help": field.description or "",
            }
        )
    return {"name": cls.name, "kind": cls.kind, "description": cls.description, "options": options}


def _type_name(prop: dict[str, Any]) -> str:
    if "anyOf" in prop:
        return " | ".join(_type_name(p) for p in prop["anyOf"])
    return str(prop.get("type", "value"))


def _is_alias_of(cls: type[Method], alias: str, name: str) -> bool:
    choices = getattr(cls.Options.model_fields[name].validation_alias, "choices", None) or []
    return alias in choices
