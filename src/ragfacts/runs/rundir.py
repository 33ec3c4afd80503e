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
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ragfacts import jsontext, redaction
from ragfacts.files import appending, open_own, replace_text
from ragfacts.runs.jsonl import JsonlLog, RunError
from ragfacts.runs.manifest import Manifest
from ragfacts.usage import Usage

if TYPE_CHECKING:
    from ragfacts.items import Item
    from ragfacts.methods.base import Outcome, Task

RESULTS_VERSION = 1
_LINE_KEYS = ("v", "id", "method", "content_hash", "config_hash", "complete", "outcome")
# Results lines keep the index's fields first, the item and result after; lines are compact (`,"item":`), those of
# earlier versions spaced (`, "item": `).
_ITEM_KEYS = (b',"item":', b', "item": ')


@dataclass(frozen=True)
class Entry:
    """What the index keeps of a results line: enough to decide reuse and to summarise, not the result."""

    line: int
    content_hash: str
    config_hash: str
    complete: bool
    outcome: dict[str, Any]
    offset: int = 0  # where the line starts in the results file

    def current(self, content_hash: str, config_hash: str) -> bool:
        """Whether the line was made from these inputs and this configuration: only then is it reused or read."""
        return self.content_hash == content_hash and self.config_hash == config_hash


@dataclass
class ResultIndex:
    """The latest line per (item id, method), and how many older lines it supersedes."""

    entries: dict[tuple[str, str], Entry] = field(default_factory=dict)
    lines: int = 0
    superseded: int = 0

    def get(self, item_id: str, method: str) -> Entry | None:
        return self.entries.get((item_id, method))


