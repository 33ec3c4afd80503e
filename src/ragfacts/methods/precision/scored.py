"""The scored strategies, for small models: threshold the probability of a "Yes" verdict.

Measured on the embedded 1.5B model: the paper's pipeline reached a balanced accuracy of 0.50, because
the model writes "consistent" for most flawed segments; yet the probability it gives to "Yes" ranks
flawed answers below faithful ones far more reliably.

- "holistic_score": P(Yes) of the whole answer in one forward pass decides the label. A flagged answer is
  explained by scoring (`explain.py`, unless `explain=none`): every sentence is scored the same way
  (consecutive calls share the reference prefix, which the local backend keeps in its KV cache), and the
  sentences with a mismatch, else the least supported one, carry the verdict with their error type and reason;
  `explain=generate` adds the paper's fact stage, best effort. On the quality corpus's dev split it was the
  best strategy on the embedded model (benchmarks/calibrate_precision.py), so `auto` picks it for small models
  that have no trained head (trained.py).
- "sentence_scores": each sentence scored alone decides; failing sentences are explained the same way.
"""

from __future__ import annotations

import asyncio

from ragfacts.evidence import find_unsupported
from ragfacts.items import Item
from ragfacts.methods.precision.aggregate import answer_label, segment_label
from ragfacts.methods.precision.batched import check_batched
from ragfacts.methods.precision.explain import (
    explain_flagged,
    flagged_score,
    generated,
    in_sentences,
    words,
)
from ragfacts.methods.precision.options import DEFAULT_THRESHOLDS, CheckOptions
from ragfacts.methods.precision.probability import HOLISTIC_PROMPT, Decision, band_for, calibration_for, decide
from ragfacts.methods.precision.results import (
    AnswerLabel,
    CallRecord,
    CheckResult,
    HolisticResult,
    ScoreResult,
    SegmentResult,
)
from ragfacts.models import ChatModel, Message
from ragfacts.prompts import load_prompt
from ragfacts.text import delimit, split_sentences
from ragfacts.usage import Usage

PROMPT = "precision_score_statement"
# The sentence threshold used to mark sentences when a holistic_score failure is localised.
SENTENCE_THRESHOLD = DEFAULT_THRESHOLDS["sentence_scores"]
PROMPT_WITH_CONTEXT = "precision_score_statement_context"
LABELS = {"en": ("Yes", "No"), "zh": ("是", "否")}
_NO_QUESTION = {"en": "(no question given)", "zh": "（未提供问题）"}


async def score_statement(
    model: ChatModel,
    reference: str,
    statement: str,
    *,
    question: str | None,
    lang: str,
    threshold: float,
    context: str = "",
) -> ScoreResult:
    """Return P(the statement is supported), from the first-token probabilities of Yes/No.

    `context` (the sentences before the statement, if any) is shown only to resolve pronouns.
    """
    messages, (yes, no), prompt_id = statement_request(
        reference, statement, question=question, lang=lang, context=context
    )
    name = PROMPT_WITH_CONTEXT if context else PROMPT
    completion = await model.score_labels(messages, [yes, no], stage=name, prompt_version=prompt_id)
    call = CallRecord.of(completion)
    if not completion.ok:
        return ScoreResult(call=call, threshold=threshold)
    probability = completion.parsed.probabilities[yes]
    verdict = "consistent" if probability >= threshold else "inconsistent"
    relation = ">=" if verdict == "consistent" else "<"
    return ScoreResult(
        verdict=verdict,
        probability=probability,
        threshold=threshold,
        explanation=f"P(supported) = {probability:.2f} {relation} {threshold:.2f}",
        call=call,
    )


def statement_request(
    reference: str, statement: str, *, question: str | None, lang: str, context: str = ""
) -> tuple[list[Message], list[str], str]:
    """One sentence's question as the model sees it: messages, the two labels (Yes first), the prompt id.

    Its prefix (instructions, reference, question) is the whole-answer prompt's, so a sentence scored after its
    answer reuses the reference's KV cache.
    """
    prompt = load_prompt(PROMPT_WITH_CONTEXT if context else PROMPT, lang)
    values = {
        "question": delimit("question", question) if question and question.strip() else _NO_QUESTION[lang],
        "reference": delimit("reference", reference),
        "statement": delimit("statement", statement),
    }
    if context:
        values["preceding_sentences"] = delimit("preceding_sentences", context)
    return [Message(role="user", content=prompt.render(**values))], list(LABELS[lang]), prompt.id


def holistic_request(item: Item, lang: str) -> tuple[list[Message], list[str], str]:
    """The whole-answer question as the model sees it: messages, the two labels (Yes first), the prompt id.

    One function for the scored strategy, the trained head and the benchmark that extracts the states heads
    are trained on: the state a head reads at run time is the state it was trained on.
    """
    prompt = load_prompt(HOLISTIC_PROMPT, lang)
    text = prompt.render(
        question=delimit("question", item.question) if item.question and item.question.strip() else _NO_QUESTION[lang],
        reference=delimit("reference", item.reference or ""),
        answer=delimit("answer", item.answer),
    )
    return [Message(role="user", content=text)], list(LABELS[lang]), prompt.id


