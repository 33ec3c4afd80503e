"""Canonical JSON and content hashes: equal inputs hash equally, whatever their key order."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """Serialise with sorted keys and compact separators, so equal values serialise equally."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def digest(value: Any, length: int = 32) -> str:
    """The first `length` hex digits of the SHA-256 of `value`'s canonical JSON."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()[:length]
