"""Recall for small models: P(True) of each fact against the answer, from first-token probabilities.

Each fact is one forward pass (no generation) of a short prompt that puts the answer first, so consecutive
facts of one answer share its prefix, which the local backend keeps in its KV cache. A fact counts as
present iff P(True) >= `threshold`; the probability is kept with the verdict. Registered as "fact-scores".
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, ConfigDict, Field

from ragfacts.methods.base import method
from ragfacts.methods.prompting import estimate
from ragfacts.methods.recall import Lang, RecallMethod
from ragfacts.methods.verdicts import FactVerdict, Verification
from ragfacts.models import ChatModel, Completion, Message
from ragfacts.prompts import load_prompt
from ragfacts.text import delimit, detect_lang
from ragfacts.usage import Usage

PROMPT = "fact_score"
LABELS = {"en": ("True", "False"), "zh": ("是", "否")}


class FactScoresOptions(BaseModel):
    """When a fact counts as present, and the prompt language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    threshold: float = Field(0.5, ge=0.0, le=1.0, description="a fact is present iff P(True) >= threshold")
    lang: Lang = Field("auto", description="prompt language; auto = detected from the answer and the facts")


@method("fact-scores")
class FactScores(RecallMethod[FactScoresOptions]):
    """Recall by P(True) per fact: one forward pass each, the answer first so facts share its prefix."""

    Options = FactScoresOptions
    description = "P(True) of each fact against the answer, one forward pass each (for small models)"
    prompts = ("generate_facts", PROMPT)

    def uses_label_scores(self, model: ChatModel) -> bool:
        return True

    async def verify(self, model: ChatModel, facts: list[str], answer: str, lang: str | None) -> Verification:
        lang = lang or detect_lang(f"{answer} {' '.join(facts)}")
        prompt = load_prompt(PROMPT, lang)
        labels = list(LABELS[lang])
        completions = await asyncio.gather(
            *(
                model.score_labels(
                    [
                        Message(
                            role="user",
                            content=prompt.render(passage=delimit("passage", answer), claim=delimit("claim", fact)),
                        )
                    ],
                    labels,
                    stage=PROMPT,
                    prompt_version=prompt.id,
                )
                for fact in facts
            )
        )
        result = Verification(method=self.name, lang=lang, config={"threshold": self.options.threshold})
        for index, (fact, completion) in enumerate(zip(facts, completions, strict=True)):
            result.completions.append(completion.record())
            result.verdicts.append(self._verdict(index, fact, completion, labels[0]))
            if completion.failure is not None:
                result.failures.append(completion.failure)
        return result

    def _verdict(self, index: int, fact: str, completion: Completion, true_label: str) -> FactVerdict:
        if not completion.ok:
            message = completion.failure.message if completion.failure else "no reply"
            return FactVerdict(index=index, fact=fact, unscored="failed", failure=message)
        probability = completion.parsed.probabilities[true_label]
        return FactVerdict(
            index=index,
            fact=fact,
            verdict=probability >= self.options.threshold,
            probability=probability,
            raw=f"P(True) = {probability:.2f}",
        )

    def estimate_verification(self, model: ChatModel, facts: list[str], answer: str, lang: str) -> Usage:
        """One forward pass per fact, nothing generated."""
        return Usage.sum(estimate(model, PROMPT, None, lang, 1, question=None, passage=answer, claim=f) for f in facts)
