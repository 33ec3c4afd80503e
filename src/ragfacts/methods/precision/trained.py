"""The trained_head strategy: P(faithful) from a head over the model's hidden state, plus evidence checks.

One forward pass decides: the holistic_score prompt is evaluated with `hidden_state=True`, and the head
(`head.Head`) turns the state at the verdict position, the model's Yes-No log-odds there and the evidence
features of the texts into P(faithful), compared with the head's threshold for the answer's language (chosen on
a dev split; `-O threshold=` overrides it). Numbers, dates and names of the answer that the reference does not
contain (`ragfacts.evidence`) are listed as the judgement's problems, in words: "the answer says 1949; the
reference says 1898"; a head trained with `evidence_veto` flags such an answer whatever its probability. A head
that reads sentences (`Head.sentences`) adds one short pass per sentence of a longer answer, the reference's KV
cache reused, and decides from the answer's logit and its sentences'.

A flagged answer is explained by scoring (`explain.py`, unless `explain=none`): every sentence is scored alone
(the sentence as the answer, by the head's sentence weights where it carries them for the language, else by the
head itself; once, where the verdict scored them already), the sentences holding an
unsupported number or name (else the least supported one) carry the verdict with their error type and reason;
with `explain=generate` the paper's fact stage adds its explanation, best effort.
"""

from __future__ import annotations

import asyncio

import numpy as np

from ragfacts.evidence import feature_vector, find_unsupported
from ragfacts.items import Item
from ragfacts.methods.precision.explain import explain_flagged
from ragfacts.methods.precision.head import Head, log_odds, shipped_head, sigmoid
from ragfacts.methods.precision.options import CheckOptions
from ragfacts.methods.precision.probability import band_for, checked_head, decide
from ragfacts.methods.precision.results import AnswerLabel, CallRecord, CheckResult, HolisticResult, ScoreResult
from ragfacts.methods.precision.scored import holistic_request, record_decision
from ragfacts.models import ChatModel, ConfigurationError
from ragfacts.text import split_sentences
from ragfacts.usage import Usage

STAGE = "trained_head"


def head_for(model: ChatModel, options: CheckOptions) -> Head:
    """The head this check uses (the given file, else the one shipped for the model), checked against both.

    A head over the hidden state needs a local GGUF; a head over the log-odds and evidence alone (trained with
    `ragfacts train-head` on an endpoint) needs log-probabilities.
    """
    profile = model.profile()
    if options.head is not None:
        head = checked_head(model, options.head)
    else:
        found = shipped_head(profile.sha256)
        if found is None:
            raise ConfigurationError(
                "no trained head ships for this model (ragfacts ships one for its embedded model); train one on "
                "labelled answers (ragfacts train-head DATA -o head.json) and pass -O head=head.json, or use "
                "strategy=holistic_score"
            )
        head = found
    if head.uses_state and not profile.hidden_state:
        raise ConfigurationError(
            f"the head {head.name!r} reads the model's hidden state, which the {model.backend} backend does not "
            "give; use a local GGUF model (--model local:FILE), a head trained on log-probabilities "
            "(ragfacts train-head with this model), or another strategy"
        )
    return head


async def _head_score(
    model: ChatModel, head: Head, item: Item, lang: str, threshold: float, *, sentence: bool = False
) -> tuple[ScoreResult, CallRecord, float | None]:
    """P(faithful) of `item` by the head, and its logit: one forward pass with the hidden state. With `sentence`,
    the item's answer is one sentence of a longer answer, scored by the head's sentence weights where it has them."""
    messages, (yes, no), prompt_id = holistic_request(item, lang)
    completion = await model.score_labels(
        messages, [yes, no], stage=STAGE, prompt_version=prompt_id, hidden_state=head.uses_state
    )
    call = CallRecord.of(completion)
    if not completion.ok:
        return ScoreResult(call=call, threshold=threshold), call, None
    scores = completion.parsed
    call.text = scores.model_copy(update={"state": None}).model_dump_json()  # results keep the log-probabilities
    state = scores.state_vector() if head.uses_state else np.zeros(0)
    odds, reference = log_odds(scores.logprobs, yes, no), item.reference or ""
    if sentence:
        logit = head.sentence_logit(state, odds, item.answer, reference, lang)
    else:
        evidence = np.asarray(feature_vector(item.answer, reference, lang), dtype=np.float64)
        logit = head.logit(state if head.uses_state else None, odds, evidence)
    probability = sigmoid(logit)
    verdict = "consistent" if probability >= threshold else "inconsistent"
    relation = ">=" if verdict == "consistent" else "<"
    return (
        ScoreResult(
            verdict=verdict,
            probability=probability,
            threshold=threshold,
            explanation=f"P(faithful) = {probability:.2f} {relation} {threshold:.2f} (trained head)",
            call=call,
        ),
        call,
        logit,
    )


async def _sentence_scores(
    model: ChatModel, head: Head, item: Item, lang: str, sentences: list[str]
) -> list[tuple[ScoreResult, float | None]]:
    """Each sentence scored alone (the sentence as the answer; consecutive calls share the reference's KV cache)."""
    threshold = head.sentence_threshold(lang)
    scored = await asyncio.gather(
        *(
            _head_score(model, head, item.model_copy(update={"answer": text}), lang, threshold, sentence=True)
            for text in sentences
        )
    )
    return [(score, logit) for score, _, logit in scored]


