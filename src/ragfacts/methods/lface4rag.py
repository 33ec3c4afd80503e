"""L-Face4RAG (Face4RAG, KDD 2024): is a RAG answer factually consistent with its reference?

Logic-preserving decomposition of the answer, then per segment a fact-consistency and a logic-consistency
chain of thought; the answer is consistent iff every segment passes both. Failing segments get an error
type from the Face4RAG typology; every quote the model claims to take from the reference is verified.

    result = await check_answer(model, reference, answer, question)
    result.label, result.error_types, result.segments[0].fact.points
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

from ragfacts.methods.precision.options import (
    CheckItem,
    CheckOptions,
    DecompositionMethod,
    Strategy,
    default_strategy,
)
from ragfacts.methods.precision.results import (
    AnswerLabel,
    CallRecord,
    CheckResult,
    FactResult,
    HolisticResult,
    LogicResult,
    PointResult,
    QuoteCheck,
    ResultUsage,
    ScoreResult,
    SegmentResult,
    StageFailure,
    StageResult,
)
from ragfacts.methods.precision.stages import verify_quote
from ragfacts.methods.precision.strategies import STRATEGIES
from ragfacts.models import ChatModel

__all__ = [
    "AnswerLabel",
    "CallRecord",
    "CheckItem",
    "CheckOptions",
    "CheckResult",
    "DecompositionMethod",
    "FactResult",
    "HolisticResult",
    "LogicResult",
    "PointResult",
    "QuoteCheck",
    "ResultUsage",
    "ScoreResult",
    "SegmentResult",
    "StageFailure",
    "StageResult",
    "Strategy",
    "check",
    "check_answer",
    "check_item",
    "check_many",
    "default_strategy",
    "verify_quote",
]


async def check_answer(
    model: ChatModel,
    reference: str,
    answer: str,
    question: str | None = None,
    options: CheckOptions | None = None,
) -> CheckResult:
    """Return the precision check of one answer against its reference."""
    return await check_item(model, CheckItem(question=question, reference=reference, answer=answer), options)


async def check_item(model: ChatModel, item: CheckItem, options: CheckOptions | None = None) -> CheckResult:
    """Return the precision check of one item; an empty answer or reference is unscored without a model call."""
    options = (options or CheckOptions()).resolve_strategy(model.backend)
    lang = options.resolve_lang(item.answer)
    for name, text in (("answer", item.answer), ("reference", item.reference)):
        if not text.strip():
            reason = f"the {name} is empty"
            return CheckResult(
                id=item.id, label=AnswerLabel.UNSCORED, reason=reason, lang=lang, model=model.model_id, options=options
            )
    return await STRATEGIES[options.strategy](model, item, options, lang)


async def check_many(
    model: ChatModel,
    items: Iterable[CheckItem],
    options: CheckOptions | None = None,
    *,
    on_result: Callable[[CheckResult], None] | None = None,
) -> list[CheckResult]:
    """Return the checks of many items, in input order; `on_result` sees each one as soon as it is done.

    All items are started at once: the model's concurrency limit decides how many requests are in flight.
    """

    async def one(item: CheckItem) -> CheckResult:
        result = await check_item(model, item, options)
        if on_result is not None:
            on_result(result)
        return result

    return list(await asyncio.gather(*(one(item) for item in items)))


def check(
    reference: str,
    answer: str,
    question: str | None = None,
    model: ChatModel | None = None,
    options: CheckOptions | None = None,
) -> CheckResult:
    """Check one answer synchronously, with `model` or else the default model of `ragfacts --model`.

    For many answers, or inside async code, use `check_many` / `check_answer`.
    """
    # Imported here: the runtime (model choice from settings) sits above the methods layer.
    from ragfacts.runtime import Runtime, Settings

    async def run() -> CheckResult:
        if model is not None:
            return await check_answer(model, reference, answer, question, options)
        runtime = Runtime(Settings())
        try:
            return await check_answer(runtime.model(), reference, answer, question, options)
        finally:
            await runtime.aclose()

    return asyncio.run(run())
