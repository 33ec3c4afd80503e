"""Batched stages (`batched=true`): every segment of an answer checked in one structured call per stage.

The paper asks 2 calls per segment (fact, logic); batched asks 1 fact call and 1 logic call for all the
segments of an answer, so an answer costs 3 calls whatever its length; with `joint_stages=true`, 1 call holds
both stages of every segment (its entry: the fact stage, then the logic stage), so an answer costs 2. The reply
is a list with one entry per segment, numbered as given; its schema fixes the count, so a reply that skips or
repeats a segment is re-asked. Each segment's stage results are built exactly as in the per-segment stages
(quotes verified, the fact verdict derived from the points), and point to the shared call, whose cost is counted
once (`CheckResult.batches`).

Options until the quality corpus shows them as accurate as the per-segment stages (see docs/performance.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from functools import cache
from typing import Any, Literal, overload

from pydantic import BaseModel, Field, create_model, field_validator

from ragfacts.items import Item
from ragfacts.methods.bilingual import schema_text
from ragfacts.methods.precision.aggregate import segment_label
from ragfacts.methods.precision.options import CheckOptions
from ragfacts.methods.precision.results import CallRecord, FactResult, LogicResult, SegmentResult
from ragfacts.methods.precision.schemas import FactCheck, FactVerdict, LogicCheck, LogicVerdict
from ragfacts.methods.precision.stages import fact_result, logic_result
from ragfacts.methods.prompting import ask
from ragfacts.models import ChatModel

Stage = Literal["fact", "logic", "joint"]
OneStage = Literal["fact", "logic"]
_SCHEMAS: dict[tuple[Stage, bool], type[BaseModel]] = {
    ("fact", True): FactCheck,
    ("fact", False): FactVerdict,
    ("logic", True): LogicCheck,
    ("logic", False): LogicVerdict,
}
PROMPTS: dict[tuple[Stage, bool], str] = {
    ("fact", True): "fact_consistency_batch",
    ("fact", False): "fact_consistency_batch_direct",
    ("logic", True): "logic_consistency_batch",
    ("logic", False): "logic_consistency_batch_direct",
    ("joint", True): "fact_logic_batch",
    ("joint", False): "fact_logic_batch_direct",
}
_NUMBER = schema_text("batched.number")
_FACT = schema_text("batched.fact")
_LOGIC = schema_text("batched.logic")
_JOINT_DOC = schema_text("batched.joint")
_ENTRIES = schema_text("batched.entries")
_DOC = schema_text("batched.doc")


def number_segments(segments: list[str]) -> str:
    """The segments as one text, each on its own line after its number: "[1] ...", "[2] ..."."""
    return "\n".join(f"[{n}] {' '.join(segment.split())}" for n, segment in enumerate(segments, start=1))


@cache
def batch_schema(stage: Stage, chain_of_thought: bool, count: int) -> type[BaseModel]:
    """The reply schema for `count` segments: a list of exactly `count` entries numbered 1..count in order.

    Each entry is the per-segment stage's schema with the segment's number first; for the joint stages, the
    number, then the fact stage's schema and the logic stage's as two fields. Built once per (stage, chain of
    thought, count), so its JSON schema is cached like every other schema.
    """
    fields: dict[str, Any] = {"segment": (int, Field(ge=1, le=count, description=_NUMBER))}
    doc: str | None
    if stage == "joint":
        fact, logic = _SCHEMAS[("fact", chain_of_thought)], _SCHEMAS[("logic", chain_of_thought)]
        name, doc = "FactLogicChecks" if chain_of_thought else "FactLogicVerdicts", _JOINT_DOC
        fields.update(fact=(fact, Field(description=_FACT)), logic=(logic, Field(description=_LOGIC)))
    else:
        single = _SCHEMAS[(stage, chain_of_thought)]
        name, doc = f"{single.__name__}s", single.__doc__
        fields.update({field: (info.annotation, info) for field, info in single.model_fields.items()})
    entry = create_model(f"Segment{name[:-1]}", __doc__=doc, **fields)

    def in_order(cls: type[BaseModel], value: list[Any]) -> list[Any]:
        numbers = [item.segment for item in value]
        if numbers != list(range(1, count + 1)):
            raise ValueError(f"give one entry per segment, numbered 1 to {count} in order; got {numbers}")
        return value

    return create_model(
        name,
        __doc__=_DOC,
        __validators__={"in_order": field_validator("segments")(in_order)},
        segments=(list[entry], Field(min_length=count, max_length=count, description=_ENTRIES)),
    )


@overload
async def check_batched(
    model: ChatModel, item: Item, stage: Literal["fact"], segments: list[str], *, chain_of_thought: bool, lang: str
) -> tuple[CallRecord, list[FactResult]]: ...


@overload
async def check_batched(
    model: ChatModel, item: Item, stage: Literal["logic"], segments: list[str], *, chain_of_thought: bool, lang: str
) -> tuple[CallRecord, list[LogicResult]]: ...


async def check_batched(
    model: ChatModel, item: Item, stage: OneStage, segments: list[str], *, chain_of_thought: bool, lang: str
) -> tuple[CallRecord, list[FactResult] | list[LogicResult]]:
    """One call judging every segment at one stage: the call's record and each segment's stage result."""
    reference = item.reference or ""
    record, replies = await _ask_batch(model, item, stage, segments, chain_of_thought, lang)
    if stage == "fact":
        fact_schema = FactCheck if chain_of_thought else FactVerdict
        if replies is None:
            return record, [FactResult(call=record.pointer()) for _ in segments]
        return record, [fact_result(fact_schema.model_validate(r), reference, record.pointer()) for r in replies]
    logic_schema = LogicCheck if chain_of_thought else LogicVerdict
    if replies is None:
        return record, [LogicResult(call=record.pointer()) for _ in segments]
    return record, [logic_result(logic_schema.model_validate(r), reference, record.pointer()) for r in replies]


async def check_joint(
    model: ChatModel, item: Item, segments: list[str], *, chain_of_thought: bool, lang: str
) -> tuple[CallRecord, list[FactResult], list[LogicResult]]:
    """One call judging every segment at both stages: the call's record, each segment's fact and logic result."""
    reference = item.reference or ""
    record, replies = await _ask_batch(model, item, "joint", segments, chain_of_thought, lang)
    if replies is None:
        return (
            record,
            [FactResult(call=record.pointer()) for _ in segments],
            [LogicResult(call=record.pointer()) for _ in segments],
        )
    fact_schema, logic_schema = (FactCheck, LogicCheck) if chain_of_thought else (FactVerdict, LogicVerdict)
    facts = [fact_result(fact_schema.model_validate(r["fact"]), reference, record.pointer()) for r in replies]
    logics = [logic_result(logic_schema.model_validate(r["logic"]), reference, record.pointer()) for r in replies]
    return record, facts, logics


async def _ask_batch(
    model: ChatModel, item: Item, stage: Stage, segments: list[str], chain_of_thought: bool, lang: str
) -> tuple[CallRecord, list[dict[str, Any]] | None]:
    """The call of one batch: its record, and each entry without its number (None where the call failed)."""
    completion = await ask(
        model,
        PROMPTS[(stage, chain_of_thought)],
        batch_schema(stage, chain_of_thought, len(segments)),
        lang,
        question=item.question,
        reference=item.reference or "",
        segments=number_segments(segments),
    )
    replies = [entry.model_dump(exclude={"segment"}) for entry in completion.parsed.segments] if completion.ok else None
    return CallRecord.of(completion), replies


async def check_segments_batched(
    model: ChatModel, item: Item, segments: list[str], options: CheckOptions, lang: str
) -> tuple[list[CallRecord], list[SegmentResult]]:
    """The fact stage and, unless ablated, the logic stage of every segment: one call each, run concurrently (one
    call for both with `joint_stages`)."""
    cot = options.chain_of_thought
    if options.joint_stages and options.logic_stage:
        record, facts, joint_logics = await check_joint(model, item, segments, chain_of_thought=cot, lang=lang)
        return [record], _segment_results(segments, facts, joint_logics)
    fact_call = check_batched(model, item, "fact", segments, chain_of_thought=cot, lang=lang)
    logics: list[LogicResult | None]
    if options.logic_stage:
        logic_call = check_batched(model, item, "logic", segments, chain_of_thought=cot, lang=lang)
        (fact_record, facts), (logic_record, logic_results) = await asyncio.gather(fact_call, logic_call)
        records, logics = [fact_record, logic_record], list(logic_results)
    else:
        fact_record, facts = await fact_call
        records, logics = [fact_record], [None] * len(segments)
    return records, _segment_results(segments, facts, logics)


def _segment_results(
    segments: list[str], facts: list[FactResult], logics: Sequence[LogicResult | None]
) -> list[SegmentResult]:
    return [
        SegmentResult(
            index=index,
            text=text,
            fact=fact,
            logic=logic,
            label=segment_label([fact] if logic is None else [fact, logic]),
        )
        for index, (text, fact, logic) in enumerate(zip(segments, facts, logics, strict=True))
    ]
