"""RefChecker (Hu et al., 2024) as a baseline: claim triplets, each checked against the reference.

Call 1 extracts the answer's claims as (subject, predicate, object) triplets; then each triplet gets its own
call: Entailment, Neutral or Contradiction. Aggregation as in RefChecker: `strict` (default) — consistent iff
every triplet is entailed; `soft` — the entailed share, consistent iff it reaches `threshold`; `major` —
consistent iff Entailment is the most common verdict. The score is the entailed share.
Calls per answer: 1 + triplets.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ragfacts.items import Item
from ragfacts.methods.base import PrecisionMethod, method
from ragfacts.methods.bilingual import schema_doc, schema_text
from ragfacts.methods.claims import Claim, ClaimsCheck, ClaimVerdict, share_label, strict_label
from ragfacts.methods.precision.results import AnswerLabel, CallRecord
from ragfacts.methods.prompting import ask, estimate
from ragfacts.models import ChatModel
from ragfacts.text import approx_tokens
from ragfacts.usage import Usage

Lang = Literal["auto", "zh", "en"]
_VERDICTS: dict[str, ClaimVerdict] = {
    "Entailment": "supported",
    "Neutral": "unsupported",
    "Contradiction": "contradicted",
}


class Triplet(BaseModel):
    __doc__ = schema_doc("refchecker.Triplet.doc")

    subject: str = Field(description=schema_text("refchecker.Triplet.subject"))
    predicate: str = Field(description=schema_text("refchecker.Triplet.predicate"))
    object: str = Field(description=schema_text("refchecker.Triplet.object"))

    def text(self) -> str:
        return f"({self.subject}, {self.predicate}, {self.object})"


class Triplets(BaseModel):
    __doc__ = schema_doc("refchecker.Triplets.doc")

    triplets: list[Triplet] = Field(description=schema_text("refchecker.Triplets.triplets"))


class TripletCheck(BaseModel):
    __doc__ = schema_doc("refchecker.TripletCheck.doc")

    verdict: Literal["Entailment", "Neutral", "Contradiction"] = Field(
        description=schema_text("refchecker.TripletCheck.verdict")
    )


class RefCheckerOptions(BaseModel):
    """How triplet verdicts make the answer's label, and the prompt language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    aggregation: Literal["strict", "soft", "major"] = Field(
        "strict",
        description="strict: consistent iff every triplet is entailed; soft: iff the entailed share reaches "
        "threshold; major: iff Entailment is the most common verdict",
    )
    threshold: float = Field(0.5, ge=0.0, le=1.0, description="soft aggregation: the entailed share needed")
    lang: Lang = Field("auto", description="prompt language; auto = detected from the answer")


@method("refchecker")
class RefChecker(PrecisionMethod[RefCheckerOptions]):
    """RefChecker: claim triplets, each checked as Entailment / Neutral / Contradiction."""

    Options = RefCheckerOptions
    result_type = ClaimsCheck
    description = "RefChecker: (subject, predicate, object) triplets, each Entailment / Neutral / Contradiction"
    prompts = ("refchecker_triplets", "refchecker_check")

    async def evaluate(self, item: Item, model: ChatModel) -> ClaimsCheck:
        lang = self.language(item)
        result = ClaimsCheck(method=self.name, id=item.id, lang=lang, model=model.model_id)
        extracted = await ask(model, "refchecker_triplets", Triplets, lang, question=item.question, answer=item.answer)
        result.calls = [CallRecord.of(extracted)]
        if not extracted.ok:
            result.reason = "extracting claim triplets failed"
            return result
        claims = [t.text() for t in extracted.parsed.triplets]
        checks = await asyncio.gather(
            *(
                ask(
                    model,
                    "refchecker_check",
                    TripletCheck,
                    lang,
                    question=item.question,
                    reference=item.reference or "",
                    claim=claim,
                )
                for claim in claims
            )
        )
        result.calls += [CallRecord.of(c) for c in checks]
        result.claims = [
            Claim(text=claim, verdict=_VERDICTS[c.parsed.verdict] if c.ok else None)
            for claim, c in zip(claims, checks, strict=True)
        ]
        result.label, result.reason = self._aggregate(result.claims)
        result.score = result.supported_share()
        return result

    def estimate(self, item: Item, model: ChatModel) -> Usage:
        """One extraction, about one triplet per 10 tokens of the answer, each checked alone."""
        lang, size = self.language(item), approx_tokens(item.answer)
        triplets = max(1, round(size / 10))
        usages = [
            estimate(
                model,
                "refchecker_triplets",
                Triplets,
                lang,
                5 + 15 * triplets,
                question=item.question,
                answer=item.answer,
            )
        ]
        claim = "(" + ", ".join([item.answer[:12]] * 3) + ")"
        usages += [
            estimate(
                model,
                "refchecker_check",
                TripletCheck,
                lang,
                8,
                question=item.question,
                reference=item.reference or "",
                claim=claim,
            )
        ] * triplets
        return Usage.sum(usages)

    def _aggregate(self, claims: list[Claim]) -> tuple[AnswerLabel, str | None]:
        if self.options.aggregation == "strict":
            return strict_label(claims)
        if self.options.aggregation == "soft":
            return share_label(claims, self.options.threshold)
        if not claims:
            return strict_label(claims)
        if any(c.verdict is None for c in claims):
            return AnswerLabel.UNSCORED, "unscored triplets (failed calls) could change the majority"
        counts = Counter(c.verdict for c in claims)
        entailed = counts["supported"]
        majority = all(entailed > n for verdict, n in counts.items() if verdict != "supported")
        label = AnswerLabel.CONSISTENT if majority else AnswerLabel.INCONSISTENT
        return label, f"majority of {len(claims)} triplets: {dict(counts)}"
