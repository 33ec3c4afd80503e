"""Recall by scoring: a trained head asked whether the answer states each fact, one forward pass a fact.

Each fact is put to the precision head's own question (`scored.holistic_request`) with the answer as the text it
must be supported by: the answer comes first in the prompt, so the facts of one answer share its KV prefix and each
costs its own tokens only. The head's P(the answer states the fact) is compared with its recall threshold (chosen
on labelled recall data, `Head.recall_threshold`); the evidence checks apply to each fact as to an answer: a
number, date or name of the fact that the answer lacks makes the fact absent, whatever the probability ("the
answer does not state 1972"). Nothing is generated. FaaF uses it with `verify=head` (`auto` on a local model a
head ships for); FaaF's one structured call stays the method on endpoints.
"""

from __future__ import annotations

import asyncio

import numpy as np

from ragfacts.evidence import find_unsupported
from ragfacts.items import Item
from ragfacts.methods.precision.head import Head, log_odds
from ragfacts.methods.precision.scored import holistic_request
from ragfacts.methods.verdicts import FactVerdict, Verification
from ragfacts.models import ChatModel, Completion
from ragfacts.text import detect_lang

STAGE = "fact_head"
_LACKS = {"en": "the answer does not state {what}", "zh": "回答没有说明{what}"}


async def verify_by_head(
    model: ChatModel, head: Head, facts: list[str], answer: str, lang: str | None, method: str
) -> Verification:
    """Every fact scored against `answer` by `head`, in order (consecutive facts share the answer's prefix)."""
    lang = lang or detect_lang(f"{answer} {' '.join(facts)}")
    threshold = head.recall_threshold(lang)
    requests = [holistic_request(Item(reference=answer, answer=fact), lang) for fact in facts]
    completions = await asyncio.gather(
        *(
            model.score_labels(messages, labels, stage=STAGE, prompt_version=prompt_id, hidden_state=head.uses_state)
            for messages, labels, prompt_id in requests
        )
    )
    result = Verification(method=method, lang=lang, config={"verify": "head", "threshold": threshold})
    for index, (fact, completion, (_, labels, _)) in enumerate(zip(facts, completions, requests, strict=True)):
        result.completions.append(completion.record())
        if completion.failure is not None:
            result.failures.append(completion.failure)
        lacking = [m.text for m in find_unsupported(fact, answer, lang, chinese_names="auto")]
        result.verdicts.append(_verdict(index, fact, completion, head, answer, labels, lang, threshold, lacking))
    return result


def _verdict(
    index: int,
    fact: str,
    completion: Completion,
    head: Head,
    answer: str,
    labels: list[str],
    lang: str,
    threshold: float,
    lacking: list[str],
) -> FactVerdict:
    if not completion.ok:
        message = completion.failure.message if completion.failure else "no reply"
        return FactVerdict(index=index, fact=fact, unscored="failed", failure=message)
    scores = completion.parsed
    yes, no = labels
    state = scores.state_vector() if head.uses_state else np.zeros(0)
    probability = head.recall_probability(state, log_odds(scores.logprobs, yes, no), fact, answer, lang)
    raw = f"P(stated) = {probability:.2f} {'>=' if probability >= threshold else '<'} {threshold:.2f}"
    if lacking:
        raw += "; " + _LACKS["zh" if lang == "zh" else "en"].format(what=", ".join(lacking))
    return FactVerdict(
        index=index, fact=fact, verdict=probability >= threshold and not lacking, probability=probability, raw=raw
    )
