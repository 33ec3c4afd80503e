"""The single holistic judgement: one structured call asks whether every claim of the answer is supported.

The baseline every user tries first, and on small models often the most reliable precision judge (see
benchmarks/precision_small_model.py). Registered as the method "holistic"; with chain of thought the model
lists the unsupported claims before its verdict.
"""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from ragfacts.items import Item
from ragfacts.methods.base import Outcome, PrecisionMethod, method
from ragfacts.methods.precision.costs import holistic as holistic_cost
from ragfacts.methods.precision.results import AnswerLabel, HolisticResult
from ragfacts.methods.precision.strategies import judge_whole_answer
from ragfacts.methods.view import ResultView, UnitView
from ragfacts.models import ChatModel
from ragfacts.usage import Usage


class HolisticOptions(BaseModel):
    """Whether the model reasons first, and in which language it is asked."""

    # Fields are taken by name too (each name is also the first of its alias choices, so this accepts nothing
    # more): it lets the pydantic mypy plugin type the constructor's keywords despite the aliases.
    model_config = ConfigDict(extra="forbid", frozen=True, validate_by_name=True)

    chain_of_thought: bool = Field(
        True,
        validation_alias=AliasChoices("chain_of_thought", "cot"),
        description="list the unsupported claims before the verdict; False = the verdict alone",
    )
    lang: Literal["auto", "zh", "en"] = Field("auto", description="prompt language; auto = detected from the answer")


class HolisticCheck(BaseModel):
    """The answer's label from one judgement of the whole answer, with the problems the model named."""

    id: str | None = None
    label: AnswerLabel
    lang: str
    model: str = ""
    judgement: HolisticResult

    @property
    def faithfulness(self) -> float | None:
        return {AnswerLabel.CONSISTENT: 1.0, AnswerLabel.INCONSISTENT: 0.0}.get(self.label)

    def view(self) -> ResultView:
        """The label, and the problems the model named as the answer's unsupported units."""
        call = self.judgement.call
        return ResultView(
            kind="precision",
            label=self.label.value,
            score=self.faithfulness,
            probability=self.judgement.probability,
            reason="; ".join(self.judgement.problems) or self.judgement.explanation or None,
            units=[UnitView(text=problem, verdict="unsupported") for problem in self.judgement.problems],
            unit_name="problem",
            headline="one judgement of the whole answer",
            failures=[f"{call.stage}: {call.failure.kind.value}: {call.failure.message}"] if call.failure else [],
        )

    def outcome(self) -> Outcome:
        failed = self.judgement.failed
        return Outcome(
            kind="precision",
            label=self.label.value,
            score=self.faithfulness,
            score_upper=self.faithfulness,
            units=1,
            failures=int(failed),
            complete=not failed,
            usage=Usage.sum([self.judgement.call.usage]),
        )


@method("holistic")
class Holistic(PrecisionMethod[HolisticOptions]):
    """Precision by one structured judgement of the whole answer."""

    Options = HolisticOptions
    result_type = HolisticCheck
    description = "one structured judgement of the whole answer: is every claim supported by the reference?"
    prompts = ("holistic", "holistic_direct")

    async def evaluate(self, item: Item, model: ChatModel) -> HolisticCheck:
        lang = self.language(item)
        judgement = await judge_whole_answer(model, item, self.options.chain_of_thought, lang)
        labels = {"consistent": AnswerLabel.CONSISTENT, "inconsistent": AnswerLabel.INCONSISTENT}
        label = labels.get(judgement.verdict or "", AnswerLabel.UNSCORED)
        return HolisticCheck(id=item.id, label=label, lang=lang, model=model.model_id, judgement=judgement)

    def estimate(self, item: Item, model: ChatModel) -> Usage:
        return holistic_cost(model, item, self.options.chain_of_thought, self.language(item))
