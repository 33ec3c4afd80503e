"""JSON text on the hot paths (results lines, the usage journal, cached replies, `--json`), through orjson.

A fully cached run of 1,000 answers writes and reads back some 20 MB of JSON; the standard library's encoder and
decoder were a third of its time. Text is UTF-8, not ASCII-escaped; keys that are not strings are written as
strings, as `json` does. NaN and infinities are written as `null` (valid JSON, where `json` would write `NaN`).

Hashes do not come through here: `ragfacts.hashing.canonical_json` keeps the standard library's exact text, so no
stored key or configuration hash changes.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS


def dumps(value: Any) -> str:
    """Compact JSON text."""
    return dumps_bytes(value).decode("utf-8")


def dumps_bytes(value: Any) -> bytes:
    """Compact JSON text as UTF-8 bytes (a request body)."""
    try:
        return orjson.dumps(value, option=_OPTIONS)
    except orjson.JSONEncodeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def dumps_indented(value: Any) -> str:
    """JSON text indented by two spaces, for people to read."""
    try:
        return orjson.dumps(value, option=_OPTIONS | orjson.OPT_INDENT_2).decode("utf-8")
    except orjson.JSONEncodeError:
        return json.dumps(value, ensure_ascii=False, indent=2)


def loads(text: bytes | str) -> Any:
    """The value of JSON `text`; raises `json.JSONDecodeError` (a `ValueError`) if it is not JSON. Text that the
    standard library also accepts (`NaN`, written by earlier versions of ragfacts) is read as it reads it."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