async def run_trained_head(model: ChatModel, item: Item, options: CheckOptions, lang: str) -> CheckResult:
    """One forward pass: the head's P(faithful) of the whole answer decides; evidence checks name the problems.
    A head that reads sentences scores each sentence of a longer answer too, and decides from all of them.

    The probability is calibrated where the head carries a calibration; an answer in the abstain band is uncertain.
    """
    head = head_for(model, options)
    sentences = split_sentences(item.answer) or [item.answer]
    raw_threshold = head.threshold(lang, len(sentences))  # a long answer's own, where the head has one
    band_for(options, head.calibrations.get(STAGE))  # an `auto` band without a calibration: refused before a call
    score, call, logit = await _head_score(model, head, item, lang, raw_threshold)
    by_sentence: list[tuple[ScoreResult, float | None]] | None = None
    if head.reads_sentences(lang) and logit is not None:
        by_sentence = await _sentence_scores(model, head, item, lang, sentences) if len(sentences) > 1 else []
        score = _combined(head, score, logit, by_sentence, raw_threshold)
    mismatches = find_unsupported(item.answer, item.reference or "", lang)
    judgement = HolisticResult(call=call, problems=[m.explain(lang) for m in mismatches])
    result = CheckResult(
        id=item.id, label=AnswerLabel.UNSCORED, lang=lang, model=model.model_id, options=options, holistic=judgement
    )
    if by_sentence:
        result.batches = [s.call for s, _ in by_sentence]  # the sentences' calls decide too: counted with the answer
    if score.probability is None:
        failure = next((c.failure for c in (call, *result.batches) if c.failure), None)
        result.reason = f"the judgement failed ({failure.kind.value}: {failure.message})" if failure else None
    else:
        flagged = head.evidence_veto and bool(mismatches)
        calibration = head.calibrations.get(STAGE)
        long = head.is_long(lang, len(sentences)) and not head.reads_sentences(lang)
        scope = f"answers of {head.long_answers['from_sentences']}+ sentences" if long else ""
        decision = decide(
            score.probability, lang, raw_threshold, options, calibration, flagged=flagged, vetoed=flagged, scope=scope
        )
        record_decision(judgement, decision, "P(faithful)", "trained head, ")
        if by_sentence:
            judgement.explanation += f"; read with its {len(by_sentence)} sentences"
        if flagged:
            judgement.explanation += "; the evidence check flags the answer"
        if decision.uncertain:
            result.label = AnswerLabel.UNCERTAIN
            result.reason = f"uncertain: {judgement.explanation}"
        else:
            result.label = AnswerLabel(decision.verdict)
        if result.label is AnswerLabel.INCONSISTENT:
            result.reason = f"judged inconsistent as a whole ({judgement.explanation})"
            if judgement.problems:
                result.reason += "; " + "; ".join(judgement.problems)
            if options.explain != "none":
                await _localise(model, head, item, options, lang, result, score, by_sentence)
    result.usage = Usage.sum(c.usage for c, _ in result.calls())
    return result


def _combined(
    head: Head, answer: ScoreResult, logit: float, by_sentence: list[tuple[ScoreResult, float | None]], threshold: float
) -> ScoreResult:
    """The answer's score from its own logit and its sentences'; no probability where a sentence's call failed."""
    logits = [value for _, value in by_sentence]
    if any(value is None for value in logits):
        return answer.model_copy(update={"probability": None, "verdict": None, "explanation": ""})
    probability = head.combined_probability(logit, [v for v in logits if v is not None])
    verdict = "consistent" if probability >= threshold else "inconsistent"
    relation = ">=" if verdict == "consistent" else "<"
    said = f"P(faithful) = {probability:.2f} {relation} {threshold:.2f} (trained head, with {len(logits) or 1} sentence"
    said += "s)" if len(logits) > 1 else ")"
    return answer.model_copy(update={"probability": probability, "verdict": verdict, "explanation": said})


async def _localise(
    model: ChatModel,
    head: Head,
    item: Item,
    options: CheckOptions,
    lang: str,
    result: CheckResult,
    whole: ScoreResult,
    by_sentence: list[tuple[ScoreResult, float | None]] | None = None,
) -> None:
    """Score each sentence with the head (ranked by its raw probability), unless the verdict's scoring did, then
    say why by scoring (`explain.py`)."""
    sentences = split_sentences(item.answer) or [item.answer]
    scores: list[ScoreResult | None] = [None]
    if len(sentences) > 1 and by_sentence:  # scored for the verdict: their calls are the result's already
        scores = [_alone(score.model_copy(update={"call": score.call.pointer()})) for score, _ in by_sentence]
    elif len(sentences) > 1:
        scores = [_alone(score) for score, _ in await _sentence_scores(model, head, item, lang, sentences)]
    await explain_flagged(model, item, options, lang, result, sentences, scores, whole)


def _alone(score: ScoreResult) -> ScoreResult:
    """A sentence's score, said as what it is: the head's raw probability of the sentence alone (the answer's own
    threshold is calibrated, a sentence's is not, so the two numbers differ)."""
    if score.probability is None:
        return score
    said = f"P(faithful) of this sentence alone = {score.probability:.2f}, uncalibrated"
    return score.model_copy(update={"explanation": said})
