"""What a precision check should cost before it runs: calls and tokens from the strategy's call pattern.

Used by `bench --dry-run`. Segments are estimated as the answer's sentences (conventional decomposition:
1.5 statements per sentence); completions from the stage's schema and the segment's size. Where the call
pattern depends on verdicts, an expected share is assumed and named: holistic_then_localise and holistic_score
localise every other answer (by content hash), sentence_scores explains a quarter of an answer's sentences
(rounded). A trained head whose file reads sentences scores every sentence of a longer answer for the verdict, and
its localisation reuses those calls.
"""

from __future__ import annotations

from ragfacts.items import Item
from ragfacts.methods.precision.batched import PROMPTS, Stage, batch_schema, number_segments
from ragfacts.methods.precision.options import CheckOptions
from ragfacts.methods.precision.schemas import (
    AtomicStatements,
    Decomposition,
    FactCheck,
    FactVerdict,
    HolisticJudgement,
    HolisticVerdict,
    LogicCheck,
    LogicVerdict,
)
from ragfacts.methods.precision.trained import head_for
from ragfacts.methods.prompting import estimate
from ragfacts.models import ChatModel, ConfigurationError
from ragfacts.text import approx_tokens, split_sentences
from ragfacts.usage import Usage

EXPLAINED_SHARE = 0.25
_DIRECT_REPLY = 15  # tokens of a verdict-only reply


def estimate_check(model: ChatModel, item: Item, options: CheckOptions, lang: str) -> Usage:
    """The expected usage of checking `item` with these (resolved) options."""
    if options.strategy == "sentence_scores":
        return _sentence_scores(model, item, options, lang)
    if options.strategy in ("holistic_score", "trained_head"):  # the same prompt, one forward pass
        judged = _scored(model, item, item.answer, lang)
        sentences = split_sentences(item.answer) or [item.answer]
        if options.strategy == "trained_head" and len(sentences) > 1 and _reads_sentences(model, options, lang):
            # every sentence scored for the verdict; localising a flagged answer reuses those calls
            judged = Usage.sum([judged, *(_scored(model, item, sentence, lang) for sentence in sentences)])
            if options.explain != "generate" or int(item.content_hash(), 16) % 2:
                return judged
            return Usage.sum([judged, _fact(model, item, sentences[0], options.chain_of_thought, lang)])
        if options.explain == "none" or int(item.content_hash(), 16) % 2:
            return judged
        scored = options.model_copy(update={"context": 0, "explain": "none"})
        scores = [_sentence_scores(model, item, scored, lang)] if len(sentences) > 1 else []
        if options.explain != "generate":  # explained by scoring alone: no generation
            return Usage.sum([judged, *scores])
        return Usage.sum([judged, *scores, _fact(model, item, sentences[0], options.chain_of_thought, lang)])
    if options.strategy == "holistic_then_localise":
        judged = holistic(model, item, options.chain_of_thought, lang)
        localised = int(item.content_hash(), 16) % 2 == 0
        return Usage.sum([judged, _paper(model, item, options, lang)]) if localised else judged
    return _paper(model, item, options, lang)


def _scored(model: ChatModel, item: Item, answer: str, lang: str) -> Usage:
    """One scoring pass of the whole-answer prompt over `answer` (the answer, or one of its sentences)."""
    texts = {"reference": item.reference or "", "answer": answer}
    return estimate(model, "holistic_score", None, lang, 1, question=item.question, **texts)


def _reads_sentences(model: ChatModel, options: CheckOptions, lang: str) -> bool:
    """Whether the trained head this check uses scores each sentence of a longer answer to decide (a head file
    with a `sentences` block for `lang`); False where no head can be used, which the run itself reports."""
    try:
        return head_for(model, options).reads_sentences(lang)
    except (ConfigurationError, ValueError, OSError):
        return False


def holistic(model: ChatModel, item: Item, chain_of_thought: bool, lang: str) -> Usage:
    """One whole-answer judgement."""
    question, texts = item.question, {"reference": item.reference or "", "answer": item.answer}
    if chain_of_thought:
        reply = 30 + approx_tokens(item.answer) // 2
        return estimate(model, "holistic", HolisticJudgement, lang, reply, question=question, **texts)
    return estimate(model, "holistic_direct", HolisticVerdict, lang, _DIRECT_REPLY, question=question, **texts)


