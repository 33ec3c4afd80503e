"""Ask a RAG service every question of a dataset into the run directory, then hand back the dataset to judge.

Questions are read like any dataset (the same reader, layouts and `--map`), except that the answer and the
reference come from the service: each row gets the service's answer and its retrieved contexts (one
reference, numbered [1], [2], ... when there are several); its ground truth or facts, id and other columns
come from the file. A question already answered with the same endpoint configuration is not asked again,
and failed ones are asked again unless `retry_failed` is off; identical questions are asked once.
`options.concurrency` questions are in flight at once, each reply appended to the answers file as it
arrives; after `stop_after` failures in a row the collection stops, writing nothing for the questions still
in flight. A question the service did not answer is a failed row: kept with its reason, counted, and not
in the dataset to judge.
"""

from __future__ import annotations

import asyncio
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ragfacts.datasets.dataset import Dataset
from ragfacts.datasets.layouts import plan_columns
from ragfacts.datasets.reader import DatasetError, Row, check_readable, read_rows
from ragfacts.endpoints import Answer, EndpointClient, EndpointOptions, EndpointRequest, public_url
from ragfacts.hashing import digest
from ragfacts.runs.answers import AnswerStore
from ragfacts.runs.rundir import RunDir

# The columns the service's reply is read into; a questions file may not use these names.
ANSWER_COLUMN = "endpoint answer"
CONTEXTS_COLUMN = "endpoint contexts"
_QUESTION_COLUMNS = "question, query, user_input"

Progress = Callable[[int, int, Answer], None]  # (done, total, the answer just in)


@dataclass(frozen=True)
class Question:
    """One row of the questions file: where it is, its columns, the question sent, and its key."""

    where: str
    row: dict[str, Any]
    text: str
    key: str


@dataclass
class Questions:
    """A questions file, read and checked in full before anything is asked."""

    path: Path
    sha256: str
    mapping: dict[str, str]  # the user's --map, plus the columns the reply is read into
    rows: list[Question]

    def distinct_keys(self) -> list[str]:
        """The distinct questions' keys, in file order."""
        return list(dict.fromkeys(question.key for question in self.rows))

    def dataset(self, reply: Callable[[str], tuple[str, list[str]] | None]) -> Dataset | None:
        """The dataset of the rows `reply` gives an (answer, contexts) for; None when it gives none."""
        rows: list[Row] = []
        for question in self.rows:
            got = reply(question.key)
            if got is not None:
                rows.append((question.where, {**question.row, ANSWER_COLUMN: got[0], CONTEXTS_COLUMN: got[1]}))
        if not rows:
            return None
        return Dataset(str(self.path), lambda: iter(rows), mapping=self.mapping, path=self.path, sha256=self.sha256)


@dataclass
class CollectReport:
    """What one collection did, per distinct question."""

    asked: int = 0  # questions sent to the service now
    answered: int = 0  # of those, answered
    reused: int = 0  # questions answered by an earlier run (or failed, kept with --keep-failed)
    not_asked: int = 0  # left for a later run (--limit, or stopped early)
    dropped: int = 0  # stale answers lines removed (another configuration, superseded)
    stopped: str | None = None


@dataclass
class Collection:
    """The questions with the service's latest reply to each (of this configuration), and the run's report."""

    questions: Questions
    lines: dict[str, dict[str, Any]]
    report: CollectReport = field(default_factory=CollectReport)

    def dataset(self) -> Dataset | None:
        """The answered rows as a dataset to judge; None when no row has an answer."""

        def reply(key: str) -> tuple[str, list[str]] | None:
            line = self.lines.get(key)
            return (line["answer"], line["contexts"]) if line is not None and line["ok"] else None

        return self.questions.dataset(reply)

    def stats(self) -> dict[str, Any]:
        """Per row: answered, failed (with the reasons), not asked; latency of the answered ones."""
        answered = [self.lines[q.key] for q in self.questions.rows if self.lines.get(q.key, {}).get("ok")]
        failed = [(q, self.lines[q.key]) for q in self.questions.rows if q.key in self.lines]
        failed = [(q, line) for q, line in failed if not line["ok"]]
        latencies = sorted(line["latency_s"] for line in answered if line.get("latency_s") is not None)
        return {
            "rows": len(self.questions.rows),
            "answered": len(answered),
            "failed": len(failed),
            "not_asked": len(self.questions.rows) - len(answered) - len(failed),
            "asked_now": self.report.asked,
            "answered_now": self.report.answered,
            "reused": self.report.reused,
            "stopped": self.report.stopped,
            "latency_s": _latency(latencies),
            "failures": dict(Counter(line["error"] for _, line in failed).most_common()),
            "failed_rows": [{"where": q.where, "question": q.text, "error": line["error"]} for q, line in failed],
        }


