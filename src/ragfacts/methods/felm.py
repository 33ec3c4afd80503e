"""FELM's reference-augmented, segment-based evaluator (Chen et al., 2023) as a baseline.

The answer is split into sentences, numbered, and judged in ONE call that returns the numbers of the wrong
segments with a reason each (the best FELM setting, as Face4RAG used it: the reference is given as the
retrieved document). The answer is consistent iff no segment is wrong; the score is the share of segments
not flagged. The schema is built per answer, so a segment number that does not exist is refused and re-asked.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from ragfacts.items import Item
from ragfacts.methods.base import PrecisionMethod, method
from ragfacts.methods.bilingual import schema_doc, schema_text
from ragfacts.methods.claims import Claim, ClaimsCheck, strict_label
from ragfacts.methods.precision.results import CallRecord
from ragfacts.methods.prompting import ask, estimate
from ragfacts.models import ChatModel
from ragfacts.text import split_sentences
from ragfacts.usage import Usage

Lang = Literal["auto", "zh", "en"]
_REASON = schema_text("felm.reason")
_SEGMENT = schema_text("felm.segment")


class WrongSegments(BaseModel):
    __doc__ = schema_doc("felm.WrongSegments.doc")

    errors: list[Any]


@cache
def wrong_segments_schema(count: int) -> type[WrongSegments]:
    """The schema for an answer of `count` segments: each error names an existing segment number."""
    number: Any = Literal[tuple(range(1, count + 1))]  # a type made at run time: to mypy, any
    error = create_model(
        "SegmentError",
        __doc__=schema_doc("felm.error.doc"),
        segment=(number, Field(description=_SEGMENT)),
        reason=(str, Field(description=_REASON)),
    )
    description = schema_text("felm.description")
    return create_model("WrongSegments", __base__=WrongSegments, errors=(list[error], Field(description=description)))


class FELMOptions(BaseModel):
    """The prompt language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lang: Lang = Field("auto", description="prompt language; auto = detected from the answer")


@method("felm")
class FELM(PrecisionMethod[FELMOptions]):
    """FELM (reference-augmented): numbered segments, the wrong ones named in one call."""

    Options = FELMOptions
    result_type = ClaimsCheck
    description = "FELM, reference-augmented: numbered sentences judged in one call that names the wrong ones"
    prompts = ("felm_segments",)

    async def evaluate(self, item: Item, model: ChatModel) -> ClaimsCheck:
        lang = self.language(item)
        result = ClaimsCheck(method=self.name, id=item.id, lang=lang, model=model.model_id)
        segments = split_sentences(item.answer)
        numbered = "\n".join(f"{n}. {text}" for n, text in enumerate(segments, start=1))
        completion = await ask(
            model,
            "felm_segments",
            wrong_segments_schema(len(segments)),
            lang,
            question=item.question,
            reference=item.reference or "",
            segments=numbered,
        )
        result.calls = [CallRecord.of(completion)]
        if not completion.ok:
            result.claims = [Claim(text=text) for text in segments]
            result.label, result.reason = strict_label(result.claims)
            return result
        reasons: dict[int, str] = {}
        for error in completion.parsed.errors:
            reasons.setdefault(error.segment, error.reason)
        result.claims = [
            Claim(text=text, verdict="unsupported" if n in reasons else "supported", reason=reasons.get(n, ""))
            for n, text in enumerate(segments, start=1)
        ]
        result.label, result.reason = strict_label(result.claims)
        result.score = result.supported_share()
        return result

    def estimate(self, item: Item, model: ChatModel) -> Usage:
        """One call; about a quarter of the segments named, with a reason each."""
        segments = split_sentences(item.answer) or [item.answer]
        numbered = "\n".join(f"{n}. {text}" for n, text in enumerate(segments, start=1))
        reply = 10 + 25 * round(len(segments) / 4)
        return estimate(
            model,
            "felm_segments",
            wrong_segments_schema(len(segments)),
            self.language(item),
            reply,
            question=item.question,
            reference=item.reference or "",
            segments=numbered,
        )
