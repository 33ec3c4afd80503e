"""The single holistic judgement: one call, the verdict decides, a failure is unscored."""

from __future__ import annotations

from ragfacts.items import Item
from ragfacts.methods.base import create_method
from ragfacts.methods.precision.results import AnswerLabel
from tests.methods.test_lface4rag import REFERENCE, SEG1
from tests.scripted_server import Reply

ITEM = Item(id="x", reference=REFERENCE, answer=SEG1, question="Where does the Nile flow?")


async def test_one_call_decides_and_the_problems_are_kept(make_model, scripted_server):
    scripted_server.enqueue(Reply.json({"problems": ["says east"], "verdict": "inconsistent"}))
    result = await create_method("holistic").evaluate(ITEM, make_model())
    assert len(scripted_server.requests) == 1 and scripted_server.requests[0].schema["title"] == "HolisticJudgement"
    assert result.label is AnswerLabel.INCONSISTENT and result.judgement.problems == ["says east"]
    outcome = result.outcome()
    assert (outcome.label, outcome.score, outcome.units, outcome.complete) == ("inconsistent", 0.0, 1, True)


async def test_without_chain_of_thought_only_the_verdict_is_asked(make_model, scripted_server):
    result = await create_method("holistic:cot=false").evaluate(ITEM, make_model())
    assert scripted_server.requests[0].schema["title"] == "HolisticVerdict"
    assert result.label is AnswerLabel.CONSISTENT and result.outcome().score == 1.0


async def test_a_failed_call_is_unscored_and_incomplete(make_model, scripted_server):
    scripted_server.enqueue(Reply.error(400))
    result = await create_method("holistic").evaluate(ITEM, make_model())
    outcome = result.outcome()
    assert result.label is AnswerLabel.UNSCORED and outcome.score is None
    assert outcome.failures == 1 and not outcome.complete


async def test_a_chinese_answer_gets_the_chinese_prompt(make_model, scripted_server):
    item = Item(reference="尼罗河向北流入地中海。", answer="尼罗河向北流。")
    await create_method("holistic").evaluate(item, make_model())
    assert "参考资料" in scripted_server.requests[0].prompt
