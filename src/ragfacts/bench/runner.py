"""The one runner: every method on every item of a dataset, into a run directory, resumable.

A result is reused only when its item id, the item's content hash and the method's configuration hash
(method, version, options, prompt versions, model) all match, and it is complete; anything else runs
again. A run directory made with another model or other methods is refused unless `force`, which keeps
what still matches and drops the rest. Many items are in flight at once (bounded), each result is
appended as one whole line as soon as it is done, and after `stop_after_failures` consecutive calls that
could not reach the endpoint (or were refused by it) the run stops early, writing nothing for the items
still in flight.
"""

from __future__ import annotations

import asyncio
import os
import platform
import secrets
import subprocess
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

import ragfacts
from ragfacts.bench.manifest import DatasetEntry, Invocation, Manifest, MethodEntry, ModelEntry
from ragfacts.bench.progress import NoProgress, RunProgress
from ragfacts.bench.rundir import RESULTS_VERSION, ResultIndex, RunDir, RunError
from ragfacts.datasets.dataset import Dataset
from ragfacts.items import Item
from ragfacts.methods.base import Outcome, Task
from ragfacts.models import ChatModel, ConfigurationError, Failure, request_priority
from ragfacts.usage import Usage

T = TypeVar("T", bound=Task)


@dataclass
class RunPlan:
    """What to run: methods over a dataset, and how."""

    dataset: Dataset
    methods: Sequence[Task]
    model_spec: str = ""
    limit: int | None = None  # judge at most this many items that have work left
    force: bool = False
    retry_incomplete: bool = True
    repair: bool = False  # keep the readable lines of a damaged results file, drop the others (counted)
    stop_after_failures: int = 5  # 0: never stop early
    in_flight: int = 16  # items judged at once


@dataclass
class RunReport:
    """What one invocation did."""

    results: int = 0  # (item, method) pairs that apply
    reused: int = 0
    ran: int = 0
    incomplete: int = 0  # of those run, left with failures (retried next time)
    not_run: int = 0  # left for a later run (--limit, or stopped early)
    not_applicable: dict[str, int] = field(default_factory=dict)  # method -> items it cannot judge
    dropped: int = 0  # stale lines removed (--force, superseded)
    unreadable: int = 0  # lines of a damaged results file dropped by --repair
    stopped: str | None = None  # why the run stopped early
    interrupted: bool = False  # Ctrl-C (or the task cancelled): what finished is saved, the rest not run
    ledger_warning: str | None = None  # the run's usage journal holds fewer calls than its manifest records
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0


# How the pairs of a run are judged: in this process (`_judge`), or by an engine elsewhere (`bench.ray_engine`),
# called with `_judge`'s arguments; it appends each line, counts into the report and advances the progress.
Judge = Callable[..., Awaitable[None]]


class EndpointDown(Exception):
    """The endpoint failed too many times in a row."""


async def prepare(model: ChatModel, methods: Sequence[T]) -> list[T]:
    """The methods resolved for this model, after asking it once whether it gives log-probabilities if one needs
    them; raises ConfigurationError naming the methods it cannot run."""
    if any(m.uses_label_scores(model) for m in methods):
        await model.probe_label_scores()
    resolved = [m.resolved(model) for m in methods]
    unable = [m.spec for m in resolved if m.uses_label_scores(model) and model.label_scores is False]
    if unable:
        endpoint = getattr(model, "base_url", None) or model.backend
        raise ConfigurationError(
            f"{model.model_id} at {endpoint} returns no log-probabilities, which {', '.join(unable)} need: choose "
            "another strategy (e.g. strategy=paper), or strategy=auto to let ragfacts choose"
        )
    return resolved


async def run(
    run_dir: RunDir, plan: RunPlan, model: ChatModel, progress: RunProgress | None = None, *, judge: Judge | None = None
) -> RunReport:
    """Run `plan` into `run_dir` (judged by `judge`, else here); raises RunError when the directory is locked or
    made differently."""
    progress = progress or NoProgress()
    methods = await prepare(model, plan.methods)
    configs = {m.spec: m.configuration_hash(model) for m in methods}
    report = RunReport()
    started = time.perf_counter()
    with run_dir.locked():
        manifest = run_dir.load_manifest()
        _check_same_configuration(run_dir, manifest, plan, methods, model)
        if plan.repair:
            _, report.unreadable = run_dir.log.salvage()
        index = run_dir.index(repair=True)
        todo, current = _plan_work(plan, methods, configs, index, report)
        manifest = _manifest(manifest, plan, methods, model)
        invocation = _start_invocation(run_dir, manifest)
        usage_before = model.ledger.total()
        progress.start(len(todo))
        try:
            # Every call's usage is appended to the run's journal as it is counted, every result as it ends: a
            # killed run loses neither what it paid for nor what it judged.
            with run_dir.usage_journal(invocation) as journal, run_dir.log.appender() as append:
                model.ledger.attach(journal)
                try:
                    await (judge or _judge)(plan, methods, configs, model, todo, append, progress, report)
                except (asyncio.CancelledError, KeyboardInterrupt):
                    report.interrupted = True  # recorded as interrupted, then raised on: the caller says so
                    raise
                finally:
                    model.ledger.attach(None)
        finally:
            progress.finish()
            report.usage = _difference(model.ledger.total(), usage_before)
            report.seconds = time.perf_counter() - started
            report.not_run = report.results - report.reused - report.ran
            # Into an empty results file this run writes one current line per pair: nothing to compact or read
            fresh = index.lines == 0 and judge is None
            report.dropped = 0 if fresh else _compact(run_dir, configs, current)
            _record_invocation(run_dir, manifest, report, invocation)
    return report


