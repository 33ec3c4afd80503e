"""Command-line flags generated from the methods' Options models: options are declared once, in the method (and
the run settings' flags from `RunSettings`, by `settings_flag`).

`@with_method_flags("precision")` gives a command one flag per option of the registered precision
methods (`--strategy`, `--threshold`, `--cot/--no-cot`, ...) plus `-O key=value` for any option, and
passes the options the user gave as one dict, `method_options` (a flag wins over `-O` for the same key).
Unknown or misspelled options are refused by the method's Options model (extra="forbid"), which names the
options it takes.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any, get_args

import typer
from pydantic.fields import FieldInfo

from ragfacts.cli._common import fail
from ragfacts.methods.base import Kind, MethodError, parse_option_pairs, registered_methods

EXTRA_OPTIONS = "extra_options"


def with_method_flags(kind: Kind) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add the options of every `kind` method as flags; the command receives them as `method_options`."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        fields = _option_fields(kind)
        signature, kept = resolved_parameters(command, drop="method_options")
        flags = [_parameter(name, field) for name, field in fields.items()]
        extra = inspect.Parameter(
            EXTRA_OPTIONS,
            inspect.Parameter.KEYWORD_ONLY,
            default=None,
            annotation=Annotated[
                list[str] | None,
                typer.Option(
                    "--option", "-O", help="a method option as key=value (repeatable); see `ragfacts methods`"
                ),
            ],
        )

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                options = parse_option_pairs(kwargs.pop(EXTRA_OPTIONS) or [])
            except MethodError as error:
                fail(f"-O: {error}")
            for name in fields:
                value = kwargs.pop(f"opt_{name}")
                if value is not None:
                    options[name] = value
            return command(*args, method_options=options, **kwargs)

        return with_parameters(wrapper, signature, [*kept, *flags, extra])

    return decorate


def resolved_parameters(command: Callable[..., Any], drop: str) -> tuple[inspect.Signature, list[inspect.Parameter]]:
    """The command's signature and its parameters but `drop`, with annotations evaluated (typer needs objects)."""
    signature = inspect.signature(command)
    hints = typing.get_type_hints(command, include_extras=True)
    kept = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in signature.parameters.values()]
    return signature, [p for p in kept if p.name != drop]


def with_parameters(
    wrapper: Callable[..., Any], signature: inspect.Signature, parameters: list[inspect.Parameter]
) -> Callable[..., Any]:
    """Give `wrapper` these parameters, as typer reads them (signature and annotations)."""
    ordered = sorted(parameters, key=lambda p: p.kind)  # keyword-only parameters last
    wrapper.__signature__ = signature.replace(parameters=ordered, return_annotation=None)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in ordered}
    return wrapper


def settings_flag(name: str, field: FieldInfo) -> tuple[Any, Any]:
    """The annotation and typer option of a settings field (`RunSettings`): `--name` with the field's description as
    help and its bounds; a bool is a switch that turns it on (`--force`)."""
    flag = f"--{name.replace('_', '-')}"
    if field.annotation is bool:
        return bool, typer.Option(flag, help=field.description)
    return field.annotation, typer.Option(flag, help=field.description, **_bounds(field))


def _bounds(field: FieldInfo) -> dict[str, Any]:
    """The field's `ge`/`le` constraints as typer's `min`/`max`."""
    bounds = {}
    for constraint in field.metadata:
        for key in ("ge", "le"):
            if getattr(constraint, key, None) is not None:
                bounds["min" if key == "ge" else "max"] = getattr(constraint, key)
    return bounds


def _option_fields(kind: Kind) -> dict[str, FieldInfo]:
    """The option fields of the registered methods of `kind`, by name (the first method's wins)."""
    fields: dict[str, FieldInfo] = {}
    for cls in registered_methods().values():
        if cls.kind == kind:
            for name, field in cls.Options.model_fields.items():
                fields.setdefault(name, field)
    return fields


def _parameter(name: str, field: FieldInfo) -> inspect.Parameter:
    flag = _flag_name(name, field)
    annotation = field.annotation
    help_text = field.description or ""
    if annotation is bool:
        option = typer.Option(f"--{flag}/--no-{flag}", help=help_text, show_default=False)
        return _keyword(name, bool | None, option)
    option = typer.Option(
        f"--{flag}", help=f"{help_text} [default: {field.default}]", show_default=False, **_bounds(field)
    )
    return _keyword(name, _plain(annotation) | None, option)


def _keyword(name: str, annotation: Any, option: Any) -> inspect.Parameter:
    return inspect.Parameter(
        f"opt_{name}", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[annotation, option]
    )


def _flag_name(name: str, field: FieldInfo) -> str:
    """The flag's name: the option's short alias if it has one (`cot` for chain_of_thought), else its name."""
    aliases = [a for a in getattr(field.validation_alias, "choices", None) or [] if isinstance(a, str)]
    return min(aliases, key=len, default=name).replace("_", "-")


def _plain(annotation: Any) -> Any:
    """The annotation without None (typer adds it back), e.g. `int | None` -> `int`."""
    args = [a for a in get_args(annotation) if a is not type(None)]
    if args and type(None) in get_args(annotation):
        return args[0] if len(args) == 1 else str
    return annotation
