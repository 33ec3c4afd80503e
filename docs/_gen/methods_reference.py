"""The methods reference page, generated from the method registry and each method's `Options` model."""

from __future__ import annotations

from typing import Any

from pydantic_core import PydanticUndefined

from _gen.markdown import cell, code, table
from ragfacts.methods.base import Method, option_names, registered_methods


def method_names() -> list[str]:
    """Every registered method, built-in and from plugins."""
    return list(registered_methods())


def render_methods_reference() -> str:
    """The Markdown of the methods reference: per kind, each method with its description and options."""
    methods = registered_methods()
    parts = [
        "# Methods\n",
        "_Generated from the method registry and each method's `Options` model on every build of these pages; "
        "`ragfacts methods` prints the same._\n",
        "Name a method and its options with a spec, `name:key=value,key=value` "
        "(`evaluate --precision SPEC --recall SPEC`, `bench --methods SPEC,SPEC`), or with `--method NAME` and "
        "a flag or `-O key=value` per option (`check`, `recall`). An option this page does not list is refused, "
        "naming the ones the method takes. What each method is for: [Methods and specs](../guides/methods.md).\n",
        table(
            ["method", "kind", "what it is"],
            ([f"[{code(name)}](#{_anchor(name)})", cls.kind, cell(cls.description)] for name, cls in methods.items()),
        ),
    ]
    for kind in ("precision", "recall"):
        parts.append(f"## {kind.capitalize()} methods\n")
        for name, cls in methods.items():
            if cls.kind == kind:
                parts.append(_method(name, cls))
    return "\n".join(parts)


def _anchor(name: str) -> str:
    return "method-" + name


def _method(name: str, cls: type[Method]) -> str:
    schema = cls.Options.model_json_schema()
    properties: dict[str, Any] = schema.get("properties", {})
    aliases = set(option_names(cls)) - set(cls.Options.model_fields)
    rows = []
    for field_name, field in cls.Options.model_fields.items():
        choices = getattr(field.validation_alias, "choices", None) or []
        other_names = [alias for alias in choices if isinstance(alias, str) and alias in aliases]
        names = " / ".join(code(n) for n in [field_name, *other_names])
        rows.append(
            [names, cell(_type(properties.get(field_name, {}))), _default(field), cell(field.description or "")]
        )
    text = [f"### `{name}` {{#{_anchor(name)}}}\n", f"{cell(cls.description)}\n" if cls.description else ""]
    text.append(f"Kind: {cls.kind}; method version {cls.version}.\n")
    text.append(table(["option", "type", "default", "what it does"], rows) if rows else "No options.\n")
    return "\n".join(text)


def _type(prop: dict[str, Any]) -> str:
    if "enum" in prop:
        return " | ".join(map(str, prop["enum"]))
    if "const" in prop:
        return repr(prop["const"])
    if "anyOf" in prop:
        return " | ".join(_type(option) for option in prop["anyOf"])
    if prop.get("type") == "array":
        return f"list of {_type(prop.get('items', {}))}"
    return str(prop.get("type", "value"))


def _default(field: Any) -> str:
    if field.default is PydanticUndefined:
        return "required" if field.default_factory is None else code(repr(field.default_factory()))
    value = field.default
    if isinstance(value, bool):
        return code(str(value).lower())
    if value is None:
        return code("none")
    return code(getattr(value, "value", value))
