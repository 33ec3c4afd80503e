"""The one runner: every method on every item of a dataset, into a run directory, resumable.

What to judge and what to reuse is planned in `runs.planning`, the same for this runner and the Ray engine: a
result is reused only when its item id, the item's content hash and the method's configuration hash (method,
version, options, prompt versions, model) all match, and it is complete; anything else runs again. A run directory
made with another model or other methods is refused unless `force`, which keeps what still matches and drops the
rest. Many items are in flight at once (bounded), each result is
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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ragfacts
from ragfacts.methods.base import Task
from ragfacts.models import ChatModel, request_priority
from ragfacts.runs.manifest import DatasetEntry, Invocation, Manifest, MethodEntry, ModelEntry
from ragfacts.runs.planning import RunPlan, check_configuration, endpoint_down, plan_work, prepare
from ragfacts.runs.progress import NoProgress, RunProgress
from ragfacts.runs.rundir import RunDir, now, result_line
from ragfacts.usage import Usage


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


# How the pairs of a run are judged: in this process (`_judge`), or by an engine elsewhere (`runs.ray_engine`),
# called with `_judge`'s arguments; it appends each line, counts into the report and advances the progress.
Judge = Callable[..., Awaitable[None]]


class EndpointDown(Exception):
    """The endpoint failed too many times in a row."""


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
        check_configuration(run_dir, manifest, plan, methods, model)
        if plan.repair:
            _, report.unreadable = run_dir.log.salvage()
        index = run_dir.index(repair=True)
        work = plan_work(plan, methods, configs, index)
        report.results, report.reused, report.not_applicable = work.results, work.reused, work.not_applicable
        todo, current = work.todo, work.current
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
            report.usage = model.ledger.total().since(usage_before)
            report.seconds = time.perf_counter() - started
            report.not_run = report.results - report.reused - report.ran
            # Into an empty results file this run writes one current line per pair: nothing to compact or read
            fresh = index.lines == 0 and judge is None
            report.dropped = 0 if fresh else _compact(run_dir, configs, current)
            _record_invocation(run_dir, manifest, report, invocation)
    return report


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
            seconds = time.perf_counter() - started
            append(result_line(item, method, configs[method.spec], outcome, result, seconds, rank))
            report.ran += 1
            report.incomplete += not outcome.complete
            progress.advance(outcome, model.ledger.total())
            down = endpoint_down(model, plan.stop_after_failures)
            if down is not None:
                raise EndpointDown(down)

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


def _manifest(before: Manifest | None, plan: RunPlan, methods: list[Task], model: ChatModel) -> Manifest:
    dataset = plan.dataset
    return Manifest(
        ragfacts=ragfacts.__version__,
        commit=_commit(),
        python=platform.python_version(),
        created=before.created if before is not None and before.created else now(),
        updated=now(),
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
    invocation = f"{now()} pid {os.getpid()} {secrets.token_hex(3)}"
    for entry in manifest.invocations:
        if entry.status == "running":
            entry.status = "interrupted"
            entry.usage = Usage.sum(run_dir.journal_stages(entry.id).values())
    manifest.invocations.append(Invocation(id=invocation, started=now(), status="running"))
    run_dir.save_manifest(manifest)
    return invocation


def _record_invocation(run_dir: RunDir, manifest: Manifest, report: RunReport, invocation: str) -> None:
    manifest.updated = now()
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
