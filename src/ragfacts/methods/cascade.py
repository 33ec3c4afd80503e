"""A cascade: a cheap judge decides what it is sure of; the answers it leaves uncertain go to a stronger one.

    ragfacts check data.jsonl -o run --uncertain 0.3,0.7 --escalate-to openai:gpt-4o \\
        --escalate-method lface4rag:strategy=paper

The first judge runs on every answer; an answer it labels "uncertain" (its probability in the abstain band) is
judged again by the second judge on the second model, whose label decides. Both results are kept, with their costs
apart: the second model's calls are recorded in the run's ledger under stages named after it ("gpt-4o › fact_
consistency"), so the ledger says what each model cost. A cascade is one method of the run: its configuration is
both judges' and both models', so a result is reused only if neither changed, and a run resumes like any other.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from ragfacts.items import Item
from ragfacts.methods.base import Method, MethodResult, Outcome
from ragfacts.methods.view import ResultView, outcome_view, precision_view, unregistered_result
from ragfacts.models import ChatModel
from ragfacts.usage import Usage


class CascadeOptions(BaseModel):
    """A cascade has no options of its own: its judges have theirs."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@unregistered_result
class CascadeResult(BaseModel):
    """The first judge's result and, where it was uncertain, the second's; the second decides."""

    first: dict[str, Any]
    first_outcome: Outcome
    second: dict[str, Any] | None = None
    second_outcome: Outcome | None = None
    second_model: str

    @property
    def escalated(self) -> bool:
        return self.second_outcome is not None

    def view(self) -> ResultView:
        """The deciding judge's view, saying which judge decided; the first judge's with it where it was escalated."""
        first = precision_view(self.first) or outcome_view(self.first_outcome)
        if self.second is None:
            return first.model_copy(update={"decided_by": "first judge"})
        assert self.second_outcome is not None
        second = precision_view(self.second) or outcome_view(self.second_outcome)
        return second.model_copy(update={"decided_by": f"escalated to {self.second_model}", "first": first})

    def outcome(self) -> Outcome:
        first, second = self.first_outcome, self.second_outcome
        if second is None:
            return first
        return Outcome(
            kind="precision",
            label=second.label,
            score=second.score,
            score_upper=second.score_upper,
            units=second.units,
            failures=first.failures + second.failures,
            complete=first.complete and second.complete,
            usage=Usage.sum([first.usage, second.usage]),
        )


class Cascade(Method[CascadeOptions]):
    """`first` on the run's model; its uncertain answers judged again by `second` on `second_model`."""

    name = "cascade"  # not registered: a cascade is built from two judges and a model, not from a spec
    kind = "precision"
    Options = CascadeOptions
    description = "the first judge's uncertain answers judged again by a second judge on a second model"
    result_type: ClassVar[type[BaseModel] | None] = CascadeResult

    def __init__(self, first: Method[Any], second: Method[Any], second_model: ChatModel) -> None:
        super().__init__(CascadeOptions(), spec=f"{first.spec} » {second.spec} @ {second_model.model_id}")
        self.first, self.second, self.second_model = first, second, second_model

    def resolved(self, model: ChatModel) -> Cascade:
        resolved = Cascade(self.first.resolved(model), self.second.resolved(self.second_model), self.second_model)
        resolved._spec = self.spec
        return resolved

    def configuration(self, model: ChatModel) -> dict[str, Any]:
        return {
            "method": "cascade",
            "version": self.version,
            "first": self.first.configuration(model),
            "second": self.second.configuration(self.second_model),
        }

    def accepts(self, item: Item) -> str | None:
        return self.first.accepts(item) or self.second.accepts(item)

    def uses_label_scores(self, model: ChatModel) -> bool:
        return self.first.uses_label_scores(model)

    def estimate(self, item: Item, model: ChatModel) -> Usage:
        """At most both judges' cost: which answers are escalated is known only once the first has judged."""
        return Usage.sum([self.first.estimate(item, model), self.second.estimate(item, self.second_model)])

    async def evaluate(self, item: Item, model: ChatModel) -> MethodResult:
        first = await self.first.evaluate(item, model)
        result = CascadeResult(
            first=first.model_dump(mode="json"), first_outcome=first.outcome(), second_model=self.second_model.model_id
        )
        if result.first_outcome.label == "uncertain":
            second = await self.second.evaluate(item, self.second_model)
            result.second, result.second_outcome = second.model_dump(mode="json"), second.outcome()
        return result
