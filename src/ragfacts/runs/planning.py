"""What a run will do before anything is judged, the same for every engine: which methods run on which model,
which (item, method) pairs to judge and which to reuse, whether the run directory was made the same way, and
when the endpoint counts as down.

The runner (`runs.runner.run`, judging in this process) and the Ray engine (`runs.ray_engine`, judging on worker
actors) both plan here, so a run directory made by one is resumed by the other: a result is reused only when its
item id, the item's content hash and the method's configuration hash (method, version, options, prompt versions,
model) all match, and it is complete (or `retry_incomplete` is off).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ragfacts.datasets.dataset import Dataset
from ragfacts.methods.base import Task
from ragfacts.models import ChatModel, ConfigurationError, Failure
from ragfacts.runs.manifest import Manifest
from ragfacts.runs.rundir import ResultIndex, RunDir, RunError

T = TypeVar("T", bound=Task)
Pair = tuple[str, str]  # (item key, method spec): what one results line answers


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
class Work:
    """The pairs of one run: those to judge now and all those that apply, with what the run's report counts."""

    todo: set[Pair] = field(default_factory=set)
    current: set[Pair] = field(default_factory=set)  # every pair of this run; compaction keeps these only
    results: int = 0  # pairs that apply
    reused: int = 0  # of those, current and kept
    not_applicable: dict[str, int] = field(default_factory=dict)  # method -> items it cannot judge


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


def plan_work(plan: RunPlan, methods: Sequence[Task], configs: dict[str, str], index: ResultIndex) -> Work:
    """The pairs to judge now (at most `plan.limit` items with work left) and all the pairs of this run, given the
    results already in the run directory (`index`) and each method's configuration hash (`configs`)."""
    work = Work()
    items_with_work = 0
    for item in plan.dataset.items():
        content = item.content_hash()
        pending = []
        for m in methods:
            if m.accepts(item) is not None:
                work.not_applicable[m.spec] = work.not_applicable.get(m.spec, 0) + 1
                continue
            work.results += 1
            work.current.add((item.key, m.spec))
            entry = index.get(item.key, m.spec)
            reusable = (
                entry is not None
                and entry.current(content, configs[m.spec])
                and (entry.complete or not plan.retry_incomplete)
            )
            if reusable:
                work.reused += 1
            else:
                pending.append((item.key, m.spec))
        if pending and (plan.limit is None or items_with_work < plan.limit):
            items_with_work += 1
            work.todo.update(pending)
    return work


def check_configuration(
    run_dir: RunDir, manifest: Manifest | None, plan: RunPlan, methods: Sequence[Task], model: ChatModel
) -> None:
    """Nothing when `run_dir` is new, was made from the same data, model and method configurations, or the plan
    forces; else raises RunError saying what differs and how to go on."""
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


def endpoint_down(model: ChatModel, stop_after_failures: int) -> str | None:
    """Why the run stops now: `stop_after_failures` calls in a row to the model's endpoint failed (0: never);
    else None."""
    if not stop_after_failures or model.health.consecutive_failures < stop_after_failures:
        return None
    failure: Failure | None = model.health.last_failure
    endpoint = getattr(model, "base_url", None) or model.backend
    detail = f": {failure.message}" if failure is not None else ""
    return f"stopped early: {stop_after_failures} calls in a row to {endpoint} ({model.model_id}) failed{detail}"


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