async def run_holistic_score(model: ChatModel, item: Item, options: CheckOptions, lang: str) -> CheckResult:
    """One forward pass: P(the whole answer is supported) from the first-token probabilities of Yes/No.

    Calibrated where the model has a calibration (probability.py); an answer in the abstain band is uncertain.
    """
    messages, (yes, no), prompt_id = holistic_request(item, lang)
    calibration = calibration_for(model, options, HOLISTIC_PROMPT)
    band_for(options, calibration)  # an `auto` band without a calibration is refused before any call
    completion = await model.score_labels(messages, [yes, no], stage=HOLISTIC_PROMPT, prompt_version=prompt_id)
    judgement = HolisticResult(call=CallRecord.of(completion), threshold=options.threshold)
    result = CheckResult(
        id=item.id, label=AnswerLabel.UNSCORED, lang=lang, model=model.model_id, options=options, holistic=judgement
    )
    failure = completion.failure
    if failure is None:
        raw_threshold = DEFAULT_THRESHOLDS[HOLISTIC_PROMPT]
        decision = decide(completion.parsed.probabilities[yes], lang, raw_threshold, options, calibration)
        record_decision(judgement, decision, "P(supported)")
        result.label = AnswerLabel.UNCERTAIN if decision.uncertain else AnswerLabel(decision.verdict)
        if result.label is AnswerLabel.UNCERTAIN:
            result.reason = f"uncertain: {judgement.explanation}"
        if result.label is AnswerLabel.INCONSISTENT and options.explain != "none":
            await _localise(model, item, options, lang, result)
    else:
        result.reason = f"the judgement failed ({failure.kind.value}: {failure.message})"
    result.usage = Usage.sum(call.usage for call, _ in result.calls())
    return result


def record_decision(judgement: HolisticResult, decision: Decision, name: str, source: str = "") -> None:
    """Write a probability's decision into the whole-answer judgement."""
    judgement.probability = decision.probability
    judgement.raw_probability = decision.raw
    judgement.calibrated = decision.calibrated
    judgement.threshold = decision.threshold
    judgement.band = decision.band
    judgement.verdict = decision.verdict
    judgement.explanation = decision.explain(name, source)


async def _localise(model: ChatModel, item: Item, options: CheckOptions, lang: str, result: CheckResult) -> None:
    """Where a flagged answer fails: its sentences scored, then why, by scoring (`explain.explain_flagged`).

    The answer's label stays the whole-answer verdict, and the sentences that carry it make the answer's
    faithfulness below 1; the other sentences are marked by their own scores against the sentence threshold.
    """
    sentences = split_sentences(item.answer) or [item.answer]
    scores: list[ScoreResult | None] = [None]
    if len(sentences) > 1:
        scores = list(
            await asyncio.gather(
                *(
                    score_statement(
                        model, item.reference or "", s, question=item.question, lang=lang, threshold=SENTENCE_THRESHOLD
                    )
                    for s in sentences
                )
            )
        )
    assert result.holistic is not None
    holistic = result.holistic
    whole = ScoreResult(
        verdict="inconsistent",
        probability=holistic.probability,
        threshold=holistic.threshold if holistic.threshold is not None else SENTENCE_THRESHOLD,
        explanation=holistic.explanation,
        call=holistic.call,
    )
    await explain_flagged(model, item, options, lang, result, sentences, scores, whole)


async def run_sentence_scores(model: ChatModel, item: Item, options: CheckOptions, lang: str) -> CheckResult:
    """Score every sentence, then explain and type the failing ones with the fact stage (if enabled)."""
    sentences = split_sentences(item.answer)
    contexts = [" ".join(sentences[max(0, n - options.context) : n]) for n in range(len(sentences))]
    # Resolved options (check_item resolves them) carry the strategy's default threshold where none was given.
    threshold = options.threshold if options.threshold is not None else DEFAULT_THRESHOLDS["sentence_scores"]
    scores = await asyncio.gather(
        *(
            score_statement(
                model,
                item.reference or "",
                s,
                question=item.question,
                lang=lang,
                threshold=threshold,
                context=context,
            )
            for s, context in zip(sentences, contexts, strict=True)
        )
    )
    failing = [n for n, score in enumerate(scores) if score.verdict == "inconsistent"]
    if options.explain != "none":
        mismatches = find_unsupported(item.answer, item.reference or "", lang, chinese_names="auto")
        found = in_sentences(mismatches, item.answer, sentences)
        for n in failing:
            scores[n] = flagged_score(scores[n], sentences[n], item.reference or "", found.get(n, []), lang)
    segments = [
        SegmentResult(index=index, text=sentence, score=score, label=segment_label([score]))
        for index, (sentence, score) in enumerate(zip(sentences, scores, strict=True))
    ]
    batches: list[CallRecord] = []
    if options.explain == "generate" and failing:
        if options.batched:
            batches = await _explain_batched(model, item, [segments[n] for n in failing], options, lang)
        else:
            await asyncio.gather(*(generated(model, item, options, lang, segments[n]) for n in failing))
    label, reason = answer_label(segments)
    result = CheckResult(
        id=item.id,
        label=label,
        reason=reason,
        lang=lang,
        model=model.model_id,
        options=options,
        segments=segments,
        batches=batches,
    )
    result.usage = Usage.sum(call.usage for call, _ in result.calls())
    return result


async def _explain_batched(
    model: ChatModel, item: Item, failing: list[SegmentResult], options: CheckOptions, lang: str
) -> list[CallRecord]:
    """The fact stage for all failing sentences in one call (batched), optional as every explanation is."""
    record, facts = await check_batched(
        model, item, "fact", [s.text for s in failing], chain_of_thought=options.chain_of_thought, lang=lang
    )
    record.optional = True
    for segment, fact in zip(failing, facts, strict=True):
        fact.call.optional = True
        segment.fact = fact
        if fact.verdict == "consistent":
            segment.note = words(lang)["unconfirmed"]
    return [record]
