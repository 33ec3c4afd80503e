"""What a run can judge, checked before any call: every item by some judge, and every judge on some item."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragfacts.datasets.layouts import map_hint
from ragfacts.datasets.reader import DatasetError

if TYPE_CHECKING:
    from ragfacts.bench.runner import RunPlan


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
