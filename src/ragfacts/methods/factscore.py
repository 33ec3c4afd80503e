"""FActScore (Min et al., 2023) as a reference-based baseline: atomic facts, each verified alone.

The answer is split into sentences; each sentence is broken into atomic facts (one call per sentence), and
each fact is judged True or False against the reference in a call of its own. The FActScore is the share of
supported facts; the answer is consistent iff every fact is supported (Face4RAG's use of it, §5.1).
Calls per answer: sentences + facts.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ragfacts.items import Item
from ragfacts.methods.base import PrecisionMethod, method
from ragfacts.methods.bilingual import schema_doc, schema_text
from ragfacts.methods.claims import Claim, ClaimsCheck, strict_label
from ragfacts.methods.precision.results import CallRecord
from ragfacts.methods.prompting import ask, estimate
from ragfacts.models import ChatModel
from ragfacts.text import approx_tokens, split_sentences
from ragfacts.usage import Usage

Lang = Literal["auto", "zh", "en"]


class AtomicFacts(BaseModel):
    __doc__ = schema_doc("factscore.AtomicFacts.doc")

    facts: list[str] = Field(description=schema_text("factscore.AtomicFacts.facts"))


class FactTruth(BaseModel):
    __doc__ = schema_doc("factscore.FactTruth.doc")

    verdict: Literal["True", "False"] = Field(description=schema_text("factscore.FactTruth.verdict"))


class FActScoreOptions(BaseModel):
    """The prompt language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lang: Lang = Field("auto", description="prompt language; auto = detected from the answer")


@method("factscore")
class FActScore(PrecisionMethod[FActScoreOptions]):
    """FActScore: atomic facts from the answer, each verified alone against the reference."""

    Options = FActScoreOptions
    result_type = ClaimsCheck
    description = "FActScore: atomic facts from each sentence, each verified alone; consistent iff all supported"
    prompts = ("factscore_atomic_facts", "factscore_verify")

    async def evaluate(self, item: Item, model: ChatModel) -> ClaimsCheck:
        lang = self.language(item)
        result = ClaimsCheck(method=self.name, id=item.id, lang=lang, model=model.model_id)
        sentences = split_sentences(item.answer)
        extractions = await asyncio.gather(
            *(
                ask(model, "factscore_atomic_facts", AtomicFacts, lang, question=None, answer=item.answer, sentence=s)
                for s in sentences
            )
        )
        result.calls = [CallRecord.of(c) for c in extractions]
        if any(not c.ok for c in extractions):
            result.reason = "breaking a sentence into atomic facts failed"
            return result
        facts = [fact.strip() for c in extractions for fact in c.parsed.facts if fact.strip()]
        verdicts = await asyncio.gather(
            *(
                ask(
                    model,
                    "factscore_verify",
                    FactTruth,
                    lang,
                    question=item.question,
                    reference=item.reference or "",
                    fact=f,
                )
                for f in facts
            )
        )
        result.calls += [CallRecord.of(c) for c in verdicts]
        result.claims = [
            Claim(
                text=fact, verdict=None if not c.ok else ("supported" if c.parsed.verdict == "True" else "unsupported")
            )
            for fact, c in zip(facts, verdicts, strict=True)
        ]
        result.label, result.reason = strict_label(result.claims)
        result.score = result.supported_share()
        return result

    def estimate(self, item: Item, model: ChatModel) -> Usage:
        """One extraction per sentence; about one fact per 8 tokens of a sentence, each verified alone."""
        lang, usages = self.language(item), []
        for sentence in split_sentences(item.answer) or [item.answer]:
            size = approx_tokens(sentence)
            usages.append(
                estimate(
                    model,
                    "factscore_atomic_facts",
                    AtomicFacts,
                    lang,
                    10 + size * 4 // 3,
                    question=None,
                    answer=item.answer,
                    sentence=sentence,
                )
            )
            facts = max(1, round(size / 8))
            fact = sentence[: max(len(sentence) // facts, 1)]
            usages += [
                estimate(
                    model,
                    "factscore_verify",
                    FactTruth,
                    lang,
                    6,
                    question=item.question,
                    reference=item.reference or "",
                    fact=fact,
                )
            ] * facts
        return Usage.sum(usages)
