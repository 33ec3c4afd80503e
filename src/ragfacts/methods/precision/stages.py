"""The two per-segment stages of §4.2 (fact consistency, logic consistency) and quote verification."""

from __future__ import annotations

import re

from ragfacts.methods.precision.results import CallRecord, FactResult, LogicResult, PointResult, QuoteCheck
from ragfacts.methods.precision.schemas import FactCheck, FactVerdict, LogicCheck, LogicVerdict
from ragfacts.methods.prompting import ask, ask_with
from ragfacts.models import ChatModel
from ragfacts.text import quote_found

# The prompts ask for " … " between separate passages; models also write "..." or "……".
_GAP = re.compile(r"\s*(?:…+|\.{3,})\s*")


def verify_quote(quote: str, reference: str) -> QuoteCheck | None:
    """Check a quote against the reference; None when the model quoted nothing (no passage found).

    A quote of several passages is verified part by part; it counts as found only if every part is.
    """
    text = quote.strip()
    whole = quote_found(text, reference) if text else None
    if whole is not None:
        return QuoteCheck(text=text, match=whole)
    parts = [part for part in _GAP.split(text) if part.strip()]
    if not parts:
        return None
    matches = [quote_found(part, reference) for part in parts]
    if None in matches:
        return QuoteCheck(text=text, match="not_found")
    return QuoteCheck(text=text, match="exact" if set(matches) == {"exact"} else "normalised")


async def check_fact(
    model: ChatModel,
    reference: str,
    segment: str,
    *,
    question: str | None,
    lang: str,
    chain_of_thought: bool,
    max_tokens: int | None = None,
) -> FactResult:
    """Return the fact-consistency verdict of one segment: points, located quotes, per-point checks (the reply
    capped at `max_tokens` where given, as an explanation is)."""
    prompt, schema = ("fact_consistency", FactCheck) if chain_of_thought else ("fact_consistency_direct", FactVerdict)
    params = {} if max_tokens is None else {"max_tokens": max_tokens}
    texts = {"reference": reference, "segment": segment}
    completion = await ask_with(model, prompt, schema, lang, question=question, texts=texts, params=params)
    call = CallRecord.of(completion)
    if not completion.ok:
        return FactResult(call=call)
    return fact_result(completion.parsed, reference, call)


def fact_result(reply: FactCheck | FactVerdict, reference: str, call: CallRecord) -> FactResult:
    """The fact stage's result from the model's reply: every point's quote verified, the verdict derived."""
    points = [
        PointResult(point=p.point, quote=verify_quote(p.reference_quote, reference), check=p.check, verdict=p.verdict)
        for p in (reply.points if isinstance(reply, FactCheck) else [])
    ]
    failing = [p for p in points if p.verdict == "inconsistent"]
    verdict = "consistent" if reply.verdict == "consistent" and not failing else "inconsistent"
    return FactResult(
        verdict=verdict,
        model_verdict=reply.verdict,
        error_type=reply.error_type if verdict == "inconsistent" else None,
        explanation="\n".join(_explained(p) for p in failing or points),
        points=points,
        call=call,
    )


def _explained(point: PointResult) -> str:
    """A point's check, marked when the quote it rests on is not in the reference."""
    unverified = point.quote is not None and not point.quote.verified
    return f"{point.point} — {point.check}" + (" [its quote is not in the reference]" if unverified else "")


async def check_logic(
    model: ChatModel, reference: str, segment: str, *, question: str | None, lang: str, chain_of_thought: bool
) -> LogicResult:
    """Return the logic-consistency verdict of one segment: context, both logical structures, comparison."""
    prompt, schema = (
        ("logic_consistency", LogicCheck) if chain_of_thought else ("logic_consistency_direct", LogicVerdict)
    )
    completion = await ask(model, prompt, schema, lang, question=question, reference=reference, segment=segment)
    call = CallRecord.of(completion)
    if not completion.ok:
        return LogicResult(call=call)
    return logic_result(completion.parsed, reference, call)


def logic_result(reply: LogicCheck | LogicVerdict, reference: str, call: CallRecord) -> LogicResult:
    """The logic stage's result from the model's reply, its reference context verified."""
    result = LogicResult(
        verdict=reply.verdict,
        error_type=reply.error_type if reply.verdict == "inconsistent" else None,
        call=call,
    )
    if isinstance(reply, LogicCheck):
        result.explanation = reply.comparison
        result.reference_context = verify_quote(reply.reference_context, reference)
        result.segment_structure = reply.segment_structure
        result.reference_structure = reply.reference_structure
    return result
