"""Progress of a dataset run: a live bar on a terminal, a plain line every N rows or 10 s elsewhere (logs, CI)."""

from __future__ import annotations

import time
from typing import IO, Protocol

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from ragfacts.methods.base import Outcome
from ragfacts.usage import Usage


class RunProgress(Protocol):
    """What the runner tells about its progress."""

    def start(self, total: int) -> None: ...

    def advance(self, outcome: Outcome, usage: Usage) -> None: ...

    def finish(self) -> None: ...


class NoProgress:
    """Says nothing (the Python API, tests)."""

    def start(self, total: int) -> None:
        pass

    def advance(self, outcome: Outcome, usage: Usage) -> None:
        pass

    def finish(self) -> None:
        pass


class BarProgress:
    """A rich progress bar: results done, calls, tokens, cache hits, failures, time left."""

    def __init__(self, console: Console) -> None:
        self._bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[calls]} calls · {task.fields[tokens]} tok · {task.fields[cached]} cached"),
            TextColumn("{task.fields[failed]}"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self._task: TaskID | None = None  # set by start()

    def start(self, total: int) -> None:
        self._bar.start()
        self._task = self._bar.add_task("judging", total=total, calls=0, tokens="0", cached=0, failed="")

    def advance(self, outcome: Outcome, usage: Usage) -> None:
        assert self._task is not None, "advance() before start()"
        failed = f"[yellow]{usage.failures} failed calls[/]" if usage.failures else ""
        self._bar.update(
            self._task,
            advance=1,
            calls=usage.calls,
            tokens=f"{usage.tokens:,}",
            cached=usage.cache_hits,
            failed=failed,
        )

    def finish(self) -> None:
        self._bar.stop()


class LineProgress:
    """A plain line every `every_rows` results or `every_s` seconds, whichever comes first."""

    def __init__(self, stream: IO[str], every_rows: int = 0, every_s: float = 10.0) -> None:
        self._stream = stream
        self._every_rows = every_rows
        self._every_s = every_s
        self._total = self._done = 0
        self._started = self._last = 0.0
        self._usage = Usage()

    def start(self, total: int) -> None:
        self._total = total
        self._every_rows = self._every_rows or max(total // 10, 1)
        self._started = self._last = time.monotonic()

    def advance(self, outcome: Outcome, usage: Usage) -> None:
        self._done += 1
        self._usage = usage
        now = time.monotonic()
        if self._done % self._every_rows == 0 or now - self._last >= self._every_s or self._done == self._total:
            self._last = now
            self._print(now)

    def finish(self) -> None:
        pass

    def _print(self, now: float) -> None:
        elapsed = now - self._started
        rate = self._done / elapsed if elapsed > 0 else 0.0
        left = (self._total - self._done) / rate if rate > 0 else 0.0
        u = self._usage
        self._stream.write(
            f"progress: {self._done}/{self._total} results · {u.calls} calls · {u.tokens:,} tokens · "
            f"{u.cache_hits} cached · {u.failures} failed calls · {elapsed:.0f}s elapsed, ~{left:.0f}s left\n"
        )
        self._stream.flush()


def progress_for(console: Console) -> RunProgress:
    """A bar when the console is a terminal, else plain lines on its stream."""
    if console.is_terminal:
        return BarProgress(console)
    return LineProgress(console.file)
