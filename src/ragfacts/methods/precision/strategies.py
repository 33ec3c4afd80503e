"""Strategies: how the stages are put together for one answer. "paper" is L-Face4RAG as published.

A strategy is an async function (model, item, options, lang) -> CheckResult, registered in STRATEGIES under
its `CheckOptions.strategy` name; strategies share the decomposition, the stages and the aggregation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from ragfacts.items import Item
from ragfacts.methods.precision.aggregate import answer_label, segment_label
from ragfacts.methods.precision.batched import check_segments_batched
from ragfacts.methods.precision.decompose import (
    decompose_answer,
    label_with_segments_not_in_answer,
    mark_segments_not_in_answer,
)
from ragfacts.methods.precision.options import CheckOptions, Strategy
from ragfacts.methods.precision.results import (
    AnswerLabel,
    CallRecord,
    CheckResult,
    HolisticResult,
    SegmentResult,
)
from ragfacts.methods.precision.schemas import HolisticJudgement, HolisticVerdict
from ragfacts.methods.precision.scored import run_holistic_score, run_sentence_scores
from ragfacts.methods.precision.stages import check_fact, check_logic
from ragfacts.methods.precision.trained import run_trained_head
from ragfacts.methods.prompting import ask
from ragfacts.models import ChatModel
from ragfacts.usage import Usage

StrategyRunner = Callable[[ChatModel, Item, CheckOptions, str], Awaitable[CheckResult]]


async def check_segment(
    model: ChatModel, item: Item, index: int, text: str, options: CheckOptions, lang: str
) -> SegmentResult:
    """Run the fact stage and, unless ablated, the logic stage on one segment (concurrently)."""
    reference, question, cot = item.reference or "", item.question, options.chain_of_thought
    fact_call = check_fact(model, reference, text, question=question, lang=lang, chain_of_thought=cot)
    if not options.logic_stage:
        fact = await fact_call
        return SegmentResult(index=index, text=text, fact=fact, label=segment_label([fact]))
    logic_call = check_logic(model, reference, text, question=question, lang=lang, chain_of_thought=cot)
    fact, logic = await asyncio.gather(fact_call, logic_call)
    return SegmentResult(index=index, text=text, fact=fact, logic=logic, label=segment_label([fact, logic]))


async def localise(model: ChatModel, item: Item, options: CheckOptions, lang: str, result: CheckResult) -> None:
    """Decompose the answer and check every segment, into `result`; no segments when the decomposition failed.

    Segments that are not the answer's text are marked and never count as consistent.
    """
    segments, result.decomposition = await decompose_answer(
        model, item.answer, question=item.question, lang=lang, method=options.decomposition
    )
    if options.batched and segments:
        result.batches, result.segments = await check_segments_batched(model, item, segments, options, lang)
    else:
        checked = await asyncio.gather(
            *(check_segment(model, item, index, text, options, lang) for index, text in enumerate(segments))
        )
        result.segments = list(checked)
    mark_segments_not_in_answer(result.segments, item.answer, item.question)


async def run_paper(model: ChatModel, item: Item, options: CheckOptions, lang: str) -> CheckResult:
    """L-Face4RAG: 1 decomposition call, then 2 calls per segment (1 with the logic stage ablated).

    Batched: 1 fact call and 1 logic call for all the segments, 3 calls per answer (2 with joint stages).
    """
    result = _unscored(model, item, options, lang)
    await localise(model, item, options, lang, result)
    assert result.decomposition is not None
    if result.decomposition.failure is not None:
        result.reason = f"the decomposition failed ({_describe(result.decomposition)})"
    else:
        result.label, result.reason = label_with_segments_not_in_answer(*answer_label(result.segments), result.segments)
    return _counted(result)


async def run_holistic_then_localise(model: ChatModel, item: Item, options: CheckOptions, lang: str) -> CheckResult:
    """One whole-answer judgement decides the label; the paper's pipeline only runs to localise a failure.

    Meant for small models, whose holistic judgements may be more reliable than their per-segment ones: a
    consistent answer costs one call, an inconsistent one gets segments and error types as in "paper".
    """
    result = _unscored(model, item, options, lang)
    result.holistic = holistic = await judge_whole_answer(model, item, options.chain_of_thought, lang)
    if holistic.failed:
        result.reason = f"the holistic judgement failed ({_describe(holistic.call)})"
        return _counted(result)
    if holistic.verdict == "consistent":
        result.label = AnswerLabel.CONSISTENT
        return _counted(result)
    result.label = AnswerLabel.INCONSISTENT
    await localise(model, item, options, lang, result)
    assert result.decomposition is not None
    if result.decomposition.failure is not None:
        result.reason = f"judged inconsistent as a whole; localising failed ({_describe(result.decomposition)})"
    elif answer_label(result.segments)[0] is not AnswerLabel.INCONSISTENT:
        result.reason = "judged inconsistent as a whole; no segment was found inconsistent"
    result.label, result.reason = label_with_segments_not_in_answer(result.label, result.reason, result.segments)
    return _counted(result)


async def judge_whole_answer(model: ChatModel, item: Item, chain_of_thought: bool, lang: str) -> HolisticResult:
    """One structured judgement of the whole answer: the problems found (with chain of thought), then the verdict."""
    prompt, schema = ("holistic", HolisticJudgement) if chain_of_thought else ("holistic_direct", HolisticVerdict)
    completion = await ask(
        model, prompt, schema, lang, question=item.question, reference=item.reference or "", answer=item.answer
    )
    holistic = HolisticResult(call=CallRecord.of(completion))
    if completion.ok:
        reply: HolisticJudgement | HolisticVerdict = completion.parsed
        holistic.verdict = reply.verdict
        if isinstance(reply, HolisticJudgement):
            holistic.problems = reply.problems
            holistic.explanation = "\n".join(reply.problems)
    return holistic


STRATEGIES: dict[Strategy, StrategyRunner] = {
    "paper": run_paper,
    "holistic_then_localise": run_holistic_then_localise,
    "sentence_scores": run_sentence_scores,
    "holistic_score": run_holistic_score,
    "trained_head": run_trained_head,
}


def _unscored(model: ChatModel, item: Item, options: CheckOptions, lang: str) -> CheckResult:
    """A result to fill in; it stays unscored unless a strategy decides otherwise."""
    return CheckResult(id=item.id, label=AnswerLabel.UNSCORED, lang=lang, model=model.model_id, options=options)


def _counted(result: CheckResult) -> CheckResult:
    result.usage = Usage.sum(call.usage for call, _ in result.calls())
    return result


def _describe(record: CallRecord) -> str:
    assert record.failure is not None
    return f"{record.failure.kind.value}: {record.failure.message}"
