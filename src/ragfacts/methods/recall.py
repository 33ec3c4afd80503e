"""The recall side's shared shape: facts given or generated from the ground truth, then verified against the answer.

FaaF and the Prompt(T/F) baseline differ only in how they verify; both are `RecallMethod`s.

    result = await recall(model, question, ground_truth, answer)                  # FaaF, T/F/N
    result = await recall(model, None, None, answer, facts=[...], method="prompt-tf", parsing="corrected")
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, computed_field

from ragfacts.items import Item
from ragfacts.methods.base import Method, OptionsT, Outcome, create_method
from ragfacts.methods.facts import FactList, GeneratedFacts, generate_facts
from ragfacts.methods.prompting import estimate
from ragfacts.methods.verdicts import Verification
from ragfacts.methods.view import ResultView, UnitView, fact_verdict
from ragfacts.models import ChatModel
from ragfacts.text import approx_tokens, detect_lang
from ragfacts.usage import Usage

Lang = Literal["auto", "zh", "en"]


class RecallResult(BaseModel):
    """Factual recall of one answer: the facts (given or generated), their verification, the score."""

    question: str | None = None
    ground_truth: str | None = None
    answer: str
    facts: list[str]
    fact_generation: GeneratedFacts | None = None
    verification: Verification

    @computed_field
    @property
    def recall(self) -> float | None:
        """Facts judged present over all facts (unscored ones count as absent); None without facts."""
        return self.verification.recall

    @computed_field
    @property
    def usage(self) -> Usage:
        generation = self.fact_generation.completions if self.fact_generation is not None else []
        return Usage.sum([*(Usage.model_validate(c["usage"]) for c in generation), self.verification.usage])

    @property
    def ok(self) -> bool:
        generated_ok = self.fact_generation is None or self.fact_generation.ok
        return generated_ok and self.verification.ok

    def view(self) -> ResultView:
        """The recall in words, and each fact with its verdict, what the model said and the citation it gave."""
        v = self.verification
        units = [
            UnitView(
                text=verdict.fact,
                verdict=fact_verdict(verdict.verdict),
                probability=verdict.probability,
                explanation=verdict.failure or (verdict.unscored or ""),
                said=verdict.raw if verdict.raw is not None else verdict.unscored,
                citation=verdict.citation,
                citation_found=verdict.citation_match is not None if verdict.citation else None,
            )
            for verdict in v.verdicts
        ]
        failures = [f"{f.kind.value}: {f.message}" for f in v.failures]
        reason = None
        generation = self.fact_generation
        if generation is not None and generation.failure is not None:
            reason = f"fact generation failed ({generation.failure.kind.value}): {generation.failure.message}"
            failures.insert(0, reason)
        elif not units:
            reason = "no facts"
        headline = "– (no facts)"
        if v.recall is not None:
            headline = f"{v.n_true}/{v.n_facts} facts ({100 * v.recall:.0f}%)"
            unscored = v.n_failed + v.n_no_verdict
            if unscored:
                headline += f"; {unscored} unscored ({v.n_failed} failed calls, {v.n_no_verdict} without a verdict)"
            if v.citations_given:
                headline += f"; citations found in the answer: {v.citations_verified}/{v.citations_given}"
        return ResultView(
            kind="recall",
            score=self.recall,
            reason=reason,
            units=units,
            failures=failures,
            unit_name="fact",
            headline=headline,
        )

    def outcome(self) -> Outcome:
        """The common view: recall and its upper bound; a failed fact generation leaves it undecided."""
        failures = len(self.verification.failures)
        if self.fact_generation is not None and not self.fact_generation.ok:
            failures += 1
        return Outcome(
            kind="recall",
            score=self.recall,
            score_upper=self.verification.recall_upper,
            units=self.verification.n_facts,
            failures=failures,
            complete=failures == 0,  # no facts from a ground truth, with no failed call, is decided, not retried
            usage=self.usage,
        )


class RecallMethod(Method[OptionsT]):
    """A recall method: generates facts from the item's ground truth unless it has facts, then verifies them.

    Its options (`OptionsT`) have a `lang` option: "auto" or the prompt language.
    """

    kind = "recall"
    result_type = RecallResult

    def accepts(self, item: Item) -> str | None:
        if item.facts or (item.ground_truth and item.ground_truth.strip()):
            return None
        return "it has neither facts nor a ground truth to generate them from"

    def chosen_lang(self) -> str | None:
        """The prompt language the `lang` option names; None for "auto" (detected from the texts)."""
        chosen: str = getattr(self.options, "lang", "auto")  # read by name: `OptionsT` is any options model
        return None if chosen == "auto" else chosen

    @abstractmethod
    async def verify(self, model: ChatModel, facts: list[str], answer: str, lang: str | None) -> Verification:
        """Verify `facts` against `answer`."""

    @abstractmethod
    def estimate_verification(self, model: ChatModel, facts: list[str], answer: str, lang: str) -> Usage:
        """What verifying `facts` against `answer` should cost."""

    def estimate(self, item: Item, model: ChatModel) -> Usage:
        """Fact generation unless the item has facts (about one fact per 12 tokens of the ground truth), then
        the verification."""
        facts = list(item.facts or [])
        lang = self.chosen_lang() or detect_lang(f"{item.answer} {' '.join(facts)}")
        usages = []
        if not facts:
            truth = item.ground_truth or ""
            count = max(1, round(approx_tokens(truth) / 12))
            usages.append(
                estimate(
                    model, "generate_facts", FactList, lang, 5 + 15 * count, question=item.question, ground_truth=truth
                )
            )
            step = max(len(truth) // count, 1)
            facts = [truth[start : start + step] for start in range(0, step * count, step)]
        usages.append(self.estimate_verification(model, facts, item.answer, lang))
        return Usage.sum(usages)

    async def evaluate(self, item: Item, model: ChatModel) -> RecallResult:
        lang = self.chosen_lang()
        generation: GeneratedFacts | None = None
        facts = list(item.facts or [])
        if not facts:
            generation = await generate_facts(model, item.question, item.ground_truth or "", lang)
            facts = generation.facts
        verification = await self.verify(model, facts, item.answer, lang)
        return RecallResult(
            question=item.question,
            ground_truth=item.ground_truth,
            answer=item.answer,
            facts=facts,
            fact_generation=generation,
            verification=verification,
        )


async def recall(
    model: ChatModel,
    question: str | None,
    ground_truth: str | None,
    answer: str,
    *,
    facts: Sequence[str] | None = None,
    method: str = "faaf",
    **options: Any,
) -> RecallResult:
    """Return how many facts of `ground_truth` (or the given `facts`) `answer` recalls, by a recall method.

    `options` are the method's (FaaF: mode, citations, chunk_size, lang; prompt-tf: parsing, lang).
    A failed fact generation gives a result with no facts and its failure.
    """
    judge = create_method(method, **options)
    if not isinstance(judge, RecallMethod):
        raise ValueError(f"{method} is a {judge.kind} method, not a recall method")
    item = Item(question=question, ground_truth=ground_truth, answer=answer, facts=list(facts) if facts else None)
    reason = judge.accepts(item)
    if reason is not None:
        raise ValueError(f"recall needs facts or a ground truth: {reason}")
    return await judge.evaluate(item, model)
