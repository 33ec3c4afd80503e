"""The run directory: the contract between the runner and everything that reads its results.

A run directory holds `manifest.json` (what was run: ragfacts version and commit, dataset path, SHA-256
and size, model, methods with options and prompt versions, and every invocation with its times and usage),
`results.jsonl` (one complete line per item and method, carrying the item's content hash and the method's
configuration hash) and `ledger.json` (usage per stage, summed over invocations). `-o OUT.jsonl` puts the
results in OUT.jsonl and the others beside it (OUT.jsonl.manifest.json, OUT.jsonl.ledger.json).

Lines are appended whole and flushed, so a killed run leaves at most one torn last line, which the next
run drops. A lock (released by the OS when the process dies, even by SIGKILL) stops a second run on the
same directory. A file that is not ragfacts results is never modified.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragfacts import redaction
from ragfacts.bench.manifest import Manifest
from ragfacts.files import replace_text, replacing
from ragfacts.usage import Usage

RESULTS_VERSION = 1
_LINE_KEYS = ("v", "id", "method", "content_hash", "config_hash", "complete", "outcome")
_ITEM_KEY = b', "item": '  # results lines keep the index's fields first, the item and result after


class RunError(Exception):
    """A run that cannot go ahead as asked (locked, refused, not ours); the message says what to do."""


@dataclass(frozen=True)
class Entry:
    """What the index keeps of a results line: enough to decide reuse and to summarise, not the result."""

    line: int
    content_hash: str
    config_hash: str
    complete: bool
    outcome: dict[str, Any]


@dataclass
class ResultIndex:
    """The latest line per (item id, method), and how many older lines it supersedes."""

    entries: dict[tuple[str, str], Entry] = field(default_factory=dict)
    lines: int = 0
    superseded: int = 0

    def get(self, item_id: str, method: str) -> Entry | None:
        return self.entries.get((item_id, method))


class RunDir:
    """The files of one run: results, manifest, ledger and lock, in a directory or beside a .jsonl file."""

    def __init__(self, target: str | Path) -> None:
        self.target = Path(target)
        if self.target.suffix.lower() == ".jsonl":
            self.results = self.target
            self.manifest = self.target.with_name(self.target.name + ".manifest.json")
            self.ledger = self.target.with_name(self.target.name + ".ledger.json")
            self.journal = self.target.with_name(self.target.name + ".usage.jsonl")
            self.lock_file = self.target.with_name(self.target.name + ".lock")
        else:
            self.results = self.target / "results.jsonl"
            self.manifest = self.target / "manifest.json"
            self.ledger = self.target / "ledger.json"
            self.journal = self.target / "usage.jsonl"
            self.lock_file = self.target / ".lock"

    def check_target(self, inputs: list[Path]) -> None:
        """Refuse an output that is an input, or a path of the wrong kind; nothing is created."""
        outputs = {self.results, self.manifest, self.ledger, self.journal}
        for path in inputs:
            if any(_same(path, output) for output in outputs) or _same(path, self.target):
                raise RunError(f"the output {self.target} is also an input ({path}); give another -o")
        if self.results is self.target:
            if self.target.is_dir():
                raise RunError(f"-o {self.target} is a directory; give a file name ending in .jsonl or a run directory")
        elif self.target.exists() and not self.target.is_dir():
            raise RunError(f"-o {self.target} is a file; give a new directory (or a file name ending in .jsonl)")
        if self.results.exists() and self.results.stat().st_size and not self.manifest.exists():
            self._refuse_unless_ours()
        self.load_manifest()  # someone else's manifest.json: refused before anything runs

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the run's lock; raises RunError when another process holds it."""
        self.lock_file.parent.mkdir(parents=True, exist_ok=True)
        handle = self.lock_file.open("a+")
        try:
            try:
                import fcntl

                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except ImportError:  # no fcntl (Windows): no lock, but no crash either
                pass
            except OSError as error:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                raise RunError(f"{self.target} is in use by another ragfacts run ({holder}); wait for it") from error
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()}")
            handle.flush()
            yield
        finally:
            handle.close()

    def load_manifest(self) -> Manifest | None:
        """The run's manifest; RunError for one that is unreadable or not a ragfacts run's (whatever the flags:
        --force reuses a run directory made differently, never someone else's files)."""
        if not self.manifest.exists():
            return None
        try:
            data = json.loads(self.manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise RunError(f"{self.manifest}: unreadable manifest ({error}); give another -o") from error
        try:
            return Manifest.model_validate(data)
        except ValidationError:
            raise RunError(
                f"{self.manifest} is not the manifest of a ragfacts run, so {self.target} is not a ragfacts run "
                "directory; nothing was changed: give another -o"
            ) from None

    def save_manifest(self, manifest: Manifest) -> None:
        _write_atomically(self.manifest, json.dumps(manifest.to_json(), ensure_ascii=False, indent=2) + "\n")

    def save_ledger(self, ledger: dict[str, Any]) -> None:
        _write_atomically(self.ledger, json.dumps(ledger, ensure_ascii=False, indent=2) + "\n")

    def load_ledger(self) -> dict[str, Any]:
        """The run's usage per stage: summed from the usage journal (every call, appended as it was counted), else
        ledger.json as written, else, if that is unreadable or not ours, rebuilt from the results. Never raises:
        a torn or foreign ledger must not cost a run whose calls were paid for."""
        if self.journal.exists():
            return _ledger(self.journal_stages())
        if not self.ledger.exists():
            return {}
        try:
            ledger = json.loads(self.ledger.read_text(encoding="utf-8"))
            stages = {name: Usage.model_validate(usage) for name, usage in ledger["stages"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return self._rebuilt_ledger()
        return _ledger(stages)

    def journal_stages(self, invocation: str | None = None) -> dict[str, Usage]:
        """The journal summed per stage (of one invocation, if given); torn or foreign lines are skipped."""
        stages: dict[str, Usage] = {}
        if not self.journal.exists():
            return stages
        with self.journal.open("rb") as source:
            for raw in source:
                try:
                    line = json.loads(raw)
                    if invocation is not None and line.get("invocation") != invocation:
                        continue
                    stages.setdefault(str(line["stage"]), Usage()).add(Usage.model_validate(line["usage"]))
                except (ValueError, KeyError, TypeError, AttributeError):
                    continue
        return stages

    @contextlib.contextmanager
    def usage_journal(self, invocation: str) -> Iterator[Callable[[str, Usage], None]]:
        """A function that appends one call's usage to the journal at once (unbuffered): what was paid for
        survives a kill. The first use in a run directory without a journal carries its ledger over."""
        self.journal.parent.mkdir(parents=True, exist_ok=True)
        before = None if self.journal.exists() else self.load_ledger()
        with self.journal.open("ab", buffering=0) as handle:

            def append(stage: str, usage: Usage, invocation: str = invocation) -> None:
                line = {"invocation": invocation, "stage": stage, "usage": usage.model_dump()}
                data = memoryview((json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8"))
                while data:
                    data = data[handle.write(data) :]

            for stage, usage in (before or {}).get("stages", {}).items():
                append(stage, Usage.model_validate(usage), "before the journal")
            yield append

    def _rebuilt_ledger(self) -> dict[str, Any]:
        """A ledger from the results' own usage, when ledger.json is unreadable: one row, said to be rebuilt."""
        total = Usage()
        try:
            for line in self.lines():
                try:
                    total.add(Usage.model_validate(line["outcome"]["usage"]))
                except (KeyError, TypeError, ValueError):
                    continue
        except RunError:  # results that are not ours: nothing to sum
            pass
        ledger = _ledger({"(rebuilt from results.jsonl)": total})
        ledger["rebuilt"] = f"{self.ledger.name} was unreadable; the usage of the current results was summed"
        return ledger

    def index(self, *, repair: bool = False) -> ResultIndex:
        """Index the results file; with `repair`, cut a torn last line (only of a file that is ours)."""
        index = ResultIndex()
        if not self.results.exists():
            return index
        torn_at: int | None = None
        with self.results.open("rb") as handle:
            offset = 0
            for number, raw in enumerate(handle, start=1):
                if not raw.endswith(b"\n"):
                    torn_at = offset  # a line cut by a killed run: redone, never read
                    break
                offset += len(raw)
                if not raw.strip():
                    continue
                line = self._parse_head(raw, number)
                key = (line["id"], line["method"])
                index.superseded += key in index.entries
                index.entries[key] = Entry(
                    number, line["content_hash"], line["config_hash"], line["complete"], line["outcome"]
                )
                index.lines += 1
        if torn_at is not None and repair:
            if not index.lines and not self.manifest.exists():
                self._refuse_unless_ours()
            with self.results.open("r+b") as handle:
                handle.truncate(torn_at)
        return index

    def lines(self, wanted: set[int] | None = None) -> Iterator[dict[str, Any]]:
        """Yield the complete results lines (only the line numbers in `wanted`, if given)."""
        if not self.results.exists():
            return
        with self.results.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if not raw.endswith(b"\n"):
                    return
                if raw.strip() and (wanted is None or number in wanted):
                    yield self._parse(raw, number)

    @contextlib.contextmanager
    def appender(self) -> Iterator[Callable[[dict[str, Any]], None]]:
        """A function that appends one whole line and flushes it, so a line is on disk complete or not at all."""
        self.results.parent.mkdir(parents=True, exist_ok=True)
        with self.results.open("ab", buffering=0) as handle:

            def append(line: dict[str, Any]) -> None:
                data = memoryview((results_line(line) + "\n").encode("utf-8"))
                while data:
                    data = data[handle.write(data) :]

            yield append

    def rewrite(self, keep: Callable[[int, dict[str, Any]], bool]) -> int:
        """Rewrite the results with only the lines `keep` accepts, atomically; returns the lines dropped."""
        dropped = 0
        with replacing(self.results) as out, self.results.open("rb") as source:
            for number, raw in enumerate(source, start=1):
                if not raw.endswith(b"\n") or not raw.strip():
                    continue
                line = self._parse(raw, number)
                if keep(number, line):
                    out.write(raw.decode("utf-8"))
                else:
                    dropped += 1
        return dropped

    def _parse_head(self, raw: bytes, number: int) -> dict[str, Any]:
        """The fields before the item (id, method, hashes, outcome): what the index needs, without parsing the
        result. The raw text `, "item": ` cannot occur inside a JSON string (its quotes would be escaped)."""
        cut = raw.find(_ITEM_KEY)
        if cut > 0:
            try:
                head = json.loads(raw[:cut] + b"}")
            except (json.JSONDecodeError, UnicodeDecodeError):
                head = None
            if isinstance(head, dict) and all(key in head for key in _LINE_KEYS) and head["v"] == RESULTS_VERSION:
                return head
        return self._parse(raw, number)

    def _parse(self, raw: bytes, number: int) -> dict[str, Any]:
        return parse_own_line(self.results, raw, number, _LINE_KEYS, RESULTS_VERSION, "results")

    def _refuse_unless_ours(self) -> None:
        refuse_unless_ours(self.results, _LINE_KEYS, "results")


def parse_own_line(
    path: Path, raw: bytes, number: int, keys: tuple[str, ...], version: int, kind: str
) -> dict[str, Any]:
    """Line `number` of one of our JSONL files (results, answers); raises RunError if it is not ours or not current."""
    try:
        line = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        line = None
    if not isinstance(line, dict) or any(key not in line for key in keys):
        raise RunError(
            f"{path}: line {number} is not a ragfacts {kind} line; this is not a {kind} file of ours (or it was "
            "edited): give another -o"
        )
    if line["v"] != version:
        raise RunError(f"{path}: written by another ragfacts version ({kind} v{line['v']}); give another -o")
    return line


def refuse_unless_ours(path: Path, keys: tuple[str, ...], kind: str) -> None:
    """Raise RunError unless the first line of `path` is a line of one of our JSONL files of this kind."""
    with path.open("rb") as handle:
        first = handle.readline()
    try:
        line = json.loads(first)
    except (json.JSONDecodeError, UnicodeDecodeError):
        line = None
    if not isinstance(line, dict) or any(key not in line for key in keys):
        raise RunError(f"{path} exists and is not a ragfacts {kind} file; give another -o")


def results_line(line: dict[str, Any]) -> str:
    """One results line as JSON text; the characters some readers take for line breaks are escaped."""
    text = redaction.redact(json.dumps(line, ensure_ascii=False))  # nothing secret reaches a run's files
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace("\x85", "\\u0085")


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _ledger(stages: dict[str, Usage]) -> dict[str, Any]:
    return {
        "stages": {name: usage.model_dump() for name, usage in sorted(stages.items())},
        "total": Usage.sum(stages.values()).model_dump(),
    }


def _write_atomically(path: Path, text: str) -> None:
    replace_text(path, redaction.redact(text))