def read_questions(path: Path, mapping: dict[str, str]) -> Questions:
    """Read and check a questions file; raises DatasetError naming the file, the row and the fix."""
    for name in ("answer", "reference"):
        if name in mapping:
            raise DatasetError(
                f"--map {name}={mapping[name]}: with --endpoint the {name} comes from the service "
                "(--answer-path, --contexts-path)"
            )
    sha256 = check_readable(path)
    rows = list(read_rows(path))
    columns = list(dict.fromkeys(column for _, row in rows for column in row))
    if not rows:
        raise DatasetError(f"{path}: no rows")
    taken = [c for c in columns if c.strip().lower() in (ANSWER_COLUMN, CONTEXTS_COLUMN)]
    if taken:
        raise DatasetError(f"{path}: the column {taken[0]!r} is where ragfacts puts the service's reply; rename it")
    full = {**mapping, "answer": ANSWER_COLUMN, "reference": CONTEXTS_COLUMN}
    plan = plan_columns([*columns, ANSWER_COLUMN, CONTEXTS_COLUMN], full, str(path))
    if plan.layout.per_answer:
        raise DatasetError(
            f"{path} is read as {plan.layout.title}: its rows hold answers to judge; give a file of questions "
            "(with --endpoint the service answers them)"
        )
    column = plan.sources.get("question")
    if column is None:
        raise DatasetError(
            f"{path}: no question column (looked for {_QUESTION_COLUMNS}); columns: {', '.join(columns)}. "
            "Name it with --map question=COLUMN"
        )
    questions = []
    for where, row in rows:
        value = row.get(column)
        text = str(value).strip() if isinstance(value, (str, int, float)) and not isinstance(value, bool) else ""
        if not text:
            raise DatasetError(f"{path}: {where}: the question ({column}) is empty")
        questions.append(Question(where, row, text, digest({"question": text})))
    return Questions(path, sha256, full, questions)


async def collect(
    run_dir: RunDir,
    questions: Questions,
    options: EndpointOptions,
    request: EndpointRequest,
    *,
    limit: int | None = None,
    force: bool = False,
    retry_failed: bool = True,
    stop_after: int = 5,
    progress: Progress | None = None,
) -> Collection:
    """Ask the questions that need an answer; raises RunError when the directory is locked or holds answers of
    another endpoint configuration (unless `force`)."""
    store = AnswerStore(run_dir)
    configuration, config_hash = options.configuration(), options.configuration_hash()
    report = CollectReport()
    with run_dir.locked():
        store.check_configuration(configuration, config_hash, force=force)
        lines = {k: v for k, v in store.load(repair=True).items() if v["config_hash"] == config_hash}
        store.save_configuration(configuration)
        todo = []
        for key in questions.distinct_keys():
            line = lines.get(key)
            if line is not None and (line["ok"] or not retry_failed):
                report.reused += 1
            else:
                todo.append(key)
        if limit is not None:
            report.not_asked, todo = max(len(todo) - limit, 0), todo[:limit]
        texts = {question.key: question.text for question in questions.rows}
        try:
            with store.appender() as append:

                def record(key: str, answer: Answer) -> None:
                    line = {"key": key, "config_hash": config_hash, **answer.model_dump(), "finished": _now()}
                    append(line)
                    lines[key] = line

                asking = {key: texts[key] for key in todo}
                await _ask(asking, options, request, record, stop_after=stop_after, progress=progress, report=report)
        finally:
            report.dropped = store.compact(set(texts), config_hash)
    return Collection(questions, lines, report)


async def _ask(
    todo: dict[str, str],
    options: EndpointOptions,
    request: EndpointRequest,
    record: Callable[[str, Answer], None],
    *,
    stop_after: int,
    progress: Progress | None,
    report: CollectReport,
) -> None:
    """Ask the questions in `todo` (key -> text), `options.concurrency` at once, recording each reply as it comes."""
    pending = iter(todo.items())
    failures_in_a_row = 0

    class Stop(Exception):
        pass

    async def worker(client: EndpointClient) -> None:
        nonlocal failures_in_a_row
        for key, text in pending:  # a shared iterator: each worker takes the next question
            answer = await client.ask(text)
            record(key, answer)
            report.asked += 1
            report.answered += answer.ok
            failures_in_a_row = 0 if answer.ok else failures_in_a_row + 1
            if progress is not None:
                progress(report.asked, len(todo), answer)
            if stop_after and failures_in_a_row >= stop_after:
                where = public_url(request.url)
                raise Stop(f"stopped early: {stop_after} questions in a row failed at {where}: {answer.error}")

    async with EndpointClient(options, request) as client:
        workers = [asyncio.ensure_future(worker(client)) for _ in range(min(options.concurrency, len(todo)))]
        try:
            await asyncio.gather(*workers)
        except Stop as stop:
            report.stopped = request.redact(str(stop))
        finally:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
    report.not_asked += len(todo) - report.asked


def _latency(seconds: list[float]) -> dict[str, float] | None:
    if not seconds:
        return None
    p95 = seconds[min(len(seconds) - 1, round(0.95 * (len(seconds) - 1)))]
    return {"median": round(statistics.median(seconds), 3), "p95": round(p95, 3), "max": round(seconds[-1], 3)}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
