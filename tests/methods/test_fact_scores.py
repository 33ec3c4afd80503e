"""fact-scores: one forward pass per fact, the answer first, P(True) against a threshold."""

from __future__ import annotations

import math

import pytest

from ragfacts.items import Item
from ragfacts.methods.base import create_method
from tests.scripted_server import Reply

ANSWER = "Paris is the capital of France and lies on the Seine."
FACTS = ["Paris is the capital of France.", "Paris lies on the Seine.", "Paris hosted the 2024 Olympics."]


def true(p: float) -> Reply:
    return Reply.first_token_logprobs({"True": math.log(p), "False": math.log(1 - p)})


async def test_each_fact_is_one_label_score_with_the_answer_first(make_model, scripted_server):
    scripted_server.enqueue(true(0.9), true(0.7), true(0.2))
    result = await create_method("fact-scores").evaluate(Item(answer=ANSWER, facts=FACTS), make_model(concurrency=1))
    assert len(scripted_server.requests) == 3 and all(r.body["max_tokens"] == 1 for r in scripted_server.requests)
    assert scripted_server.requests  # not vacuous
    assert all(r.prompt.startswith("<passage>\n" + ANSWER) for r in scripted_server.requests)
    verdicts = result.verification.verdicts
    assert [v.verdict for v in verdicts] == [True, True, False]
    assert [round(v.probability, 2) for v in verdicts] == [0.9, 0.7, 0.2]
    assert result.recall == pytest.approx(2 / 3) and result.verification.method == "fact-scores"


async def test_the_threshold_decides(make_model, scripted_server):
    scripted_server.enqueue(true(0.9), true(0.7), true(0.2))
    judge = create_method("fact-scores:threshold=0.8")
    result = await judge.evaluate(Item(answer=ANSWER, facts=FACTS), make_model(concurrency=1))
    assert [v.verdict for v in result.verification.verdicts] == [True, False, False]


async def test_a_failed_score_is_unscored_and_counts_against_recall(make_model, scripted_server):
    scripted_server.enqueue(true(0.9), Reply.error(400), true(0.9))
    result = await create_method("fact-scores").evaluate(Item(answer=ANSWER, facts=FACTS), make_model(concurrency=1))
    outcome = result.outcome()
    assert result.verification.n_failed == 1 and outcome.score == pytest.approx(2 / 3) and not outcome.complete


async def test_chinese_facts_get_the_chinese_prompt_and_labels(make_model, scripted_server):
    scripted_server.enqueue(Reply.first_token_logprobs({"是": math.log(0.8), "否": math.log(0.2)}))
    item = Item(answer="巴黎是法国的首都。", facts=["巴黎是法国首都。"])
    result = await create_method("fact-scores").evaluate(item, make_model())
    assert "只根据上面的文段" in scripted_server.requests[0].prompt and result.recall == 1.0