def _plan_work(
    plan: RunPlan, methods: list[Task], configs: dict[str, str], index: ResultIndex, report: RunReport
) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """The (item id, method) pairs to judge now, and all the pairs of this run; counts into `report`."""
    todo: set[tuple[str, str]] = set()
    current: set[tuple[str, str]] = set()
    items_with_work = 0
    for item in plan.dataset.items():
        content = item.content_hash()
        pending = []
        for m in methods:
            if m.accepts(item) is not None:
                report.not_applicable[m.spec] = report.not_applicable.get(m.spec, 0) + 1
                continue
            report.results += 1
            current.add((item.key, m.spec))
            entry = index.get(item.key, m.spec)
            reusable = (
                entry is not None
                and entry.current(content, configs[m.spec])
                and (entry.complete or not plan.retry_incomplete)
            )
            if reusable:
                report.reused += 1
            else:
                pending.append((item.key, m.spec))
        if pending and (plan.limit is None or items_with_work < plan.limit):
            items_with_work += 1
            todo.update(pending)
    return todo, current


async def _judge(
    plan: RunPlan,
    methods: list[Task],
    configs: dict[str, str],
    model: ChatModel,
    todo: set[tuple[str, str]],
    append: Any,
    progress: RunProgress,
    report: RunReport,
) -> None:
    """Judge the pairs in `todo` with a bounded number of items in flight, appending each result as it ends."""
    work = (
        (rank, item, m) for rank, item in enumerate(plan.dataset.items()) for m in methods if (item.key, m.spec) in todo
    )

    async def worker() -> None:
        for rank, item, method in work:  # a shared generator: each worker takes the next pair
            started = time.perf_counter()
            with request_priority(rank):  # the calls of earlier items go first: they finish, then new ones start
                result = await method.evaluate(item, model)
            outcome = result.outcome()
            append(_line(item, method, configs[method.spec], outcome, result, time.perf_counter() - started, rank))
            report.ran += 1
            report.incomplete += not outcome.complete
            progress.advance(outcome, model.ledger.total())
            if plan.stop_after_failures and model.health.consecutive_failures >= plan.stop_after_failures:
                raise EndpointDown(_down_message(model, plan.stop_after_failures))

    in_flight = 1 if model.serves_one_at_a_time else max(plan.in_flight, 1)
    workers = [asyncio.ensure_future(worker()) for _ in range(in_flight)]
    try:
        await asyncio.gather(*workers)
    except EndpointDown as down:
        report.stopped = str(down)
    finally:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)


def _line(
    item: Item, method: Task, config: str, outcome: Outcome, result: Any, seconds: float, row: int
) -> dict[str, Any]:
    """One results line. `row` is the item's place in the dataset: lines are written as they finish, and a run read
    back puts its items in the dataset's order by it where the dataset cannot be read again (rows given in memory)."""
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
        "finished": _now(),
        "row": row,
    }


def _down_message(model: ChatModel, count: int) -> str:
    failure: Failure | None = model.health.last_failure
    endpoint = getattr(model, "base_url", None) or model.backend
    detail = f": {failure.message}" if failure is not None else ""
    return f"stopped early: {count} calls in a row to {endpoint} ({model.model_id}) failed{detail}"


def _check_same_configuration(
    run_dir: RunDir, manifest: Manifest | None, plan: RunPlan, methods: list[Task], model: ChatModel
) -> None:
    if manifest is None or plan.force:
        return
    differences = []
    before_data = manifest.dataset.path
    data = str(plan.dataset.path.resolve()) if plan.dataset.path else plan.dataset.name
    if before_data != data:
        differences.append(f"dataset {before_data} → {data}")
    before_model = manifest.model.fingerprint
    if before_model != model.fingerprint():
        differences.append(_model_difference(before_model, model.fingerprint()))
    before = manifest.configs()
    now = {m.spec: m.configuration_hash(model) for m in methods}
    if set(before) != set(now):
        differences.append(f"methods {', '.join(before) or '-'} → {', '.join(now)}")
    elif not differences:
        changed = [key for key in now if before[key] != now[key]]
        if changed:
            differences.append(f"configuration of {', '.join(changed)} (a prompt or method version changed)")
    if differences:
        raise RunError(
            f"{run_dir.target} holds results of another configuration ({'; '.join(differences)}). "
            "Give a new -o, or add --force to run again what differs (results that still match are kept)"
        )


