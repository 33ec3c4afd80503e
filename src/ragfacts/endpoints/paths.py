"""Reply paths: where the answer and the contexts are in a RAG service's JSON reply.

A small, documented subset of JSONPath, enough for the replies of real services:

| path | reads |
|---|---|
| `answer` | the key `answer` of the reply object |
| `data.answer` | keys, one inside the other |
| `choices[0].message.content` | `[N]`: the N-th element of a list (0-based; `[-1]` the last) |
| `sources[*].text` | `[*]`: every element of a list (only in the contexts path) |
| `["odd.key"]` | a key that holds a dot or a bracket, quoted |

A leading `$` or `$.` is accepted and ignored, so JSONPath habits work. A path that does not match the reply
names what the reply has there instead, so a typo is found from the first failed row.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_KEY = re.compile(r"[^.\[\]\"]+")
_INDEX = re.compile(r"\[(-?\d+|\*)\]")
_QUOTED = re.compile(r'\[("(?:[^"\\]|\\.)*")\]')
_EXAMPLES = "e.g. answer, data.answer, choices[0].message.content, sources[*].text"


class PathError(ValueError):
    """A path that cannot be parsed, or a reply it does not match; the message names the place."""


@dataclass(frozen=True)
class ReplyPath:
    """A parsed path: keys (str), indices (int) and wildcards (None), in order."""

    text: str
    steps: tuple[str | int | None, ...]

    @property
    def has_wildcard(self) -> bool:
        return None in self.steps

    def find(self, reply: Any) -> list[Any]:
        """The values at this path: one without a wildcard, one per element with one; raises PathError."""
        found: list[tuple[str, Any]] = [("", reply)]
        for step in self.steps:
            found = [pair for where, value in found for pair in _step(where, value, step)]
        return [value for _, value in found]


def parse_path(text: str) -> ReplyPath:
    """Parse `text` (see the module docstring); raises PathError naming where it breaks."""
    source = text.strip()
    rest = source[1:] if source.startswith("$") else source
    rest = rest[1:] if rest.startswith(".") and source.startswith("$") else rest
    steps: list[str | int | None] = []
    position = len(source) - len(rest)
    expect_key = True
    while rest:
        if rest.startswith("."):
            if expect_key:
                raise PathError(f"path {text!r}: a key is missing before the dot at {position + 1}; {_EXAMPLES}")
            rest, position, expect_key = rest[1:], position + 1, True
            continue
        quoted = _QUOTED.match(rest)
        index = _INDEX.match(rest)
        key = _KEY.match(rest) if expect_key else None
        if quoted:
            steps.append(json.loads(quoted.group(1)))
            match_end = quoted.end()
        elif index:
            steps.append(None if index.group(1) == "*" else int(index.group(1)))
            match_end = index.end()
        elif key:
            steps.append(key.group(0).strip())
            match_end = key.end()
        else:
            raise PathError(f"path {text!r}: unexpected {rest[0]!r} at {position + 1}; {_EXAMPLES}")
        rest, position, expect_key = rest[match_end:], position + match_end, False
    if not steps or expect_key:
        raise PathError(f"path {text!r} is empty or ends with a dot; {_EXAMPLES}")
    return ReplyPath(source, tuple(steps))


def _step(where: str, value: Any, step: str | int | None) -> list[tuple[str, Any]]:
    if isinstance(step, str):
        if not isinstance(value, dict):
            raise PathError(f"{_name(where)} is {kind_of(value)}, not an object with the key {step!r}")
        if step not in value:
            keys = ", ".join(map(str, list(value)[:12])) or "none"
            raise PathError(f"{_name(where)} has no key {step!r} (its keys: {keys})")
        return [(f"{where}.{step}" if where else step, value[step])]
    if not isinstance(value, list):
        wanted = "[*]" if step is None else f"[{step}]"
        raise PathError(f"{_name(where)} is {kind_of(value)}, not a list to take {wanted} of")
    if step is None:
        return [(f"{where}[{n}]", element) for n, element in enumerate(value)]
    if not -len(value) <= step < len(value):
        raise PathError(f"{_name(where)} has {len(value)} elements, no [{step}]")
    return [(f"{where}[{step}]", value[step])]


def _name(where: str) -> str:
    return f"`{where}`" if where else "the reply"


def kind_of(value: Any) -> str:
    """What `value` is, in words: null, a boolean, a number, text, a list or an object."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    return "an object"
