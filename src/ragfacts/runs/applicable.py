"""What a run can judge, checked before any call: every item by some judge, and every judge on some item."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from ragfacts.datasets.layouts import map_hint
from ragfacts.datasets.reader import DatasetError

if TYPE_CHECKING:
    from ragfacts.datasets.dataset import Dataset
    from ragfacts.methods.base import Task
    from ragfacts.runs.planning import RunPlan


def check_applicable(plan: RunPlan, *, strict: bool, every_judge: bool = True) -> None:
    """Raise DatasetError for an item no method can judge, (strict) one that any method cannot judge, or (every_judge)
    a method that can judge none of the items: each before any call, naming the --map line that would read the file.
    """
    judged = {m.spec: 0 for m in plan.methods}
    why_not: dict[str, str] = {}
    count = 0
    for item in plan.dataset.items():
        count += 1
        refused = {m.spec: reason for m in plan.methods if (reason := m.accepts(item)) is not None}
        if refused and (strict or len(refused) == len(plan.methods)):
            reasons = "; ".join(f"{spec}: {reason}" for spec, reason in refused.items())
            kinds = [m.kind for m in plan.methods if m.spec in refused]
            raise DatasetError(
                f"{plan.dataset.name}: item {item.id!r} cannot be judged ({reasons}). {_read_as(plan, kinds)}"
            )
        for m in plan.methods:
            if m.spec in refused:
                why_not.setdefault(m.spec, refused[m.spec])
            else:
                judged[m.spec] += 1
    idle = [m for m in plan.methods if judged[m.spec] == 0]
    if every_judge and count and idle:
        names = ", ".join(f"{m.spec} ({why_not[m.spec]})" for m in idle)
        kinds = [m.kind for m in idle]
        raise DatasetError(
            f"{plan.dataset.name}: {names} can judge none of the {count} items. {_read_as(plan, kinds)}; or leave "
            f"{' and '.join(kinds)} out of the run"
        )


def drop_idle(plan: RunPlan, optional: Collection[str]) -> list[Task]:
    """Take out of `plan` the methods whose spec is in `optional` (those the user did not name: a command's default
    recall judge, say) that can judge none of its items; return them, for the caller to say so. A method the user
    named stays, and `check_applicable` refuses it with the --map line that would feed it; so does a plan of which
    no method would be left."""
    if not optional:
        return []
    idle = [m for m in plan.methods if m.spec in optional]
    for item in plan.dataset.items():
        idle = [m for m in idle if m.accepts(item) is not None]
        if not idle:
            return []
    if len(idle) == len(plan.methods):
        return []  # nothing would be left to judge: `check_applicable` says what the rows lack
    plan.methods = [m for m in plan.methods if m not in idle]
    return idle


def skipped_line(dataset: Dataset, method: Task, *, python: bool = False) -> str:
    """One line for a default judge left out: what the rows lack, and how to read it from the file (the --map line,
    or with `python` the `mapping=` argument, guessed from the columns not read)."""
    field = "reference" if method.kind == "precision" else "ground_truth"
    needs = "a reference (the retrieved context)" if method.kind == "precision" else "a ground_truth or facts"
    hint = map_hint(dataset.plan, dataset.columns, [field])
    how = f"mapping={{'{field}': '{hint.partition('=')[2]}'}}" if python else hint
    return (
        f"{method.kind} skipped: none of the {dataset.count} rows has {needs}; to judge {method.kind} too, add that "
        f"column (or read yours with {how}) and run again"
    )


def _read_as(plan: RunPlan, kinds: Sequence[str]) -> str:
    """How the file is read, the columns not read, and the --map line that would read what the judges need."""
    dataset = plan.dataset
    needed = [field for kind, field in (("precision", "reference"), ("recall", "ground_truth")) if kind in kinds]
    unread = [c for c in dataset.columns if dataset.plan is None or c not in dataset.plan.sources.values()]
    hint = map_hint(dataset.plan, dataset.columns, needed) if needed else "--map field=column"
    return (
        f"The file is read as: {dataset.describe()}; columns not read: {', '.join(unread) or 'none'}. "
        f"Read the missing fields with: {hint}"
    )
