"""RAGAS faithfulness (Es et al., 2023) as a baseline: statements from the answer, all judged in one call.

Call 1 breaks every sentence of the answer into statements; call 2 judges all statements against the
reference at once, each with a reason and a verdict (1 faithful, 0 not). The faithfulness score is the share
of faithful statements (kept as the score); the answer is consistent iff it reaches `threshold` (1.0: every
statement faithful). Calls per answer: 2.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ragfacts.items import Item
from ragfacts.methods.base import PrecisionMethod, method
from ragfacts.methods.bilingual import schema_doc, schema_text
from ragfacts.methods.claims import Claim, ClaimsCheck, share_label
from ragfacts.methods.precision.results import CallRecord
from ragfacts.methods.prompting import ask, estimate
from ragfacts.models import ChatModel
from ragfacts.text import approx_tokens, split_sentences
from ragfacts.usage import Usage

Lang = Literal["auto", "zh", "en"]


class Statements(BaseModel):
    __doc__ = schema_doc("ragas.Statements.doc")

    statements: list[str] = Field(description=schema_text("ragas.Statements.statements"))


class StatementVerdict(BaseModel):
    __doc__ = schema_doc("ragas.StatementVerdict.doc")

    statement: str = Field(description=schema_text("ragas.StatementVerdict.statement"))
    reason: str = Field(description=schema_text("ragas.StatementVerdict.reason"))
    verdict: Literal[0, 1] = Field(description=schema_text("ragas.StatementVerdict.verdict"))


class Faithfulness(BaseModel):
    __doc__ = schema_doc("ragas.Faithfulness.doc")

    verdicts: list[StatementVerdict] = Field(description=schema_text("ragas.Faithfulness.verdicts"))


class RagasOptions(BaseModel):
    """When the faithfulness score counts as consistent, and the prompt language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    threshold: float = Field(
        1.0, ge=0.0, le=1.0, description="consistent iff the share of faithful statements reaches this"
    )
    lang: Lang = Field("auto", description="prompt language; auto = detected from the answer")


@method("ragas")
class Ragas(PrecisionMethod[RagasOptions]):
    """RAGAS faithfulness: statements from the answer, all judged in one call with verdict and reason."""

    Options = RagasOptions
    result_type = ClaimsCheck
    description = "RAGAS faithfulness: statements from the answer, judged in one call; the faithful share kept"
    prompts = ("ragas_statements", "ragas_nli")

    async def evaluate(self, item: Item, model: ChatModel) -> ClaimsCheck:
        lang = self.language(item)
        result = ClaimsCheck(method=self.name, id=item.id, lang=lang, model=model.model_id)
        extracted = await ask(model, "ragas_statements", Statements, lang, question=item.question, answer=item.answer)
        result.calls = [CallRecord.of(extracted)]
        if not extracted.ok:
            result.reason = "breaking the answer into statements failed"
            return result
        statements = [s.strip() for s in extracted.parsed.statements if s.strip()]
        if not statements:
            result.label, result.reason = share_label([], self.options.threshold)
            return result
        numbered = "\n".join(f"{n}. {text}" for n, text in enumerate(statements, start=1))
        judged = await ask(
            model,
            "ragas_nli",
            Faithfulness,
            lang,
            question=item.question,
            reference=item.reference or "",
            statements=numbered,
        )
        result.calls.append(CallRecord.of(judged))
        verdicts = judged.parsed.verdicts if judged.ok else []
        result.claims = [Claim(text=text) for text in statements]
        if judged.ok and len(verdicts) != len(statements):
            result.reason = f"{len(verdicts)} verdicts for {len(statements)} statements; read in order"
        for claim, verdict in zip(result.claims, verdicts, strict=False):
            claim.verdict = "supported" if verdict.verdict == 1 else "unsupported"
            claim.reason = verdict.reason
        label, reason = share_label(result.claims, self.options.threshold)
        result.label, result.reason = label, result.reason or reason
        result.score = result.supported_share()
        return result

    def estimate(self, item: Item, model: ChatModel) -> Usage:
        """Two calls; about 1.5 statements per sentence, each judged with a short reason."""
        lang, size = self.language(item), approx_tokens(item.answer)
        statements = max(1, round(len(split_sentences(item.answer)) * 1.5))
        extract = estimate(
            model, "ragas_statements", Statements, lang, 5 + size * 6 // 5, question=item.question, answer=item.answer
        )
        judge = estimate(
            model,
            "ragas_nli",
            Faithfulness,
            lang,
            statements * 25 + size,
            question=item.question,
            reference=item.reference or "",
            statements=item.answer,
        )
        return Usage.sum([extract, judge])