class RunDir:
    """The files of one run: results, manifest, ledger and lock, in a directory or beside a .jsonl file.

    `results_suffix` puts the results beside a .jsonl target instead of in it (synth writes its dataset there).
    """

    def __init__(self, target: str | Path, *, results_suffix: str = "") -> None:
        self.target = Path(target)
        if self.target.suffix.lower() == ".jsonl":
            self.results = self.target.with_name(self.target.name + results_suffix)
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
        self.log = JsonlLog(self.results, "results", _LINE_KEYS, RESULTS_VERSION, self.manifest.exists)

    def check_target(self, inputs: list[Path]) -> None:
        """Refuse an output that is an input, or a path of the wrong kind; nothing is created."""
        outputs = {self.results, self.manifest, self.ledger, self.journal}
        for path in inputs:
            if any(_same(path, output) for output in outputs) or _same(path, self.target):
                raise RunError(f"the output {self.target} is also an input ({path}); give another -o")
        if self.results == self.target:
            if self.target.is_dir():
                raise RunError(f"-o {self.target} is a directory; give a file name ending in .jsonl or a run directory")
        elif self.target.exists() and not self.target.is_dir():
            raise RunError(f"-o {self.target} is a file; give a new directory (or a file name ending in .jsonl)")
        self.check_files()
        if self.results.exists() and self.results.stat().st_size and not self.manifest.exists():
            self.log.refuse_unless_ours()
        self.load_manifest()  # someone else's manifest.json: refused before anything runs

    @property
    def files(self) -> tuple[Path, ...]:
        """Every file the run writes, the temporary files of those it replaces whole included."""
        written = (self.results, self.manifest, self.ledger, self.journal)
        return (*written, self.lock_file, *(path.with_name(path.name + ".tmp") for path in written))

    def check_files(self) -> None:
        """Refuse (RunError) a run file that is a symbolic link, a directory or anything but a regular file."""
        check_own_files(self.files)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the run's lock; raises RunError when another process holds it."""
        self.lock_file.parent.mkdir(parents=True, exist_ok=True)
        self.check_files()
        try:
            handle = os.fdopen(open_own(self.lock_file, os.O_RDWR | os.O_CREAT), "r+")
        except OSError as error:
            raise RunError(f"{self.lock_file}: cannot open the run's lock ({error.strerror or error})") from error
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
            stages = self.journal_stages()
            ledger = _ledger(stages)
            shortfall = self._journal_shortfall(Usage.sum(stages.values()).calls)
            if shortfall:
                ledger["warning"] = shortfall
            return ledger
        if not self.ledger.exists():
            return {}
        try:
            ledger = json.loads(self.ledger.read_text(encoding="utf-8"))
            stages = {name: Usage.model_validate(usage) for name, usage in ledger["stages"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return self._rebuilt_ledger()
        return _ledger(stages)

    def _journal_shortfall(self, calls: int) -> str | None:
        """What the journal lacks, where it holds fewer calls than the manifest's invocations say were made (it
        was cut, edited or replaced): said, never hidden in a smaller ledger."""
        try:
            manifest = self.load_manifest()
        except RunError:
            return None
        recorded = [entry.usage.calls for entry in manifest.invocations if entry.usage is not None] if manifest else []
        if sum(recorded) <= calls:
            return None
        return (
            f"{self.journal.name} accounts for {calls} calls, the manifest's invocations for {sum(recorded)}: the "
            "journal was cut or edited, so this ledger is short of what was paid for"
        )

    def journal_stages(self, invocation: str | None = None) -> dict[str, Usage]:
        """The journal summed per stage (of one invocation, if given); torn or foreign lines are skipped."""
        stages: dict[str, Usage] = {}
        if not self.journal.exists():
            return stages
        with self.journal.open("rb") as source:
            for raw in source:
                try:
                    line = jsontext.loads(raw)
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
        with appending(self.journal, end_torn_line=True) as handle:

            def append(stage: str, usage: Usage, invocation: str = invocation) -> None:
                line = {"invocation": invocation, "stage": stage, "usage": usage.model_dump()}
                data = memoryview((jsontext.dumps(line) + "\n").encode("utf-8"))
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
        for number, offset, line in self.log.read_at(repair=repair, parse=self._parse_head):
            key = (line["id"], line["method"])
            index.superseded += key in index.entries
            hashes = line["content_hash"], line["config_hash"]
            index.entries[key] = Entry(number, *hashes, line["complete"], line["outcome"], offset)
            index.lines += 1
        return index

    def lines(self, wanted: set[int] | None = None) -> Iterator[dict[str, Any]]:
        """Yield the complete results lines (only the line numbers in `wanted`, if given)."""
        return self.log.lines(wanted)

    def _parse_head(self, raw: bytes, number: int) -> dict[str, Any]:
        """The fields before the item (id, method, hashes, outcome): what the index needs, without parsing the
        result. The raw text `,"item":` cannot occur inside a JSON string (its quotes would be escaped)."""
        cut = next((at for key in _ITEM_KEYS if (at := raw.find(key)) > 0), -1)
        if cut > 0:
            try:
                head = jsontext.loads(raw[:cut] + b"}")
            except (ValueError, UnicodeDecodeError):
                head = None
            if isinstance(head, dict) and all(key in head for key in _LINE_KEYS) and head["v"] == RESULTS_VERSION:
                return head
        return self.log.parse(raw, number)


def result_line(
    item: Item, method: Task, config: str, outcome: Outcome, result: Any, seconds: float, row: int
) -> dict[str, Any]:
    """One results line, whichever engine judged it. `row` is the item's place in the dataset: lines are written as
    they finish, and a run read back puts its items in the dataset's order by it where the dataset cannot be read
    again (rows given in memory)."""
    return {
        "v": RESULTS_VERSION,
        "id": item.id,
        "method": method.spec,
        "content_hash": item.content_hash(),
        "config_hash": config,
        "complete": outcome.complete,
        "outcome": outcome.model_dump(mode="json"),
        "item": item.model_dump(mode="json", exclude_none=True),
        "result": result.model_dump(mode="json"),
        "seconds": round(seconds, 3),
        "finished": now(),
        "row": row,
    }


def now() -> str:
    """The time stamps of a run directory (results, manifest, invocations): UTC, to the second, ISO 8601."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def check_own_files(paths: Iterable[Path]) -> None:
    """Raise RunError for a path that exists as a symbolic link, a directory or anything but a regular file: a run
    writes only into files of its own, never through a link planted beside it, and says so before it starts."""
    for path in paths:
        try:
            found = path.lstat()
        except FileNotFoundError:
            continue
        except OSError as error:
            raise RunError(f"{path}: cannot be read ({error.strerror or error}); give another -o") from error
        if stat.S_ISLNK(found.st_mode):
            raise RunError(
                f"{path} is a symbolic link; a run writes only into files of its own, never through a link: remove "
                "the link or give another -o"
            )
        if not stat.S_ISREG(found.st_mode):
            what = "a directory" if stat.S_ISDIR(found.st_mode) else "not a regular file"
            raise RunError(f"{path} is {what}, where the run keeps a file of its own: move it or give another -o")


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
