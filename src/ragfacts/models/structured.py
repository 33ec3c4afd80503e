"""Schemas in, validated objects out: JSON extraction, schema rendering and re-ask messages."""

from __future__ import annotations

import copy
import json
import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeAlias, TypeVar

from pydantic import BaseModel, ValidationError

from ragfacts.text import approx_tokens

T = TypeVar("T")

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class Shaped:
    """A reply schema made for one call: the pydantic model that validates the reply, the JSON schema the model is
    sent (which may say more than the model class does: FaaF titles each verdict field with its fact), and the
    context its validators read. A class per call would cost more than the call's other work on a cache hit."""

    model: type[BaseModel]
    json_schema: dict[str, Any]
    context: dict[str, Any] | None = None


ReplySchema: TypeAlias = "type[BaseModel] | Shaped"


def schema_name(schema: ReplySchema) -> str:
    """The schema's name, as a request names its response format or tool."""
    return schema.model.__name__ if isinstance(schema, Shaped) else schema.__name__


def json_schema_of(schema: ReplySchema) -> dict[str, Any]:
    """Return the JSON schema of a reply schema, with refs inlined for servers that lack $ref.

    Cached per model class (a hot path: every request, cache hits included); callers must not mutate it.
    """
    return schema.json_schema if isinstance(schema, Shaped) else _class_schema(schema)


@lru_cache(maxsize=1024)
def _class_schema(schema: type[BaseModel]) -> dict[str, Any]:
    return _inline_refs(schema.model_json_schema())


def reply_token_cap(schema: dict[str, Any]) -> int | None:
    """The most tokens a reply valid against `schema` can need, where the schema bounds it; None where it does not.

    Bounded: enums, constants, booleans, numbers, strings with maxLength, arrays with maxItems of bounded items,
    objects of bounded properties. A verdict-only schema needs a few dozen tokens, so a model that runs on past
    it is stopped there instead of at max_tokens. Generous on purpose (two tokens a character, plus room for
    whitespace): the cap must never cut a valid reply. Memoised per schema object, as `strict_schema` is.
    """
    return _per_schema(_CAPS, schema, _token_cap)


def schema_tokens(schema: dict[str, Any]) -> int:
    """The schema's JSON text in estimated tokens (`approx_tokens`), as a request's size counts it; memoised per
    schema object, as `strict_schema` is."""
    return _per_schema(_SIZES, schema, lambda s: approx_tokens(json.dumps(s)))


def _token_cap(schema: dict[str, Any]) -> int | None:
    chars = _max_chars(schema)
    return None if chars is None else 2 * chars + 32


