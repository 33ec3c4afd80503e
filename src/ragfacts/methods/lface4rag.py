"""L-Face4RAG (Face4RAG, KDD 2024): is a RAG answer factually consistent with its reference?

Logic-preserving decomposition of the answer, then per segment a fact-consistency and a logic-consistency
chain of thought; the answer is consistent iff every segment passes both. Failing segments get an error
type from the Face4RAG typology; every quote the model claims to take from the reference is verified.
Registered as the method "lface4rag"; its options (`CheckOptions`) choose the strategy and the ablations.

    result = await check_answer(model, reference, answer, question)
    result.label, result.faithfulness, result.error_types, result.segments[0].fact.points
"""

from __future__ import annotations

from typing import Any

from ragfacts.hashing import digest
from ragfacts.items import Item
from ragfacts.methods.base import PrecisionMethod, method
from ragfacts.methods.precision.costs import estimate_check
from ragfacts.methods.precision.options import CheckOptions, DecompositionMethod, Strategy, default_strategy
from ragfacts.methods.precision.probability import calibration_for
from ragfacts.methods.precision.results import (
    AnswerLabel,
    CallRecord,
    CheckResult,
    FactResult,
    HolisticResult,
    LogicResult,
    PointResult,
    QuoteCheck,
    ScoreResult,
    SegmentResult,
    StageFailure,
    StageResult,
)
from ragfacts.methods.precision.stages import verify_quote
from ragfacts.methods.precision.strategies import STRATEGIES
from ragfacts.methods.precision.trained import head_for
from ragfacts.models import ChatModel
from ragfacts.usage import Usage

__all__ = [
    "AnswerLabel",
    "CallRecord",
    "CheckOptions",
    "CheckResult",
    "DecompositionMethod",
    "FactResult",
    "HolisticResult",
    "LFace4RAG",
    "LogicResult",
    "PointResult",
    "QuoteCheck",
    "ScoreResult",
    "SegmentResult",
    "StageFailure",
    "StageResult",
    "Strategy",
    "check_answer",
    "check_item",
    "default_strategy",
    "verify_quote",
]


# Strategies whose code changed results since the method's version: bumped here, earlier results of the other
# strategies stay reusable. holistic_score 2: a failure is localised and explained (`explain`).
STRATEGY_VERSIONS = {"holistic_score": "2"}


@method("lface4rag")
class LFace4RAG(PrecisionMethod[CheckOptions]):
    """Precision by L-Face4RAG: decomposition, then a fact and a logic stage per segment."""

    Options = CheckOptions
    result_type = CheckResult
    description = (
        "Face4RAG's L-Face4RAG: logic-preserving decomposition, fact and logic chain-of-thought checks per "
        "segment, Face4RAG error types; strategies for small models"
    )
    prompts = (
        "decompose",
        "decompose_conventional",
        "fact_consistency",
        "fact_consistency_direct",
        "logic_consistency",
        "logic_consistency_direct",
        "fact_consistency_batch",
        "fact_consistency_batch_direct",
        "logic_consistency_batch",
        "logic_consistency_batch_direct",
        "fact_logic_batch",
        "fact_logic_batch_direct",
        "holistic",
        "holistic_direct",
        "holistic_score",
        "precision_score_statement",
        "precision_score_statement_context",
    )

    def resolved(self, model: ChatModel) -> LFace4RAG:
        return LFace4RAG(self.options.resolved_for(model.profile()), spec=self.spec)

    def configuration(self, model: ChatModel) -> dict[str, Any]:
        """The method's configuration, with the version of its strategy where that changed on its own."""
        configuration = super().configuration(model)
        changed = STRATEGY_VERSIONS.get(self.options.strategy)
        if changed:
            configuration = {**configuration, "strategy_version": changed}
        if self.options.strategy == "trained_head":  # another head gives other verdicts: its weights count
            configuration = {**configuration, "head": head_for(model, self.options).digest}
        elif self.options.strategy == "holistic_score":  # so does another calibration of its probability
            calibration = calibration_for(model, self.options, "holistic_score")
            if calibration is not None:
                configuration = {**configuration, "calibration": digest(calibration.to_json())}
        return configuration

    def uses_label_scores(self, model: ChatModel) -> bool:
        strategy = self.options.strategy
        scored = ("sentence_scores", "holistic_score", "trained_head")
        return strategy in scored or (strategy == "auto" and bool(model.profile().small))

    async def evaluate(self, item: Item, model: ChatModel) -> CheckResult:
        return await check_item(model, item, self.options)

    def estimate(self, item: Item, model: ChatModel) -> Usage:
        options = self.options.resolved_for(model.profile())
        return estimate_check(model, item, options, options.resolve_lang(item.answer))


async def check_answer(
    model: ChatModel,
    reference: str,
    answer: str,
    question: str | None = None,
    options: CheckOptions | None = None,
) -> CheckResult:
    """Return the precision check of one answer against its reference."""
    return await check_item(model, Item(question=question, reference=reference, answer=answer), options)


async def check_item(model: ChatModel, item: Item, options: CheckOptions | None = None) -> CheckResult:
    """Return the precision check of one item; an empty answer or reference is unscored without a model call."""
    options = (options or CheckOptions()).resolved_for(model.profile())
    lang = options.resolve_lang(item.answer)
    for name, text in (("answer", item.answer), ("reference", item.reference or "")):
        if not text.strip():
            reason = f"the {name} is empty"
            return CheckResult(
                id=item.id, label=AnswerLabel.UNSCORED, reason=reason, lang=lang, model=model.model_id, options=options
            )
    return await STRATEGIES[options.strategy](model, item, options, lang)
