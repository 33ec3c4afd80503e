"""What a run should cost before anything is spent: each method's calls and tokens over the items it judges.

Every method estimates one item from its call pattern and the item's texts (`Method.estimate`): prompts are
rendered exactly as they would be sent and their tokens estimated from their characters (`approx_tokens`);
completions from the stage's schema and the text's size. Results already in the run directory are not
subtracted: the estimate is for judging the whole dataset.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragfacts.models import ChatModel
from ragfacts.runs.planning import RunPlan
from ragfacts.usage import Usage


@dataclass(frozen=True)
class CostEstimate:
    """One method's expected cost over a dataset."""

    method: str
    items: int
    usage: Usage


def estimate_run(plan: RunPlan, model: ChatModel) -> list[CostEstimate]:
    """The expected cost of every method of `plan` over the items it can judge."""
    methods = [m.resolved(model) for m in plan.methods]
    usages: dict[str, list[Usage]] = {m.spec: [] for m in methods}
    for item in plan.dataset.items():
        for method in methods:
            if method.accepts(item) is None:
                usages[method.spec].append(method.estimate(item, model))
    return [CostEstimate(spec, len(found), Usage.sum(found)) for spec, found in usages.items()]