def _manifest(before: Manifest | None, plan: RunPlan, methods: list[Task], model: ChatModel) -> Manifest:
    dataset = plan.dataset
    return Manifest(
        ragfacts=ragfacts.__version__,
        commit=_commit(),
        python=platform.python_version(),
        created=before.created if before is not None and before.created else _now(),
        updated=_now(),
        dataset=DatasetEntry(
            path=str(dataset.path.resolve()) if dataset.path else dataset.name,
            sha256=dataset.sha256,
            rows=dataset.rows,
            items=dataset.count,
            layout=dataset.plan.layout.name if dataset.plan else None,
            selection=dataset.selection,
            columns=dataset.plan.sources if dataset.plan else {},
        ),
        model=ModelEntry(spec=plan.model_spec or f"{model.backend}:{model.model_id}", fingerprint=model.fingerprint()),
        methods=[
            MethodEntry(
                key=m.spec,
                name=m.name,
                kind=m.kind,
                options=m.options.model_dump(mode="json"),
                config_hash=m.configuration_hash(model),
                **{k: v for k, v in m.configuration(model).items() if k in ("version", "prompts")},
            )
            for m in methods
        ],
        invocations=before.invocations if before is not None else [],
    )


def _start_invocation(run_dir: RunDir, manifest: Manifest) -> str:
    """Record this invocation as running before the first call; one still "running" from before was killed:
    it is marked interrupted, with the usage its calls left in the journal."""
    # Unique even for two runs of one process within a second (a notebook cell run twice): the journal's lines and
    # the manifest's entry are found by it.
    invocation = f"{_now()} pid {os.getpid()} {secrets.token_hex(3)}"
    for entry in manifest.invocations:
        if entry.status == "running":
            entry.status = "interrupted"
            entry.usage = Usage.sum(run_dir.journal_stages(entry.id).values())
    manifest.invocations.append(Invocation(id=invocation, started=_now(), status="running"))
    run_dir.save_manifest(manifest)
    return invocation


def _record_invocation(run_dir: RunDir, manifest: Manifest, report: RunReport, invocation: str) -> None:
    manifest.updated = _now()
    entry = next((e for e in manifest.invocations if e.id == invocation), None)
    if entry is None:
        entry = Invocation(id=invocation)
        manifest.invocations.append(entry)
    entry.status = "interrupted" if report.interrupted else "stopped" if report.stopped else "finished"
    entry.finished = manifest.updated
    entry.seconds = round(report.seconds, 1)
    entry.ran, entry.reused, entry.incomplete = report.ran, report.reused, report.incomplete
    entry.not_run, entry.stopped, entry.usage = report.not_run, report.stopped, report.usage
    run_dir.save_manifest(manifest)
    ledger = run_dir.load_ledger()
    report.ledger_warning = ledger.get("warning")
    run_dir.save_ledger(ledger)  # ledger.json: the journal summed, for people and tools


def _compact(run_dir: RunDir, configs: dict[str, str], current: set[tuple[str, str]]) -> int:
    """Keep one line per item and method of this run, of this configuration; drop superseded and stale lines."""
    index = run_dir.index()
    keep_lines = {
        entry.line
        for key, entry in index.entries.items()
        if key in current and configs.get(key[1]) == entry.config_hash
    }
    if len(keep_lines) == index.lines:
        return 0
    return run_dir.log.rewrite(lambda number, line: number in keep_lines)


def _difference(after: Usage, before: Usage) -> Usage:
    return Usage(**{name: getattr(after, name) - getattr(before, name) for name in Usage.model_fields})


def _model_name(fingerprint: dict[str, Any] | None) -> str:
    if not fingerprint:
        return "?"
    return f"{fingerprint.get('backend')}:{fingerprint.get('model')}"


def _model_difference(before: dict[str, Any] | None, now: dict[str, Any]) -> str:
    """What differs between two model fingerprints, e.g. "model openai:m → openai:n" or "model base_url a → b"."""
    if not before or _model_name(before) != _model_name(now):
        return f"model {_model_name(before)} → {_model_name(now)}"
    changed = [key for key in sorted({*before, *now}) if before.get(key) != now.get(key)]
    return f"model {_model_name(now)}: " + ", ".join(f"{key} {before.get(key)} → {now.get(key)}" for key in changed)


def _commit() -> str | None:
    """The git commit of the ragfacts source, when it runs from a checkout."""
    source = Path(ragfacts.__file__).resolve().parent
    try:
        found = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return found.stdout.strip() or None if found.returncode == 0 else None


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
