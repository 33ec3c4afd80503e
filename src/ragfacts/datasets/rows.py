"""Reading dataset files row by row, with errors that name the file and the line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class DatasetError(ValueError):
    """Input data that cannot be used; the message names the file, the row and, where it can, the fix."""


def jsonl_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line of a JSONL file; raises DatasetError."""
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise DatasetError(f"{path}: cannot read: {error}") from error
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise DatasetError(f"{path}: line {number}: not JSON ({error.msg})") from error
        if not isinstance(row, dict):
            raise DatasetError(f"{path}: line {number}: expected a JSON object")
        yield number, row