def _max_chars(node: Any) -> int | None:
    """The longest JSON text valid against `node` (refs inlined), in characters; None if unbounded."""
    if not isinstance(node, dict):
        return None
    if "enum" in node:
        return max(len(json.dumps(value, ensure_ascii=False)) for value in node["enum"]) if node["enum"] else 4
    if "const" in node:
        return len(json.dumps(node["const"], ensure_ascii=False))
    for key in ("anyOf", "oneOf"):
        if key in node:
            options = [_max_chars(option) for option in node[key]]
            bounded = [o for o in options if o is not None]
            return None if len(bounded) < len(options) else max(bounded)
    kind = node.get("type")
    if kind in ("boolean", "null"):
        return 5
    if kind in ("integer", "number"):
        return 24
    if kind == "string":
        return None if "maxLength" not in node else 2 + 6 * int(node["maxLength"])  # escapes: \uXXXX
    if kind == "array":
        item = _max_chars(node.get("items", {}))
        if item is None or "maxItems" not in node:
            return None
        return 2 + int(node["maxItems"]) * (item + 2)
    if kind == "object":
        total = 2
        for name, value in (node.get("properties") or {}).items():
            size = _max_chars(value)
            if size is None:
                return None
            total += len(json.dumps(name, ensure_ascii=False)) + 2 + size + 2
        return total
    return None


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    defs = schema.get("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node and node["$ref"].startswith("#/$defs/"):
                target = copy.deepcopy(defs[node["$ref"].split("/")[-1]])
                extra = {k: v for k, v in node.items() if k != "$ref"}
                return resolve({**target, **extra})
            return {k: resolve(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node

    return resolve(schema)


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Return a copy that satisfies OpenAI strict mode: closed objects, every property required.

    Memoised per schema object (a stage sends the same cached schema on every call) for the last few schemas: a
    schema made per call (FaaF's) is only ever seen once. Callers must not mutate it.
    """
    return _per_schema(_STRICT, schema, _closed)


def _per_schema(
    known: OrderedDict[int, tuple[dict[str, Any], T]], schema: dict[str, Any], make: Callable[[dict[str, Any]], T]
) -> T:
    """`make(schema)`, memoised per schema object for the last few schemas."""
    found = known.get(id(schema))
    if found is not None and found[0] is schema:
        known.move_to_end(id(schema))
        return found[1]
    value = make(schema)
    known[id(schema)] = (schema, value)  # the schema is kept, so its id is not reused while it is known
    if len(known) > _RECENT:
        known.popitem(last=False)
    return value


_RECENT = 64  # more than the schemas of every stage of every method in both languages
_STRICT: OrderedDict[int, tuple[dict[str, Any], dict[str, Any]]] = OrderedDict()
_CAPS: OrderedDict[int, tuple[dict[str, Any], int | None]] = OrderedDict()  # reply_token_cap, on every request
_SIZES: OrderedDict[int, tuple[dict[str, Any], int]] = OrderedDict()  # schema_tokens, on every request


def _closed(schema: dict[str, Any]) -> dict[str, Any]:

    def close(node: Any) -> Any:
        if isinstance(node, dict):
            node = {k: close(v) for k, v in node.items()}
            if node.get("type") == "object" and "properties" in node:
                node["additionalProperties"] = False
                node["required"] = list(node["properties"])
                for prop in node["properties"].values():
                    prop.pop("default", None)
            return node
        if isinstance(node, list):
            return [close(v) for v in node]
        return node

    return close(schema)


def extract_json(text: str) -> str:
    """Return the JSON part of a reply: a fenced block, else the outermost object or array."""
    fenced = _FENCE.search(text) if "```" in text else None
    if fenced:
        return fenced.group(1).strip()
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return text.strip()
    start = min(starts)
    end = max(text.rfind("}"), text.rfind("]"))
    return text[start : end + 1] if end > start else text[start:]


def parse_reply(text: str, schema: ReplySchema) -> BaseModel:
    """Validate a reply against the schema; raises ValidationError or ValueError."""
    if isinstance(schema, Shaped):
        return schema.model.model_validate_json(extract_json(text), context=schema.context)
    return schema.model_validate_json(extract_json(text))


def describe_error(error: Exception) -> str:
    """Return a short, model-readable description of why a reply was rejected."""
    if isinstance(error, ValidationError):
        lines = []
        for item in error.errors()[:10]:
            where = ".".join(str(p) for p in item["loc"]) or "(root)"
            lines.append(f"- {where}: {item['msg']}")
        return "\n".join(lines)
    return f"- {error}"


def render_schema(schema: dict[str, Any], lang: str = "en") -> str:
    """Render field titles, descriptions and allowed values as prompt text.

    Grammar-constrained decoders restrict tokens but never show the schema to the model; without
    this text a small model fills enums blindly (measured: 100% "True" on facts that are absent).
    """
    lines: list[str] = []
    _render_node(schema, lines, indent=0, name=None)
    if lang == "zh":
        head = "请只输出一个符合以下结构的 JSON 对象（字段顺序不变）："
    else:
        head = "Reply with one JSON object only, with these fields in this order:"
    return head + "\n" + "\n".join(lines)


def _render_node(node: dict[str, Any], lines: list[str], indent: int, name: str | None) -> None:
    pad = "  " * indent
    if name is not None:
        title = node.get("title")
        label = f'"{name}"' + (f" ({title})" if title and title.lower().replace(" ", "_") != name else "")
        kind = _kind(node)
        text = f"{pad}- {label}: {kind}"
        if node.get("description"):
            text += f" — {node['description']}"
        lines.append(text)
    if node.get("type") == "object":
        for key, prop in node.get("properties", {}).items():
            _render_node(prop, lines, indent + (1 if name is not None else 0), key)
    elif node.get("type") == "array" and isinstance(node.get("items"), dict):
        items = node["items"]
        if items.get("type") == "object":
            lines.append(f"{pad}  each item has:")
            for key, prop in items.get("properties", {}).items():
                _render_node(prop, lines, indent + 2, key)


def _kind(node: dict[str, Any]) -> str:
    if "enum" in node:
        return "one of " + " | ".join(json.dumps(v, ensure_ascii=False) for v in node["enum"])
    if "const" in node:
        return json.dumps(node["const"], ensure_ascii=False)
    kind = node.get("type")
    if kind == "array":
        items = node.get("items", {})
        inner = _kind(items) if isinstance(items, dict) else "value"
        return f"list of {inner}"
    if "anyOf" in node:
        return " or ".join(_kind(n) for n in node["anyOf"])
    return str(kind or "value")