def _segments(item: Item, options: CheckOptions) -> list[str]:
    sentences = split_sentences(item.answer) or [item.answer]
    if options.decomposition == "conventional":
        return sentences + sentences[: len(sentences) // 2]
    return sentences


def _paper(model: ChatModel, item: Item, options: CheckOptions, lang: str) -> Usage:
    conventional = options.decomposition == "conventional"
    prompt, schema = ("decompose_conventional", AtomicStatements) if conventional else ("decompose", Decomposition)
    answer_tokens = approx_tokens(item.answer)
    usages = [
        estimate(
            model,
            prompt,
            schema,
            lang,
            10 + answer_tokens * (3 if conventional else 2) // 2,
            question=item.question,
            answer=item.answer,
        )
    ]
    if options.batched:
        return Usage.sum([*usages, *_batched(model, item, _segments(item, options), options, lang)])
    for segment in _segments(item, options):
        usages.append(_fact(model, item, segment, options.chain_of_thought, lang))
        if options.logic_stage:
            size = approx_tokens(segment)
            if options.chain_of_thought:
                usages.append(
                    estimate(
                        model,
                        "logic_consistency",
                        LogicCheck,
                        lang,
                        120 + 2 * size,
                        question=item.question,
                        reference=item.reference or "",
                        segment=segment,
                    )
                )
            else:
                usages.append(
                    estimate(
                        model,
                        "logic_consistency_direct",
                        LogicVerdict,
                        lang,
                        _DIRECT_REPLY,
                        question=item.question,
                        reference=item.reference or "",
                        segment=segment,
                    )
                )
    return Usage.sum(usages)


def _fact(model: ChatModel, item: Item, segment: str, chain_of_thought: bool, lang: str) -> Usage:
    question, texts = item.question, {"reference": item.reference or "", "segment": segment}
    if chain_of_thought:
        reply = 40 + 3 * approx_tokens(segment)
        return estimate(model, "fact_consistency", FactCheck, lang, reply, question=question, **texts)
    return estimate(model, "fact_consistency_direct", FactVerdict, lang, _DIRECT_REPLY, question=question, **texts)


def _sentence_scores(model: ChatModel, item: Item, options: CheckOptions, lang: str) -> Usage:
    sentences = split_sentences(item.answer) or [item.answer]
    usages = []
    for n, sentence in enumerate(sentences):
        texts = {"reference": item.reference or "", "statement": sentence}
        context = " ".join(sentences[max(0, n - options.context) : n])
        prompt = "precision_score_statement_context" if context else "precision_score_statement"
        if context:
            texts["preceding_sentences"] = context
        usages.append(estimate(model, prompt, None, lang, 1, question=item.question, **texts))
    explained = sentences[: round(len(sentences) * EXPLAINED_SHARE)] if options.explain == "generate" else []
    if options.batched and explained:
        usages += _batched(model, item, explained, options.model_copy(update={"logic_stage": False}), lang)
    else:
        usages += [_fact(model, item, s, options.chain_of_thought, lang) for s in explained]
    return Usage.sum(usages)


def _batched(model: ChatModel, item: Item, segments: list[str], options: CheckOptions, lang: str) -> list[Usage]:
    """One fact call (and, unless ablated, one logic call; or one call for both) for all `segments`, replies as
    long as per segment."""
    cot = options.chain_of_thought
    texts = {"reference": item.reference or "", "segments": number_segments(segments)}
    size = sum(approx_tokens(segment) for segment in segments)
    per_segment = (40, 3) if cot else (_DIRECT_REPLY, 0)
    logic = (120, 2) if cot else (_DIRECT_REPLY, 0)
    stages: list[tuple[Stage, tuple[int, int]]] = [("fact", per_segment)]
    if options.logic_stage and options.joint_stages:  # one reply as long as both stages' replies
        stages = [("joint", (per_segment[0] + logic[0], per_segment[1] + logic[1]))]
    elif options.logic_stage:
        stages.append(("logic", logic))
    return [
        estimate(
            model,
            PROMPTS[(stage, cot)],
            batch_schema(stage, cot, len(segments)),
            lang,
            fixed * len(segments) + factor * size,
            question=item.question,
            **texts,
        )
        for stage, (fixed, factor) in stages
    ]
