"""Append-only JSONL logs of versioned lines: a run's results, the answers a RAG service gave, synth's log.

Every line is a JSON object carrying its kind's keys and version `v`. Lines are appended whole and flushed, so a
killed run leaves at most one torn last line, which readers skip and the next run cuts (`repair`). A file that is
not a log of ours is never modified: it is refused with a message that says to give another `-o`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragfacts import jsontext, redaction
from ragfacts.files import appending, open_own, replacing


class RunError(Exception):
    """A run that cannot go ahead as asked (locked, refused, not ours); the message says what to do."""


@dataclass
class JsonlLog:
    """One log file: where it is, the kind of its lines (for messages), the keys every line has, their version.

    `vouched` says whether a file beside it (a manifest, an endpoint configuration) already shows the log is ours,
    so that a log whose only line is torn may be cut without proof from its own first line.
    """

    path: Path
    kind: str
    keys: tuple[str, ...]
    version: int
    vouched: Callable[[], bool] = lambda: False

    def read(
        self, *, repair: bool = False, parse: Callable[[bytes, int], dict[str, Any]] | None = None
    ) -> Iterator[tuple[int, dict[str, Any]]]:
        """(line number, line) of every complete line, parsed by `parse` (default: whole); with `repair`, a torn
        last line is cut once the lines before it are read (only in a log that is ours)."""
        for number, _, line in self.read_at(repair=repair, parse=parse):
            yield number, line

    def read_at(
        self, *, repair: bool = False, parse: Callable[[bytes, int], dict[str, Any]] | None = None
    ) -> Iterator[tuple[int, int, dict[str, Any]]]:
        """`read`, with each line's byte offset: (line number, offset, line); `line_at(offset, number)` reads it
        again."""
        if not self.path.exists():
            return
        parse = parse or self.parse
        torn_at: int | None = None
        read = 0
        with self.path.open("rb") as handle:
            offset = 0
            for number, raw in enumerate(handle, start=1):
                if not raw.endswith(b"\n"):
                    torn_at = offset  # a line cut by a killed run: redone, never read
                    break
                if raw.strip():
                    read += 1
                    yield number, offset, parse(raw, number)
                offset += len(raw)
        if torn_at is not None and repair:
            if not read and not self.vouched():
                self.refuse_unless_ours()
            descriptor = open_own(self.path, os.O_WRONLY)
            try:
                os.ftruncate(descriptor, torn_at)
            finally:
                os.close(descriptor)

    def line_at(self, offset: int, number: int) -> dict[str, Any]:
        """Line `number`, which starts at byte `offset` (from `read_at`), parsed whole."""
        with self.path.open("rb") as handle:
            handle.seek(offset)
            return self.parse(handle.readline(), number)

    def lines(self, wanted: set[int] | None = None) -> Iterator[dict[str, Any]]:
        """The complete lines (only those whose numbers are in `wanted`, if given), parsed whole."""
        if not self.path.exists():
            return
        with self.path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if not raw.endswith(b"\n"):
                    return
                if raw.strip() and (wanted is None or number in wanted):
                    yield self.parse(raw, number)

    @contextlib.contextmanager
    def appender(self) -> Iterator[Callable[[dict[str, Any]], None]]:
        """A function that appends one whole line and flushes it, so a line is on disk complete or not at all."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with appending(self.path) as handle:

            def append(line: dict[str, Any]) -> None:
                data = memoryview((json_line(line) + "\n").encode("utf-8"))
                while data:
                    data = data[handle.write(data) :]

            yield append

    def rewrite(self, keep: Callable[[int, dict[str, Any]], bool]) -> int:
        """Rewrite the log with only the lines `keep` accepts, atomically; returns the lines dropped."""
        dropped = 0
        with replacing(self.path) as out, self.path.open("rb") as source:
            for number, raw in enumerate(source, start=1):
                if not raw.endswith(b"\n") or not raw.strip():
                    continue
                if keep(number, self.parse(raw, number)):
                    out.write(raw.decode("utf-8"))
                else:
                    dropped += 1
        return dropped

    def salvage(self) -> tuple[int, int]:
        """Keep the readable lines (of this kind and version) of a log of ours and drop the others, the file replaced
        whole: (lines kept, lines dropped). A file not shown to be ours is refused, never rewritten."""
        if not self.path.exists():
            return 0, 0
        if not self.vouched():
            self.refuse_unless_ours()
        kept: list[bytes] = []
        dropped = 0
        with os.fdopen(open_own(self.path, os.O_RDONLY), "rb") as source:
            for number, raw in enumerate(source, start=1):
                if not raw.strip():
                    continue
                try:
                    if not raw.endswith(b"\n"):
                        raise RunError("torn")
                    self.parse(raw, number)
                except RunError:
                    dropped += 1
                    continue
                kept.append(raw)
        if dropped:
            with replacing(self.path) as out:
                out.write(b"".join(kept).decode("utf-8"))
        return len(kept), dropped

    def parse(self, raw: bytes, number: int) -> dict[str, Any]:
        """Line `number`; raises RunError if it is not a line of ours or of another version."""
        line = _json_object(raw)
        if line is None or any(key not in line for key in self.keys):
            fix = "; or rerun with --repair to keep its readable lines" if number > 1 and self.vouched() else ""
            raise RunError(
                f"{self.path}: line {number} is not a ragfacts {self.kind} line; this is not a {self.kind} file of "
                f"ours (or it was edited): give another -o{fix}"
            )
        if line["v"] != self.version:
            raise RunError(
                f"{self.path}: written by another ragfacts version ({self.kind} v{line['v']}); give another -o"
            )
        return line

    def refuse_unless_ours(self) -> None:
        """Raise RunError unless the first line of the file is a line of this kind."""
        with self.path.open("rb") as handle:
            line = _json_object(handle.readline())
        if line is None or any(key not in line for key in self.keys):
            raise RunError(f"{self.path} exists and is not a ragfacts {self.kind} file; give another -o")


def json_line(line: dict[str, Any]) -> str:
    """One line as JSON text, secrets redacted; the characters some readers take for line breaks are escaped."""
    text = redaction.redact(jsontext.dumps(line))  # nothing secret reaches a run's files
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace("\x85", "\\u0085")


def _json_object(raw: bytes) -> dict[str, Any] | None:
    try:
        line = jsontext.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return line if isinstance(line, dict) else None
