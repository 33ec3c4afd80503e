"""Files replaced whole: written beside their path and moved over it only once complete (imports nothing of ragfacts).

A reader, or a run killed half-way, sees the old file or the new one, never part of one; a failed write leaves
no temporary file behind.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO


@contextmanager
def replacing(path: Path, *, newline: str | None = None) -> Iterator[TextIO]:
    """A UTF-8 text file to write that takes the place of `path` when the block ends without an error."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    try:
        with temporary.open("w", encoding="utf-8", newline=newline) as handle:
            yield handle
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def replace_text(path: Path, text: str) -> None:
    """Write `text` to `path`, replacing it whole."""
    with replacing(path) as handle:
        handle.write(text)
