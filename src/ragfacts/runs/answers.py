"""The answers a RAG service gave, kept in the run directory beside the results it was judged into.

`answers.jsonl` (with `-o OUT.jsonl`: `OUT.jsonl.answers.jsonl`) holds one line per question asked: the
question's key (a hash of its text), the hash of the endpoint configuration that was asked, and what came
back (answer, contexts, latency, attempts, HTTP status) or why nothing did. Lines are appended whole and
flushed as each reply arrives, so a killed run loses no answer it got; the latest line per question wins,
and a line torn by a killed run is dropped. `endpoint.json` (`OUT.jsonl.endpoint.json`) holds the
configuration itself — URL, body and paths as written, header names — and never a secret: values from the
environment and header values are neither stored nor hashed.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from ragfacts import redaction
from ragfacts.files import replace_text
from ragfacts.runs.jsonl import JsonlLog, RunError
from ragfacts.runs.rundir import RunDir

ANSWERS_VERSION = 1
_LINE_KEYS = ("v", "key", "config_hash", "ok", "question")


class AnswerStore:
    """The answers file and the endpoint configuration of one run directory."""

    def __init__(self, run_dir: RunDir) -> None:
        target = run_dir.target
        if run_dir.results == target:  # -o OUT.jsonl: the other files sit beside it
            self.answers = target.with_name(target.name + ".answers.jsonl")
            self.config = target.with_name(target.name + ".endpoint.json")
        else:
            self.answers = target / "answers.jsonl"
            self.config = target / "endpoint.json"
        self.log = JsonlLog(self.answers, "answers", _LINE_KEYS, ANSWERS_VERSION, self.config.exists)

    @property
    def paths(self) -> tuple[Path, Path]:
        return self.answers, self.config

    def check_configuration(self, configuration: dict[str, Any], config_hash: str, *, force: bool) -> None:
        """Refuse answers of another endpoint configuration unless `force`; raises RunError saying what differs."""
        if force:
            return
        stored = {line["config_hash"] for line in self.load().values()}
        if not stored - {config_hash}:
            return
        before = self._saved_configuration()
        changed = [
            f"{name} {_shown(before.get(name))} → {_shown(value)}"
            for name, value in configuration.items()
            if before and before.get(name) != value
        ]
        what = "; ".join(changed) or "another configuration"
        raise RunError(
            f"{self.answers} holds answers from another endpoint configuration ({what}). Give a new -o, or add "
            "--force to ask the service again (the other answers are then dropped)"
        )

    def load(self, *, repair: bool = False) -> dict[str, dict[str, Any]]:
        """The latest line per question key; with `repair`, cut a line torn by a killed run."""
        return {line["key"]: line for _, line in self.log.read(repair=repair)}

    def appender(self) -> AbstractContextManager[Callable[[dict[str, Any]], None]]:
        """A function that appends one whole answers line (versioned here) and flushes it."""
        return _versioned(self.log)

    def save_configuration(self, configuration: dict[str, Any]) -> None:
        text = json.dumps(configuration, ensure_ascii=False, indent=2) + "\n"
        replace_text(self.config, redaction.redact(text))

    def compact(self, keep: set[str], config_hash: str) -> int:
        """Keep only the latest line of each key in `keep` made with `config_hash`; returns the lines dropped."""
        lines = list(self.log.read())
        latest = {line["key"]: number for number, line in lines}
        wanted = {
            number
            for number, line in lines
            if latest[line["key"]] == number and line["key"] in keep and line["config_hash"] == config_hash
        }
        if len(wanted) == len(lines):
            return 0
        return self.log.rewrite(lambda number, _line: number in wanted)

    def _saved_configuration(self) -> dict[str, Any]:
        try:
            saved = json.loads(self.config.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return {}
        return saved if isinstance(saved, dict) else {}


@contextlib.contextmanager
def _versioned(log: JsonlLog) -> Iterator[Callable[[dict[str, Any]], None]]:
    with log.appender() as append:
        yield lambda line: append({"v": ANSWERS_VERSION, **line})


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:80] + "…"
